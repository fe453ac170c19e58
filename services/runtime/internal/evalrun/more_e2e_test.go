package evalrun_test

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTestsetApplication: without evaluators the run is the app's cells.
func TestTestsetApplication(t *testing.T) {
	s := startStack(t)
	key := s.account(t, "ta@example.com")
	ts := s.testset(t, key, "capitals", countries(3))
	_, appRev := s.workflow(t, key, "application", "app", completion)
	id := s.evaluate(t, key, map[string]any{"testset_steps": []any{ts.revisionID}, "application_steps": []any{appRev}}, nil)
	run := s.waitRun(t, key, id, 60*time.Second, "success", "errors", "failure")
	require.Equal(t, "success", run["status"])
	cells := byStep(s.results(t, key, id))
	app := cells[stepKey(t, run, "invocation", "")]
	require.Len(t, app, 3)
	for _, c := range app {
		assert.Equal(t, "success", c.Status)
		root := s.rootSpan(t, key, c.TraceID)
		assert.Equal(t, "workflow", root["span_type"])
	}
}

// TestTestsetEvaluators: evaluators straight on the testcases read the
// testcase's data (with testcase_id) as inputs, and have no outputs.
func TestTestsetEvaluators(t *testing.T) {
	s := startStack(t)
	key := s.account(t, "te@example.com")
	ts := s.testset(t, key, "capitals", countries(3))
	_, evRev := s.workflow(t, key, "evaluator", "echo", mock("echo", nil))
	id := s.evaluate(t, key, map[string]any{"testset_steps": []any{ts.revisionID}, "evaluator_steps": map[string]any{evRev: "auto"}}, nil)
	run := s.waitRun(t, key, id, 60*time.Second, "success", "errors", "failure")
	require.Equal(t, "success", run["status"])
	cells := byStep(s.results(t, key, id))
	evs := cells[stepKey(t, run, "annotation", evRev)]
	require.Len(t, evs, 3)
	for _, c := range evs {
		root := s.rootSpan(t, key, c.TraceID)
		in := ag(root, "data.inputs").(map[string]any)
		assert.Contains(t, ts.testcaseIDs, in["testcase_id"])
		assert.NotEmpty(t, in["country"])
		assert.Equal(t, in, ag(root, "data.outputs"), "echo answers its inputs")
	}
}

// TestQueryEvaluators: a saved query's traces are the scenarios (batch);
// each evaluator cell is linked to the trace it evaluates and reads its
// outputs.
func TestQueryEvaluators(t *testing.T) {
	s := startStack(t)
	key := s.account(t, "qe@example.com")
	_, appRev := s.workflow(t, key, "application", "app", completion)
	var traceIDs []string
	for _, c := range []string{"France", "Peru", "Japan"} {
		r := s.ok(t, "POST", "/services/completion/v0/invoke", key, map[string]any{
			"references": map[string]any{"application_revision": map[string]any{"id": appRev}},
			"data":       map[string]any{"inputs": map[string]any{"country": c}}})
		traceIDs = append(traceIDs, r.json(t)["trace_id"].(string))
	}
	for _, tid := range traceIDs {
		s.rootSpan(t, key, tid)
	}
	qRev := s.saveQuery(t, key, "invocations")
	_, evRev := s.workflow(t, key, "evaluator", "echo", mock("echo", nil))
	id := s.evaluate(t, key, map[string]any{"query_steps": []any{qRev}, "evaluator_steps": map[string]any{evRev: "auto"}}, nil)
	run := s.waitRun(t, key, id, 60*time.Second, "success", "errors", "failure")
	require.Equal(t, "success", run["status"])
	cells := byStep(s.results(t, key, id))
	in := cells[stepKey(t, run, "input", "")]
	require.Len(t, in, 3)
	src := map[string]string{}
	for _, c := range in {
		assert.Contains(t, traceIDs, c.TraceID)
		src[c.ScenarioID] = c.TraceID
	}
	evs := cells[stepKey(t, run, "annotation", evRev)]
	require.Len(t, evs, 3)
	for _, c := range evs {
		root := s.rootSpan(t, key, c.TraceID)
		assert.Equal(t, "annotation", root["trace_type"])
		links, _ := root["links"].([]any)
		require.Len(t, links, 1)
		assert.Equal(t, src[c.ScenarioID], links[0].(map[string]any)["trace_id"])
		assert.NotEmpty(t, ag(root, "data.inputs.country"), "the source trace's inputs")
	}
}

