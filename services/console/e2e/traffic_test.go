package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// productionAndEvaluation makes a project with one production call (trace
// prodTrace, session "sess-prod") and a finished evaluation of two
// testcases, whose application calls and evaluator runs are traces too.
func productionAndEvaluation(t *testing.T, env *Env, key string) (prodTrace, runID string) {
	t.Helper()
	prodTrace = "d0000000000000000000000000000001"
	at := time.Now().Add(-2 * time.Minute).UTC()
	status, body := env.Platform.Do(t, "POST", "/api/spans/ingest", "ApiKey "+key, map[string]any{"spans": []any{
		map[string]any{"trace_id": prodTrace, "span_id": "d000000000000001", "span_name": "prod-call",
			"start_time": at.Format(time.RFC3339Nano), "end_time": at.Add(800 * time.Millisecond).Format(time.RFC3339Nano),
			"attributes": map[string]any{"ag": map[string]any{"type": map[string]any{"span": "workflow"}, "session": map[string]any{"id": "sess-prod"},
				"data": map[string]any{"inputs": map[string]any{"question": "Capital of France?"}, "outputs": "Paris"}}}},
	}})
	if status != http.StatusAccepted {
		t.Fatalf("ingest: %d %s", status, body)
	}

	ts := env.Platform.MustJSON(t, "POST", "/api/simple/testsets/", key, map[string]any{"testset": map[string]any{
		"slug": "capitals", "name": "capitals", "data": map[string]any{"testcases": []any{
			map[string]any{"data": map[string]any{"country": "France", "correct_answer": "echo: France"}},
			map[string]any{"data": map[string]any{"country": "Italy", "correct_answer": "Rome"}},
		}}}})
	app := env.Platform.MustJSON(t, "POST", "/api/simple/applications/", key, map[string]any{"application": map[string]any{
		"slug": "echoer", "name": "echoer",
		"data": map[string]any{"uri": "agenta:builtin:completion:v0", "parameters": map[string]any{"prompt": map[string]any{
			"messages":        []any{map[string]any{"role": "user", "content": "{{country}}"}},
			"template_format": "curly", "llm_config": map[string]any{"model": "gpt-4o-mini"}}}},
	}})
	ev := env.Platform.MustJSON(t, "POST", "/api/simple/evaluators/", key, map[string]any{"evaluator": map[string]any{
		"slug": "capital-exact", "name": "Capital exact",
		"data": map[string]any{"uri": "agenta:builtin:auto_exact_match:v0", "parameters": map[string]any{"correct_answer_key": "correct_answer"}},
	}})
	run := env.Platform.MustJSON(t, "POST", "/api/simple/evaluations/", key, map[string]any{"evaluation": map[string]any{
		"name": "capitals run", "data": map[string]any{
			"testset_steps":     []any{str(dig(ts, "testset", "revision_id"))},
			"application_steps": map[string]any{str(dig(app, "application", "revision_id")): "auto"},
			"evaluator_steps":   map[string]any{str(dig(ev, "evaluator", "revision_id")): "auto"},
		}}})
	runID = str(dig(run, "evaluation", "id"))
	if runID == "" {
		t.Fatalf("no evaluation: %v", run)
	}
	// The run ends, and its four traces (two application calls, two
	// evaluator runs) are readable next to the production one.
	roots := map[string]any{"filtering": map[string]any{"conditions": []any{map[string]any{"field": "parent_id", "operator": "is", "value": nil}}}}
	deadline := time.Now().Add(60 * time.Second)
	for {
		r := env.Platform.MustJSON(t, "GET", "/api/evaluations/runs/"+runID, key, nil)
		status, body := env.Platform.Do(t, "POST", "/api/spans/query", "ApiKey "+key, roots)
		var spans struct {
			Count int `json:"count"`
		}
		_ = json.Unmarshal(body, &spans)
		if str(dig(r, "run", "status")) == "success" && status == http.StatusOK && spans.Count == 5 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %s is %v with %d root spans: %s", runID, dig(r, "run", "status"), spans.Count, body)
		}
		time.Sleep(200 * time.Millisecond)
	}
	return prodTrace, runID
}

