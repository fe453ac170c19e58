package httpapi_test

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/services/registry/internal/evalreports"
	"github.com/assayhq/assay/services/registry/internal/tracingclient"
)

// compareRun writes a testset → application → evaluator run over rev
// through the routes, one scenario per score, with the score as the
// scenario's variational metric.
func (s *server) compareRun(t *testing.T, rev string, testcases []string, scores []float64) string {
	t.Helper()
	run := s.evalRun(t, m{"data": m{"steps": []m{
		{"key": "testset-x", "type": "input", "origin": "auto", "references": m{"testset_revision": m{"id": rev}}},
		{"key": "application-x", "type": "invocation", "origin": "auto"},
		{"key": "evaluator-x", "type": "annotation", "origin": "auto"}}}})
	id := str(run["id"])
	for i, score := range scores {
		sid := s.evalScenario(t, id)
		s.ok(t, "POST", "/evaluations/results/", m{"results": []m{
			{"run_id": id, "scenario_id": sid, "step_key": "testset-x", "status": "success", "testcase_id": testcases[i]},
			{"run_id": id, "scenario_id": sid, "step_key": "application-x", "status": "success", "trace_id": "0000000000000000000000000000a00" + string(rune('0'+i))},
			{"run_id": id, "scenario_id": sid, "step_key": "evaluator-x", "status": "success"}}})
		s.ok(t, "POST", "/evaluations/metrics/", m{"metrics": []m{{"run_id": id, "scenario_id": sid, "status": "success",
			"data": m{"evaluator-x": m{"attributes.ag.data.outputs.score": m{"type": "numeric/continuous", "count": 1, "mean": score}}}}}})
	}
	return id
}

