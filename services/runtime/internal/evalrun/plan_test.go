package evalrun

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/assayhq/assay/pkg/evaluation"
	"github.com/assayhq/assay/services/runtime/internal/invoke"
	"github.com/assayhq/assay/services/runtime/internal/registryclient"
)

func testRun(repeats int, split bool) *evaluation.Run {
	return &evaluation.Run{ID: "11111111-1111-1111-1111-111111111111", Flags: evaluation.RunFlags{IsActive: true, IsSplit: split},
		Data: evaluation.RunData{Repeats: &repeats, Steps: []evaluation.Step{
			{Key: "testset-x", Type: "input", Origin: "custom"},
			{Key: "application-a", Type: "invocation", Origin: "auto"},
			{Key: "evaluator-e", Type: "annotation", Origin: "auto"},
			{Key: "evaluator-h", Type: "annotation", Origin: "human"},
		}}}
}

func cell(s, k string, r int) evaluation.Cell {
	return evaluation.Cell{ScenarioID: s, StepKey: k, RepeatIdx: r}
}

// TestTargetsFollowTheTopology: the app runs at repeat 0 (every repeat
// when split), the auto evaluator at every repeat once the app cell it
// reads succeeded, the human one never; done cells are left alone unless
// the job re-runs their status.
func TestTargetsFollowTheTopology(t *testing.T) {
	j := &jobRun{plan: planOf(testRun(2, false))}
	scs := []evaluation.Scenario{{ID: "s"}}
	todo, waiting := j.targets(scs, map[evaluation.Cell]*evaluation.Result{}, nil)
	assert.Equal(t, []evaluation.Cell{cell("s", "application-a", 0)}, todo)
	assert.Equal(t, 2, waiting, "both evaluator repeats wait on the app")

	done := map[evaluation.Cell]*evaluation.Result{cell("s", "application-a", 0): {Status: "success"}}
	todo, waiting = j.targets(scs, done, nil)
	assert.Equal(t, []evaluation.Cell{cell("s", "evaluator-e", 0), cell("s", "evaluator-e", 1)}, todo)
	assert.Zero(t, waiting)

	failed := map[evaluation.Cell]*evaluation.Result{cell("s", "application-a", 0): {Status: "failure"}}
	todo, waiting = j.targets(scs, failed, nil)
	assert.Empty(t, todo, "evaluators of a failed app have nothing to read")
	assert.Zero(t, waiting)

	j.job = evaluation.Job{Statuses: []string{"failure"}}
	todo, waiting = j.targets(scs, failed, nil)
	assert.Equal(t, []evaluation.Cell{cell("s", "application-a", 0)}, todo, "re-run of failed cells")
	assert.Equal(t, 2, waiting)
	todo, _ = j.targets(scs, failed, map[evaluation.Cell]bool{cell("s", "application-a", 0): true})
	assert.Empty(t, todo, "a cell runs at most once per job")

	split := &jobRun{plan: planOf(testRun(2, true))}
	todo, _ = split.targets(scs, map[evaluation.Cell]*evaluation.Result{}, nil)
	assert.Equal(t, []evaluation.Cell{cell("s", "application-a", 0), cell("s", "application-a", 1)}, todo)

	held := map[evaluation.Cell]*evaluation.Result{cell("s", "application-a", 0): {Status: "running"}}
	todo, waiting = j.targets(scs, held, nil)
	assert.Equal(t, []evaluation.Cell{cell("s", "application-a", 0)}, todo, "a running cell is offered to the claim (its lease may be over)")
	assert.Equal(t, 2, waiting)
}

// TestDeterministicIDs: the same item or cell always gets the same id,
// another one a different id.
func TestDeterministicIDs(t *testing.T) {
	run := "11111111-1111-1111-1111-111111111111"
	assert.Equal(t, ScenarioID(run, "t:testcase:1"), ScenarioID(run, "t:testcase:1"))
	assert.NotEqual(t, ScenarioID(run, "t:testcase:1"), ScenarioID(run, "t:testcase:2"))
	assert.NotEqual(t, ScenarioID(run, "t:testcase:1"), ScenarioID("22222222-2222-2222-2222-222222222222", "t:testcase:1"))
	assert.Len(t, TraceID(run, "s", "k", 0), 32)
	assert.Equal(t, TraceID(run, "s", "k", 0), TraceID(run, "s", "k", 0))
	assert.NotEqual(t, TraceID(run, "s", "k", 0), TraceID(run, "s", "k", 1))
}

// TestInputsFollowTheSchema: the testcase's data with its id, kept to the
// revision's declared inputs when it declares any.
func TestInputsFollowTheSchema(t *testing.T) {
	src := &source{testcase: &registryclient.Testcase{ID: "tc", Data: map[string]any{"country": "France", "correct_answer": "Paris"}}}
	all := inputsOf(src, &invoke.Revision{})
	assert.Equal(t, map[string]any{"country": "France", "correct_answer": "Paris", "testcase_id": "tc"}, all)
	rev := &invoke.Revision{Data: invoke.RevisionData{Schemas: map[string]any{"inputs": map[string]any{"properties": map[string]any{"country": map[string]any{}}}}}}
	assert.Equal(t, map[string]any{"country": "France"}, inputsOf(src, rev))
}

// TestCellPanicIsTheCellsFailure: a panic while running a cell (here: no
// revision reader at all, while its request is built) fails that cell
// instead of the worker.
func TestCellPanicIsTheCellsFailure(t *testing.T) {
	run := testRun(1, false)
	rev := "0190f0a0-0000-7000-8000-000000000001"
	run.Data.Steps[1].References = map[string]evaluation.Ref{"application_revision": {ID: &rev}}
	e := &cellRun{j: &jobRun{x: &Executor{}, plan: planOf(run)}}
	var res evaluation.Result
	c := cell("s", "application-a", 0)
	cl := e.prepare(t.Context(), c, &run.Data.Steps[1], &source{}, nil)
	app, err := e.invokeSafely(t.Context(), c, cl, &res)
	assert.Nil(t, app)
	assert.ErrorContains(t, err, "crashed")
}
