package httpapi_test

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// evalSteps is testset → application → auto evaluator, plus a human
// evaluator when human.
func evalSteps(human bool) []m {
	s := []m{
		{"key": "testset-a", "type": "input", "origin": "auto", "references": m{"testset_revision": m{"id": uuid.NewString()}}},
		{"key": "application-a", "type": "invocation", "origin": "auto", "inputs": []m{{"key": "__all_inputs__"}}},
		{"key": "evaluator-a", "type": "annotation", "origin": "auto", "inputs": []m{{"key": "__all_invocations__"}}},
	}
	if human {
		s = append(s, m{"key": "evaluator-h", "type": "annotation", "origin": "human"})
	}
	return s
}

func (s *server) evalRun(t *testing.T, run m) map[string]any {
	t.Helper()
	out := s.ok(t, "POST", "/evaluations/runs/", m{"runs": []m{run}})
	require.EqualValues(t, 1, out["count"])
	return list(t, out, "runs")[0].(map[string]any)
}

func (s *server) evalScenario(t *testing.T, runID string) string {
	t.Helper()
	out := s.ok(t, "POST", "/evaluations/scenarios/", m{"scenarios": []m{{"run_id": runID}}})
	return str(list(t, out, "scenarios")[0].(map[string]any)["id"])
}

func TestEvaluationRunsEnvelopesAndFlags(t *testing.T) {
	s := newServer(t)
	run := s.evalRun(t, m{"name": "r1", "data": m{"steps": evalSteps(true)}, "flags": m{"has_traces": true, "is_cached": true}, "tags": m{"team": "a"}})
	id := str(run["id"])
	assert.Equal(t, "2025-07-14", run["version"])
	assert.Equal(t, "pending", run["status"])
	assert.NotContains(t, run, "description", "nulls are omitted")
	flags := obj(t, run, "flags")
	assert.Equal(t, true, flags["has_testsets"])
	assert.Equal(t, true, flags["has_human"])
	assert.Equal(t, true, flags["is_queue"])
	assert.Equal(t, true, flags["is_cached"])
	assert.Equal(t, false, flags["has_traces"], "derived, not taken from the client")
	assert.EqualValues(t, 1, obj(t, run, "data")["repeats"], "repeats default to 1")

	got := s.ok(t, "GET", "/api/evaluations/runs/"+id, nil)
	assert.EqualValues(t, 1, got["count"])
	assert.Equal(t, id, obj(t, got, "run")["id"])
	assert.Equal(t, m{"count": float64(0)}, m(s.ok(t, "GET", "/evaluations/runs/"+uuid.NewString(), nil)), "unknown: count 0")

	// PATCH /runs/{id} keeps what it does not send; the flags follow the new steps.
	ed := s.ok(t, "PATCH", "/evaluations/runs/"+id, m{"run": m{"description": "d", "data": m{"steps": []m{{"key": "query-direct", "type": "input"},
		{"key": "evaluator-a", "type": "annotation", "origin": "auto"}}}}})
	r := obj(t, ed, "run")
	assert.Equal(t, "r1", r["name"])
	assert.Equal(t, "d", r["description"])
	assert.Equal(t, true, obj(t, r, "flags")["has_traces"])
	assert.Equal(t, false, obj(t, r, "flags")["is_queue"])
	// default queue archived: none to show (TestEvaluationDefaultQueueArchived)
	assert.EqualValues(t, 0, s.ok(t, "GET", "/evaluations/runs/"+id+"/queues/default", nil)["count"])
	q := list(t, s.ok(t, "POST", "/evaluations/queues/query", m{"queue": m{"run_id": id}, "include_archived": true}), "queues")[0].(map[string]any)
	assert.NotEmpty(t, q["deleted_at"])
	assert.Equal(t, true, obj(t, q, "flags")["is_default"])

	// bulk edit, query, delete
	out := s.ok(t, "PATCH", "/evaluations/runs/", m{"runs": []m{{"id": id, "status": "running"}}})
	assert.Equal(t, "running", list(t, out, "runs")[0].(map[string]any)["status"])
	res := s.do(t, "PATCH", "/evaluations/runs/", m{"runs": []m{{"id": uuid.NewString()}}})
	assert.Equal(t, http.StatusNotFound, res.status, string(res.body))
	res = s.do(t, "POST", "/evaluations/runs/", m{"runs": []m{{"status": "finished"}}})
	assert.Equal(t, http.StatusUnprocessableEntity, res.status)
	assert.Contains(t, string(res.body), `"loc":["body","runs",0,"status"]`)
	res = s.do(t, "POST", "/evaluations/runs/", m{"runs": []m{{"data": m{"steps": "x"}}}})
	assert.Equal(t, http.StatusUnprocessableEntity, res.status)
	assert.Contains(t, string(res.body), `"data","steps"`)
	res = s.do(t, "POST", "/evaluations/runs/", m{"runs": "x"})
	assert.Equal(t, http.StatusUnprocessableEntity, res.status)

	del := s.ok(t, "DELETE", "/evaluations/runs/", m{"run_ids": []string{id, uuid.NewString()}})
	assert.EqualValues(t, 1, del["count"])
	assert.Equal(t, []any{id}, del["run_ids"])
	assert.EqualValues(t, 0, s.ok(t, "GET", "/evaluations/runs/"+id, nil)["count"])
}

