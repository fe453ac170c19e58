package evalrun_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// modelCallsCachedAndRateAware runs on TestCachedRunReusesTraces's
// platform, in a project of its own: the model-call cache (a run of the
// same calls by another revision makes no model call and gives the same
// outputs, marked in the trace and counted in the metrics; a new repeat
// index calls; a run or an application opting out calls), then a provider that answers 429 above
// two requests at once (every cell succeeds, few requests are refused,
// and the progress says the run waits on it).
func modelCallsCachedAndRateAware(t *testing.T, s *stack) {
	key := s.account(t, "modelcalls@example.com")
	ts := s.testset(t, key, "capitals", countries(3))
	_, appRev := s.workflow(t, key, "application", "app", completion)
	_, evRev := s.workflow(t, key, "evaluator", "ev", mock("pass", nil))
	steps := func(app string) map[string]any {
		return map[string]any{"testset_steps": []any{ts.revisionID}, "application_steps": []any{app},
			"evaluator_steps": map[string]any{evRev: "auto"}}
	}
	split := map[string]any{"is_split": true}
	// run waits for a run and returns its app cells by testcase and repeat.
	run := func(data map[string]any) (string, map[[2]any]result) {
		t.Helper()
		id := s.evaluate(t, key, data, split)
		r := s.waitRun(t, key, id, 60*time.Second, "success", "errors", "failure")
		require.Equal(t, "success", r["status"])
		appKey := stepKey(t, r, "invocation", "")
		rs := s.results(t, key, id)
		tc := map[string]string{}
		for _, c := range rs {
			if c.TestcaseID != "" {
				tc[c.ScenarioID] = c.TestcaseID
			}
		}
		out := map[[2]any]result{}
		for _, c := range rs {
			if c.StepKey == appKey {
				out[[2]any{tc[c.ScenarioID], c.RepeatIdx}] = c
			}
		}
		return id, out
	}
	globalMetrics := func(id string) map[string]any {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			ms := s.ok(t, "POST", "/api/evaluations/metrics/query", key, map[string]any{"metric": map[string]any{"run_id": id}}).json(t)
			for _, m := range ms["metrics"].([]any) {
				m := m.(map[string]any)
				if m["scenario_id"] == nil && m["timestamp"] == nil {
					if d, ok := m["data"].(map[string]any)["model_calls"].(map[string]any); ok {
						return d
					}
				}
			}
			if time.Now().After(deadline) {
				t.Errorf("no model_calls in the global metrics of run %s", id)
				return nil
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	count := func(m map[string]any, k string) float64 {
		stats, _ := m[k].(map[string]any)
		v, _ := stats["count"].(float64)
		return v
	}

	start := appCalls(s.llm) // the platform's earlier tests' calls
	first, one := run(steps(appRev))
	require.Len(t, one, 3)
	calls := appCalls(s.llm)
	require.Equal(t, 3, calls-start, "one model call per testcase")
	m := globalMetrics(first)
	assert.Equal(t, 3.0, count(m, "made"))
	assert.Equal(t, 0.0, count(m, "cached"))

	// The same calls again, from cells of another application revision
	// (an identical cell would be reused whole: identicalCellsReused):
	// answered from the cache, the same outputs.
	_, twinRev := s.workflow(t, key, "application", "app-twin", completion)
	second, two := run(steps(twinRev))
	assert.Equal(t, calls, appCalls(s.llm), "no model call for a run of identical calls")
	require.Len(t, two, 3)
	for k, c := range two {
		a, b := s.rootSpan(t, key, one[k].TraceID), s.rootSpan(t, key, c.TraceID)
		assert.Equal(t, ag(a, "data.outputs"), ag(b, "data.outputs"), "testcase %v", k)
		assert.NotEqual(t, one[k].TraceID, c.TraceID, "a trace of its own, not the first run's")
	}
	m = globalMetrics(second)
	assert.Equal(t, 0.0, count(m, "made"))
	assert.Equal(t, 3.0, count(m, "cached"))
	saved, _ := m["cost_saved"].(map[string]any)
	assert.Greater(t, saved["sum"], 0.0, "what gpt-4o-mini would have cost, by the price table")
	for _, c := range two {
		chat := s.childSpans(t, key, c.TraceID)
		if assert.Len(t, chat, 1) {
			assert.Equal(t, true, ag(chat[0], "meta.cache.hit"), "the model span is marked as answered from the cache")
		}
		break
	}

	// Two repeats: the repeat 0 calls are cached, those of repeat 1 made.
	data := steps(appRev)
	data["repeats"] = 2
	_, rep := run(data)
	require.Len(t, rep, 6)
	assert.Equal(t, calls+3, appCalls(s.llm), "repeat 1 samples the model")
	calls = appCalls(s.llm)

	// The run opts out: every call is made.
	data = steps(appRev)
	data["model_cache"] = false
	optOut, _ := run(data)
	assert.Equal(t, calls+3, appCalls(s.llm), "data.model_cache=false on the run calls the model")
	calls = appCalls(s.llm)
	assert.Equal(t, false, s.run(t, key, optOut)["data"].(map[string]any)["model_cache"])

	// The application opts out: its calls, identical to those cached
	// (the prompt is the same), are made.
	noCache := map[string]any{"uri": completion["uri"], "parameters": completion["parameters"], "model_cache": false}
	_, noCacheRev := s.workflow(t, key, "application", "app-no-cache", noCache)
	run(steps(noCacheRev))
	assert.Equal(t, calls+3, appCalls(s.llm), "data.model_cache=false on the application calls the model")

	// A provider that refuses more than two requests at once: the cells
	// queue on its limit instead of failing.
	s.llm.SetDelay(100 * time.Millisecond)
	s.llm.LimitConcurrency(2, 500*time.Millisecond)
	busy := s.testset(t, key, "busy", countries(24))
	data = map[string]any{"testset_steps": []any{busy.revisionID}, "application_steps": []any{appRev},
		"evaluator_steps": map[string]any{evRev: "auto"}, "concurrency": map[string]any{"batch_size": 12}}
	before := appCalls(s.llm)
	id := s.evaluate(t, key, data, nil)
	sawWait := false
	deadline := time.Now().Add(90 * time.Second)
	for {
		p := s.ok(t, "GET", "/api/evaluations/runs/"+id+"/progress", key, nil).obj(t, "progress")
		if w, _ := p["waiting"].([]any); len(w) > 0 {
			sawWait = true
			assert.NotEmpty(t, w[0].(map[string]any)["provider"])
		}
		if p["status"] != "running" && p["status"] != "pending" {
			break
		}
		require.True(t, time.Now().Before(deadline), "the rate-limited run did not end: %v", p)
		time.Sleep(100 * time.Millisecond)
	}
	r := s.run(t, key, id)
	require.Equal(t, "success", r["status"], "every cell succeeds behind the provider's limit")
	for _, c := range s.results(t, key, id) {
		assert.Equal(t, "success", c.Status, "cell %s/%s: %s", c.ScenarioID, c.StepKey, c.Error)
	}
	peak, refused := s.llm.Concurrency()
	made := appCalls(s.llm) - before
	t.Logf("24 cells at batch size 12 behind a limit of 2: %d requests, %d refused with 429, peak %d at once", made, refused, peak)
	assert.LessOrEqual(t, refused, 24/2, "the limit is met after a few refusals, not hammered")
	assert.True(t, sawWait, "the progress said the run waits on the provider's limit")
}

// childSpans polls for the spans of a trace under its root.
func (s *stack) childSpans(t *testing.T, key, traceID string) []map[string]any {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		r := s.ok(t, "POST", "/api/spans/query", key, map[string]any{"filtering": map[string]any{"conditions": []any{
			map[string]any{"field": "trace_id", "value": traceID},
			map[string]any{"field": "parent_id", "operator": "is_not", "value": nil}}},
			"windowing": map[string]any{"limit": 100}})
		var out struct {
			Spans []map[string]any `json:"spans"`
		}
		require.NoError(t, json.Unmarshal(r.body, &out))
		if len(out.Spans) > 0 || time.Now().After(deadline) {
			return out.Spans
		}
		time.Sleep(200 * time.Millisecond)
	}
}
