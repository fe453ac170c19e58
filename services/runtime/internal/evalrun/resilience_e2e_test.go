package evalrun_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/pkg/testutil/llmtest"
)

// appCalls counts the model calls the app made (the evaluators here are
// mocks and make none).
func appCalls(l *llmtest.Server) int { return len(l.Requests()) }

// TestFailingEvaluatorGivesErrors: an evaluator that raises fails its
// cells with the error recorded, the scenarios and the run are errors.
func TestFailingEvaluatorGivesErrors(t *testing.T) {
	s := startStack(t)
	key := s.account(t, "fail@example.com")
	ts := s.testset(t, key, "capitals", countries(2))
	_, appRev := s.workflow(t, key, "application", "app", completion)
	badData := mock("error", nil)
	badData["schemas"] = map[string]any{"outputs": map[string]any{"type": "object", "properties": map[string]any{
		"score": map[string]any{"type": "number"}, "success": map[string]any{"type": "boolean"}}}}
	_, badRev := s.workflow(t, key, "evaluator", "bad", badData)
	_, goodRev := s.workflow(t, key, "evaluator", "good", mock("pass", nil))
	id := s.evaluate(t, key, map[string]any{"testset_steps": []any{ts.revisionID}, "application_steps": []any{appRev},
		"evaluator_steps": map[string]any{badRev: "auto", goodRev: "auto"}}, nil)
	run := s.waitRun(t, key, id, 60*time.Second, "errors", "success", "failure")
	require.Equal(t, "errors", run["status"])
	assert.Equal(t, false, run["flags"].(map[string]any)["is_active"], "a terminal status ends the run's activity")
	cells := byStep(s.results(t, key, id))
	bad := cells[stepKey(t, run, "annotation", badRev)]
	require.Len(t, bad, 2)
	for _, c := range bad {
		assert.Equal(t, "failure", c.Status)
		assert.Contains(t, string(c.Error), "the mock was asked to fail")
		assert.Len(t, c.TraceID, 32, "a failed cell keeps its trace")
	}
	for _, c := range cells[stepKey(t, run, "annotation", goodRev)] {
		assert.Equal(t, "success", c.Status)
	}
	for _, sc := range s.scenarios(t, key, id) {
		assert.Equal(t, "errors", sc["status"])
	}

	// The metrics count each failed cell as a score of 0.
	metrics := func() (map[string]any, []any) {
		ms := s.ok(t, "POST", "/api/evaluations/metrics/query", key, map[string]any{"metric": map[string]any{"run_id": id}}).json(t)
		var global map[string]any
		var ids []any
		for _, m := range ms["metrics"].([]any) {
			m := m.(map[string]any)
			ids = append(ids, m["id"])
			if m["scenario_id"] == nil && m["timestamp"] == nil {
				global = m["data"].(map[string]any)
			}
		}
		return global, ids
	}
	global, ids := metrics()
	require.NotNil(t, global, "a global metric")
	assert.Len(t, ids, 3, "the global record and one per scenario")
	score, _ := global[stepKey(t, run, "annotation", badRev)].(map[string]any)["attributes.ag.data.outputs.score"].(map[string]any)
	require.NotNil(t, score, "%v", global)
	assert.Equal(t, 2.0, score["count"])
	assert.Equal(t, 0.0, score["mean"])

	// metrics/refresh recomputes them (a metrics job) once deleted.
	s.ok(t, "DELETE", "/api/evaluations/metrics/", key, map[string]any{"metric_ids": ids})
	_, ids = metrics()
	require.Empty(t, ids)
	s.ok(t, "POST", "/api/evaluations/metrics/refresh", key, map[string]any{"metrics": map[string]any{"run_id": id}})
	deadline := time.Now().Add(30 * time.Second)
	for {
		again, ids := metrics()
		if len(ids) == 3 {
			assert.Equal(t, global, again, "the same figures")
			break
		}
		require.True(t, time.Now().Before(deadline), "metrics not recomputed")
		time.Sleep(200 * time.Millisecond)
	}
}