func TestEvaluationQueriesFilterAndWindow(t *testing.T) {
	s := newServer(t)
	tsRev := uuid.NewString()
	var ids []string
	for i := 0; i < testEvalLimit+5; i++ {
		steps := evalSteps(false)
		if i == 3 {
			steps[0]["references"] = m{"testset_revision": m{"id": tsRev, "slug": "rev-x"}}
		}
		tags := m{"parity": []string{"even", "odd"}[i%2]}
		ids = append(ids, str(s.evalRun(t, m{"data": m{"steps": steps}, "tags": tags, "flags": m{"is_live": i == 7}})["id"]))
	}
	// bounded without a limit; the windowing resumes
	first := s.ok(t, "POST", "/evaluations/runs/query", m{})
	assert.Len(t, list(t, first, "runs"), testEvalLimit)
	win := obj(t, first, "windowing")
	assert.Equal(t, ids[len(ids)-testEvalLimit], win["next"])
	rest := s.ok(t, "POST", "/evaluations/runs/query", m{"windowing": win})
	assert.Len(t, list(t, rest, "runs"), 5)
	assert.NotContains(t, rest, "windowing")
	page := s.ok(t, "POST", "/evaluations/runs/query", m{"windowing": m{"limit": 2, "order": "ascending"}})
	assert.Equal(t, ids[0], list(t, page, "runs")[0].(map[string]any)["id"])
	assert.EqualValues(t, 2, obj(t, page, "windowing")["limit"])

	for name, tc := range map[string]struct {
		body m
		want []string
	}{
		"references by id":   {m{"run": m{"references": []m{{"id": tsRev}}}}, []string{ids[3]}},
		"references by name": {m{"run": m{"references": m{"testset_revision": m{"slug": "rev-x"}}}}, []string{ids[3]}},
		"flags":              {m{"run": m{"flags": m{"is_live": true}}}, []string{ids[7]}},
		"ids":                {m{"run": m{"ids": []string{ids[1], ids[2]}}}, []string{ids[1], ids[2]}},
		"id and tags":        {m{"run": m{"ids": []string{ids[1], ids[2]}, "tags": m{"parity": "odd"}}}, []string{ids[1]}},
		"status":             {m{"run": m{"status": "success"}}, nil},
	} {
		t.Run(name, func(t *testing.T) {
			out := s.ok(t, "POST", "/evaluations/runs/query", tc.body)
			var got []string
			for _, r := range list(t, out, "runs") {
				got = append(got, str(r.(map[string]any)["id"]))
			}
			sort.Strings(got)
			want := append([]string(nil), tc.want...)
			sort.Strings(want)
			assert.Equal(t, want, got)
		})
	}
	for name, body := range map[string]m{
		"unknown filter":   {"run": m{"step_key": "x"}},
		"bad status":       {"run": m{"statuses": []string{"done"}}},
		"bad id":           {"run": m{"ids": []string{"nope"}}},
		"bad reference":    {"run": m{"references": []m{{"id": "nope"}}}},
		"bad windowing":    {"windowing": m{"order": "sideways"}},
		"filter not a map": {"run": "x"},
	} {
		res := s.do(t, "POST", "/evaluations/runs/query", body)
		assert.Equal(t, http.StatusUnprocessableEntity, res.status, "%s: %s", name, res.body)
	}
}

