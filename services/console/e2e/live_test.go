package e2e

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// onlineEvaluation: an online evaluation is created in the console (a
// name, a filter from the traces page's builder, a sampling rate of 50%,
// an evaluator picked by name); of three production traces sent after,
// the one the filter and the sample keep is scored, and the run page
// shows it live with the count and the time it last scored; it stops and
// resumes.
func onlineEvaluation(t *testing.T, env *Env, u User, ctx context.Context) {
	env.Platform.MustJSON(t, "POST", "/api/simple/evaluators/", u.Key, map[string]any{"evaluator": map[string]any{
		"name": "Mentions Paris", "data": map[string]any{"uri": "agenta:builtin:auto_regex_test:v0",
			"parameters": map[string]any{"regex_pattern": "Paris", "regex_should_match": true}}}})
	err := chromedp.Do(ctx,
		env.Visit("/console/evaluations"),
		WaitText("New online evaluation"),
		chromedp.Click(chromedp.CSS(`[data-testid="new-live"] summary`)),
		Type(string(byLabel("online evaluation name")), "Production capitals"),
		chromedp.Click(chromedp.Search(`//*[@data-testid="new-live"]//button[normalize-space(.)="+ Filter"]`)),
		fillText(chromedp.CSS(`[data-testid="new-live"] input[aria-label="Value"]`), "prod"),
		fillText(byLabel("sampling rate"), "50"),
		chromedp.Click(byLabel("online evaluator Mentions Paris")),
		chromedp.WaitEnabled(testID("start-live")),
		chromedp.Click(testID("start-live")),
		chromedp.WaitVisible(testID("live-panel")),
		waitJS(`document.querySelector('[data-testid="live-badge"]')?.innerText.trim() === "live"`),
		WaitText("0 traces scored"),
	)
	if err != nil {
		t.Fatalf("%v; page:\n%s", err, pageText(t, ctx))
	}
	// Three production calls in one window: one the filter and the sample
	// keep; one the sample leaves out (tracing keeps a trace when the
	// first 8 hex digits of its id, mod 100, are under the rate: 5 and
	// 95); one the filter leaves out (its span name).
	now := time.Now().UTC()
	span := func(trace, name string) map[string]any {
		return map[string]any{"trace_id": trace, "span_id": trace[:16], "span_name": name,
			"start_time": now.Format(time.RFC3339Nano), "end_time": now.Add(300 * time.Millisecond).Format(time.RFC3339Nano),
			"attributes": map[string]any{"ag": map[string]any{"type": map[string]any{"span": "workflow"},
				"data": map[string]any{"inputs": map[string]any{"question": "Capital of France?"}, "outputs": "Paris"}}}}
	}
	status, body := env.Platform.Do(t, "POST", "/api/spans/ingest", "ApiKey "+u.Key, map[string]any{"spans": []any{
		span("00000005000000000000000000000001", "prod-call"),
		span("0000005f000000000000000000000002", "prod-call"),
		span("00000001000000000000000000000003", "other-call"),
	}})
	if status != http.StatusAccepted {
		t.Fatalf("ingest: %d %s", status, body)
	}
	err = chromedp.Do(ctx,
		WaitText("1 trace scored"),
		waitJS(`!document.querySelector('[data-testid="live-last"]').innerText.startsWith("not yet")`),
		// The scored trace's columns say what they are (not the query
		// step's key), its inputs and output beside the verdict; the panel
		// says which traces are scored.
		waitJS(`(() => { const hs = [...document.querySelectorAll('[data-testid="results"] thead th')].map(h => h.innerText.trim());
			return hs.includes("trace inputs") && hs.includes("trace output") && !hs.some(h => h.startsWith("query-")); })()`),
		waitJS(`document.querySelector('[data-testid="result-row"]')?.innerText.includes("Capital of France?")`),
		waitJS(`document.querySelector('[data-testid="live-scope"]')?.innerText === '50% of production traces where span_name contains "prod"'`),
	)
	if err != nil {
		t.Fatalf("the production trace was not scored: %v; page:\n%s", err, pageText(t, ctx))
	}
	// While live, the charts show the scores so far (not only once
	// stopped), and say they are so far, from when to when.
	err = chromedp.Do(ctx,
		waitJS(`/^So far: the traces scored from .+ to .+\. The evaluation is live/.test(document.querySelector('[data-testid="charts-so-far"]')?.innerText ?? "")`),
		waitJS(`[...document.querySelectorAll('[aria-label="charts"] [data-testid="chart"]')].some(c => c.innerText.includes("pass rate 100.0% (1/1)"))`),
	)
	if err != nil {
		t.Fatalf("a live evaluation's charts do not show its scores so far: %v; page:\n%s", err, pageText(t, ctx))
	}
	id, err := chromedp.Run(ctx, chromedp.Evaluate[string](`location.pathname.split("/").pop()`))
	if err != nil {
		t.Fatal(err)
	}
	// The three traces shared a window, which minted its scenarios at
	// once: one, the kept trace's, with the evaluator's verdict.
	res := env.Platform.MustJSON(t, "POST", "/api/evaluations/results/query", u.Key, map[string]any{"result": map[string]any{"run_id": id}})
	traces := map[string]bool{}
	for _, r := range dig(res, "results").([]any) {
		if tid := strings.ReplaceAll(str(dig(r, "trace_id")), "-", ""); tid != "" && strings.HasPrefix(str(dig(r, "step_key")), "query-") {
			traces[tid] = true
		}
	}
	if len(traces) != 1 || !traces["00000005000000000000000000000001"] {
		t.Errorf("the live run scored the traces %v, want only the one its filter and sample keep", traces)
	}
	Screenshot(t, ctx)

	// Stop, then resume.
	err = chromedp.Do(ctx,
		ClickText("Stop scoring"),
		waitJS(`document.querySelector('[data-testid="live-badge"]')?.innerText.trim() === "stopped"`),
		ClickText("Resume scoring"),
		waitJS(`document.querySelector('[data-testid="live-badge"]')?.innerText.trim() === "live"`),
	)
	if err != nil {
		t.Fatalf("stop and resume: %v; page:\n%s", err, pageText(t, ctx))
	}
	run := env.Platform.MustJSON(t, "GET", "/api/evaluations/runs/"+id, u.Key, nil)
	if dig(run, "run", "flags", "is_active") != true || dig(run, "run", "flags", "is_live") != true {
		t.Errorf("after resume the run is %v", dig(run, "run", "flags"))
	}
	// The runs list shows it live.
	err = chromedp.Do(ctx, env.Visit("/console/evaluations"),
		waitJS(`[...document.querySelectorAll('[data-testid="runs-list"] tr')].some(r => r.innerText.includes("Production capitals") && r.innerText.includes("live"))`))
	if err != nil {
		t.Errorf("the runs list does not show the online evaluation live: %v; page:\n%s", err, pageText(t, ctx))
	}
}

