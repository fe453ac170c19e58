package simpleevals

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/evaluation"
	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/services/registry/internal/evaluations"
)

// MaxScenariosAdd bounds one scenarios/add.
const MaxScenariosAdd = 10000

// notInRun is the 400 of a slice naming scenarios, steps or repeats that
// are not the run's: every operation is scoped to its own run.
func notInRun(field, runID string, bad []string) error {
	return errs.Message(errs.Invalid, "evaluations.not_in_run",
		fmt.Sprintf("%s not in evaluation '%s': %s", field, runID, strings.Join(bad, ", ")),
		map[string]any{"field": field, "run_id": runID, "invalid": bad})
}

// checkSlice refuses a slice naming a scenario of another run (or none),
// a step key the run does not have, or a repeat outside [0, repeats).
func (s *Simple) checkSlice(ctx context.Context, sc scope.Scope, r *evaluations.Run, sl Slice) error {
	if len(sl.ScenarioIDs) > 0 {
		ids := evaluations.DedupIDs(sl.ScenarioIDs)
		found, err := s.svc.Store().Scenarios(ctx, sc.ProjectID, evaluations.Filter{IDs: ids, RunIDs: []uuid.UUID{uuid.MustParse(r.ID)}, Windowing: evaluations.UpTo(len(ids))})
		if err != nil {
			return err
		}
		have := map[string]bool{}
		for _, x := range found {
			have[x.ID] = true
		}
		var bad []string
		for _, id := range ids {
			if !have[id.String()] {
				bad = append(bad, id.String())
			}
		}
		if len(bad) > 0 {
			return notInRun("scenario_ids", r.ID, bad)
		}
	}
	var bad []string
	for _, k := range sl.StepKeys {
		if !evaluations.HasStep(r, k) {
			bad = append(bad, k)
		}
	}
	if len(bad) > 0 {
		return notInRun("step_keys", r.ID, bad)
	}
	n := r.Data.RepeatCount()
	for _, i := range sl.RepeatIdxs {
		if i < 0 || i >= n {
			bad = append(bad, strconv.Itoa(i))
		}
	}
	if len(bad) > 0 {
		return notInRun("repeat_idxs", r.ID, bad)
	}
	return nil
}

func (sl Slice) filter(runID string) evaluations.Filter {
	return evaluations.Filter{RunIDs: []uuid.UUID{uuid.MustParse(runID)}, ScenarioIDs: sl.ScenarioIDs, StepKeys: sl.StepKeys, RepeatIdxs: sl.RepeatIdxs}
}

func (sl Slice) job() evaluation.Slice {
	out := evaluation.Slice{StepKeys: sl.StepKeys, RepeatIdxs: sl.RepeatIdxs}
	for _, id := range sl.ScenarioIDs {
		out.ScenarioIDs = append(out.ScenarioIDs, id.String())
	}
	return out
}

// Populate writes the client's results into the run (the client-driven
// loop): a result names this run or none; its scenario must be the run's
// (400 otherwise).
func (s *Simple) Populate(ctx context.Context, sc scope.Scope, id uuid.UUID, in *SliceInput) ([]evaluations.Result, error) {
	r, err := s.open(ctx, sc, id)
	if err != nil {
		return nil, err
	}
	if len(in.Results) == 0 {
		return nil, errs.Field("Field required", nil, "body", "results")
	}
	var scen []uuid.UUID
	for i := range in.Results {
		x := &in.Results[i]
		if x.RunID != "" && x.RunID != r.ID {
			return nil, notInRun("results["+strconv.Itoa(i)+"].run_id", r.ID, []string{x.RunID})
		}
		x.RunID = r.ID
		sid, err := evaluations.ParseID(x.ScenarioID, "body", "results", i, "scenario_id")
		if err != nil {
			return nil, err
		}
		scen = append(scen, sid)
	}
	if err := s.checkSlice(ctx, sc, r, Slice{ScenarioIDs: scen}); err != nil {
		return nil, err
	}
	return s.svc.UpsertResults(ctx, sc, in.Results)
}