func TestEvaluationResultsUpsertAndScenarioStatus(t *testing.T) {
	s := newServer(t)
	run := s.evalRun(t, m{"data": m{"steps": evalSteps(false), "repeats": 2}})
	rid := str(run["id"])
	sid := s.evalScenario(t, rid)
	cell := func(step string, rep int, status string) m {
		return m{"run_id": rid, "scenario_id": sid, "step_key": step, "repeat_idx": rep, "status": status}
	}
	scenStatus := func() string {
		return str(obj(t, s.ok(t, "GET", "/evaluations/scenarios/"+sid, nil), "scenario")["status"])
	}
	out := s.ok(t, "POST", "/evaluations/results/", m{"results": []m{cell("testset-a", 0, "success"), cell("testset-a", 1, "success")}})
	assert.EqualValues(t, 2, out["count"])
	first := list(t, out, "results")[0].(map[string]any)
	assert.EqualValues(t, 0, first["repeat_idx"], "repeat 0 is shown")
	assert.Equal(t, "pending", scenStatus())

	tr := "ABCDEF0123456789abcdef0123456789"
	c := cell("testset-a", 0, "success")
	c["trace_id"] = tr
	for _, method := range []string{"PUT", "PATCH"} {
		out = s.ok(t, method, "/evaluations/results/", m{"results": []m{c}})
		r := list(t, out, "results")[0].(map[string]any)
		assert.Equal(t, first["id"], r["id"], "%s: the cell keeps its id", method)
		assert.Equal(t, "abcdef0123456789abcdef0123456789", r["trace_id"])
	}
	s.ok(t, "POST", "/evaluations/results/", m{"results": []m{cell("application-a", 0, "success"), cell("evaluator-a", 0, "success"), cell("evaluator-a", 1, "success")}})
	assert.Equal(t, "success", scenStatus())
	s.ok(t, "POST", "/evaluations/results/", m{"results": []m{cell("evaluator-a", 1, "errors")}})
	assert.Equal(t, "errors", scenStatus())

	q := s.ok(t, "POST", "/evaluations/results/query", m{"result": m{"run_id": rid, "step_keys": []string{"evaluator-a"}, "repeat_idx": 1}})
	require.EqualValues(t, 1, q["count"])
	q = s.ok(t, "POST", "/evaluations/results/query", m{"result": m{"trace_id": "0x" + tr}})
	require.EqualValues(t, 1, q["count"])
	q = s.ok(t, "POST", "/evaluations/results/query", m{"result": m{"statuses": []string{"success"}, "scenario_ids": []string{sid}}})
	assert.EqualValues(t, 4, q["count"])

	prog := obj(t, s.ok(t, "GET", "/evaluations/runs/"+rid+"/progress", nil), "progress")
	assert.Equal(t, m{"errors": float64(1), "total": float64(1)}, m(obj(t, prog, "scenarios")))
	assert.Equal(t, m{"success": float64(4), "errors": float64(1), "total": float64(5), "expected": float64(5)}, m(obj(t, prog, "results")))

	for name, body := range map[string]m{
		"control character": {"results": []m{cell("no\tpe", 0, "success")}}, // undeclared keys are stored, see TestEvaluationResultsUndeclaredStepKeys
		"negative repeat":   {"results": []m{cell("testset-a", -1, "success")}},
		"bad trace":         {"results": []m{{"run_id": rid, "scenario_id": sid, "step_key": "testset-a", "trace_id": "xyz"}}},
		"missing scenario":  {"results": []m{{"run_id": rid, "step_key": "testset-a"}}},
		"missing run":       {"results": []m{{"scenario_id": sid, "step_key": "testset-a"}}},
		"unknown run":       {"results": []m{{"run_id": uuid.NewString(), "scenario_id": sid, "step_key": "testset-a"}}},
		"repeat a string":   {"results": []m{{"run_id": rid, "scenario_id": sid, "step_key": "testset-a", "repeat_idx": "0"}}},
	} {
		res := s.do(t, "POST", "/evaluations/results/", body)
		assert.Equal(t, http.StatusUnprocessableEntity, res.status, "%s: %s", name, res.body)
		assert.Contains(t, string(res.body), `"loc":["body","results"`, name)
	}
	// the scenario of another run
	other := s.evalRun(t, m{"data": m{"steps": evalSteps(false)}})
	osid := s.evalScenario(t, str(other["id"]))
	res := s.do(t, "POST", "/evaluations/results/", m{"results": []m{cell("testset-a", 0, "success"), {"run_id": rid, "scenario_id": osid, "step_key": "testset-a"}}})
	assert.Equal(t, http.StatusUnprocessableEntity, res.status, string(res.body))
	assert.Contains(t, string(res.body), `"loc":["body","results",1,"scenario_id"]`)

	// delete by id
	del := s.ok(t, "DELETE", "/evaluations/results/"+str(first["id"]), nil)
	assert.Equal(t, first["id"], del["result_id"])
	assert.EqualValues(t, 0, s.ok(t, "GET", "/evaluations/results/"+str(first["id"]), nil)["count"])
}

