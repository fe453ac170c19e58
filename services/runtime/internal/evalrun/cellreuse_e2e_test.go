package evalrun_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// identicalCellsReused runs on TestCachedRunReusesTraces's platform, in a
// project of its own: a second run identical to a first one (same
// testset, application and evaluator revisions) reuses every cell of the
// first, application and evaluators alike: no model call, no new trace
// (its results point at the first run's traces, marked meta.cache
// "cell"), the same scores, and its metrics count the calls as cached.
// A run opting out (data.model_cache false) invokes every cell again.
func identicalCellsReused(t *testing.T, s *stack) {
	key := s.account(t, "cellreuse@example.com")
	ts := s.testset(t, key, "capitals", countries(3))
	_, appRev := s.workflow(t, key, "application", "app", completion)
	_, emRev := s.workflow(t, key, "evaluator", "em", exactMatch)
	data := map[string]any{"testset_steps": []any{ts.revisionID}, "application_steps": []any{appRev},
		"evaluator_steps": map[string]any{emRev: "auto"}}
	type cellID struct {
		tc, step string
		rep      int
	}
	run := func(data map[string]any) (string, map[cellID]result) {
		t.Helper()
		id := s.evaluate(t, key, data, nil)
		r := s.waitRun(t, key, id, 60*time.Second, "success", "errors", "failure", "cancelled")
		require.Equal(t, "success", r["status"])
		kind := map[string]string{stepKey(t, r, "invocation", ""): "app", stepKey(t, r, "annotation", emRev): "em"}
		rs := s.results(t, key, id)
		tc := map[string]string{}
		for _, c := range rs {
			if c.TestcaseID != "" {
				tc[c.ScenarioID] = c.TestcaseID
			}
		}
		out := map[cellID]result{}
		for _, c := range rs {
			if k, ok := kind[c.StepKey]; ok {
				out[cellID{tc[c.ScenarioID], k, c.RepeatIdx}] = c
			}
		}
		require.Len(t, out, 6, "3 application and 3 evaluator cells")
		return id, out
	}
	// global is the run's global metrics once its model calls are in.
	global := func(id string) map[string]any {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			ms := s.ok(t, "POST", "/api/evaluations/metrics/query", key, map[string]any{"metric": map[string]any{"run_id": id}}).json(t)
			for _, m := range ms["metrics"].([]any) {
				m := m.(map[string]any)
				if m["scenario_id"] == nil && m["timestamp"] == nil {
					if d := m["data"].(map[string]any); d["model_calls"] != nil {
						return d
					}
				}
			}
			require.True(t, time.Now().Before(deadline), "no global metrics with model_calls for run %s", id)
			time.Sleep(200 * time.Millisecond)
		}
	}
	count := func(m map[string]any, k string) float64 {
		stats, _ := m["model_calls"].(map[string]any)[k].(map[string]any)
		v, _ := stats["count"].(float64)
		return v
	}
	// scores is the run's global metrics of its evaluator, by the
	// evaluator's revision (step keys differ between runs).
	scores := func(id string, m map[string]any) any {
		t.Helper()
		return m[stepKey(t, s.run(t, key, id), "annotation", emRev)]
	}

	before := appCalls(s.llm)
	first, one := run(data)
	require.Equal(t, 3, appCalls(s.llm)-before, "one model call per testcase")
	m1 := global(first)
	traces := s.rootTraceCount(t, key)
	require.Equal(t, 6, traces, "a trace per cell")

	// The same evaluation again: every cell reused.
	calls := appCalls(s.llm)
	second, two := run(data)
	assert.Equal(t, calls, appCalls(s.llm), "no model call")
	for k, c := range two {
		assert.Equal(t, one[k].TraceID, c.TraceID, "cell %v points at the first run's trace", k)
		assert.Equal(t, "cell", c.Meta.Cache, "cell %v is marked reused", k)
		assert.Equal(t, "success", c.Status)
	}
	m2 := global(second)
	assert.Equal(t, 0.0, count(m2, "made"))
	assert.Equal(t, 3.0, count(m2, "cached"), "the application cells' calls, saved")
	saved, _ := m2["model_calls"].(map[string]any)["cost_saved"].(map[string]any)
	assert.Greater(t, saved["sum"], 0.0)
	s1, _ := json.Marshal(scores(first, m1))
	s2, _ := json.Marshal(scores(second, m2))
	assert.NotEqual(t, "null", string(s1), "the evaluator's metrics")
	assert.JSONEq(t, string(s1), string(s2), "the same scores")
	assert.Equal(t, traces, s.rootTraceCount(t, key), "no new trace")

	// Opting out: every cell invoked again, with traces of its own.
	data["model_cache"] = false
	_, three := run(data)
	assert.Equal(t, calls+3, appCalls(s.llm), "data.model_cache=false invokes and calls the model")
	for k, c := range three {
		assert.NotEqual(t, one[k].TraceID, c.TraceID, "cell %v has a trace of its own", k)
		assert.Empty(t, c.Meta.Cache)
	}
}

// rootTraceCount counts the project's traces (root spans), once the
// count holds still for a second (the writer's flush).
func (s *stack) rootTraceCount(t *testing.T, key string) int {
	t.Helper()
	last, same := -1, 0
	for range 60 {
		r := s.ok(t, "POST", "/api/spans/query", key, map[string]any{"filtering": map[string]any{"conditions": []any{
			map[string]any{"field": "parent_id", "operator": "is", "value": nil}}},
			"windowing": map[string]any{"limit": 1000}})
		var out struct {
			Spans []map[string]any `json:"spans"`
		}
		require.NoError(t, json.Unmarshal(r.body, &out))
		if len(out.Spans) == last {
			if same++; same >= 4 {
				return last
			}
		} else {
			last, same = len(out.Spans), 0
		}
		time.Sleep(250 * time.Millisecond)
	}
	return last
}
