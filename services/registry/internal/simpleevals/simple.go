package simpleevals

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/uuid"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/evaluation"
	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/pkg/spanmodel"
	"github.com/assayhq/assay/services/registry/internal/evaluations"
)

// Simple holds the simple evaluations' use cases: one run
// each, configured by revision ids that are pinned at create, started by
// handing a job to the runtime's workers.
type Simple struct {
	svc    *evaluations.Service
	fam    Families
	prices *spanmodel.Prices // prices the estimate (nil: no cost, every model unpriced)
}

// SetPrices sets the price table the estimate uses.
func (s *Simple) SetPrices(p *spanmodel.Prices) { s.prices = p }

// NewSimple returns the simple evaluations over the records service svc,
// resolving step references through fam.
func NewSimple(svc *evaluations.Service, fam Families) *Simple { return &Simple{svc: svc, fam: fam} }

// SimpleEvaluation is a run as the simple surface shows it: its steps
// back as {revision_id: origin} per kind, and its status under data.
type SimpleEvaluation struct {
	ID          string               `json:"id"`
	Name        *string              `json:"name,omitempty"`
	Description *string              `json:"description,omitempty"`
	Flags       evaluations.RunFlags `json:"flags"`
	Tags        json.RawMessage      `json:"tags,omitempty"`
	Meta        json.RawMessage      `json:"meta,omitempty"`
	Data        SimpleData           `json:"data"`
	evaluations.Lifecycle
	// Estimate is the create's cost estimate, answered beside the
	// evaluation (not part of it: fetches do not recompute it).
	Estimate *Estimate `json:"-"`
}

// SimpleData is a simple evaluation's data as fetched.
type SimpleData struct {
	Status           evaluations.Status       `json:"status"`
	QuerySteps       json.RawMessage          `json:"query_steps,omitempty"`
	TestsetSteps     json.RawMessage          `json:"testset_steps,omitempty"`
	ApplicationSteps json.RawMessage          `json:"application_steps,omitempty"`
	EvaluatorSteps   json.RawMessage          `json:"evaluator_steps,omitempty"`
	Repeats          *int                     `json:"repeats,omitempty"`
	Concurrency      *evaluations.Concurrency `json:"concurrency,omitempty"`
	ModelCache       *bool                    `json:"model_cache,omitempty"`
	Budget           *float64                 `json:"budget,omitempty"`
}

// stepRefsOf splits a run's pinned steps back into *_steps by the kind of
// revision each references.
func stepRefsOf(r *evaluations.Run) map[string][]StepRef {
	out := map[string][]StepRef{}
	for _, s := range r.Data.Steps {
		for kind, field := range map[string]string{"query_revision": QuerySteps, "testset_revision": TestsetSteps,
			"application_revision": ApplicationSteps, "evaluator_revision": EvaluatorSteps} {
			ref, ok := s.References[kind]
			if !ok || ref.ID == nil {
				continue
			}
			if id, err := uuid.Parse(*ref.ID); err == nil {
				out[field] = append(out[field], StepRef{RevisionID: id, Origin: s.Origin})
			}
		}
	}
	return out
}

// ToSimple renders a run as a simple evaluation.
func ToSimple(r *evaluations.Run) SimpleEvaluation {
	refs := stepRefsOf(r)
	steps := func(k string) json.RawMessage {
		if len(refs[k]) == 0 {
			return nil
		}
		return StepRefsJSON(refs[k])
	}
	return SimpleEvaluation{ID: r.ID, Name: r.Name, Description: r.Description, Flags: r.Flags, Tags: r.Tags, Meta: r.Meta,
		Data: SimpleData{Status: r.Status, QuerySteps: steps(QuerySteps), TestsetSteps: steps(TestsetSteps),
			ApplicationSteps: steps(ApplicationSteps), EvaluatorSteps: steps(EvaluatorSteps),
			Repeats: r.Data.Repeats, Concurrency: r.Data.Concurrency, ModelCache: r.Data.ModelCache, Budget: r.Data.Budget},
		Lifecycle: r.Lifecycle}
}

// Topology is the shape of a run's steps, which decides how a worker
// executes it (services/runtime/internal/evalrun).
type Topology string

// The supported topologies, and Unsupported.
const (
	TopologyLiveQuery            Topology = "live query → evaluators"
	TopologyTestsetAppEvaluators Topology = "testset → application → evaluators"
	TopologyTestsetApp           Topology = "testset → application"
	TopologyTestsetEvaluators    Topology = "testset → evaluators"
	TopologyQueryEvaluators      Topology = "query → evaluators"
	TopologyDirectEvaluators     Topology = "traces or testcases → evaluators"
	Unsupported                  Topology = ""
)