func TestEvaluationScenariosAndMetrics(t *testing.T) {
	s := newServer(t)
	rid := str(s.evalRun(t, m{})["id"])
	sid := uuid.NewString()
	body := m{"scenarios": []m{{"id": sid, "run_id": rid, "tags": m{"k": "v"}, "timestamp": "2026-01-01T00:00:30Z", "interval": 1}}}
	a := list(t, s.ok(t, "POST", "/evaluations/scenarios/", body), "scenarios")[0].(map[string]any)
	b := list(t, s.ok(t, "POST", "/evaluations/scenarios/", body), "scenarios")[0].(map[string]any)
	assert.Equal(t, a, b, "a client-chosen id is idempotent in its run")
	other := str(s.evalRun(t, m{})["id"])
	res := s.do(t, "POST", "/evaluations/scenarios/", m{"scenarios": []m{{"id": sid, "run_id": other}}})
	assert.Equal(t, http.StatusConflict, res.status)
	q := s.ok(t, "POST", "/evaluations/scenarios/query", m{"scenario": m{"run_ids": []string{rid}, "timestamp": "2026-01-01T00:00:30Z"}})
	assert.EqualValues(t, 1, q["count"])
	ed := obj(t, s.ok(t, "PATCH", "/evaluations/scenarios/"+sid, m{"scenario": m{"status": "running"}}), "scenario")
	assert.NotContains(t, ed, "tags", "a full PUT")
	assert.NotContains(t, ed, "timestamp")

	// metrics: three shapes, each upserted on its key
	g := m{"run_id": rid, "data": m{"evaluator-a": m{"attributes.ag.data.outputs.score": m{"type": "numeric/continuous", "count": 1}}}}
	m1 := list(t, s.ok(t, "POST", "/evaluations/metrics/", m{"metrics": []m{g}}), "metrics")[0].(map[string]any)
	assert.Equal(t, "success", m1["status"])
	m2 := list(t, s.ok(t, "PUT", "/evaluations/metrics/", m{"metrics": []m{g}}), "metrics")[0].(map[string]any)
	assert.Equal(t, m1["id"], m2["id"])
	s.ok(t, "PATCH", "/evaluations/metrics/", m{"metrics": []m{{"run_id": rid, "scenario_id": sid}, {"run_id": rid, "timestamp": "2026-01-01T00:00:30Z", "interval": 1}}})
	all := s.ok(t, "POST", "/evaluations/metrics/query", m{"metric": m{"run_id": rid}})
	assert.EqualValues(t, 3, all["count"])
	res = s.do(t, "POST", "/evaluations/metrics/", m{"metrics": []m{{"run_id": rid, "scenario_id": sid, "timestamp": "2026-01-01T00:00:00Z"}}})
	assert.Equal(t, http.StatusUnprocessableEntity, res.status)
	assert.Contains(t, string(res.body), "timestamp")

	out := s.ok(t, "POST", "/evaluations/metrics/refresh", m{"metrics": m{"run_ids": []string{rid}}})
	assert.EqualValues(t, 2, out["count"], "a refresh without scenarios answers the run-level records (global and temporal)")
	require.Len(t, s.jobs.jobs, 1)
	assert.Equal(t, rid, s.jobs.jobs[0].RunID)
	assert.Equal(t, s.project.String(), s.jobs.jobs[0].ProjectID)
	res = s.do(t, "POST", "/evaluations/metrics/refresh", m{"metrics": m{}})
	assert.Equal(t, http.StatusUnprocessableEntity, res.status)

	// deleting the scenario takes its metric with it
	s.ok(t, "DELETE", "/evaluations/scenarios/", m{"scenario_ids": []string{sid}})
	all = s.ok(t, "POST", "/evaluations/metrics/query", m{"metric": m{"run_id": rid}})
	assert.EqualValues(t, 2, all["count"])
}

func TestEvaluationDefaultQueues(t *testing.T) {
	s := newServer(t)
	run := s.evalRun(t, m{"data": m{"steps": evalSteps(true), "repeats": 2}})
	rid := str(run["id"])
	q := obj(t, s.ok(t, "GET", "/evaluations/runs/"+rid+"/queues/default", nil), "queue")
	qid := str(q["id"])
	assert.NotContains(t, q, "deleted_at")

	res := s.do(t, "PATCH", "/evaluations/queues/"+qid, m{"queue": m{"data": m{"step_keys": []string{"evaluator-h"}}}})
	assert.Equal(t, http.StatusUnprocessableEntity, res.status, "filters on a default queue")
	res = s.do(t, "PATCH", "/evaluations/queues/"+qid, m{"queue": m{"flags": m{"is_default": false}}})
	assert.Equal(t, http.StatusConflict, res.status, "demoting")
	res = s.do(t, "DELETE", "/evaluations/queues/"+qid, nil)
	assert.Equal(t, http.StatusConflict, res.status, "hard delete")
	res = s.do(t, "POST", "/evaluations/queues/", m{"queues": []m{{"run_id": rid, "flags": m{"is_default": true}}}})
	assert.Equal(t, http.StatusConflict, res.status, "a second default queue")
	// assignments are fine on it
	u := uuid.NewString()
	q = obj(t, s.ok(t, "PATCH", "/evaluations/queues/"+qid, m{"queue": m{"name": "Q", "data": m{"user_ids": [][]string{{u}, {u}}}}}), "queue")
	assert.Equal(t, "Q", q["name"])

	// a plain queue with filters, and its scenarios
	s1, s2 := s.evalScenario(t, rid), s.evalScenario(t, rid)
	pq := list(t, s.ok(t, "POST", "/evaluations/queues/", m{"queues": []m{{"run_id": rid, "data": m{"scenario_ids": []string{s1}, "batch_size": 5}}}}), "queues")[0].(map[string]any)
	sc := s.ok(t, "POST", "/evaluations/queues/"+str(pq["id"])+"/scenarios/query", m{})
	require.EqualValues(t, 1, sc["count"])
	assert.Equal(t, s1, list(t, sc, "scenarios")[0].(map[string]any)["id"])
	sc = s.ok(t, "POST", "/evaluations/queues/"+qid+"/scenarios/query", m{})
	assert.EqualValues(t, 2, sc["count"], "the default queue covers the run: %s %s", s1, s2)
	sc = s.ok(t, "POST", "/evaluations/queues/"+qid+"/scenarios/query", m{"user_id": uuid.NewString()})
	assert.EqualValues(t, 0, sc["count"], "a user the queue does not assign")
	sc = s.ok(t, "POST", "/evaluations/queues/"+qid+"/scenarios/query", m{"user_id": u})
	assert.EqualValues(t, 2, sc["count"])
	res = s.do(t, "POST", "/evaluations/queues/", m{"queues": []m{{"run_id": rid, "data": m{"batch_size": 0}}}})
	assert.Equal(t, http.StatusUnprocessableEntity, res.status)
	s.ok(t, "DELETE", "/evaluations/queues/"+str(pq["id"]), nil)

	// no human step → archived; back → unarchived, same queue
	s.ok(t, "PATCH", "/evaluations/runs/"+rid, m{"run": m{"data": m{"steps": evalSteps(false)}}})
	assert.EqualValues(t, 0, s.ok(t, "GET", "/evaluations/runs/"+rid+"/queues/default", nil)["count"], "archived")
	assert.EqualValues(t, 0, s.ok(t, "POST", "/evaluations/queues/query", m{"queue": m{"run_id": rid}})["count"])
	assert.EqualValues(t, 1, s.ok(t, "POST", "/evaluations/queues/query", m{"queue": m{"run_id": rid}, "include_archived": true})["count"])
	r := obj(t, s.ok(t, "PATCH", "/evaluations/runs/"+rid, m{"run": m{"data": m{"steps": evalSteps(true)}}}), "run")
	assert.Equal(t, true, obj(t, r, "flags")["is_queue"])
	q = obj(t, s.ok(t, "GET", "/evaluations/runs/"+rid+"/queues/default", nil), "queue")
	assert.Equal(t, qid, q["id"])
	assert.NotContains(t, q, "deleted_at")
	// a run without human steps has none
	plain := str(s.evalRun(t, m{"data": m{"steps": evalSteps(false)}})["id"])
	assert.EqualValues(t, 0, s.ok(t, "GET", "/evaluations/runs/"+plain+"/queues/default", nil)["count"])
}