func TestEvaluationCompareAndExport(t *testing.T) {
	s := newServer(t)
	rev := uuid.NewString()
	tcs := []string{uuid.NewString(), uuid.NewString(), uuid.NewString()}
	a := s.compareRun(t, rev, tcs, []float64{0, 0.5, 1})
	b := s.compareRun(t, rev, tcs, []float64{0.5, 0.5, 1})

	t.Run("compare", func(t *testing.T) {
		out := s.ok(t, "POST", "/api/evaluations/runs/compare", m{"run_ids": []string{a, b}})
		assert.EqualValues(t, 1, out["count"])
		c := obj(t, out, "comparison")
		assert.Equal(t, rev, c["testset_revision_id"])
		assert.Len(t, c["scenarios"], 3)
		metrics := c["metrics"].([]any)
		require.Len(t, metrics, 1)
		runs := metrics[0].(map[string]any)["runs"].([]any)
		second := runs[1].(map[string]any)
		// differences 0.5, 0, 0: mean 1/6, sd √(1/12) = 0.288675, se 0.166667,
		// t(0.975, 2) = 4.302653, half 0.717109
		assert.InDelta(t, 1.0/6, second["delta"], 1e-12)
		ci := second["ci"].(map[string]any)
		assert.Equal(t, "paired-t", ci["method"])
		assert.InDelta(t, 1.0/6-0.717109, ci["low"], 1e-5)
		assert.InDelta(t, 1.0/6+0.717109, ci["high"], 1e-5)

		// The test of the delta: t = (1/6)/(1/6) = 1 on 2 degrees of
		// freedom, whose distribution function 1/2 + x/(2√(2+x²)) gives
		// p = 2(1/2 - 1/(2√3)) = 0.422650; one test, so Holm changes
		// nothing and the adjusted interval is the 95% one.
		assert.Equal(t, "higher", metrics[0].(map[string]any)["direction"])
		assert.Equal(t, "inconclusive", second["verdict"])
		assert.InDelta(t, 0.422650, second["p_value"], 1e-6)
		assert.InDelta(t, 0.422650, second["p_adjusted"], 1e-6)
		adj := second["adjusted_ci"].(map[string]any)
		assert.InDelta(t, 0.95, adj["level"], 1e-12)
		assert.InDelta(t, ci["low"], adj["low"], 1e-12)
		// Testcases for 5% of the baseline's mean 0.5 (0.025) at 80%:
		// ((1.959964 + 0.841621)·0.288675/0.025)² = 1046.5 → 1047; three
		// detect 2.801585·0.288675/√3 = 0.466931.
		pw := second["power"].(map[string]any)
		assert.InDelta(t, 0.025, pw["difference"], 1e-12)
		assert.EqualValues(t, 1047, pw["testcases"])
		assert.InDelta(t, 0.466931, pw["detectable"], 1e-5)
		assert.Equal(t, map[string]any{"unit": "testcase", "correction": "holm", "tests": 1.0, "alpha": 0.05, "power": 0.8,
			"cost_per_point": evalreports.CostPerPointNote}, c["statistics"])
	})

	t.Run("compare refusals name the run", func(t *testing.T) {
		other := s.compareRun(t, uuid.NewString(), tcs[:1], []float64{1})
		r := s.do(t, "POST", "/evaluations/runs/compare", m{"run_ids": []string{a, other}})
		assert.Equal(t, http.StatusConflict, r.status, string(r.body))
		assert.Contains(t, string(r.body), other)
		for body, loc := range map[string]string{
			`{}`:                            `"loc":["body","run_ids"]`,
			`{"run_ids":"x"}`:               `"loc":["body","run_ids"]`,
			`{"run_ids":["` + a + `"]}`:     `"loc":["body","run_ids"]`,
			`{"run_ids":["` + a + `","x"]}`: `"loc":["body","run_ids",1]`,
			`{"run_ids":["` + uuid.NewString() + `","` + a + `"]}`: `"loc":["body","run_ids",0]`,
			`not json`: "",
		} {
			r := s.do(t, "POST", "/evaluations/runs/compare", body)
			assert.True(t, r.status == http.StatusUnprocessableEntity || r.status == http.StatusBadRequest, "%s: %d %s", body, r.status, r.body)
			assert.Contains(t, string(r.body), loc, body)
		}
	})

	t.Run("export", func(t *testing.T) {
		r := s.do(t, "GET", "/api/evaluations/runs/"+a+"/export?format=csv", nil)
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		assert.Equal(t, "text/csv; charset=utf-8", r.header.Get("Content-Type"))
		assert.Contains(t, r.header.Get("Content-Disposition"), "run-"+a+".csv")
		rows, err := csv.NewReader(bytes.NewReader(r.body)).ReadAll()
		require.NoError(t, err)
		require.Len(t, rows, 4)
		// The application's output follows the testcase (empty: no trace
		// of these ids is stored; TestEvaluationExportNamesSteps reads one).
		assert.Equal(t, []string{"scenario_id", "status", "testcase_id", "application-x.output", "testset-x.status", "testset-x.trace_id", "testset-x.error",
			"application-x.status", "application-x.trace_id", "application-x.error",
			"evaluator-x.status", "evaluator-x.trace_id", "evaluator-x.error", "evaluator-x.score"}, rows[0])
		assert.Equal(t, tcs[1], rows[2][2])
		assert.Equal(t, "0.5", rows[2][13])

		r = s.do(t, "GET", "/evaluations/runs/"+a+"/export?format=json", nil)
		require.Equal(t, http.StatusOK, r.status)
		doc := r.json(t)
		assert.EqualValues(t, 3, doc["count"])
		assert.Equal(t, a, doc["run_id"])

		r = s.do(t, "GET", "/evaluations/runs/"+a+"/export", nil)
		assert.Equal(t, "text/csv; charset=utf-8", r.header.Get("Content-Type"), "csv by default")
		r = s.do(t, "GET", "/evaluations/runs/"+a+"/export?format=xml", nil)
		assert.Equal(t, http.StatusUnprocessableEntity, r.status)
		assert.Contains(t, string(r.body), `"loc":["query","format"]`)
		r = s.do(t, "GET", "/evaluations/runs/"+uuid.NewString()+"/export", nil)
		assert.Equal(t, http.StatusNotFound, r.status)
		r = s.do(t, "GET", "/evaluations/runs/nope/export", nil)
		assert.Equal(t, http.StatusUnprocessableEntity, r.status, string(r.body))
	})
}