// TestStopTakesEffectWithinSeconds: a stopped run stops claiming and
// executing: within seconds no more app cells are run.
func TestStopTakesEffectWithinSeconds(t *testing.T) {
	s := startStack(t)
	s.llm.SetDelay(300 * time.Millisecond)
	key := s.account(t, "stop@example.com")
	ts := s.testset(t, key, "many", countries(40))
	_, appRev := s.workflow(t, key, "application", "app", completion)
	id := s.evaluate(t, key, map[string]any{"testset_steps": []any{ts.revisionID}, "application_steps": []any{appRev},
		"concurrency": map[string]any{"batch_size": 2}}, nil)
	deadline := time.Now().Add(30 * time.Second)
	for appCalls(s.llm) < 4 {
		require.True(t, time.Now().Before(deadline), "the run never started")
		time.Sleep(50 * time.Millisecond)
	}
	s.ok(t, "POST", "/api/simple/evaluations/"+id+"/stop", key, nil)
	atStop := appCalls(s.llm)
	time.Sleep(3 * time.Second)
	after := appCalls(s.llm)
	time.Sleep(3 * time.Second)
	assert.Equal(t, after, appCalls(s.llm), "no model call more than 3 s after the stop")
	assert.Less(t, after, 40, "the run did not finish")
	t.Logf("stopped at %d of 40 app calls; %d made in all", atStop, after)
	run := s.run(t, key, id)
	assert.Equal(t, false, run["flags"].(map[string]any)["is_active"])

	// Started again, the run picks up where it stopped: the cells the stop
	// cut short were handed back, and every cell ends a success.
	s.llm.SetDelay(0)
	s.ok(t, "POST", "/api/simple/evaluations/"+id+"/start", key, nil)
	run = s.waitRun(t, key, id, 60*time.Second, "success", "errors", "failure")
	require.Equal(t, "success", run["status"])
	assert.Len(t, s.scenarios(t, key, id), 40)
	app := byStep(s.results(t, key, id))[stepKey(t, run, "invocation", "")]
	assert.Len(t, app, 40)
	for _, c := range app {
		assert.Equal(t, "success", c.Status)
	}
	assert.LessOrEqual(t, appCalls(s.llm), 40+2, "at most the cells in flight at the stop ran again")
}

// TestWorkerKilledMidRunIsResumed: a worker killed with SIGKILL in the
// middle of a run leaves jobs and claimed cells that the other worker
// takes over after the ack wait and the lease, with the shipped defaults
// within 30 s of the kill: the run finishes with one scenario per
// testcase, one result per cell and one trace per cell.
func TestWorkerKilledMidRunIsResumed(t *testing.T) {
	s := startStack(t, "RUNTIME_EVAL_JOBS=0") // the gateway's runtime runs no jobs
	var defaults []string                     // workerEnv without the short ack wait and lease
	for _, kv := range workerEnv {
		if !strings.HasPrefix(kv, "RUNTIME_EVAL_ACK_WAIT=") && !strings.HasPrefix(kv, "RUNTIME_EVAL_LEASE=") {
			defaults = append(defaults, kv)
		}
	}
	a := s.workerWith(t, defaults, "RUNTIME_EVAL_CHUNK=5")
	s.llm.SetDelay(150 * time.Millisecond)
	key := s.account(t, "kill@example.com")
	const n = 30
	ts := s.testset(t, key, "many", countries(n))
	_, appRev := s.workflow(t, key, "application", "app", completion)
	_, evRev := s.workflow(t, key, "evaluator", "ev", mock("pass", nil))
	id := s.evaluate(t, key, map[string]any{"testset_steps": []any{ts.revisionID}, "application_steps": []any{appRev},
		"evaluator_steps": map[string]any{evRev: "auto"}, "concurrency": map[string]any{"batch_size": 3}}, nil)
	// Kill the worker once some app cells are done and others in flight.
	appKey := stepKey(t, s.run(t, key, id), "invocation", "")
	doneApps := func() int {
		n := 0
		for _, r := range s.results(t, key, id) {
			if r.StepKey == appKey && r.Status == "success" {
				n++
			}
		}
		return n
	}
	deadline := time.Now().Add(30 * time.Second)
	for doneApps() < 6 {
		require.True(t, time.Now().Before(deadline), "the run never started")
		time.Sleep(20 * time.Millisecond)
	}
	a.Kill()
	killed := time.Now()
	callsAtKill, doneAtKill := appCalls(s.llm), doneApps()
	s.workerWith(t, defaults, "RUNTIME_EVAL_CHUNK=5")
	run := s.waitRun(t, key, id, 30*time.Second-time.Since(killed), "success", "errors", "failure")
	require.Equal(t, "success", run["status"])
	t.Logf("killed after %d app calls with %d cells done; the run was success %.1f s after the kill; %d calls in all for %d testcases",
		callsAtKill, doneAtKill, time.Since(killed).Seconds(), appCalls(s.llm), n)
	// The survivor ran only cells not done at the kill: a done cell is
	// never run again.
	assert.LessOrEqual(t, appCalls(s.llm), callsAtKill+(n-doneAtKill))

	scs := s.scenarios(t, key, id)
	assert.Len(t, scs, n, "no duplicated scenario")
	rs := s.results(t, key, id)
	seen := map[string]bool{}
	for _, r := range rs {
		k := fmt.Sprintf("%s/%s/%d", r.ScenarioID, r.StepKey, r.RepeatIdx)
		assert.False(t, seen[k], "duplicated result %s", k)
		seen[k] = true
		assert.Equal(t, "success", r.Status, k)
	}
	assert.Len(t, rs, 3*n, "input, app and evaluator cell per scenario")
	// One trace per app and evaluator cell: every root referencing the
	// revision and a testcase is the cell's deterministic trace.
	for _, rev := range []string{appRev, evRev} {
		roots := s.roots(t, key, []any{map[string]any{"field": "references", "operator": "in",
			"value": []any{map[string]any{"id": rev}}}}, n, 30*time.Second)
		traces := map[string]map[string]bool{}
		for _, r := range roots {
			tc := refIDs(r)["testcase"]
			if traces[tc] == nil {
				traces[tc] = map[string]bool{}
			}
			traces[tc][r["trace_id"].(string)] = true
		}
		assert.Len(t, traces, n)
		for tc, ids := range traces {
			assert.Len(t, ids, 1, "traces of revision %s, testcase %s", rev, tc)
		}
	}
}

