package e2e

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// compareScenarios is the size of the runs compareLargeRuns compares:
// 500 in the suite (seconds), ASSAY_E2E_COMPARE_SCENARIOS=5000 for the
// figure docs/benchmarks.md reports.
func compareScenarios(t *testing.T) int {
	n := 500
	if v := os.Getenv("ASSAY_E2E_COMPARE_SCENARIOS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 2 {
			t.Fatalf("ASSAY_E2E_COMPARE_SCENARIOS=%q: want a number of at least 2", v)
		}
	}
	return n
}

// seedRun writes a finished run over the testset revision through the
// bulk evaluation API: one scenario per testcase, its input, application
// and evaluator cells, and its per-scenario metrics (exact match true
// unless fails(i), a latency).
func seedRun(t *testing.T, env *Env, key, name, tsRev, appID, evID string, tcIDs []string, fails func(int) bool) string {
	t.Helper()
	steps := []any{
		map[string]any{"key": "testset-capitals", "type": "input", "origin": "auto",
			"references": map[string]any{"testset_revision": map[string]any{"id": tsRev}}},
		map[string]any{"key": "application-" + name, "type": "invocation", "origin": "auto",
			"references": map[string]any{"application": map[string]any{"id": appID}}},
		map[string]any{"key": "evaluator-exact", "type": "annotation", "origin": "auto",
			"references": map[string]any{"evaluator": map[string]any{"id": evID}}},
	}
	run := env.Platform.MustJSON(t, "POST", "/api/evaluations/runs/", key, map[string]any{"runs": []any{
		map[string]any{"name": name, "status": "success", "data": map[string]any{"steps": steps}}}})
	runID := str(dig(run, "runs", 0, "id"))
	sc := make([]any, len(tcIDs))
	for i := range sc {
		sc[i] = map[string]any{"run_id": runID, "status": "success"}
	}
	out := env.Platform.MustJSON(t, "POST", "/api/evaluations/scenarios/", key, map[string]any{"scenarios": sc})
	list, _ := out["scenarios"].([]any)
	if len(list) != len(tcIDs) {
		t.Fatalf("made %d scenarios, want %d", len(list), len(tcIDs))
	}
	var results, metrics []any
	flush := func(force bool) {
		if len(results) > 0 && (force || len(results) >= 6000) {
			env.Platform.MustJSON(t, "POST", "/api/evaluations/results/", key, map[string]any{"results": results})
			results = nil
		}
		if len(metrics) > 0 && (force || len(metrics) >= 2000) {
			env.Platform.MustJSON(t, "POST", "/api/evaluations/metrics/", key, map[string]any{"metrics": metrics})
			metrics = nil
		}
	}
	for i, s := range list {
		sid := str(dig(s, "id"))
		results = append(results,
			map[string]any{"run_id": runID, "scenario_id": sid, "step_key": "testset-capitals", "repeat_idx": 0, "status": "success", "testcase_id": tcIDs[i]},
			map[string]any{"run_id": runID, "scenario_id": sid, "step_key": "application-" + name, "repeat_idx": 0, "status": "success"},
			map[string]any{"run_id": runID, "scenario_id": sid, "step_key": "evaluator-exact", "repeat_idx": 0, "status": "success"})
		ok := !fails(i)
		metrics = append(metrics, map[string]any{"run_id": runID, "scenario_id": sid, "status": "success", "data": map[string]any{
			"evaluator-exact": map[string]any{"attributes.ag.data.outputs.success": map[string]any{"type": "binary", "count": 1,
				"freq": []any{map[string]any{"value": ok, "count": 1, "density": 1}}}},
			"application-" + name: map[string]any{"attributes.ag.metrics.duration.cumulative": map[string]any{
				"type": "numeric/continuous", "count": 1, "mean": float64(100 + i%37)}},
		}})
		flush(false)
	}
	flush(true)
	return runID
}

