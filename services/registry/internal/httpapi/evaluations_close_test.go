package httpapi_test

import (
	"net/http"
	"sort"
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

// TestResultsQueryTimestampRange: timestamp_from and timestamp_before keep
// the results whose timestamp is in [from, before), so a live run's
// workers read one day's cells (evalrun's dailybudget.go) rather than
// every cell of a run that lives for months; a result without a timestamp
// is outside every range, and a malformed bound is a 422 naming it.
func TestResultsQueryTimestampRange(t *testing.T) {
	s := newServer(t)
	rid := str(s.evalRun(t, m{"data": m{"steps": evalSteps(false)}})["id"])
	sid := s.evalScenario(t, rid)
	var rs []m
	for i, ts := range []any{"2026-03-01T23:59:59Z", "2026-03-02T00:00:00Z", "2026-03-02T12:00:00Z", "2026-03-03T00:00:00Z", nil} {
		r := m{"run_id": rid, "scenario_id": sid, "step_key": "application-a", "repeat_idx": i, "status": "success"}
		if ts != nil {
			r["timestamp"] = ts
		}
		rs = append(rs, r)
	}
	s.ok(t, "POST", "/evaluations/results/", m{"results": rs})
	repeats := func(f m) []int {
		f["run_id"] = rid
		out := []int{}
		for _, x := range list(t, s.ok(t, "POST", "/evaluations/results/query", m{"result": f, "windowing": m{"order": "ascending"}}), "results") {
			out = append(out, int(x.(map[string]any)["repeat_idx"].(float64)))
		}
		sort.Ints(out)
		return out
	}
	assert.Equal(t, []int{1, 2}, repeats(m{"timestamp_from": "2026-03-02T00:00:00Z", "timestamp_before": "2026-03-03T00:00:00Z"}), "one UTC day")
	assert.Equal(t, []int{1, 2, 3}, repeats(m{"timestamp_from": "2026-03-02T00:00:00Z"}))
	assert.Equal(t, []int{0}, repeats(m{"timestamp_before": "2026-03-02T00:00:00Z"}))
	assert.Equal(t, []int{0, 1, 2, 3, 4}, repeats(m{}))
	r := s.do(t, "POST", "/evaluations/results/query", m{"result": m{"run_id": rid, "timestamp_from": "yesterday"}})
	assert.Equal(t, http.StatusUnprocessableEntity, r.status, "%s", r.body)
	assert.Contains(t, string(r.body), "timestamp_from")
}