// TestEvaluationClosedRunRefusesEveryWrite sends every write route of a
// closed run's records and expects the compatible platform's 409 body.
func TestEvaluationClosedRunRefusesEveryWrite(t *testing.T) {
	s := newServer(t)
	rid := str(s.evalRun(t, m{"data": m{"steps": evalSteps(false)}, "flags": m{"is_active": true}})["id"])
	sid := s.evalScenario(t, rid)
	resID := str(list(t, s.ok(t, "POST", "/evaluations/results/", m{"results": []m{{"run_id": rid, "scenario_id": sid, "step_key": "testset-a"}}}), "results")[0].(map[string]any)["id"])
	metID := str(list(t, s.ok(t, "POST", "/evaluations/metrics/", m{"metrics": []m{{"run_id": rid}}}), "metrics")[0].(map[string]any)["id"])
	qID := str(list(t, s.ok(t, "POST", "/evaluations/queues/", m{"queues": []m{{"run_id": rid}}}), "queues")[0].(map[string]any)["id"])
	closed := s.ok(t, "POST", "/evaluations/runs/"+rid+"/close", nil)
	assert.Equal(t, true, obj(t, obj(t, closed, "run"), "flags")["is_closed"])

	result := m{"run_id": rid, "scenario_id": sid, "step_key": "testset-a"}
	for _, w := range []struct {
		method, path string
		body         any
	}{
		{"PATCH", "/evaluations/runs/", m{"runs": []m{{"id": rid, "name": "x"}}}},
		{"DELETE", "/evaluations/runs/", m{"run_ids": []string{rid}}},
		{"PATCH", "/evaluations/runs/" + rid, m{"run": m{"name": "x"}}},
		{"DELETE", "/evaluations/runs/" + rid, nil},
		{"POST", "/evaluations/scenarios/", m{"scenarios": []m{{"run_id": rid}}}},
		{"PATCH", "/evaluations/scenarios/", m{"scenarios": []m{{"id": sid}}}},
		{"DELETE", "/evaluations/scenarios/", m{"scenario_ids": []string{sid}}},
		{"PATCH", "/evaluations/scenarios/" + sid, m{"scenario": m{}}},
		{"DELETE", "/evaluations/scenarios/" + sid, nil},
		{"POST", "/evaluations/results/", m{"results": []m{result}}},
		{"PUT", "/evaluations/results/", m{"results": []m{result}}},
		{"PATCH", "/evaluations/results/", m{"results": []m{result}}},
		{"DELETE", "/evaluations/results/", m{"result_ids": []string{resID}}},
		{"DELETE", "/evaluations/results/" + resID, nil},
		{"POST", "/evaluations/metrics/", m{"metrics": []m{{"run_id": rid}}}},
		{"PUT", "/evaluations/metrics/", m{"metrics": []m{{"run_id": rid}}}},
		{"PATCH", "/evaluations/metrics/", m{"metrics": []m{{"run_id": rid}}}},
		{"DELETE", "/evaluations/metrics/", m{"metric_ids": []string{metID}}},
		{"DELETE", "/evaluations/metrics/" + metID, nil},
		{"POST", "/evaluations/metrics/refresh", m{"metrics": m{"run_id": rid}}},
		{"POST", "/evaluations/queues/", m{"queues": []m{{"run_id": rid}}}},
		{"PATCH", "/evaluations/queues/", m{"queues": []m{{"id": qID, "name": "x"}}}},
		{"DELETE", "/evaluations/queues/", m{"queue_ids": []string{qID}}},
		{"PATCH", "/evaluations/queues/" + qID, m{"queue": m{"name": "x"}}},
		{"DELETE", "/evaluations/queues/" + qID, nil},
	} {
		res := s.do(t, w.method, w.path, w.body)
		assert.Equal(t, http.StatusConflict, res.status, "%s %s: %s", w.method, w.path, res.body)
		if res.status == http.StatusConflict {
			assert.JSONEq(t, `{"detail":{"message":"Cannot modify a closed evaluation.","run_id":"`+rid+`"}}`, string(res.body), "%s %s", w.method, w.path)
		}
	}
	// nothing was claimed either
	cl := s.ok(t, "POST", "/internal/evaluations/results/claim", m{"run_id": rid, "worker": "w", "lease_seconds": 30,
		"cells": []m{{"scenario_id": sid, "step_key": "application-a", "repeat_idx": 0}}})
	assert.EqualValues(t, 0, cl["count"])
	// reads still work; open lets writes through
	assert.EqualValues(t, 1, s.ok(t, "GET", "/evaluations/results/"+resID, nil)["count"])
	s.ok(t, "POST", "/evaluations/runs/open", m{"run_ids": []string{rid}})
	s.ok(t, "PATCH", "/evaluations/runs/"+rid, m{"run": m{"name": "x"}})
}