// Classify returns the run's topology, or Unsupported with the reason.
// The compatible platform does not plan query plus testset, a live testset, two or
// more applications, or query → application.
func Classify(r *evaluations.Run) (Topology, string) {
	var queries, testsets, direct, apps, evals int
	for _, s := range r.Data.Steps {
		switch s.Type {
		case evaluations.TypeInput:
			_, q := s.References["query_revision"]
			_, t := s.References["testset_revision"]
			switch {
			case q:
				queries++
			case t:
				testsets++
			default:
				direct++
			}
		case evaluations.TypeInvocation:
			apps++
		case evaluations.TypeAnnotation:
			evals++
		}
	}
	switch {
	case queries+testsets+direct == 0:
		return Unsupported, "The evaluation has no source: send query_steps or testset_steps."
	case queries > 0 && testsets > 0:
		return Unsupported, "A query and a testset in one evaluation are not supported."
	case apps > 1:
		return Unsupported, "Two or more applications in one evaluation are not supported."
	case r.Flags.IsLive && testsets > 0:
		return Unsupported, "A live evaluation runs over a query, not a testset."
	case r.Flags.IsLive && queries == 0:
		return Unsupported, "A live evaluation needs query_steps."
	case queries > 0 && apps > 0:
		return Unsupported, "A query feeding an application is not supported: evaluate the traces it returns."
	case r.Flags.IsLive && evals == 0:
		return Unsupported, "A live evaluation needs evaluator_steps."
	case r.Flags.IsLive:
		return TopologyLiveQuery, ""
	case testsets > 0 && apps == 1 && evals > 0:
		return TopologyTestsetAppEvaluators, ""
	case testsets > 0 && apps == 1:
		return TopologyTestsetApp, ""
	case testsets > 0 && evals > 0:
		return TopologyTestsetEvaluators, ""
	case queries > 0 && evals > 0:
		return TopologyQueryEvaluators, ""
	case direct > 0 && apps == 0 && evals > 0:
		return TopologyDirectEvaluators, ""
	}
	return Unsupported, "The evaluation has nothing to run: add application_steps or evaluator_steps."
}

// Create resolves and pins the evaluation's steps, creates its run
// (pending, with its default queue reconciled) and starts it. With
// data.status "running" the client drives the loop: the run is started
// without a job. An unsupported topology leaves the run failed, closed and
// inactive, as the compatible platform does, with the reason under meta.error; the
// run is answered so the client sees why.
func (s *Simple) Create(ctx context.Context, sc scope.Scope, in *SimpleInput) (*SimpleEvaluation, error) {
	live := in.Flags.IsLive != nil && *in.Flags.IsLive
	pinned, err := s.fam.Pin(ctx, sc, in.Sources(), live)
	if err != nil {
		return nil, err
	}
	r := evaluations.Run{Name: in.Name, Description: in.Description, Tags: in.Tags, Meta: in.Meta, Status: evaluations.Pending,
		Data: evaluations.RunData{Steps: pinned.Steps, Mappings: pinned.Mappings, Repeats: in.Repeats, Concurrency: in.Concurrency,
			ModelCache: in.ModelCache, Budget: in.Budget}}
	r.Flags.IsLive = live
	r.Flags.IsCached = in.Flags.IsCached != nil && *in.Flags.IsCached
	r.Flags.IsSplit = in.Flags.IsSplit != nil && *in.Flags.IsSplit
	runs, err := s.svc.CreateRuns(ctx, sc, []evaluations.Run{r})
	if err != nil {
		return nil, err
	}
	run := &runs[0]
	// The estimate is advice: a failure to compute it does not fail the
	// create (the run is already written).
	est, _ := s.estimate(ctx, sc, in)
	switch topo, why := Classify(run); {
	case in.Status != nil && *in.Status == evaluations.Running:
		run, err = s.activate(ctx, sc, run, nil)
	case topo == Unsupported:
		run, err = s.fail(ctx, sc, run, why)
	default:
		run, err = s.start(ctx, sc, run)
	}
	ev, err := simpleOf(run, err)
	if ev != nil {
		ev.Estimate = est
	}
	return ev, err
}

func simpleOf(r *evaluations.Run, err error) (*SimpleEvaluation, error) {
	if err != nil || r == nil {
		return nil, err
	}
	e := ToSimple(r)
	return &e, nil
}

// fail marks a run that cannot be executed: failure, inactive, closed,
// with the reason under meta.error.
func (s *Simple) fail(ctx context.Context, sc scope.Scope, r *evaluations.Run, why string) (*evaluations.Run, error) {
	meta := map[string]any{}
	if r.Meta != nil {
		_ = json.Unmarshal(r.Meta, &meta)
	}
	meta["error"] = map[string]any{"message": why, "type": "unsupported_topology"}
	raw, _ := json.Marshal(meta)
	st, off := evaluations.Failure, false
	edited, err := s.svc.EditRuns(ctx, sc, []evaluations.RunEdit{{ID: r.ID, Status: &st, Meta: raw, Flags: &evaluations.RunFlagsEdit{IsActive: &off}}})
	if err != nil {
		return nil, err
	}
	closed, err := s.svc.SetClosed(ctx, sc, []uuid.UUID{uuid.MustParse(edited[0].ID)}, true)
	if err != nil || len(closed) == 0 {
		return nil, err
	}
	return &closed[0], nil
}