// compareLargeRuns measures the comparison page of two runs of
// compareScenarios(t) scenarios each, seeded through the bulk API: the
// time from navigation to the metrics and the first testcases drawn, cold
// and again. The figures are in the test log (docs/benchmarks.md reports
// them); the page must show every testcase's count and the regressions.
func compareLargeRuns(t *testing.T, env *Env) {
	n := compareScenarios(t)
	u := env.User(t, "compare-large@example.com")
	key := u.Key
	seedStart := time.Now()
	rows := make([]any, n)
	for i := range rows {
		rows[i] = map[string]any{"data": map[string]any{"country": fmt.Sprintf("country %d", i), "correct_answer": fmt.Sprintf("capital %d", i)}}
	}
	ts := env.Platform.MustJSON(t, "POST", "/api/simple/testsets/", key, map[string]any{"testset": map[string]any{
		"slug": "large", "name": "large", "data": map[string]any{"testcases": rows}}})
	var tcIDs []string
	for _, id := range dig(ts, "testset", "data", "testcase_ids").([]any) {
		tcIDs = append(tcIDs, id.(string))
	}
	app := env.Platform.MustJSON(t, "POST", "/api/simple/applications/", key, map[string]any{"application": map[string]any{
		"name": "Large bot", "slug": "large-bot", "data": map[string]any{"uri": "agenta:builtin:completion:v0"}}})
	ev := env.Platform.MustJSON(t, "POST", "/api/simple/evaluators/", key, map[string]any{"evaluator": map[string]any{
		"slug": "exact", "name": "Exact",
		"data": map[string]any{"uri": "agenta:builtin:auto_exact_match:v0", "parameters": map[string]any{"correct_answer_key": "correct_answer"}},
	}})
	tsRev, appID, evID := str(dig(ts, "testset", "revision_id")), str(dig(app, "application", "id")), str(dig(ev, "evaluator", "id"))
	base := seedRun(t, env, key, "base", tsRev, appID, evID, tcIDs, func(int) bool { return false })
	cand := seedRun(t, env, key, "cand", tsRev, appID, evID, tcIDs, func(i int) bool { return i%10 == 3 })
	t.Logf("seeded two runs of %d scenarios in %s", n, time.Since(seedStart).Round(time.Millisecond))

	for range 2 {
		start := time.Now()
		env.Platform.MustJSON(t, "POST", "/api/evaluations/runs/compare", key, map[string]any{"run_ids": []string{base, cand}})
		t.Logf("POST /api/evaluations/runs/compare of two %d-scenario runs: %s", n, time.Since(start).Round(time.Millisecond))
	}
	ctx := env.SignedIn(t, u)
	path := fmt.Sprintf("/console/evaluations/compare?runs=%s,%s", base, cand)
	regressions := fmt.Sprintf("%d of %d testcases score worse", (n+6)/10, n)
	for _, round := range []string{"first", "again"} {
		ms := compareDrawn(t, env, ctx, path)
		t.Logf("comparison of two %d-scenario runs (%s visit): metrics and first testcases drawn at %.0f ms", n, round, ms)
	}
	if txt := pageText(t, ctx); !strings.Contains(txt, regressions) {
		t.Errorf("the comparison does not say %q:\n%.2000s", regressions, txt)
	}
	// A tenth of the testcases failing is a regression beyond any noise,
	// after the correction too.
	verdict, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(() => {
		const row = [...document.querySelectorAll('[data-testid="metric-row"]')].find(r => r.innerText.includes("success"));
		const d = row && row.querySelector('[data-testid="delta"]');
		return d ? d.dataset.verdict : "";
	})()`))
	if err != nil || verdict != "regressed" {
		t.Errorf("the success delta of the large runs reads %q (%v), want regressed", verdict, err)
	}
	Screenshot(t, ctx)
}

// compareDrawn loads the comparison and returns when, in ms from the
// start of the navigation, its metrics and first testcase rows were drawn
// (polled on every animation frame).
func compareDrawn(t *testing.T, env *Env, ctx context.Context, path string) float64 {
	t.Helper()
	if err := chromedp.Do(ctx, env.Visit(path)); err != nil {
		t.Fatal(err)
	}
	ms, err := chromedp.Run(ctx, chromedp.Poll[float64](`(() => {
		if (document.querySelector('[data-testid="metric-row"]') && document.querySelector('[data-testid="scenario-row"]')) return performance.now();
		return false;
	})()`, chromedp.WithPollingTimeout(60*time.Second)))
	if err != nil {
		t.Fatalf("the comparison of %s was not drawn: %v\n%s", path, err, pageText(t, ctx))
	}
	// Where the time went: each request's start and end, in ms from the
	// navigation, for the log docs/benchmarks.md reads.
	timeline, err := chromedp.Run(ctx, chromedp.Evaluate[string](`performance.getEntriesByType("resource")
		.filter(e => e.startTime < performance.now())
		.map(e => e.name.replace(location.origin, "").replace(/\?.*$/, "").replace(/[0-9a-f-]{36}/g, ":id") + " " + Math.round(e.startTime) + "–" + Math.round(e.responseEnd))
		.join(", ")`))
	if err == nil {
		t.Logf("requests (ms from navigation): %s", timeline)
	}
	return ms
}
