package evaluation_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/pkg/evaluation"
)

func run(repeats int, split bool) *evaluation.Run {
	return &evaluation.Run{Flags: evaluation.RunFlags{IsSplit: split}, Data: evaluation.RunData{Repeats: &repeats, Steps: []evaluation.Step{
		{Key: "testset", Type: evaluation.TypeInput, Origin: evaluation.OriginCustom},
		{Key: "app", Type: evaluation.TypeInvocation, Origin: evaluation.OriginAuto},
		{Key: "exact", Type: evaluation.TypeAnnotation, Origin: evaluation.OriginAuto},
		{Key: "human", Type: evaluation.TypeAnnotation, Origin: evaluation.OriginHuman},
		{Key: "custom", Type: evaluation.TypeAnnotation, Origin: evaluation.OriginCustom},
	}}}
}

func cells(kr ...any) []evaluation.Cell {
	var out []evaluation.Cell
	for i := 0; i < len(kr); i += 2 {
		out = append(out, evaluation.Cell{StepKey: kr[i].(string), RepeatIdx: kr[i+1].(int)})
	}
	return out
}

// TestExpected: every step at every repeat, the application at repeat 0
// only unless the run is split, and without the manual annotations when
// only what a worker executes is asked for.
func TestExpected(t *testing.T) {
	tests := []struct {
		name       string
		run        *evaluation.Run
		executable bool
		want       []evaluation.Cell
	}{
		{"one repeat", run(1, false), false, cells("testset", 0, "app", 0, "exact", 0, "human", 0, "custom", 0)},
		{"repeats share the app", run(2, false), false,
			cells("testset", 0, "testset", 1, "app", 0, "exact", 0, "exact", 1, "human", 0, "human", 1, "custom", 0, "custom", 1)},
		{"split repeats the app", run(2, true), false,
			cells("testset", 0, "testset", 1, "app", 0, "app", 1, "exact", 0, "exact", 1, "human", 0, "human", 1, "custom", 0, "custom", 1)},
		{"executable only", run(2, false), true, cells("testset", 0, "testset", 1, "app", 0, "exact", 0, "exact", 1)},
		{"no repeats is one", &evaluation.Run{Data: evaluation.RunData{Steps: []evaluation.Step{{Key: "app", Type: evaluation.TypeInvocation}}}},
			false, cells("app", 0)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, evaluation.Expected(tt.run, tt.executable))
		})
	}
}

// TestTopology: which step is the application, which run, and which
// application cell an evaluator's repeat reads.
func TestTopology(t *testing.T) {
	r := run(3, false)
	require.NotNil(t, r.Data.Application())
	assert.Equal(t, "app", r.Data.Application().Key)
	assert.True(t, r.Data.Executable())
	assert.Equal(t, []bool{false, false, true, false, false}, []bool{r.Data.Steps[0].Auto(), r.Data.Steps[1].Auto(),
		r.Data.Steps[2].Auto(), r.Data.Steps[3].Auto(), r.Data.Steps[4].Auto()})
	assert.Equal(t, []bool{false, false, false, true, true}, []bool{r.Data.Steps[0].Manual(), r.Data.Steps[1].Manual(),
		r.Data.Steps[2].Manual(), r.Data.Steps[3].Manual(), r.Data.Steps[4].Manual()})
	assert.Equal(t, 0, r.InvocationRepeat(2))
	assert.Equal(t, 2, run(3, true).InvocationRepeat(2))

	second := evaluation.Step{Key: "app2", Type: evaluation.TypeInvocation}
	r.Data.Steps = append(r.Data.Steps, second)
	assert.Equal(t, "app", r.Data.Application().Key, "the first invocation step is the application")

	manual := evaluation.RunData{Steps: []evaluation.Step{{Key: "t", Type: evaluation.TypeInput}, {Key: "h", Type: evaluation.TypeAnnotation, Origin: evaluation.OriginHuman}}}
	assert.Nil(t, manual.Application())
	assert.False(t, manual.Executable(), "a run of inputs and human annotations leaves the worker nothing to run")
}

// TestWireNames: a run renders its steps as a list even when it has none,
// and a job keeps its JSON names (the wire between registry and runtime).
func TestWireNames(t *testing.T) {
	b, err := json.Marshal(evaluation.Run{ID: "r"})
	require.NoError(t, err)
	assert.Contains(t, string(b), `"data":{"steps":[]}`)

	b, err = json.Marshal(evaluation.Job{Kind: evaluation.KindProcess, ProjectID: "p", RunID: "r",
		Slice: evaluation.Slice{StepKeys: []string{"app"}}})
	require.NoError(t, err)
	assert.JSONEq(t, `{"kind":"process","project_id":"p","run_id":"r","slice":{"step_keys":["app"]}}`, string(b))
	assert.Equal(t, "evals.p", evaluation.Subject("p"))
}