// productionTrafficByDefault: the traces, sessions and analytics pages
// show production calls only (not the traces an evaluation leaves), with
// a switch, kept in the URL, that shows the rest; the home page's recent
// traces are the production ones, and its recent run shows its score under
// the evaluator's name.
func productionTrafficByDefault(t *testing.T, env *Env) {
	u := env.User(t, "traffic@example.com")
	prod, _ := productionAndEvaluation(t, env, u.Key)
	ctx := env.SignedIn(t, u)

	rows := `[...document.querySelectorAll('tr[data-trace]')].map(r => r.dataset.trace)`
	if err := chromedp.Do(ctx,
		env.Visit("/console/traces"),
		chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`tr[data-trace=%q]`, prod))),
		waitJS(`document.querySelector('[data-testid="trace-count"]')?.dataset.state !== "loading"`),
	); err != nil {
		t.Fatalf("%v; page:\n%s", err, pageText(t, ctx))
	}
	saveScreenshot(t, ctx, "traces")
	ids, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](rows))
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) != 1 || ids[0] != prod {
		t.Errorf("the traces page lists %d traces by default (%v), want the production one only", len(ids), ids)
	}
	if err := chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`input[aria-label="Show evaluation and annotation traffic"]`)),
		waitJS(`document.querySelectorAll('tr[data-trace]').length === 5`),
		waitJS(`location.search.includes("traffic=all")`),
	); err != nil {
		n, _ := chromedp.Run(ctx, chromedp.Evaluate[[]string](rows))
		t.Errorf("with the switch on, the traces page lists %v (%v), want 5 traces and traffic=all in the URL", n, err)
	}
	saveScreenshot(t, ctx, "traces-all")

	requests := func() string {
		t.Helper()
		if err := chromedp.Do(ctx, waitJS(`!!document.querySelector('[data-testid="analytics-totals"] strong')`)); err != nil {
			t.Fatalf("%v; page:\n%s", err, pageText(t, ctx))
		}
		s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`[data-testid="analytics-totals"] strong`)))
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(s)
	}
	if err := chromedp.Do(ctx, env.Visit("/console/analytics")); err != nil {
		t.Fatal(err)
	}
	if n := requests(); n != "1" {
		t.Errorf("analytics counts %s requests by default, want 1 (the production call)", n)
	}
	saveScreenshot(t, ctx, "analytics")
	if err := chromedp.Do(ctx, env.Visit("/console/analytics?traffic=all")); err != nil {
		t.Fatal(err)
	}
	if n := requests(); n != "5" {
		t.Errorf("analytics counts %s requests with every traffic, want 5", n)
	}

	sessions := `[...document.querySelectorAll('.session-list a')].map(a => a.innerText)`
	if err := chromedp.Do(ctx, env.Visit("/console/sessions"), WaitText("sess-prod")); err != nil {
		t.Fatalf("%v; page:\n%s", err, pageText(t, ctx))
	}
	saveScreenshot(t, ctx, "sessions")
	if s, _ := chromedp.Run(ctx, chromedp.Evaluate[[]string](sessions)); len(s) != 1 {
		t.Errorf("the sessions page lists %v by default, want sess-prod only", s)
	}
	if err := chromedp.Do(ctx, env.Visit("/console/sessions?traffic=all"), waitJS(`document.querySelectorAll('.session-list a').length === 5`)); err != nil {
		s, _ := chromedp.Run(ctx, chromedp.Evaluate[[]string](sessions))
		t.Errorf("the sessions page lists %v with every traffic, want 5 sessions", s)
	}

	if err := chromedp.Do(ctx,
		env.Visit("/console/"),
		waitJS(`document.querySelectorAll('[data-testid="recent-traces"] li').length > 0`),
		waitJS(`document.querySelector('[data-testid="recent-run"] .headlines') !== null`),
		waitJS(`![...document.querySelectorAll('[data-step]')].some(e => e.dataset.state === "loading")`),
	); err != nil {
		t.Fatalf("%v; page:\n%s", err, pageText(t, ctx))
	}
	saveScreenshot(t, ctx, "home")
	traces, _ := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('[data-testid="recent-traces"] li')].map(l => l.innerText)`))
	if len(traces) != 1 || !strings.Contains(traces[0], "prod-call") {
		t.Errorf("the home page's recent traces are %q, want the production call only", traces)
	}
	run, _ := chromedp.Run(ctx, chromedp.Text(testID("recent-run")))
	if !strings.Contains(run, "capitals run") || !strings.Contains(run, "Capital exact") || !strings.Contains(run, "50%") {
		t.Errorf("the home page's recent run reads %q, want its name and \"Capital exact 50%%\"", run)
	}
}