// TestPinnedRevisionsAreExecuted: new testset, application and evaluator
// revisions committed during and after a run change nothing in it: the
// traces reference exactly the pinned revisions and testcases.
func TestPinnedRevisionsAreExecuted(t *testing.T) {
	s := startStack(t)
	s.llm.SetDelay(200 * time.Millisecond)
	key := s.account(t, "pin@example.com")
	ts := s.testset(t, key, "capitals", countries(6))
	appID, appRev := s.workflow(t, key, "application", "app", completion)
	evID, evRev := s.workflow(t, key, "evaluator", "ev", mock("pass", nil))
	id := s.evaluate(t, key, map[string]any{"testset_steps": []any{ts.revisionID}, "application_steps": []any{appRev},
		"evaluator_steps": map[string]any{evRev: "auto"}, "concurrency": map[string]any{"batch_size": 1}}, nil)
	commit := func(tag string) {
		s.ok(t, "PUT", "/api/simple/testsets/"+ts.id, key, map[string]any{"testset": map[string]any{"id": ts.id,
			"data": map[string]any{"testcases": []any{map[string]any{"data": map[string]any{"country": tag, "expected": tag}}}}}})
		params := map[string]any{"prompt": map[string]any{"messages": []any{map[string]any{"role": "user", "content": tag + " {{country}}"}},
			"llm_config": map[string]any{"model": "gpt-4o-mini"}}}
		s.ok(t, "PUT", "/api/simple/applications/"+appID, key, map[string]any{"application": map[string]any{"id": appID,
			"data": map[string]any{"uri": "agenta:builtin:completion:v0", "parameters": params}}})
		s.ok(t, "PUT", "/api/simple/evaluators/"+evID, key, map[string]any{"evaluator": map[string]any{"id": evID,
			"data": map[string]any{"uri": "agenta:custom:mock:v0", "parameters": map[string]any{"key": "fail"}}}})
	}
	deadline := time.Now().Add(30 * time.Second)
	for appCalls(s.llm) < 1 {
		require.True(t, time.Now().Before(deadline))
		time.Sleep(20 * time.Millisecond)
	}
	commit("during")
	run := s.waitRun(t, key, id, 60*time.Second, "success", "errors", "failure")
	commit("after")
	require.Equal(t, "success", run["status"], "the pinned evaluator passes; the new one would fail")
	cells := byStep(s.results(t, key, id))
	require.Len(t, cells[stepKey(t, run, "invocation", "")], 6)
	for _, c := range cells[stepKey(t, run, "invocation", "")] {
		root := s.rootSpan(t, key, c.TraceID)
		refs := refIDs(root)
		assert.Equal(t, appRev, refs["application_revision"])
		assert.Equal(t, ts.revisionID, refs["testset_revision"])
		assert.Contains(t, ts.testcaseIDs, refs["testcase"])
		assert.NotContains(t, ag(root, "data.outputs"), "during")
	}
	for _, c := range cells[stepKey(t, run, "annotation", "")] {
		root := s.rootSpan(t, key, c.TraceID)
		assert.Equal(t, evRev, refIDs(root)["evaluator_revision"])
		assert.Equal(t, true, ag(root, "data.outputs.success"))
	}
}

