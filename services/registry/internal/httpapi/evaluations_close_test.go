package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestCloseWithStatus: the compatible SDK closes the run it drove with
// the status it rolled up (?status=, or /close/{status} up to SDK 0.102),
// and a job failing after the close records its error without flipping
// that status.
func TestCloseWithStatus(t *testing.T) {
	s := newServer(t)
	rid := str(s.evalRun(t, m{})["id"])
	run := obj(t, s.ok(t, "POST", "/evaluations/runs/"+rid+"/close?status=errors", nil), "run")
	assert.Equal(t, "errors", run["status"])
	assert.Equal(t, true, obj(t, run, "flags")["is_closed"])
	run = obj(t, s.ok(t, "GET", "/evaluations/runs/"+rid, nil), "run")
	assert.Equal(t, "errors", run["status"])

	f := obj(t, s.ok(t, "POST", "/internal/evaluations/runs/"+rid+"/fail", m{"error": "late metrics job"}), "run")
	assert.Equal(t, "errors", f["status"], "a failing job does not flip a closed run")
	assert.Equal(t, "late metrics job", obj(t, f, "meta")["error"])

	old := str(s.evalRun(t, m{})["id"])
	run = obj(t, s.ok(t, "POST", "/evaluations/runs/"+old+"/close/success", nil), "run")
	assert.Equal(t, "success", run["status"])
	assert.Equal(t, true, obj(t, run, "flags")["is_closed"])

	other := str(s.evalRun(t, m{})["id"])
	for _, path := range []string{"/evaluations/runs/" + other + "/close?status=done", "/evaluations/runs/" + other + "/close/done"} {
		r := s.do(t, "POST", path, nil)
		assert.Equal(t, http.StatusUnprocessableEntity, r.status, path)
		assert.Contains(t, string(r.body), "status", path)
	}
	run = obj(t, s.ok(t, "POST", "/evaluations/runs/"+other+"/close", nil), "run")
	assert.Equal(t, true, obj(t, run, "flags")["is_closed"], "a close without a status still closes")
}

// TestMetricsQueryKeys: the filter under metrics (every compatible
// client's key) is read, metric stays an alias, booleans select by
// presence, and unknown top-level keys are refused.
func TestMetricsQueryKeys(t *testing.T) {
	s := newServer(t)
	rid, other := str(s.evalRun(t, m{})["id"]), str(s.evalRun(t, m{})["id"])
	sid := s.evalScenario(t, rid)
	for _, r := range []string{rid, other} {
		s.ok(t, "POST", "/evaluations/metrics/", m{"metrics": []m{{"run_id": r}, {"run_id": r, "timestamp": "2026-01-01T00:00:30Z", "interval": 1}}})
	}
	s.ok(t, "POST", "/evaluations/metrics/", m{"metrics": []m{{"run_id": rid, "scenario_id": sid}}})
	count := func(body m) any { return s.ok(t, "POST", "/evaluations/metrics/query", body)["count"] }
	assert.EqualValues(t, 3, count(m{"metrics": m{"run_id": rid}}), "not the other run's rows")
	assert.EqualValues(t, 3, count(m{"metric": m{"run_id": rid}}))
	assert.EqualValues(t, 1, count(m{"metrics": m{"run_id": rid, "scenario_ids": false, "timestamps": false}}), "the global row")
	assert.EqualValues(t, 1, count(m{"metrics": m{"run_id": rid, "scenario_ids": true, "timestamps": false}}))
	assert.EqualValues(t, 1, count(m{"metrics": m{"run_id": rid, "timestamps": true}}))
	assert.EqualValues(t, 4, count(m{"metrics": m{"run_ids": []string{rid, other}, "scenario_ids": false}, "windowing": m{}}))
	assert.EqualValues(t, 1, count(m{"metrics": m{"scenario_ids": []string{sid}}}))
	for _, body := range []m{
		{"metrics": m{"run_id": rid}, "filter": m{}},
		{"metrics": m{"run_id": rid}, "metric": m{"run_id": rid}},
		{"metrics": m{"run_id": rid, "scenario_ids": "yes"}},
	} {
		r := s.do(t, "POST", "/evaluations/metrics/query", body)
		assert.Equal(t, http.StatusUnprocessableEntity, r.status, "%v: %s", body, r.body)
	}
}