func TestEvaluationWorkerRoutes(t *testing.T) {
	s := newServer(t)
	rid := str(s.evalRun(t, m{"data": m{"steps": evalSteps(false)}, "flags": m{"is_active": true}, "status": "running"})["id"])
	var sids []string
	for i := 0; i < 20; i++ {
		sids = append(sids, s.evalScenario(t, rid))
	}
	cells := func(order []string) []m {
		var out []m
		for _, sid := range order {
			for _, k := range []string{"testset-a", "application-a", "evaluator-a"} {
				out = append(out, m{"scenario_id": sid, "step_key": k, "repeat_idx": 0})
			}
		}
		return out
	}
	// two workers claim every cell at once, over HTTP: no cell twice
	rev := append([]string{}, sids...)
	sort.Sort(sort.Reverse(sort.StringSlice(rev)))
	var (
		wg  sync.WaitGroup
		got [2][]any
	)
	for i, order := range [][]string{sids, rev} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res := s.do(t, "POST", "/internal/evaluations/results/claim", m{"run_id": rid, "worker": fmt.Sprint("w", i), "lease_seconds": 60, "cells": cells(order)})
			if assert.Equal(t, http.StatusOK, res.status, string(res.body)) {
				got[i] = list(t, res.json(t), "results")
			}
		}()
	}
	wg.Wait()
	owner := map[string]int{}
	for i := range got {
		for _, x := range got[i] {
			r := x.(map[string]any)
			k := str(r["scenario_id"]) + "/" + str(r["step_key"])
			_, dup := owner[k]
			require.False(t, dup, "cell %s claimed twice", k)
			owner[k] = i
			assert.Equal(t, fmt.Sprint("w", i), obj(t, r, "meta", "claim")["worker"])
		}
	}
	assert.Len(t, owner, 60)

	// renew moves the claims a worker still holds and no other's (one
	// worker may have won every cell above: "me" is the first cell's); a
	// lapsed claim (lease 0.1 s) renewed before anyone took it over stays
	// the worker's.
	all := cells(sids)
	me := owner[str(all[0]["scenario_id"])+"/"+str(all[0]["step_key"])]
	var mine []m
	for _, c := range all {
		if owner[str(c["scenario_id"])+"/"+str(c["step_key"])] == me {
			mine = append(mine, c)
		}
	}
	w, other := fmt.Sprint("w", me), fmt.Sprint("w", 1-me)
	rn := s.ok(t, "POST", "/internal/evaluations/results/renew", m{"run_id": rid, "worker": w, "lease_seconds": 0.1, "cells": all})
	assert.EqualValues(t, len(mine), rn["count"], "only %s's cells", w)
	time.Sleep(150 * time.Millisecond) // the lease of 0.1 s is over
	rn = s.ok(t, "POST", "/internal/evaluations/results/renew", m{"run_id": rid, "worker": w, "lease_seconds": 60, "cells": mine})
	assert.EqualValues(t, len(mine), rn["count"], "a lapsed claim nobody took is renewed")
	cl := s.ok(t, "POST", "/internal/evaluations/results/claim", m{"run_id": rid, "worker": other, "lease_seconds": 60, "cells": mine})
	assert.EqualValues(t, 0, cl["count"], "a renewed claim is not taken over")
	rn = s.ok(t, "POST", "/internal/evaluations/results/renew", m{"run_id": rid, "worker": other, "lease_seconds": 60, "cells": mine})
	assert.EqualValues(t, 0, rn["count"], "%s's cells are not %s's to renew", w, other)
	res := s.do(t, "POST", "/internal/evaluations/results/renew", m{"run_id": rid, "worker": w, "lease_seconds": 0, "cells": mine})
	assert.Equal(t, http.StatusUnprocessableEntity, res.status, string(res.body))
	assert.Contains(t, string(res.body), "lease_seconds")

	// settle: cells running → the run keeps running
	st := s.ok(t, "POST", "/internal/evaluations/runs/"+rid+"/settle", nil)
	assert.Equal(t, "running", obj(t, st, "run")["status"])
	assert.EqualValues(t, 60, obj(t, st, "progress", "results")["running"])
	// every cell done → success, inactive
	var results []m
	for _, c := range cells(sids) {
		c["run_id"], c["status"] = rid, "success"
		results = append(results, c)
	}
	s.ok(t, "POST", "/evaluations/results/", m{"results": results})
	st = s.ok(t, "POST", "/internal/evaluations/runs/"+rid+"/settle", nil)
	assert.Equal(t, "success", obj(t, st, "run")["status"])
	assert.Equal(t, false, obj(t, st, "run", "flags")["is_active"])
	assert.EqualValues(t, 20, obj(t, st, "progress", "scenarios")["success"])

	// fail records the error
	f := s.ok(t, "POST", "/internal/evaluations/runs/"+rid+"/fail", m{"error": m{"message": "boom"}})
	assert.Equal(t, "failure", obj(t, f, "run")["status"])
	assert.Equal(t, "boom", obj(t, f, "run", "meta", "error")["message"])

	for name, body := range map[string]m{
		"no worker":   {"run_id": rid, "lease_seconds": 5, "cells": []m{}},
		"bad lease":   {"run_id": rid, "worker": "w", "lease_seconds": -1},
		"bad run":     {"run_id": "x", "worker": "w", "lease_seconds": 5},
		"bad cell":    {"run_id": rid, "worker": "w", "lease_seconds": 5, "cells": []m{{"scenario_id": "x", "step_key": "a"}}},
		"bad status":  {"run_id": rid, "worker": "w", "lease_seconds": 5, "statuses": []string{"nope"}},
		"cells a map": {"run_id": rid, "worker": "w", "lease_seconds": 5, "cells": m{}},
	} {
		res := s.do(t, "POST", "/internal/evaluations/results/claim", body)
		assert.Equal(t, http.StatusUnprocessableEntity, res.status, "%s: %s", name, res.body)
	}
	res = s.do(t, "POST", "/internal/evaluations/runs/"+uuid.NewString()+"/settle", nil)
	assert.Equal(t, http.StatusNotFound, res.status)

	// a request the gateway forwarded never reaches the worker's routes
	req, err := http.NewRequest("POST", s.url+"/internal/evaluations/runs/"+rid+"/fail", strings.NewReader(`{"error":"x"}`))
	require.NoError(t, err)
	setScope(req, s)
	req.Header.Set("X-Forwarded-Host", "gateway.example")
	fw, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	fw.Body.Close()
	assert.Equal(t, http.StatusNotFound, fw.StatusCode)
}