// TestCachedRunReusesTraces: a cached run over the same testcases and
// revisions as an earlier cached run reuses its traces (same trace ids,
// no model call) and stores the hash either way.
func TestCachedRunReusesTraces(t *testing.T) {
	s := startStack(t)
	key := s.account(t, "cache@example.com")
	ts := s.testset(t, key, "capitals", countries(3))
	_, appRev := s.workflow(t, key, "application", "app", completion)
	_, evRev := s.workflow(t, key, "evaluator", "ev", mock("pass", nil))
	data := map[string]any{"testset_steps": []any{ts.revisionID}, "application_steps": []any{appRev}, "evaluator_steps": map[string]any{evRev: "auto"}}
	cached := map[string]any{"is_cached": true}
	first := s.evaluate(t, key, data, cached)
	run := s.waitRun(t, key, first, 60*time.Second, "success", "errors", "failure")
	require.Equal(t, "success", run["status"])
	appKey := stepKey(t, run, "invocation", "")
	byTC := func(id string) map[string]result {
		out := map[string]result{}
		rs := s.results(t, key, id)
		tc := map[string]string{}
		for _, r := range rs {
			if r.TestcaseID != "" {
				tc[r.ScenarioID] = r.TestcaseID
			}
		}
		for _, r := range rs {
			if r.StepKey == appKey {
				out[tc[r.ScenarioID]] = r
			}
		}
		return out
	}
	one := byTC(first)
	for _, r := range one {
		assert.Len(t, r.HashID, 32)
		s.rootSpan(t, key, r.TraceID) // stored, so the next run can find it
	}
	calls := appCalls(s.llm)
	second := s.evaluate(t, key, data, cached)
	require.Equal(t, "success", s.waitRun(t, key, second, 60*time.Second, "success", "errors", "failure")["status"])
	two := byTC(second)
	require.Len(t, two, 3)
	for tc, r := range two {
		assert.Equal(t, one[tc].TraceID, r.TraceID, "the cached trace is reused")
		assert.Equal(t, one[tc].HashID, r.HashID)
	}
	assert.Equal(t, calls, appCalls(s.llm), "no model call for cached cells")

	t.Run("model calls cached and rate aware", func(t *testing.T) { modelCallsCachedAndRateAware(t, s) })
	t.Run("budget stops the run", func(t *testing.T) { budgetStopsTheRun(t, s) })
	t.Run("identical calls in flight coalesce", func(t *testing.T) { identicalCallsInFlightCoalesce(t, s) })
	t.Run("identical cells reused", func(t *testing.T) { identicalCellsReused(t, s) })
}

// TestHundredTestcases times a 100-testcase run of the main topology
// (the local model as the app, three built-in evaluators) on one worker,
// and checks it is complete: 100 scenarios, every cell a success; then
// times the same evaluation again, whose cells reuse the first run's
// (docs/decisions/0011-cell-reuse.md): no model call, no new trace.
// EVALRUN_E2E_TESTCASES sets another size (e.g. 1000).
func TestHundredTestcases(t *testing.T) {
	if testing.Short() {
		t.Skip("timing run")
	}
	n := 100
	if v, err := strconv.Atoi(os.Getenv("EVALRUN_E2E_TESTCASES")); err == nil && v > 0 {
		n = v
	}
	var extra []string
	if v := os.Getenv("EVALRUN_E2E_WORKER_ENV"); v != "" {
		extra = strings.Split(v, ",")
	}
	s := startStack(t, extra...)
	key := s.account(t, "hundred@example.com")
	ts := s.testset(t, key, "hundred", countries(n))
	_, appRev := s.workflow(t, key, "application", "app", completion)
	_, em := s.workflow(t, key, "evaluator", "em", exactMatch)
	_, contains := s.workflow(t, key, "evaluator", "contains", map[string]any{"uri": "agenta:builtin:auto_contains:v0",
		"parameters": map[string]any{"substring": "capital"}})
	_, regex := s.workflow(t, key, "evaluator", "regex", map[string]any{"uri": "agenta:builtin:auto_regex_test:v0",
		"parameters": map[string]any{"regex_pattern": "^echo", "regex_should_match": true}})
	start := time.Now()
	phases := s.phases(t)
	id := s.evaluate(t, key, map[string]any{"testset_steps": []any{ts.revisionID}, "application_steps": []any{appRev},
		"evaluator_steps": map[string]any{em: "auto", contains: "auto", regex: "auto"}}, nil)
	run := s.waitRun(t, key, id, 600*time.Second, "success", "errors", "failure")
	took := time.Since(start)
	t.Logf("job time by phase: %s", s.phasesSince(t, phases))
	require.Equal(t, "success", run["status"])
	assert.Equal(t, n, len(s.scenarios(t, key, id)))
	rs := s.results(t, key, id)
	assert.Equal(t, n*5, len(rs))
	failed := 0
	for _, r := range rs {
		if r.Status != "success" {
			failed++
		}
	}
	assert.Zero(t, failed, "cells not a success")
	t.Logf("%d testcases × (app + 3 built-in evaluators): %s from create to success", n, took.Round(10*time.Millisecond))

	// The same evaluation again: every cell reuses the first run's.
	calls := appCalls(s.llm)
	start = time.Now()
	phases = s.phases(t)
	again := s.evaluate(t, key, map[string]any{"testset_steps": []any{ts.revisionID}, "application_steps": []any{appRev},
		"evaluator_steps": map[string]any{em: "auto", contains: "auto", regex: "auto"}}, nil)
	require.Equal(t, "success", s.waitRun(t, key, again, 600*time.Second, "success", "errors", "failure")["status"])
	t.Logf("the same run again: %s from create to success, %d model calls", time.Since(start).Round(10*time.Millisecond), appCalls(s.llm)-calls)
	t.Logf("job time by phase: %s", s.phasesSince(t, phases))
	assert.Equal(t, calls, appCalls(s.llm), "the re-run's model calls are all answered from the cache")
	reused := 0
	for _, r := range s.results(t, key, again) {
		if r.Meta.Cache == "cell" {
			reused++
		}
	}
	assert.Equal(t, n*4, reused, "every application and evaluator cell reused")
}