// Process hands the slice's cells to the workers (a process job). Without
// statuses only cells not done yet are executed; with statuses (say
// failure and errors) the cells in them are re-executed and merged into
// the same run; overwrite re-executes every cell of the slice. A run that
// had finished is made active and running again first.
func (s *Simple) Process(ctx context.Context, sc scope.Scope, id uuid.UUID, in *SliceInput) error {
	r, err := s.open(ctx, sc, id)
	if err != nil {
		return err
	}
	if err := s.checkSlice(ctx, sc, r, in.Slice); err != nil {
		return err
	}
	if s.svc.Jobs() == nil {
		return evaluations.ErrJobsUnavailable
	}
	prevStatus, prevActive := r.Status, r.Flags.IsActive
	if !r.Flags.IsActive || r.Status != evaluations.Running {
		if r, err = s.activate(ctx, sc, r, nil); err != nil {
			return err
		}
	}
	job := evaluation.Job{Kind: evaluation.KindProcess, RunID: r.ID, Slice: in.job(), Overwrite: in.Overwrite}
	for _, st := range in.Statuses {
		job.Statuses = append(job.Statuses, string(st))
	}
	job.ID = fmt.Sprintf("process:%s:%d", r.ID, s.svc.Now().UnixNano())
	err = s.publish(ctx, sc, job)
	if err != nil && (prevStatus != r.Status || prevActive != r.Flags.IsActive) {
		// No worker will settle it: the run goes back to what it was.
		_, _ = s.svc.EditRuns(context.WithoutCancel(ctx), sc, []evaluations.RunEdit{{ID: r.ID, Status: &prevStatus, Flags: &evaluations.RunFlagsEdit{IsActive: &prevActive}}})
	}
	return err
}

// Probe returns the slice's results (a bounded page).
func (s *Simple) Probe(ctx context.Context, sc scope.Scope, id uuid.UUID, in *SliceInput) ([]evaluations.Result, error) {
	r, err := s.run(ctx, sc, id)
	if err != nil {
		return nil, err
	}
	if err := s.checkSlice(ctx, sc, r, in.Slice); err != nil {
		return nil, err
	}
	p, err := s.svc.QueryResults(ctx, sc, in.filter(r.ID))
	return p.Items, err
}

// Prune deletes the slice's results (their scenarios' statuses are
// recomputed).
func (s *Simple) Prune(ctx context.Context, sc scope.Scope, id uuid.UUID, in *SliceInput) error {
	r, err := s.open(ctx, sc, id)
	if err != nil {
		return err
	}
	if err := s.checkSlice(ctx, sc, r, in.Slice); err != nil {
		return err
	}
	f := in.filter(r.ID)
	for {
		f.Windowing = evaluations.UpTo(s.svc.Config().MaxBatch)
		xs, err := s.svc.Store().Results(ctx, sc.ProjectID, f)
		if err != nil || len(xs) == 0 {
			return err
		}
		ids := make([]uuid.UUID, len(xs))
		for i := range xs {
			ids[i] = uuid.MustParse(xs[i].ID)
		}
		if _, err := s.svc.DeleteResults(ctx, sc, ids); err != nil {
			return err
		}
	}
}

// Refresh hands the run's metrics to the workers (a metrics job over the
// slice's scenarios).
func (s *Simple) Refresh(ctx context.Context, sc scope.Scope, id uuid.UUID, in *SliceInput) error {
	r, err := s.open(ctx, sc, id)
	if err != nil {
		return err
	}
	if err := s.checkSlice(ctx, sc, r, in.Slice); err != nil {
		return err
	}
	return s.publish(ctx, sc, evaluation.Job{Kind: evaluation.KindMetrics, RunID: r.ID, Slice: in.job(),
		ID: fmt.Sprintf("metrics:%s:%d", r.ID, s.svc.Now().UnixNano())})
}

// AddScenarios creates count scenarios on the run; a timestamp is floored
// to the minute and makes them temporal (interval 1).
func (s *Simple) AddScenarios(ctx context.Context, sc scope.Scope, id uuid.UUID, count int, ts *time.Time) ([]evaluations.Scenario, error) {
	r, err := s.open(ctx, sc, id)
	if err != nil {
		return nil, err
	}
	if count < 1 || count > MaxScenariosAdd {
		return nil, errs.Field("Input should be between 1 and "+strconv.Itoa(MaxScenariosAdd), count, "body", "count")
	}
	ss := make([]evaluations.Scenario, count)
	for i := range ss {
		ss[i] = evaluations.Scenario{RunID: r.ID, Status: evaluations.Pending}
		if ts != nil {
			t, one := evaluations.FloorMinute(*ts), 1
			ss[i].Timestamp, ss[i].Interval = &t, &one
		}
	}
	return s.svc.CreateScenarios(ctx, sc, ss)
}

// RemoveScenarios deletes the run's scenarios ids (400 naming those that
// are not the run's).
func (s *Simple) RemoveScenarios(ctx context.Context, sc scope.Scope, id uuid.UUID, ids []uuid.UUID) error {
	r, err := s.open(ctx, sc, id)
	if err != nil {
		return err
	}
	if len(ids) == 0 {
		return errs.Field("Field required", nil, "body", "scenario_ids")
	}
	if err := s.checkSlice(ctx, sc, r, Slice{ScenarioIDs: ids}); err != nil {
		return err
	}
	_, err = s.svc.DeleteScenarios(ctx, sc, ids)
	return err
}