// TestEvaluationBulkAndByIDRoutes covers the bulk and by-id routes the
// other tests do not: each answers its envelope.
func TestEvaluationBulkAndByIDRoutes(t *testing.T) {
	s := newServer(t)
	rid := str(s.evalRun(t, m{"data": m{"steps": evalSteps(false)}})["id"])
	sid := s.evalScenario(t, rid)
	closed := s.ok(t, "POST", "/evaluations/runs/close", m{"run_ids": []string{rid}})
	assert.Equal(t, true, obj(t, list(t, closed, "runs")[0].(map[string]any), "flags")["is_closed"])
	s.ok(t, "POST", "/evaluations/runs/"+rid+"/open", nil)

	ed := s.ok(t, "PATCH", "/evaluations/scenarios/", m{"scenarios": []m{{"id": sid, "status": "running", "meta": m{"k": 1}}}})
	assert.Equal(t, "running", list(t, ed, "scenarios")[0].(map[string]any)["status"])

	res := list(t, s.ok(t, "POST", "/evaluations/results/", m{"results": []m{{"run_id": rid, "scenario_id": sid, "step_key": "testset-a"}}}), "results")[0].(map[string]any)
	del := s.ok(t, "DELETE", "/evaluations/results/", m{"result_ids": []string{str(res["id"])}})
	assert.Equal(t, []any{res["id"]}, del["result_ids"])

	mets := list(t, s.ok(t, "POST", "/evaluations/metrics/", m{"metrics": []m{{"run_id": rid}, {"run_id": rid, "scenario_id": sid}}}), "metrics")
	m0, m1 := str(mets[0].(map[string]any)["id"]), str(mets[1].(map[string]any)["id"])
	assert.Equal(t, m0, obj(t, s.ok(t, "GET", "/evaluations/metrics/"+m0, nil), "metric")["id"])
	assert.Equal(t, m0, s.ok(t, "DELETE", "/evaluations/metrics/"+m0, nil)["metric_id"])
	assert.EqualValues(t, 1, s.ok(t, "DELETE", "/evaluations/metrics/", m{"metric_ids": []string{m1, m0}})["count"])

	qs := list(t, s.ok(t, "POST", "/evaluations/queues/", m{"queues": []m{{"run_id": rid, "name": "a"}, {"run_id": rid, "name": "b"}}}), "queues")
	q0, q1 := str(qs[0].(map[string]any)["id"]), str(qs[1].(map[string]any)["id"])
	ed = s.ok(t, "PATCH", "/evaluations/queues/", m{"queues": []m{{"id": q0, "description": "d"}}})
	assert.Equal(t, "a", list(t, ed, "queues")[0].(map[string]any)["name"], "kept")
	assert.Equal(t, "d", obj(t, s.ok(t, "GET", "/evaluations/queues/"+q0, nil), "queue")["description"])
	assert.EqualValues(t, 2, s.ok(t, "DELETE", "/evaluations/queues/", m{"queue_ids": []string{q0, q1}})["count"])

	assert.Equal(t, sid, s.ok(t, "DELETE", "/evaluations/scenarios/"+sid, nil)["scenario_id"])
	assert.EqualValues(t, 0, s.ok(t, "DELETE", "/evaluations/scenarios/"+sid, nil)["count"])
	assert.Equal(t, rid, s.ok(t, "DELETE", "/evaluations/runs/"+rid, nil)["run_id"])
}