// TestLiveQueryEvaluators: a live run evaluates each window's invocation
// traces (the registry's ticker publishes a window job per interval; 2 s
// here): temporal scenarios with the window's start as timestamp, and the
// run stays running and active.
func TestLiveQueryEvaluators(t *testing.T) {
	s := startStackWith(t, []string{"REGISTRY_EVAL_LIVE_INTERVAL=2s"}, "RUNTIME_EVAL_WINDOW_GRACE=1s")
	key := s.account(t, "live@example.com")
	_, appRev := s.workflow(t, key, "application", "app", completion)
	qRev := s.saveQuery(t, key, "live")
	_, evRev := s.workflow(t, key, "evaluator", "echo", mock("echo", nil))
	id := s.evaluate(t, key, map[string]any{"query_steps": []any{qRev}, "evaluator_steps": map[string]any{evRev: "auto"}},
		map[string]any{"is_live": true})
	want := map[string]bool{}
	for _, c := range []string{"France", "Peru"} {
		want[s.invokeApp(t, key, appRev, c)] = true
	}
	deadline := time.Now().Add(30 * time.Second)
	var evs []result
	var run map[string]any
	for {
		run = s.run(t, key, id)
		cells := byStep(s.results(t, key, id))
		seen := 0
		for _, c := range cells[stepKey(t, run, "input", "")] {
			if want[c.TraceID] {
				seen++
			}
		}
		evs = cells[stepKey(t, run, "annotation", evRev)]
		done := 0
		for _, c := range evs {
			if c.Status == "success" {
				done++
			}
		}
		if seen == 2 && done >= 2 {
			break
		}
		require.True(t, time.Now().Before(deadline), "the live windows never evaluated the traces: %v", cells)
		time.Sleep(300 * time.Millisecond)
	}
	for _, sc := range s.scenarios(t, key, id) {
		assert.NotNil(t, sc["timestamp"], "a temporal scenario")
		assert.NotNil(t, sc["interval"])
	}
	assert.Equal(t, "running", run["status"], "a live run stays running")
	assert.Equal(t, true, run["flags"].(map[string]any)["is_active"])
}