// pausedOnlineEvaluation: an online evaluation made in the console with a
// daily budget its first scored trace exceeds (an evaluator that calls
// the model) pauses: it stays live, scores no more traces that day, and
// its page and the runs list say so (an amber notice with the reason and
// when it resumes; the badge reads "paused (daily budget)", not "live").
func pausedOnlineEvaluation(t *testing.T, env *Env, u User, ctx context.Context) {
	env.Platform.MustJSON(t, "POST", "/api/simple/evaluators/", u.Key, map[string]any{"evaluator": map[string]any{
		"name": "Echo judge", "data": map[string]any{"uri": "agenta:builtin:completion:v0", "parameters": map[string]any{"prompt": map[string]any{
			"messages":        []any{map[string]any{"role": "user", "content": "Is this a capital? {{question}}"}},
			"template_format": "curly", "llm_config": map[string]any{"model": "gpt-4o-mini"}}}}}})
	err := chromedp.Do(ctx,
		env.Visit("/console/evaluations"),
		WaitText("New online evaluation"),
		chromedp.Click(chromedp.CSS(`[data-testid="new-live"] summary`)),
		Type(string(byLabel("online evaluation name")), "Budgeted judge"),
		chromedp.Click(chromedp.Search(`//*[@data-testid="new-live"]//button[normalize-space(.)="+ Filter"]`)),
		fillText(chromedp.CSS(`[data-testid="new-live"] input[aria-label="Value"]`), "budget-call"),
		fillText(byLabel("daily budget"), "0.000001"),
		chromedp.Click(byLabel("online evaluator Echo judge")),
		chromedp.WaitEnabled(testID("start-live")),
		chromedp.Click(testID("start-live")),
		chromedp.WaitVisible(testID("live-panel")),
		waitJS(`document.querySelector('[data-testid="live-badge"]')?.innerText.trim() === "live"`),
	)
	if err != nil {
		t.Fatalf("%v; page:\n%s", err, pageText(t, ctx))
	}
	id, err := chromedp.Run(ctx, chromedp.Evaluate[string](`location.pathname.split("/").pop()`))
	if err != nil {
		t.Fatal(err)
	}
	defer env.Platform.MustJSON(t, "POST", "/api/simple/evaluations/"+id+"/stop", u.Key, nil)
	run := env.Platform.MustJSON(t, "GET", "/api/evaluations/runs/"+id, u.Key, nil)
	if b, _ := dig(run, "run", "data", "budget").(float64); b != 0.000001 {
		t.Fatalf("the form's daily budget did not reach data.budget: %v", dig(run, "run", "data"))
	}
	now := time.Now().UTC()
	status, body := env.Platform.Do(t, "POST", "/api/spans/ingest", "ApiKey "+u.Key, map[string]any{"spans": []any{map[string]any{
		"trace_id": "000000aa000000000000000000000001", "span_id": "000000aa00000000", "span_name": "budget-call",
		"start_time": now.Format(time.RFC3339Nano), "end_time": now.Add(300 * time.Millisecond).Format(time.RFC3339Nano),
		"attributes": map[string]any{"ag": map[string]any{"type": map[string]any{"span": "workflow"},
			"data": map[string]any{"inputs": map[string]any{"question": "Capital of Peru?"}, "outputs": "Lima"}}}}}})
	if status != http.StatusAccepted {
		t.Fatalf("ingest: %d %s", status, body)
	}
	// The first trace is scored (its judge's model call costs more than
	// the budget); the next window finds the day's budget reached.
	err = chromedp.Do(ctx,
		WaitText("1 trace scored"),
		waitJS(`document.querySelector('[data-testid="live-badge"]')?.innerText.trim() === "paused (daily budget)"`),
		waitJS(`document.querySelector('[data-testid="pause-notice"]')?.innerText.includes("Paused: no trace is being scored (daily budget of $0.000001 reached; resumes at 00:00 UTC)")`),
	)
	if err != nil {
		t.Fatalf("the paused run's page does not say it is paused: %v; page:\n%s", err, pageText(t, ctx))
	}
	// The charts do not claim to refresh while nothing is scored.
	if err := chromedp.Do(ctx, waitJS(`/The evaluation is paused: the charts stay as they are until scoring resumes\./.test(document.querySelector('[data-testid="charts-so-far"]')?.innerText ?? "")`)); err != nil {
		t.Errorf("a paused run's charts say they refresh: %v; page:\n%s", err, pageText(t, ctx))
	}
	// It resumes at the next UTC midnight, shown in the reader's time.
	want := time.Now().UTC().Truncate(24 * time.Hour).Add(24 * time.Hour)
	shown, err := chromedp.Run(ctx, chromedp.Evaluate[string](`new Date(document.querySelector('[data-testid="pause-resumes"]').dataset.at ?? "").toISOString()`))
	if err != nil || shown != want.Format("2006-01-02T15:04:05.000Z") {
		t.Errorf("the notice resumes at %q (%v), want %s", shown, err, want)
	}
	run = env.Platform.MustJSON(t, "GET", "/api/evaluations/runs/"+id, u.Key, nil)
	if dig(run, "run", "status") != "running" || dig(run, "run", "flags", "is_active") != true {
		t.Errorf("a paused run is %v, %v; want running and active", dig(run, "run", "status"), dig(run, "run", "flags"))
	}
	saveScreenshot(t, ctx, "paused")
	err = chromedp.Do(ctx, env.Visit("/console/evaluations"),
		waitJS(`[...document.querySelectorAll('[data-testid="runs-list"] tr')].some(r => r.innerText.includes("Budgeted judge") && r.innerText.includes("paused (daily budget)"))`))
	if err != nil {
		t.Errorf("the runs list does not show the online evaluation paused: %v; page:\n%s", err, pageText(t, ctx))
	}
	saveScreenshot(t, ctx, "paused-list")
}