// TestEvaluationExportNamesSteps: a CSV export's headers name each step by
// the slug of what it references (the evaluator, the application, the
// testset) with the output leaf, not by the step key the compatible SDKs
// build from the revision's generated slug. Beside each scenario it
// carries the testcase's columns (the run's testset mappings), the
// application's output (its trace's root outputs) and the expected
// answer after it.
func TestEvaluationExportNamesSteps(t *testing.T) {
	s := newServer(t)
	ts := obj(t, s.ok(t, "POST", "/simple/testsets", m{"testset": m{"slug": "capitals", "data": m{"testcases": []m{
		{"data": m{"country": "Canada", "correct_answer": "Ottawa", "note": m{"hard": true}}}}}}}), "testset")
	tcID := str(obj(t, list(t, obj(t, ts, "data"), "testcases")[0].(map[string]any))["id"])
	run := s.evalRun(t, m{"data": m{"steps": []m{
		{"key": "testset-1f2e3d4c5b6a", "type": "input", "origin": "auto", "references": m{"testset": m{"slug": "capitals"}}},
		{"key": "application-3de4d96cbf1e", "type": "invocation", "origin": "auto", "references": m{"application": m{"slug": "capitals-bot"}}},
		{"key": "evaluator-64e6a4c031c3", "type": "annotation", "origin": "auto", "references": m{"evaluator": m{"slug": "capital-exact"}}}},
		"mappings": []m{
			{"column": m{"kind": "testset", "name": "country"}, "step": m{"key": "testset-1f2e3d4c5b6a", "path": "data.country"}},
			{"column": m{"kind": "testset", "name": "correct_answer"}, "step": m{"key": "testset-1f2e3d4c5b6a", "path": "data.correct_answer"}},
			{"column": m{"kind": "testset", "name": "note"}, "step": m{"key": "testset-1f2e3d4c5b6a", "path": "data.note"}},
			{"column": m{"kind": "invocation", "name": "outputs"}, "step": m{"key": "application-3de4d96cbf1e", "path": "attributes.ag.data.outputs"}}}}})
	id := str(run["id"])
	sid := s.evalScenario(t, id)
	const trace = "0af7651916cd43dd8448eb211c80319c"
	s.tracing.result = tracingclient.Result{TraceIDs: []string{trace}, Traces: []tracingclient.Trace{{TraceID: trace, Spans: map[string]json.RawMessage{
		"b7ad6b7169203331": json.RawMessage(`{"span_id":"b7ad6b7169203331","attributes":{"ag":{"data":{"outputs":"Toronto"}}}}`),
		"c7ad6b7169203331": json.RawMessage(`{"span_id":"c7ad6b7169203331","parent_id":"b7ad6b7169203331","attributes":{"ag":{"data":{"outputs":"inner"}}}}`)}}}}
	s.ok(t, "POST", "/evaluations/results/", m{"results": []m{
		{"run_id": id, "scenario_id": sid, "step_key": "testset-1f2e3d4c5b6a", "status": "success", "testcase_id": tcID},
		{"run_id": id, "scenario_id": sid, "step_key": "application-3de4d96cbf1e", "status": "success", "trace_id": "0af76519-16cd-43dd-8448-eb211c80319c"},
		{"run_id": id, "scenario_id": sid, "step_key": "evaluator-64e6a4c031c3", "status": "success"}}})
	s.ok(t, "POST", "/evaluations/metrics/", m{"metrics": []m{{"run_id": id, "scenario_id": sid, "status": "success",
		"data": m{"evaluator-64e6a4c031c3": m{"attributes.ag.data.outputs.success": m{"type": "binary", "count": 1,
			"freq": []m{{"value": true, "count": 1, "density": 1}}}},
			"application-3de4d96cbf1e": m{"attributes.ag.metrics.duration.cumulative": m{"type": "numeric/continuous", "count": 1, "mean": 12.5}}}}}})
	r := s.do(t, "GET", "/evaluations/runs/"+id+"/export?format=csv", nil)
	require.Equal(t, http.StatusOK, r.status, string(r.body))
	rows, err := csv.NewReader(bytes.NewReader(r.body)).ReadAll()
	require.NoError(t, err)
	require.Len(t, rows, 2)
	assert.Equal(t, []string{"scenario_id", "status", "testcase_id",
		"country", "note", "capitals-bot.output", "correct_answer",
		"capitals.status", "capitals.trace_id", "capitals.error",
		"capitals-bot.status", "capitals-bot.trace_id", "capitals-bot.error",
		"capital-exact.status", "capital-exact.trace_id", "capital-exact.error",
		"capitals-bot.duration", "capital-exact.success"}, rows[0])
	assert.Equal(t, []string{tcID, "Canada", `{"hard":true}`, "Toronto", "Ottawa"}, rows[1][2:7])
	assert.Equal(t, []string{"success", "12.5", "1"}, []string{rows[1][13], rows[1][16], rows[1][17]})
	// The outputs were read by the invocation's trace id, in one call.
	last := s.tracing.calls[len(s.tracing.calls)-1]
	assert.Contains(t, string(last.Filtering), `"trace_id"`)
	assert.Contains(t, string(last.Filtering), trace)

	// The JSON export (the console's results page) keeps its columns.
	r = s.do(t, "GET", "/evaluations/runs/"+id+"/export?format=json", nil)
	require.Equal(t, http.StatusOK, r.status, string(r.body))
	assert.NotContains(t, string(r.body), "Ottawa")
}