// activate sets is_active and status running (a run already running
// keeps its status), optionally applying more of edit.
func (s *Simple) activate(ctx context.Context, sc scope.Scope, r *evaluations.Run, edit *evaluations.RunEdit) (*evaluations.Run, error) {
	on, st := true, evaluations.Running
	e := evaluations.RunEdit{ID: r.ID}
	if edit != nil {
		e = *edit
	}
	e.Status = &st
	if e.Flags == nil {
		e.Flags = &evaluations.RunFlagsEdit{}
	}
	e.Flags.IsActive = &on
	edited, err := s.svc.EditRuns(ctx, sc, []evaluations.RunEdit{e})
	if err != nil {
		return nil, err
	}
	return &edited[0], nil
}

// start activates the run and publishes its run job; the job id carries
// the start's time, so a second start is a second job while a retried
// publish of one start is stored once.
func (s *Simple) start(ctx context.Context, sc scope.Scope, r *evaluations.Run) (*evaluations.Run, error) {
	if s.svc.Jobs() == nil {
		return nil, evaluations.ErrJobsUnavailable
	}
	if r.Status == evaluations.Cancelled {
		// Stopped (by its owner or its budget): the cells it did not run
		// read cancelled, and are this start's to run.
		if err := s.svc.ReopenCells(ctx, sc, uuid.MustParse(r.ID)); err != nil {
			return nil, err
		}
	}
	started, err := s.activate(ctx, sc, r, nil)
	if err != nil {
		return nil, err
	}
	stamp := s.svc.Now().UnixNano()
	if started.UpdatedAt != nil {
		stamp = started.UpdatedAt.UnixNano()
	}
	if err := s.publish(ctx, sc, evaluation.Job{Kind: evaluation.KindRun, RunID: started.ID,
		ID: fmt.Sprintf("run:%s:%d", started.ID, stamp)}); err != nil {
		// Not started after all: the run goes back to what it was, and the
		// 503 names it so the client can start it once NATS is back. (A
		// job the client buffered may still be stored on reconnection: a
		// worker skips it while the run is inactive, and jobs are
		// idempotent when it is not.)
		off, prev := false, r.Status
		if _, rerr := s.svc.EditRuns(context.WithoutCancel(ctx), sc, []evaluations.RunEdit{{ID: started.ID, Status: &prev, Flags: &evaluations.RunFlagsEdit{IsActive: &off}}}); rerr != nil {
			err = fmt.Errorf("%w (and the run stays active: %v)", err, rerr)
		}
		return nil, &errs.Error{Kind: errs.Unavailable, Code: "evaluations.jobs_unavailable",
			Msg:    "The evaluation job stream did not acknowledge the job; the evaluation was not started. Retry /start.",
			Detail: map[string]any{"message": "The evaluation job stream did not acknowledge the job; the evaluation was not started. Retry /start.", "run_id": started.ID},
			Err:    err}
	}
	return started, nil
}

// publish completes job with the caller's project and user and stores it.
func (s *Simple) publish(ctx context.Context, sc scope.Scope, job evaluation.Job) error {
	if s.svc.Jobs() == nil {
		return evaluations.ErrJobsUnavailable
	}
	job.ProjectID = sc.ProjectID.String()
	if sc.UserID != uuid.Nil {
		job.UserID = sc.UserID.String()
	}
	return s.svc.Jobs().Publish(ctx, job)
}

// run returns the run id, or the 404 of the simple routes.
func (s *Simple) run(ctx context.Context, sc scope.Scope, id uuid.UUID) (*evaluations.Run, error) {
	r, err := s.svc.Run(ctx, sc, id)
	if err != nil {
		return nil, err
	}
	if r == nil {
		return nil, evaluations.RunNotFound(id.String())
	}
	return r, nil
}

// open returns the run id, refusing a closed one with the compatible platform's 409.
func (s *Simple) open(ctx context.Context, sc scope.Scope, id uuid.UUID) (*evaluations.Run, error) {
	r, err := s.run(ctx, sc, id)
	if err != nil {
		return nil, err
	}
	if r.Flags.IsClosed {
		return nil, evaluations.ClosedRun(r.ID)
	}
	return r, nil
}

// Fetch returns the evaluation id, or nil.
func (s *Simple) Fetch(ctx context.Context, sc scope.Scope, id uuid.UUID) (*SimpleEvaluation, error) {
	r, err := s.svc.Run(ctx, sc, id)
	return simpleOf(r, err)
}

