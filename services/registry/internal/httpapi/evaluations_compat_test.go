package httpapi_test

import (
	"bytes"
	"encoding/csv"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The evaluation records as the compatible platform's web app writes and
// reads them (its annotation drawers and queue form; run edits).

// TestEvaluationResultsUndeclaredStepKeys: an annotation drawer links its
// annotation to the scenario under "<invocation step key>.<evaluator
// slug>", a key the run does not declare, and sends the annotation's
// span_id with it. The cell is stored, read back, and exported; what no
// client sends (control characters, a scenario of another run) is still
// refused.
func TestEvaluationResultsUndeclaredStepKeys(t *testing.T) {
	s := newServer(t)
	rid := str(s.evalRun(t, m{"data": m{"steps": evalSteps(false)}})["id"])
	sid := s.evalScenario(t, rid)
	trace := strings.ReplaceAll(uuid.NewString(), "-", "")
	key := "application-a.my-rubric"

	out := s.ok(t, "POST", "/evaluations/results/", m{"results": []m{
		{"run_id": rid, "scenario_id": sid, "step_key": "application-a", "status": "success", "trace_id": strings.Repeat("ab", 16)},
		{"run_id": rid, "scenario_id": sid, "step_key": key, "status": "success",
			"trace_id": uuid.NewString(), "span_id": "0123456789abcdef-0123-4567-89ab-cdef"},
	}})
	require.EqualValues(t, 2, out["count"])
	got := s.ok(t, "POST", "/evaluations/results/query", m{"result": m{"run_id": rid, "step_keys": []string{key}}})
	require.EqualValues(t, 1, got["count"], "the undeclared cell reads back")
	cell := list(t, got, "results")[0].(map[string]any)
	assert.Equal(t, sid, cell["scenario_id"])
	assert.EqualValues(t, 0, cell["repeat_idx"], "no repeat_idx is repeat 0")
	assert.NotContains(t, cell, "span_id", "not a result field: dropped")
	// an upsert on the same cell replaces it
	s.ok(t, "POST", "/evaluations/results/", m{"results": []m{{"run_id": rid, "scenario_id": sid, "step_key": key, "status": "success", "trace_id": trace}}})
	got = s.ok(t, "POST", "/evaluations/results/query", m{"result": m{"run_id": rid, "step_keys": []string{key}}})
	require.EqualValues(t, 1, got["count"])
	assert.Equal(t, trace, list(t, got, "results")[0].(map[string]any)["trace_id"])

	// The export lists the cell after the declared ones.
	r := s.do(t, "GET", "/evaluations/runs/"+rid+"/export?format=csv", nil)
	require.Equal(t, http.StatusOK, r.status, string(r.body))
	rows, err := csv.NewReader(bytes.NewReader(r.body)).ReadAll()
	require.NoError(t, err)
	require.Len(t, rows, 2)
	at := -1
	for i, c := range rows[0] {
		if c == key+".trace_id" {
			at = i
		}
	}
	require.NotEqual(t, -1, at, "an export column for %s: %v", key, rows[0])
	assert.Equal(t, trace, rows[1][at])

	// still refused: a control character, a scenario of another run
	res := s.do(t, "POST", "/evaluations/results/", m{"results": []m{{"run_id": rid, "scenario_id": sid, "step_key": "a\nb"}}})
	assert.Equal(t, http.StatusUnprocessableEntity, res.status, string(res.body))
	assert.Contains(t, string(res.body), `"loc":["body","results",0,"step_key"]`)
	other := str(s.evalRun(t, m{"data": m{"steps": evalSteps(false)}})["id"])
	res = s.do(t, "POST", "/evaluations/results/", m{"results": []m{{"run_id": other, "scenario_id": sid, "step_key": key}}})
	assert.Equal(t, http.StatusUnprocessableEntity, res.status, string(res.body))
	assert.Contains(t, string(res.body), "scenario_id")
}

// TestEvaluationRunEditDropsSteps: an edit that drops steps takes their
// cells with it, and the scenarios only a dropped input step fed; an
// empty steps list is answered as [].
func TestEvaluationRunEditDropsSteps(t *testing.T) {
	s := newServer(t)
	steps := evalSteps(false)
	steps = append(steps, m{"key": "testset-b", "type": "input", "origin": "auto"})
	rid := str(s.evalRun(t, m{"data": m{"steps": steps}})["id"])
	fromA, fromB, bare, almost := s.evalScenario(t, rid), s.evalScenario(t, rid), s.evalScenario(t, rid), s.evalScenario(t, rid)
	undeclared := "application-a.my-rubric"
	s.ok(t, "POST", "/evaluations/results/", m{"results": []m{
		{"run_id": rid, "scenario_id": fromA, "step_key": "testset-a", "status": "success"},
		{"run_id": rid, "scenario_id": fromA, "step_key": "evaluator-a", "status": "success"},
		{"run_id": rid, "scenario_id": fromA, "step_key": undeclared, "status": "success"},
		{"run_id": rid, "scenario_id": fromB, "step_key": "testset-b", "status": "success"},
		{"run_id": rid, "scenario_id": fromB, "step_key": "evaluator-a", "status": "success"},
		// waits only on evaluator-a (and testset-b, which it has no cell of)
		{"run_id": rid, "scenario_id": almost, "step_key": "testset-a", "status": "success"},
		{"run_id": rid, "scenario_id": almost, "step_key": "application-a", "status": "success"},
		{"run_id": rid, "scenario_id": almost, "step_key": "evaluator-a", "status": "pending"},
	}})
	require.Equal(t, "pending", obj(t, s.ok(t, "GET", "/evaluations/scenarios/"+almost, nil), "scenario")["status"])

	// drop testset-b and evaluator-a
	kept := []m{steps[0], steps[1]}
	s.ok(t, "PATCH", "/evaluations/runs/"+rid, m{"run": m{"data": m{"steps": kept}}})
	sc := s.ok(t, "POST", "/evaluations/scenarios/query", m{"scenario": m{"run_id": rid}})
	var ids []string
	for _, x := range list(t, sc, "scenarios") {
		ids = append(ids, str(x.(map[string]any)["id"]))
	}
	assert.ElementsMatch(t, []string{fromA, bare, almost}, ids, "the scenario only testset-b fed is gone; one without cells stays")
	assert.Equal(t, "success", obj(t, s.ok(t, "GET", "/evaluations/scenarios/"+almost, nil), "scenario")["status"],
		"a scenario that waited only on dropped steps is done")
	res := s.ok(t, "POST", "/evaluations/results/query", m{"result": m{"run_id": rid}})
	var keys []string
	for _, x := range list(t, res, "results") {
		keys = append(keys, str(x.(map[string]any)["step_key"]))
	}
	assert.ElementsMatch(t, []string{"testset-a", undeclared, "testset-a", "application-a"}, keys, "the dropped steps' cells are gone, the undeclared one stays")

	// an empty steps list is said, not left out
	r := obj(t, s.ok(t, "PATCH", "/evaluations/runs/"+rid, m{"run": m{"data": m{"steps": []m{}}}}), "run")
	assert.Equal(t, []any{}, obj(t, r, "data")["steps"])
	r = obj(t, s.ok(t, "GET", "/evaluations/runs/"+rid, nil), "run")
	assert.Equal(t, []any{}, obj(t, r, "data")["steps"])
	sc = s.ok(t, "POST", "/evaluations/scenarios/query", m{"scenario": m{"run_id": rid}})
	assert.EqualValues(t, 1, sc["count"], "the scenarios an input step fed are gone with it; the one without cells stays")
}

// TestEvaluationDefaultQueueArchived: a run whose default queue is
// archived (it no longer has a human step) has no default queue to show:
// {count: 0}, as for a run that never had one.
func TestEvaluationDefaultQueueArchived(t *testing.T) {
	s := newServer(t)
	rid := str(s.evalRun(t, m{"data": m{"steps": evalSteps(true)}})["id"])
	assert.EqualValues(t, 1, s.ok(t, "GET", "/evaluations/runs/"+rid+"/queues/default", nil)["count"])
	s.ok(t, "PATCH", "/evaluations/runs/"+rid, m{"run": m{"data": m{"steps": evalSteps(false)}}})
	assert.Equal(t, m{"count": float64(0)}, m(s.ok(t, "GET", "/evaluations/runs/"+rid+"/queues/default", nil)))
}

// TestEvaluationCompareUndeclaredStepKeys: annotations linked under keys
// the runs do not declare are compared like declared annotation steps.
func TestEvaluationCompareUndeclaredStepKeys(t *testing.T) {
	s := newServer(t)
	rev := uuid.NewString()
	tcs := []string{uuid.NewString(), uuid.NewString()}
	key := "application-x.my-rubric"
	var runs []string
	for _, scores := range [][]float64{{1, 2}, {2, 4}} {
		id := s.compareRun(t, rev, tcs, []float64{0, 0})
		sc := s.ok(t, "POST", "/evaluations/scenarios/query", m{"scenario": m{"run_id": id}, "windowing": m{"order": "ascending"}})
		for i, x := range list(t, sc, "scenarios") {
			sid := str(x.(map[string]any)["id"])
			s.ok(t, "POST", "/evaluations/results/", m{"results": []m{{"run_id": id, "scenario_id": sid, "step_key": key, "status": "success"}}})
			s.ok(t, "POST", "/evaluations/metrics/", m{"metrics": []m{{"run_id": id, "scenario_id": sid, "status": "success",
				"data": m{key: m{"attributes.ag.data.outputs.score": m{"type": "numeric/continuous", "count": 1, "mean": scores[i]}}}}}})
		}
		runs = append(runs, id)
	}
	out := s.ok(t, "POST", "/evaluations/runs/compare", m{"run_ids": runs})
	var keys []string
	for _, x := range obj(t, out, "comparison")["metrics"].([]any) {
		for _, r := range x.(map[string]any)["runs"].([]any) {
			keys = append(keys, str(r.(map[string]any)["step_key"]))
		}
	}
	assert.Contains(t, keys, key, "the undeclared annotation is compared: %v", out)
}