// TestQueueTracesAndTestcases: a queue's traces or testcases (scenarios the
// registry mints as they are added) get their auto evaluator run; the
// human one stays pending, the run running.
func TestQueueTracesAndTestcases(t *testing.T) {
	s := startStack(t)
	key := s.account(t, "queue@example.com")
	_, appRev := s.workflow(t, key, "application", "app", completion)
	_, autoRev := s.workflow(t, key, "evaluator", "echo", mock("echo", nil))
	_, humanRev := s.workflow(t, key, "evaluator", "approval", mock("pass", nil))
	ts := s.testset(t, key, "capitals", countries(2))
	tid := s.invokeApp(t, key, appRev, "Chile")
	for _, kind := range []string{"traces", "testcases"} {
		t.Run(kind, func(t *testing.T) {
			q := s.ok(t, "POST", "/api/simple/queues/", key, map[string]any{"queue": map[string]any{"name": kind,
				"data": map[string]any{"kind": kind, "evaluators": map[string]any{autoRev: "auto", humanRev: "human"}}}}).obj(t, "queue")
			items := map[string]any{"trace_ids": []any{tid}}
			n := 1
			if kind == "testcases" {
				items = map[string]any{"testcase_ids": []any{ts.testcaseIDs[0], ts.testcaseIDs[1]}}
				n = 2
			}
			s.ok(t, "POST", "/api/simple/queues/"+q["id"].(string)+"/"+kind+"/", key, items)
			runID := q["run_id"].(string)
			run := s.run(t, key, runID)
			deadline := time.Now().Add(30 * time.Second)
			var evs []result
			for {
				evs = byStep(s.results(t, key, runID))[stepKey(t, run, "annotation", autoRev)]
				done := 0
				for _, c := range evs {
					if c.Status == "success" {
						done++
					}
				}
				if done == n {
					break
				}
				require.True(t, time.Now().Before(deadline), "queue cells: %v", s.results(t, key, runID))
				time.Sleep(200 * time.Millisecond)
			}
			for _, c := range evs {
				root := s.rootSpan(t, key, c.TraceID)
				in := ag(root, "data.inputs").(map[string]any)
				if kind == "traces" {
					assert.Equal(t, "Chile", in["country"], "the trace's inputs")
					links, _ := root["links"].([]any)
					require.Len(t, links, 1)
					assert.Equal(t, tid, links[0].(map[string]any)["trace_id"])
				} else {
					assert.Contains(t, ts.testcaseIDs, in["testcase_id"])
				}
			}
			for _, c := range byStep(s.results(t, key, runID))[stepKey(t, run, "annotation", humanRev)] {
				assert.Equal(t, "pending", c.Status)
			}
			assert.Equal(t, "running", s.run(t, key, runID)["status"], "a queue run stays running while a human cell is pending")
		})
	}
}

// TestSplitRunsTheAppAtEveryRepeat: with is_split the app runs at every
// repeat, and the evaluator at a repeat evaluates the app's trace of that
// repeat.
func TestSplitRunsTheAppAtEveryRepeat(t *testing.T) {
	s := startStack(t)
	key := s.account(t, "split@example.com")
	ts := s.testset(t, key, "capitals", countries(2))
	_, appRev := s.workflow(t, key, "application", "app", completion)
	_, evRev := s.workflow(t, key, "evaluator", "ev", mock("pass", nil))
	id := s.evaluate(t, key, map[string]any{"testset_steps": []any{ts.revisionID}, "application_steps": []any{appRev},
		"evaluator_steps": map[string]any{evRev: "auto"}, "repeats": 2}, map[string]any{"is_split": true})
	run := s.waitRun(t, key, id, 60*time.Second, "success", "errors", "failure")
	require.Equal(t, "success", run["status"])
	require.Equal(t, true, run["flags"].(map[string]any)["is_split"])
	cells := byStep(s.results(t, key, id))
	apps := cells[stepKey(t, run, "invocation", "")]
	require.Len(t, apps, 4, "the app at both repeats of both scenarios")
	appTrace := map[string]string{}
	for _, c := range apps {
		appTrace[fmt.Sprintf("%s/%d", c.ScenarioID, c.RepeatIdx)] = c.TraceID
	}
	assert.Len(t, appTrace, 4)
	evs := cells[stepKey(t, run, "annotation", evRev)]
	require.Len(t, evs, 4)
	for _, c := range evs {
		root := s.rootSpan(t, key, c.TraceID)
		links, _ := root["links"].([]any)
		require.Len(t, links, 1)
		assert.Equal(t, appTrace[fmt.Sprintf("%s/%d", c.ScenarioID, c.RepeatIdx)], links[0].(map[string]any)["trace_id"])
	}
	assert.Equal(t, 4, appCalls(s.llm))
}
