package evalrun

import (
	"github.com/assayhq/assay/services/runtime/internal/evalclient"
)

// plan is what a run's steps say the worker does: the input steps it
// sources items from, the application (at most one; the compatible platform plans
// no topology with two) and the evaluators, of which it executes the auto
// ones and leaves the human and custom ones pending.
type plan struct {
	run     *evalclient.Run
	inputs  []evalclient.Step
	app     *evalclient.Step
	auto    []evalclient.Step
	manual  []evalclient.Step // human and custom annotations: written pending
	repeats int
	split   bool
}

func planOf(run *evalclient.Run) *plan {
	p := &plan{run: run, repeats: run.Repeats(), split: run.Flags.IsSplit}
	for i := range run.Data.Steps {
		s := run.Data.Steps[i]
		switch s.Type {
		case evalclient.TypeInput:
			p.inputs = append(p.inputs, s)
		case evalclient.TypeInvocation:
			if p.app == nil {
				p.app = &s
			}
		case evalclient.TypeAnnotation:
			if s.Origin == evalclient.OriginAuto {
				p.auto = append(p.auto, s)
			} else {
				p.manual = append(p.manual, s)
			}
		}
	}
	return p
}

// executable says whether the worker has anything to run.
func (p *plan) executable() bool { return p.app != nil || len(p.auto) > 0 }

// appRepeat is the repeat of the application cell an evaluator at repeat
// r reads: the app runs at repeat 0 only, unless the run is split.
func (p *plan) appRepeat(r int) int {
	if p.split {
		return r
	}
	return 0
}

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
func family(s *evalclient.Step) string {
	for _, f := range []string{"application", "evaluator", "workflow"} {
		for _, k := range []string{f + "_revision", f + "_variant", f} {
			if _, ok := s.References[k]; ok {
				return f
			}
		}
	}
	return ""
}