// TestTwoWorkersNeverRunACellTwice: two workers share a run (process jobs
// of 4 scenarios) and the model server sees exactly one call per app cell.
func TestTwoWorkersNeverRunACellTwice(t *testing.T) {
	s := startStack(t, "RUNTIME_EVAL_CHUNK=4")
	s.worker(t, "RUNTIME_EVAL_CHUNK=4")
	s.llm.SetDelay(100 * time.Millisecond)
	key := s.account(t, "two@example.com")
	const n = 40
	ts := s.testset(t, key, "many", countries(n))
	_, appRev := s.workflow(t, key, "application", "app", completion)
	_, evRev := s.workflow(t, key, "evaluator", "ev", mock("pass", nil))
	id := s.evaluate(t, key, map[string]any{"testset_steps": []any{ts.revisionID}, "application_steps": []any{appRev},
		"evaluator_steps": map[string]any{evRev: "auto"}}, nil)
	run := s.waitRun(t, key, id, 120*time.Second, "success", "errors", "failure")
	require.Equal(t, "success", run["status"])
	assert.Equal(t, n, appCalls(s.llm), "one model call per app cell")
	rs := s.results(t, key, id)
	assert.Len(t, rs, 3*n)
	workers := map[string]int{}
	for _, r := range rs {
		assert.Equal(t, "success", r.Status)
		if r.TestcaseID == "" {
			workers[r.Meta.Worker]++
		}
	}
	assert.Len(t, workers, 2, "both workers ran cells: %v", workers)
	t.Logf("cells per worker: %v", sorted(workers))
}

// TestLongCellRunsOnce: a cell that runs longer than the lease keeps its
// claim while its worker lives (the worker renews it), so a second job
// over the same cells (a process request while they run) on either
// worker waits for it instead of taking it over: one model call per
// application cell.
func TestLongCellRunsOnce(t *testing.T) {
	s := startStack(t) // a 4 s lease (workerEnv)
	s.worker(t)
	s.llm.SetDelay(7 * time.Second)
	key := s.account(t, "long@example.com")
	const n = 2
	ts := s.testset(t, key, "long", countries(n))
	_, appRev := s.workflow(t, key, "application", "app", completion)
	id := s.evaluate(t, key, map[string]any{"testset_steps": []any{ts.revisionID}, "application_steps": []any{appRev},
		"concurrency": map[string]any{"batch_size": n}}, nil)
	deadline := time.Now().Add(30 * time.Second)
	for appCalls(s.llm) < n {
		require.True(t, time.Now().Before(deadline), "the run never started")
		time.Sleep(20 * time.Millisecond)
	}
	r := s.do(t, "POST", "/api/simple/evaluations/"+id+"/process", key, map[string]any{})
	require.Contains(t, []int{200, 202}, r.status, string(r.body))
	run := s.waitRun(t, key, id, 60*time.Second, "success", "errors", "failure")
	require.Equal(t, "success", run["status"])
	assert.Equal(t, n, appCalls(s.llm), "one model call per application cell")
	for _, c := range byStep(s.results(t, key, id))[stepKey(t, run, "invocation", "")] {
		assert.Equal(t, "success", c.Status)
	}
}