// Query returns a page of evaluations matching f.
func (s *Simple) Query(ctx context.Context, sc scope.Scope, f evaluations.Filter) ([]SimpleEvaluation, *evaluations.Page[evaluations.Run], error) {
	p, err := s.svc.QueryRuns(ctx, sc, f)
	if err != nil {
		return nil, nil, err
	}
	out := make([]SimpleEvaluation, len(p.Items))
	for i := range p.Items {
		out[i] = ToSimple(&p.Items[i])
	}
	return out, &p, nil
}

// Start activates the run and hands it to the workers (a run job). A
// closed run is a 409.
func (s *Simple) Start(ctx context.Context, sc scope.Scope, id uuid.UUID) (*SimpleEvaluation, error) {
	r, err := s.open(ctx, sc, id)
	if err != nil {
		return nil, err
	}
	if topo, why := Classify(r); topo == Unsupported {
		return nil, errs.Message(errs.Unprocessable, "evaluations.unsupported_topology", why, map[string]any{"run_id": r.ID})
	}
	return simpleOf(s.start(ctx, sc, r))
}

// Stop deactivates the run; a run not in a terminal status becomes
// cancelled. The workers re-read is_active while they execute and stop
// claiming cells within seconds.
func (s *Simple) Stop(ctx context.Context, sc scope.Scope, id uuid.UUID) (*SimpleEvaluation, error) {
	r, err := s.open(ctx, sc, id)
	if err != nil {
		return nil, err
	}
	off := false
	e := evaluations.RunEdit{ID: r.ID, Flags: &evaluations.RunFlagsEdit{IsActive: &off}}
	switch r.Status {
	case evaluations.Pending, evaluations.Queued, evaluations.Running:
		st := evaluations.Cancelled
		e.Status = &st
	}
	edited, err := s.svc.EditRuns(ctx, sc, []evaluations.RunEdit{e})
	if err != nil {
		return nil, err
	}
	if e.Status != nil {
		// Its cells not run read cancelled, as a budget stop's do.
		if err := s.svc.CancelCells(ctx, sc, id); err != nil {
			return nil, err
		}
	}
	return simpleOf(&edited[0], nil)
}

// SetClosed closes or opens the evaluation; nil when it does not exist.
func (s *Simple) SetClosed(ctx context.Context, sc scope.Scope, id uuid.UUID, closed bool) (*SimpleEvaluation, error) {
	rs, err := s.svc.SetClosed(ctx, sc, []uuid.UUID{id}, closed)
	if err != nil || len(rs) == 0 {
		return nil, err
	}
	return simpleOf(&rs[0], nil)
}

// Delete deletes the evaluation's run with everything under it; it
// reports whether it existed. A closed run is a 409.
func (s *Simple) Delete(ctx context.Context, sc scope.Scope, id uuid.UUID) (bool, error) {
	ids, err := s.svc.DeleteRuns(ctx, sc, []uuid.UUID{id})
	return len(ids) > 0, err
}

// Edit changes the evaluation's header, flags (is_cached, is_split),
// repeats and concurrency, and re-pins the *_steps it sends (the others
// are kept as pinned). It does not start or stop the run.
func (s *Simple) Edit(ctx context.Context, sc scope.Scope, id uuid.UUID, in *SimpleInput) (*SimpleEvaluation, error) {
	r, err := s.open(ctx, sc, id)
	if err != nil {
		return nil, err
	}
	e := evaluations.RunEdit{ID: r.ID, Name: in.Name, Description: in.Description, Tags: in.Tags, Meta: in.Meta,
		Flags: &evaluations.RunFlagsEdit{IsCached: in.Flags.IsCached, IsSplit: in.Flags.IsSplit}}
	d := r.Data
	if in.Repeats != nil {
		d.Repeats = in.Repeats
	}
	if in.Concurrency != nil {
		d.Concurrency = in.Concurrency
	}
	if in.ModelCache != nil {
		d.ModelCache = in.ModelCache
	}
	if in.Budget != nil {
		d.Budget = in.Budget
	}
	if len(in.Steps) > 0 {
		refs := stepRefsOf(r)
		for k, v := range in.Steps {
			refs[k] = v
		}
		pinned, err := s.fam.Pin(ctx, sc, Sources{Queries: refs[QuerySteps], Testsets: refs[TestsetSteps],
			Applications: refs[ApplicationSteps], Evaluators: refs[EvaluatorSteps]}, r.Flags.IsLive)
		if err != nil {
			return nil, err
		}
		d.Steps, d.Mappings = pinned.Steps, pinned.Mappings
	}
	e.Data = &d
	edited, err := s.svc.EditRuns(ctx, sc, []evaluations.RunEdit{e})
	if err != nil {
		return nil, err
	}
	return simpleOf(&edited[0], nil)
}
