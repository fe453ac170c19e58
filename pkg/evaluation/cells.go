package evaluation

// Cell names one result cell: a scenario's step at a repeat. The cells
// Expected lists leave ScenarioID empty: every scenario of a run has the
// same ones.
type Cell struct {
	ScenarioID string `json:"scenario_id"`
	StepKey    string `json:"step_key"`
	RepeatIdx  int    `json:"repeat_idx"`
}

// Of is the cell r fills.
func (r Result) Of() Cell {
	return Cell{ScenarioID: r.ScenarioID, StepKey: r.StepKey, RepeatIdx: r.RepeatIdx}
}

// RepeatCount is the run's repeat count (default 1).
func (d *RunData) RepeatCount() int {
	if d.Repeats == nil || *d.Repeats < 1 {
		return 1
	}
	return *d.Repeats
}

// Auto says whether s is an evaluator a worker runs: an auto annotation.
func (s *Step) Auto() bool { return s.Type == TypeAnnotation && s.Origin == OriginAuto }

// Manual says whether s is a human or custom annotation: its cells are
// written by people or clients, never run by a worker.
func (s *Step) Manual() bool { return s.Type == TypeAnnotation && s.Origin != OriginAuto }

// Application is the run's application: its first invocation step (the
// compatible platform plans no topology with two), or nil. Its cells are
// the ones an auto evaluator reads (InvocationRepeat).
func (d *RunData) Application() *Step {
	for i := range d.Steps {
		if d.Steps[i].Type == TypeInvocation {
			return &d.Steps[i]
		}
	}
	return nil
}

// Executable says whether a worker has anything to run for the run: an
// application or an auto evaluator.
func (d *RunData) Executable() bool {
	for i := range d.Steps {
		if d.Steps[i].Type == TypeInvocation || d.Steps[i].Auto() {
			return true
		}
	}
	return false
}

// StepRepeats is how many repeats s has in r: an invocation step runs once
// (at repeat 0) and its answer is read by every repeat of the evaluators,
// unless the run is split, when every repeat invokes it again; every other
// step has the run's repeat count.
func (r *Run) StepRepeats(s *Step) int {
	if s.Type == TypeInvocation && !r.Flags.IsSplit {
		return 1
	}
	return r.Data.RepeatCount()
}

// InvocationRepeat is the repeat of the invocation cell that a cell at
// repeat i reads: i itself when the run is split, else 0 (StepRepeats).
func (r *Run) InvocationRepeat(i int) int {
	if r.Flags.IsSplit {
		return i
	}
	return 0
}

// Expected lists a scenario's expected cells: every step at each of its
// StepRepeats. With executableOnly, the manual annotations (never run by a
// worker) are left out.
func Expected(r *Run, executableOnly bool) []Cell {
	var out []Cell
	for i := range r.Data.Steps {
		s := &r.Data.Steps[i]
		if executableOnly && s.Manual() {
			continue
		}
		for rep := range r.StepRepeats(s) {
			out = append(out, Cell{StepKey: s.Key, RepeatIdx: rep})
		}
	}
	return out
}
