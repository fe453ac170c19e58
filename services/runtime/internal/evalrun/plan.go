package evalrun

import (
	"github.com/assayhq/assay/pkg/evaluation"
)

// plan is what a run's steps say the worker does, by the contract's cell
// rule (pkg/evaluation/cells.go): the input steps it sources items from,
// the application and the evaluators, of which it executes the auto ones
// and leaves the human and custom ones pending.
type plan struct {
	run     *evaluation.Run
	inputs  []evaluation.Step
	app     *evaluation.Step
	auto    []evaluation.Step
	manual  []evaluation.Step // human and custom annotations: written pending
	repeats int
}

func planOf(run *evaluation.Run) *plan {
	p := &plan{run: run, app: run.Data.Application(), repeats: run.Data.RepeatCount()}
	for i := range run.Data.Steps {
		s := run.Data.Steps[i]
		switch {
		case s.Type == evaluation.TypeInput:
			p.inputs = append(p.inputs, s)
		case s.Auto():
			p.auto = append(p.auto, s)
		case s.Manual():
			p.manual = append(p.manual, s)
		}
	}
	return p
}

// executable says whether the worker has anything to run.
func (p *plan) executable() bool { return p.run.Data.Executable() }

// appRepeat is the repeat of the application cell an evaluator at repeat
// r reads.
func (p *plan) appRepeat(r int) int { return p.run.InvocationRepeat(r) }

// batchSize, maxRetries and retryDelay read the run's concurrency with
// the compatible platform's defaults (10, 0, 0).
func (p *plan) batchSize() int {
	if c := p.run.Data.Concurrency; c != nil && c.BatchSize != nil && *c.BatchSize > 0 {
		return min(*c.BatchSize, 1000)
	}
	return 10
}

func (p *plan) maxRetries() int {
	if c := p.run.Data.Concurrency; c != nil && c.MaxRetries != nil && *c.MaxRetries > 0 {
		return min(*c.MaxRetries, 10)
	}
	return 0
}

func (p *plan) retryDelaySeconds() float64 {
	if c := p.run.Data.Concurrency; c != nil && c.RetryDelay != nil && *c.RetryDelay > 0 {
		return min(*c.RetryDelay, 60)
	}
	return 0
}

// family is the registry family a step's references name.
func family(s *evaluation.Step) string {
	for _, f := range []string{"application", "evaluator", "workflow"} {
		for _, k := range []string{f + "_revision", f + "_variant", f} {
			if _, ok := s.References[k]; ok {
				return f
			}
		}
	}
	return ""
}