// AddSteps appends steps (and their mappings) to the run; a key it
// already has is a 422.
func (s *Simple) AddSteps(ctx context.Context, sc scope.Scope, id uuid.UUID, steps []evaluations.Step, mappings []evaluations.Mapping) (*evaluations.Run, error) {
	r, err := s.open(ctx, sc, id)
	if err != nil {
		return nil, err
	}
	if len(steps) == 0 {
		return nil, errs.Field("Field required", nil, "body", "steps")
	}
	// Checked here so the errors name body.steps (the records would
	// name the run they write).
	seen := map[string]bool{}
	for i, st := range steps {
		if st.Key == "" || len(st.Key) > evaluations.MaxStepKey {
			return nil, errs.Field("A step key is 1 to 255 characters", st.Key, "body", "steps", i, "key")
		}
		if evaluations.HasStep(r, st.Key) || seen[st.Key] {
			return nil, errs.Field("The evaluation already has this step", st.Key, "body", "steps", i, "key")
		}
		seen[st.Key] = true
		switch st.Type {
		case evaluations.TypeInput, evaluations.TypeInvocation, evaluations.TypeAnnotation:
		default:
			return nil, errs.Field("Input should be 'input', 'invocation' or 'annotation'", st.Type, "body", "steps", i, "type")
		}
		switch st.Origin {
		case "", evaluations.OriginAuto, evaluations.OriginHuman, evaluations.OriginCustom:
		default:
			return nil, errs.Field("Input should be 'custom', 'human' or 'auto'", st.Origin, "body", "steps", i, "origin")
		}
	}
	if len(r.Data.Steps)+len(steps) > evaluations.MaxSteps {
		return nil, errs.Field("An evaluation has at most "+strconv.Itoa(evaluations.MaxSteps)+" steps", nil, "body", "steps")
	}
	for i, m := range mappings {
		if !evaluations.HasStep(r, m.Step.Key) && !inSteps(steps, m.Step.Key) {
			return nil, errs.Field("Step not found in this evaluation", m.Step.Key, "body", "mappings", i, "step", "key")
		}
	}
	d := r.Data
	d.Steps = append(append([]evaluations.Step{}, d.Steps...), steps...)
	d.Mappings = append(append([]evaluations.Mapping{}, d.Mappings...), mappings...)
	return s.editData(ctx, sc, r, d)
}

func inSteps(steps []evaluations.Step, key string) bool {
	for _, s := range steps {
		if s.Key == key {
			return true
		}
	}
	return false
}

// RemoveSteps removes steps and their mappings from the run (400 naming
// keys it does not have). Their cells go with them, as with every run
// edit that drops steps (dropSteps).
func (s *Simple) RemoveSteps(ctx context.Context, sc scope.Scope, id uuid.UUID, keys []string) (*evaluations.Run, error) {
	r, err := s.open(ctx, sc, id)
	if err != nil {
		return nil, err
	}
	if len(keys) == 0 {
		return nil, errs.Field("Field required", nil, "body", "step_keys")
	}
	if err := s.checkSlice(ctx, sc, r, Slice{StepKeys: keys}); err != nil {
		return nil, err
	}
	drop := map[string]bool{}
	for _, k := range keys {
		drop[k] = true
	}
	d := r.Data
	d.Steps, d.Mappings = nil, nil
	for _, st := range r.Data.Steps {
		if !drop[st.Key] {
			d.Steps = append(d.Steps, st)
		}
	}
	for _, m := range r.Data.Mappings {
		if !drop[m.Step.Key] {
			d.Mappings = append(d.Mappings, m)
		}
	}
	return s.editData(ctx, sc, r, d)
}

// SetRepeats sets the run's repeat count.
func (s *Simple) SetRepeats(ctx context.Context, sc scope.Scope, id uuid.UUID, repeats int) (*evaluations.Run, error) {
	r, err := s.open(ctx, sc, id)
	if err != nil {
		return nil, err
	}
	if repeats < 1 || repeats > evaluations.MaxRepeats {
		return nil, errs.Field("Input should be between 1 and "+strconv.Itoa(evaluations.MaxRepeats), repeats, "body", "repeats")
	}
	d := r.Data
	d.Repeats = &repeats
	return s.editData(ctx, sc, r, d)
}

func (s *Simple) editData(ctx context.Context, sc scope.Scope, r *evaluations.Run, d evaluations.RunData) (*evaluations.Run, error) {
	edited, err := s.svc.EditRuns(ctx, sc, []evaluations.RunEdit{{ID: r.ID, Data: &d}})
	if err != nil {
		return nil, err
	}
	return &edited[0], nil
}