// TestRerunFailedCellsMergesIntoTheRun: app cells that failed (the model
// answered 500) are re-run by a process job with statuses [failure]: the
// same run, the same scenarios, now success.
func TestRerunFailedCellsMergesIntoTheRun(t *testing.T) {
	s := startStack(t)
	key := s.account(t, "rerun@example.com")
	ts := s.testset(t, key, "capitals", countries(5))
	_, appRev := s.workflow(t, key, "application", "app", completion)
	_, evRev := s.workflow(t, key, "evaluator", "ev", mock("pass", nil))
	s.llm.FailNextWith(llmtest.Error{Status: 500}, 2)
	id := s.evaluate(t, key, map[string]any{"testset_steps": []any{ts.revisionID}, "application_steps": []any{appRev},
		"evaluator_steps": map[string]any{evRev: "auto"}, "concurrency": map[string]any{"batch_size": 1}}, nil)
	run := s.waitRun(t, key, id, 60*time.Second, "errors", "success", "failure")
	require.Equal(t, "errors", run["status"])
	appKey := stepKey(t, run, "invocation", "")
	failed := 0
	for _, c := range byStep(s.results(t, key, id))[appKey] {
		if c.Status == "failure" {
			failed++
		}
	}
	require.Equal(t, 2, failed)
	before := s.scenarios(t, key, id)

	r := s.do(t, "POST", "/api/simple/evaluations/"+id+"/process", key, map[string]any{"statuses": []any{"failure"}})
	require.Contains(t, []int{200, 202}, r.status, string(r.body))
	run = s.waitRun(t, key, id, 60*time.Second, "success")
	assert.Len(t, s.scenarios(t, key, id), len(before), "merged into the same scenarios")
	rs := s.results(t, key, id)
	assert.Len(t, rs, 3*5)
	for _, c := range rs {
		assert.Equal(t, "success", c.Status, "%s %s", c.StepKey, c.Error)
	}
	assert.Equal(t, 5+2, appCalls(s.llm), "only the failed cells ran again")
}

// TestShutdownHandsJobsBack: a worker stopped with SIGTERM mid-run stops
// claiming, finishes the cells it runs, hands the rest back and its jobs
// to the stream; another worker finishes the run without running any cell
// a second time and without waiting for a lease.
func TestShutdownHandsJobsBack(t *testing.T) {
	s := startStack(t, "RUNTIME_EVAL_JOBS=0")
	a := s.worker(t, "RUNTIME_EVAL_CHUNK=5", "RUNTIME_EVAL_LEASE=10m")
	s.llm.SetDelay(150 * time.Millisecond)
	key := s.account(t, "drain@example.com")
	const n = 30
	ts := s.testset(t, key, "many", countries(n))
	_, appRev := s.workflow(t, key, "application", "app", completion)
	_, evRev := s.workflow(t, key, "evaluator", "ev", mock("pass", nil))
	id := s.evaluate(t, key, map[string]any{"testset_steps": []any{ts.revisionID}, "application_steps": []any{appRev},
		"evaluator_steps": map[string]any{evRev: "auto"}, "concurrency": map[string]any{"batch_size": 2}}, nil)
	deadline := time.Now().Add(30 * time.Second)
	for appCalls(s.llm) < 6 {
		require.True(t, time.Now().Before(deadline), "the run never started")
		time.Sleep(20 * time.Millisecond)
	}
	a.Stop()
	atStop := appCalls(s.llm)
	s.worker(t, "RUNTIME_EVAL_CHUNK=5", "RUNTIME_EVAL_LEASE=10m")
	// With a 10-minute lease, finishing in time shows nothing was left
	// claimed by the stopped worker.
	run := s.waitRun(t, key, id, 60*time.Second, "success", "errors", "failure")
	require.Equal(t, "success", run["status"])
	assert.Equal(t, n, appCalls(s.llm), "no app cell ran twice (%d calls when the first worker stopped)", atStop)
	assert.Len(t, s.results(t, key, id), 3*n)
}

// TestRetriesRecoverAFailedCell: with max_retries the failed invocation
// is tried again after retry_delay, in the same cell and trace.
func TestRetriesRecoverAFailedCell(t *testing.T) {
	s := startStack(t)
	key := s.account(t, "retry@example.com")
	ts := s.testset(t, key, "capitals", countries(3))
	_, appRev := s.workflow(t, key, "application", "app", completion)
	s.llm.FailNextWith(llmtest.Error{Status: 500}, 1)
	id := s.evaluate(t, key, map[string]any{"testset_steps": []any{ts.revisionID}, "application_steps": []any{appRev},
		"concurrency": map[string]any{"batch_size": 1, "max_retries": 2, "retry_delay": 0.2}}, nil)
	run := s.waitRun(t, key, id, 60*time.Second, "success", "errors", "failure")
	require.Equal(t, "success", run["status"])
	assert.Equal(t, 3+1, appCalls(s.llm), "one retry")
	for _, c := range byStep(s.results(t, key, id))[stepKey(t, run, "invocation", "")] {
		assert.Equal(t, "success", c.Status)
	}
}