// TestEvaluationHostileBodies: bodies a client should never send are 4xx
// naming the field, never a 500.
func TestEvaluationHostileBodies(t *testing.T) {
	s := newServer(t)
	rid := str(s.evalRun(t, m{"data": m{"steps": evalSteps(false)}, "flags": m{"is_active": true}})["id"])
	sid := s.evalScenario(t, rid)
	deep := strings.Repeat(`{"a":`, 200) + `1` + strings.Repeat(`}`, 200)
	for _, c := range []struct{ method, path, body, field string }{
		{"POST", "/evaluations/results/query", `{"result":{"meta":` + deep + `}}`, `"result"`},
		{"POST", "/evaluations/runs/query", `{"run":{"references":[` + deep + `]}}`, `"run"`},
		{"POST", "/evaluations/results/", `{"results":[{"run_id":"` + rid + `","scenario_id":"` + sid + `","step_key":"testset-a","meta":` + deep + `}]}`, `"results"`},
		{"POST", "/evaluations/runs/", `{"runs":[{"data":{"steps":[{"key":"a","type":"annotation","schemas":{"outputs":` + deep + `}}]}}]}`, `"runs"`},
		{"POST", "/internal/evaluations/runs/" + rid + "/fail", `{"error":` + deep + `}`, `"error"`},
		{"POST", "/evaluations/results/query", `{"result":{"repeat_idxs":[1e15]}}`, `"result"`},
		{"POST", "/evaluations/results/query", `{"result":{"intervals":[-1]}}`, `"result"`},
		{"POST", "/internal/evaluations/results/claim", `{"run_id":"` + rid + `","worker":"w","lease_seconds":1e300,"cells":[]}`, `"lease_seconds"`},
		{"POST", "/evaluations/runs/", `{"runs":[{"data":{"repeats":100000}}]}`, `"repeats"`},
		{"POST", "/evaluations/runs/", `{"runs":[{"tags":{"n":1}}]}`, `"tags"`},
		{"POST", "/evaluations/runs/", `{"runs":[{"flags":{"is_live":"yes"}}]}`, `"is_live"`},
		{"POST", "/evaluations/scenarios/", `{"scenarios":[{"run_id":"` + rid + `","timestamp":"yesterday"}]}`, `"scenarios"`},
		{"POST", "/evaluations/queues/", `{"queues":[{"run_id":"` + rid + `","data":{"user_ids":[["nope"]]}}]}`, `"user_ids"`},
		{"DELETE", "/evaluations/runs/", `{"run_ids":["nope"]}`, `"run_ids"`},
		{"DELETE", "/evaluations/runs/", `{}`, `"run_ids"`},
	} {
		res := s.do(t, c.method, c.path, c.body)
		assert.Equal(t, http.StatusUnprocessableEntity, res.status, "%s %s: %.300s", c.method, c.path, res.body)
		assert.Contains(t, string(res.body), c.field, "%s %s", c.method, c.path)
	}
	// a partial flags edit never demotes a default queue
	hr := str(s.evalRun(t, m{"data": m{"steps": evalSteps(true)}})["id"])
	qid := str(obj(t, s.ok(t, "GET", "/evaluations/runs/"+hr+"/queues/default", nil), "queue")["id"])
	q := obj(t, s.ok(t, "PATCH", "/evaluations/queues/"+qid, m{"queue": m{"flags": m{"is_sequential": true}}}), "queue")
	assert.Equal(t, m{"is_sequential": true, "is_default": true}, m(obj(t, q, "flags")))
}
