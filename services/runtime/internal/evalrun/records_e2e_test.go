package evalrun_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// projectOf finds the project id in an admin account answer.
func projectOf(t *testing.T, v any) string {
	t.Helper()
	var found string
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if p, ok := x["project_id"].(string); ok && found == "" {
				found = p
			}
			if p, ok := x["project"].(map[string]any); ok && found == "" {
				if id, ok := p["id"].(string); ok {
					found = id
				}
			}
			for _, e := range x {
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	require.NotEmpty(t, found, "a project id in %v", v)
	return found
}

// dashed writes 32 hex digits as a UUID, as the web app sends trace ids.
func dashed(h string) string {
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// TestAnnotationDrawerFlow replays, call by call, the compatible web
// app's annotation drawer on a run's results table: it creates the
// annotation trace, marks the scenario done (and the run, once every
// scenario is), links the annotation to the scenario under a step key
// the run does not declare ("<invocation step key>.<evaluator slug>",
// with the annotation's span_id, which is not a result field), and
// merges its metrics. The cell reads back, and the run's metrics, once
// refreshed, measure it.
func TestAnnotationDrawerFlow(t *testing.T) {
	s := startStack(t)
	acct := s.do(t, "POST", "/api/admin/simple/accounts/", "Access "+adminKey,
		map[string]any{"accounts": map[string]any{"a": map[string]any{"user": map[string]any{"email": "drawer@example.com"}}}})
	require.Equal(t, 200, acct.status, string(acct.body))
	key := "ApiKey " + acct.obj(t, "accounts", "a", "api_keys")["key"].(string)
	q := "?project_id=" + projectOf(t, acct.json(t))

	inv := "application-3f2a9c1b7d0e"
	run := s.ok(t, "POST", "/api/evaluations/runs/"+q, key, map[string]any{"runs": []any{map[string]any{
		"name": "drawer", "status": "running", "data": map[string]any{"steps": []any{
			map[string]any{"key": "testset-5d1e0a2b9c3f", "type": "input", "origin": "custom"},
			map[string]any{"key": inv, "type": "invocation", "origin": "custom", "inputs": []any{map[string]any{"key": "__all_inputs__"}}},
			map[string]any{"key": "evaluator-other", "type": "annotation", "origin": "human", "inputs": []any{map[string]any{"key": "__all_invocations__"}}},
		}}}}}).json(t)["runs"].([]any)[0].(map[string]any)
	rid := run["id"].(string)
	sid := s.ok(t, "POST", "/api/evaluations/scenarios/"+q, key, map[string]any{"scenarios": []any{map[string]any{"run_id": rid}}}).
		json(t)["scenarios"].([]any)[0].(map[string]any)["id"].(string)
	// the application's trace, which the annotation links to
	it := s.ok(t, "POST", "/api/invocations/"+q, key, map[string]any{"invocation": map[string]any{
		"data": map[string]any{"outputs": "Paris"}, "references": map[string]any{"application": map[string]any{"slug": "capitals"}}}}).obj(t, "invocation")
	invTrace, invSpan := it["trace_id"].(string), it["span_id"].(string)
	s.ok(t, "POST", "/api/evaluations/results/"+q, key, map[string]any{"results": []any{
		map[string]any{"run_id": rid, "scenario_id": sid, "step_key": "testset-5d1e0a2b9c3f", "status": "success"},
		map[string]any{"run_id": rid, "scenario_id": sid, "step_key": inv, "status": "success", "trace_id": invTrace},
	}})

	// 1. the annotation trace
	tr := s.do(t, "POST", "/api/simple/traces/"+q, key, map[string]any{"trace": map[string]any{
		"data":       map[string]any{"outputs": map[string]any{"score": 4, "comment": "fine"}},
		"references": map[string]any{"evaluator": map[string]any{"slug": "my-rubric"}},
		"links":      map[string]any{inv: map[string]any{"trace_id": invTrace, "span_id": invSpan}},
		"origin":     "human", "kind": "adhoc", "channel": "web",
		"meta": map[string]any{"name": "My rubric", "description": "", "tags": []any{}},
	}})
	require.Less(t, tr.status, 300, string(tr.body))
	ann := tr.obj(t, "trace")
	annTrace, annSpan := ann["trace_id"].(string), ann["span_id"].(string)

	// 2. the scenario is done; every scenario is, so the run is too
	s.ok(t, "PATCH", "/api/evaluations/scenarios/"+q, key, map[string]any{"scenarios": []any{map[string]any{"id": sid, "status": "success"}}})
	s.ok(t, "POST", "/api/evaluations/scenarios/query"+q, key, map[string]any{"scenario": map[string]any{"run_ids": []any{rid}}, "windowing": map[string]any{"limit": 1000}})
	runs := s.ok(t, "POST", "/api/evaluations/runs/query"+q, key, map[string]any{"run": map[string]any{"ids": []any{rid}}}).json(t)["runs"].([]any)
	existing := runs[0].(map[string]any)
	existing["id"], existing["status"] = rid, "success"
	s.ok(t, "PATCH", "/api/evaluations/runs/"+rid+q, key, map[string]any{"run": existing})

	// 3. the link to the scenario
	k := inv + ".my-rubric"
	s.ok(t, "POST", "/api/evaluations/results/"+q, key, map[string]any{"results": []any{map[string]any{
		"run_id": rid, "scenario_id": sid, "step_key": k, "status": "success",
		"trace_id": dashed(annTrace), "span_id": dashed(annSpan + annSpan)}}})

	// 4. the metrics merge (fire-and-forget in the app)
	s.ok(t, "POST", "/api/evaluations/metrics/query"+q, key, map[string]any{"metrics": map[string]any{"run_ids": []any{rid}, "scenario_ids": []any{sid}}, "windowing": map[string]any{}})
	s.ok(t, "POST", "/api/evaluations/metrics/"+q, key, map[string]any{"metrics": []any{map[string]any{"run_id": rid, "scenario_id": sid, "status": "success",
		"data": map[string]any{k: map[string]any{"attributes.ag.data.outputs.score": map[string]any{"type": "numeric/continuous", "count": 1, "min": 4, "max": 4, "sum": 4, "mean": 4}}}}}})

	// the cell reads back, its trace the annotation's
	got := s.ok(t, "POST", "/api/evaluations/results/query"+q, key, map[string]any{"result": map[string]any{"run_id": rid, "step_keys": []any{k}}}).json(t)
	require.EqualValues(t, 1, got["count"], "%v", got)
	cell := got["results"].([]any)[0].(map[string]any)
	assert.Equal(t, annTrace, cell["trace_id"])
	assert.Equal(t, sid, cell["scenario_id"])
	assert.Equal(t, "success", s.run(t, key, rid)["status"])

	// the run's metrics, refreshed, measure the undeclared step
	s.ok(t, "POST", "/api/evaluations/metrics/refresh"+q, key, map[string]any{"metrics": map[string]any{"run_id": rid}})
	deadline := time.Now().Add(60 * time.Second)
	var last string
	for {
		ms := s.ok(t, "POST", "/api/evaluations/metrics/query"+q, key, map[string]any{"metric": map[string]any{"run_id": rid}})
		var env struct {
			Metrics []struct {
				RunID      string                     `json:"run_id"`
				ScenarioID *string                    `json:"scenario_id"`
				Timestamp  *string                    `json:"timestamp"`
				Data       map[string]json.RawMessage `json:"data"`
			} `json:"metrics"`
		}
		require.NoError(t, json.Unmarshal(ms.body, &env))
		for _, m := range env.Metrics {
			if m.RunID == rid && m.ScenarioID == nil && m.Timestamp == nil {
				last = ""
				for step := range m.Data {
					last += step + " "
				}
				if d, ok := m.Data[k]; ok && strings.Contains(string(d), "attributes.ag.data.outputs.score") {
					return
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run's global metrics never measured %s; steps measured: %s", k, last)
		}
		time.Sleep(300 * time.Millisecond)
	}
}
