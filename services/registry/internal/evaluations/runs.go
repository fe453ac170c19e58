package evaluations

import (
	"context"
	"encoding/json"
	"errors"
	"sort"

	"github.com/google/uuid"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/scope"
)

// Derive recomputes the flags that follow from the steps, as the compatible
// platform does: has_queries and has_testsets from query_revision and
// testset_revision references, has_traces and has_testcases from the
// direct-input keys (traces or query-direct, testcases or testset-direct, as a
// step key or a reference name), has_evaluators from annotation steps and
// has_custom/human/auto from their origins; is_queue is a human step (its
// default queue is made active in the same write).
func Derive(f RunFlags, d *RunData) RunFlags {
	f.HasQueries, f.HasTestsets, f.HasTraces, f.HasTestcases = false, false, false, false
	f.HasEvaluators, f.HasCustom, f.HasHuman, f.HasAuto = false, false, false, false
	direct := func(s *Step, names ...string) bool {
		for _, n := range names {
			if s.Key == n {
				return true
			}
			if _, ok := s.References[n]; ok {
				return true
			}
		}
		return false
	}
	for i := range d.Steps {
		s := &d.Steps[i]
		if _, ok := s.References["query_revision"]; ok {
			f.HasQueries = true
		}
		if _, ok := s.References["testset_revision"]; ok {
			f.HasTestsets = true
		}
		f.HasTraces = f.HasTraces || direct(s, "traces", "query-direct")
		f.HasTestcases = f.HasTestcases || direct(s, "testcases", "testset-direct")
		if s.Type == TypeAnnotation {
			f.HasEvaluators = true
			switch s.Origin {
			case OriginCustom:
				f.HasCustom = true
			case OriginHuman:
				f.HasHuman = true
			case OriginAuto:
				f.HasAuto = true
			}
		}
	}
	f.IsQueue = f.HasHuman
	return f
}

// References flattens the steps' references for the runs' references
// column: every reference object with "key" (its name, e.g.
// testset_revision) and "step_key" added.
func References(d *RunData) json.RawMessage {
	out := []map[string]string{}
	for _, s := range d.Steps {
		names := make([]string, 0, len(s.References))
		for n := range s.References {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			r := s.References[n]
			m := map[string]string{"key": n, "step_key": s.Key}
			if r.ID != nil {
				m["id"] = *r.ID
			}
			if r.Slug != nil {
				m["slug"] = *r.Slug
			}
			if r.Version != nil {
				m["version"] = *r.Version
			}
			out = append(out, m)
		}
	}
	b, _ := json.Marshal(out)
	return b
}

// checkRunData validates a run's steps and repeats, at loc.
func checkRunData(d *RunData, loc ...any) error {
	at := func(k ...any) []any { return append(append(append([]any{}, loc...), "data"), k...) }
	if d.Repeats == nil {
		one := 1
		d.Repeats = &one
	}
	if *d.Repeats < 1 || *d.Repeats > MaxRepeats {
		return errs.Field("Input should be between 1 and "+itoa(MaxRepeats), *d.Repeats, at("repeats")...)
	}
	if len(d.Steps) > MaxSteps {
		return errs.Field("List should have at most "+itoa(MaxSteps)+" items", nil, at("steps")...)
	}
	if c := d.Concurrency; c != nil {
		if c.BatchSize != nil && (*c.BatchSize < 1 || *c.BatchSize > 1000) {
			return errs.Field("Input should be between 1 and 1000", *c.BatchSize, at("concurrency", "batch_size")...)
		}
		if c.MaxRetries != nil && (*c.MaxRetries < 0 || *c.MaxRetries > 100) {
			return errs.Field("Input should be between 0 and 100", *c.MaxRetries, at("concurrency", "max_retries")...)
		}
		if c.RetryDelay != nil && (*c.RetryDelay < 0 || *c.RetryDelay > 3600) {
			return errs.Field("Input should be between 0 and 3600", *c.RetryDelay, at("concurrency", "retry_delay")...)
		}
	}
	seen := map[string]bool{}
	for i := range d.Steps {
		s := &d.Steps[i]
		if s.Key == "" || len(s.Key) > MaxStepKey {
			return errs.Field("A step key is 1 to 255 characters", s.Key, at("steps", i, "key")...)
		}
		if seen[s.Key] {
			return errs.Field("Step keys must be unique", s.Key, at("steps", i, "key")...)
		}
		seen[s.Key] = true
		switch s.Type {
		case TypeInput, TypeInvocation, TypeAnnotation:
		default:
			return errs.Field("Input should be 'input', 'invocation' or 'annotation'", s.Type, at("steps", i, "type")...)
		}
		switch s.Origin {
		case "":
			s.Origin = OriginCustom
		case OriginCustom, OriginHuman, OriginAuto:
		default:
			return errs.Field("Input should be 'custom', 'human' or 'auto'", s.Origin, at("steps", i, "origin")...)
		}
		for name, r := range s.References {
			if r.ID != nil {
				if _, err := uuid.Parse(*r.ID); err != nil {
					return errs.Field("Input should be a valid UUID", *r.ID, at("steps", i, "references", name, "id")...)
				}
			}
		}
	}
	return nil
}

// prepareRun validates a run to be written and derives what follows
// from its steps.
func prepareRun(r *Run, loc ...any) error {
	st, err := CheckStatus(r.Status, Pending, append(append([]any{}, loc...), "status")...)
	if err != nil {
		return err
	}
	r.Status = st
	r.Version = Version
	if err := CheckObjects(nil, r.Tags, r.Meta, loc...); err != nil {
		return err
	}
	r.Tags, r.Meta = Nullable(r.Tags), Nullable(r.Meta)
	if err := CheckText(r.Name, 512, append(append([]any{}, loc...), "name")...); err != nil {
		return err
	}
	if err := CheckText(r.Description, 65536, append(append([]any{}, loc...), "description")...); err != nil {
		return err
	}
	if err := checkRunData(&r.Data, loc...); err != nil {
		return err
	}
	r.Flags = Derive(r.Flags, &r.Data)
	return nil
}

// CheckText refuses a text longer than max runes at loc; nil passes.
func CheckText(s *string, max int, loc ...any) error {
	if s != nil && len([]rune(*s)) > max {
		return errs.Field("String should have at most "+itoa(max)+" characters", nil, loc...)
	}
	return nil
}

// CreateRuns creates runs (an id sent is kept, else one is minted), each
// with its default queue per the reconciliation policy.
func (s *Service) CreateRuns(ctx context.Context, sc scope.Scope, runs []Run) ([]Run, error) {
	if err := s.checkBatch(len(runs), "runs"); err != nil {
		return nil, err
	}
	now := s.now()
	for i := range runs {
		r := &runs[i]
		if r.ID == "" {
			r.ID = newID().String()
		} else if _, err := ParseID(r.ID, "body", "runs", i, "id"); err != nil {
			return nil, err
		}
		if err := prepareRun(r, "body", "runs", i); err != nil {
			return nil, err
		}
		r.Lifecycle = Lifecycle{CreatedAt: ptrTime(now), CreatedByID: user(sc)}
	}
	err := s.store.InTx(ctx, func(st Store) error {
		if err := st.InsertRuns(ctx, sc.ProjectID, runs); err != nil {
			return err
		}
		for i := range runs {
			if err := s.reconcileQueue(ctx, st, sc, &runs[i]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return runs, nil
}

// RunEdit is an edit of a run: nil fields are kept. The flags an edit may
// set are is_live, is_active, is_cached and is_split; is_closed belongs to
// close/open and the rest is derived.
type RunEdit struct {
	ID          string          `json:"id"`
	Name        *string         `json:"name"`
	Description *string         `json:"description"`
	Flags       *RunFlagsEdit   `json:"flags"`
	Tags        json.RawMessage `json:"tags"`
	Meta        json.RawMessage `json:"meta"`
	Status      *Status         `json:"status"`
	Data        *RunData        `json:"data"`
}

// RunFlagsEdit are the flags an edit sets; nil keeps the stored value.
type RunFlagsEdit struct {
	IsLive   *bool `json:"is_live"`
	IsActive *bool `json:"is_active"`
	IsCached *bool `json:"is_cached"`
	IsSplit  *bool `json:"is_split"`
}

// EditRuns applies edits to existing runs; a closed run is a 409, a
// missing one a 404. The default queue is reconciled after each edit.
func (s *Service) EditRuns(ctx context.Context, sc scope.Scope, edits []RunEdit) ([]Run, error) {
	if err := s.checkBatch(len(edits), "runs"); err != nil {
		return nil, err
	}
	ids := make([]uuid.UUID, len(edits))
	for i, e := range edits {
		id, err := ParseID(e.ID, "body", "runs", i, "id")
		if err != nil {
			return nil, err
		}
		ids[i] = id
	}
	out := make([]Run, 0, len(edits))
	err := s.store.InTx(ctx, func(st Store) error {
		runs, err := st.LockRuns(ctx, sc.ProjectID, DedupIDs(ids), true)
		if err != nil {
			return err
		}
		byID := map[string]*Run{}
		for i := range runs {
			byID[runs[i].ID] = &runs[i]
		}
		for i, e := range edits {
			r, ok := byID[ids[i].String()]
			if !ok {
				return RunNotFound(ids[i].String())
			}
			if r.Flags.IsClosed {
				return ClosedRun(r.ID)
			}
			before := r.Data.Steps
			applyRunEdit(r, e)
			if err := prepareRun(r, "body", "runs", i); err != nil {
				return err
			}
			r.UpdatedAt, r.UpdatedByID = ptrTime(s.now()), user(sc)
			u, err := st.UpdateRun(ctx, sc.ProjectID, *r)
			if err != nil {
				return err
			}
			if err := dropSteps(ctx, st, sc.ProjectID, u, before); err != nil {
				return err
			}
			if err := s.reconcileQueue(ctx, st, sc, u); err != nil {
				return err
			}
			*r = *u
			out = append(out, *u)
		}
		return nil
	})
	return out, err
}

// dropSteps removes, in the edit's transaction, what the steps an edit
// dropped leave behind: their cells, and the scenarios that came from a
// dropped input step and have no cell of a remaining one (a testcase of a
// testset the run no longer reads). Left in place, they would still count
// in the progress, the export and the metrics of a run that no longer has
// those steps. Cells of keys the run never declared (annotations written
// under undeclared keys, see UpsertResults) are not the edit's to drop.
//
// The remaining scenarios' statuses are recomputed: one that waited only
// on a dropped step is done.
func dropSteps(ctx context.Context, st Store, p uuid.UUID, r *Run, before []Step) error {
	run := uuid.MustParse(r.ID)
	kept := map[string]bool{}
	var keptInputs []string
	for _, s := range r.Data.Steps {
		kept[s.Key] = true
		if s.Type == TypeInput {
			keptInputs = append(keptInputs, s.Key)
		}
	}
	var dropped, droppedInputs []string
	for _, s := range before {
		if kept[s.Key] {
			continue
		}
		dropped = append(dropped, s.Key)
		if s.Type == TypeInput {
			droppedInputs = append(droppedInputs, s.Key)
		}
	}
	if len(dropped) == 0 {
		return nil
	}
	if _, _, err := st.DropSteps(ctx, p, run, dropped, droppedInputs, keptInputs); err != nil {
		return err
	}
	return st.RecomputeRun(ctx, p, run, Expected(r, false))
}

func applyRunEdit(r *Run, e RunEdit) {
	if e.Name != nil {
		r.Name = e.Name
	}
	if e.Description != nil {
		r.Description = e.Description
	}
	if e.Tags != nil {
		r.Tags = e.Tags
	}
	if e.Meta != nil {
		r.Meta = e.Meta
	}
	if e.Status != nil {
		r.Status = *e.Status
	}
	if e.Data != nil {
		r.Data = *e.Data
	}
	if f := e.Flags; f != nil {
		set := func(dst *bool, v *bool) {
			if v != nil {
				*dst = *v
			}
		}
		set(&r.Flags.IsLive, f.IsLive)
		set(&r.Flags.IsActive, f.IsActive)
		set(&r.Flags.IsCached, f.IsCached)
		set(&r.Flags.IsSplit, f.IsSplit)
	}
}

// reconcileQueue creates, unarchives or archives the run's default queue
// after a run write: wanted when the run has a human
// step, or for every run with DefaultQueuesForAllRuns.
func (s *Service) reconcileQueue(ctx context.Context, st Store, sc scope.Scope, r *Run) error {
	want := r.Flags.HasHuman || s.cfg.DefaultQueuesForAllRuns
	rid, _ := uuid.Parse(r.ID)
	q, err := st.DefaultQueue(ctx, sc.ProjectID, rid)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return err
	}
	now := s.now()
	switch {
	case want && q == nil:
		return st.InsertQueue(ctx, sc.ProjectID, Queue{ID: newID().String(), RunID: r.ID, Name: r.Name,
			Flags: QueueFlags{IsDefault: true}, Status: Pending,
			Lifecycle: Lifecycle{CreatedAt: &now, CreatedByID: user(sc)}})
	case want && q.DeletedAt != nil:
		q.DeletedAt, q.DeletedByID, q.UpdatedAt, q.UpdatedByID = nil, nil, &now, user(sc)
		_, err := st.UpdateQueue(ctx, sc.ProjectID, *q)
		return err
	case !want && q != nil && q.DeletedAt == nil:
		q.DeletedAt, q.DeletedByID = &now, user(sc)
		_, err := st.UpdateQueue(ctx, sc.ProjectID, *q)
		return err
	}
	return nil
}

// Run returns the run id, or nil.
func (s *Service) Run(ctx context.Context, sc scope.Scope, id uuid.UUID) (*Run, error) {
	rs, err := s.store.Runs(ctx, sc.ProjectID, Filter{IDs: []uuid.UUID{id}, Windowing: s.window(nil)})
	if err != nil || len(rs) == 0 {
		return nil, err
	}
	return &rs[0], nil
}

// QueryRuns returns a bounded page of the runs matching f.
func (s *Service) QueryRuns(ctx context.Context, sc scope.Scope, f Filter) (Page[Run], error) {
	f.Windowing = s.window(f.Windowing)
	rs, err := s.store.Runs(ctx, sc.ProjectID, f)
	if err != nil {
		return Page[Run]{}, err
	}
	return page(rs, f.Windowing, func(r *Run) string { return r.ID }), nil
}

// DeleteRuns hard-deletes runs with everything under them; a closed run
// is a 409. It returns the ids deleted (absent ones are skipped).
func (s *Service) DeleteRuns(ctx context.Context, sc scope.Scope, ids []uuid.UUID) ([]uuid.UUID, error) {
	if err := s.checkBatch(len(ids), "run_ids"); err != nil {
		return nil, err
	}
	var out []uuid.UUID
	err := s.store.InTx(ctx, func(st Store) error {
		runs, err := st.LockRuns(ctx, sc.ProjectID, DedupIDs(ids), true)
		if err != nil {
			return err
		}
		for _, r := range runs {
			if r.Flags.IsClosed {
				return ClosedRun(r.ID)
			}
		}
		out, err = st.Delete(ctx, sc.ProjectID, KindRun, ids)
		return err
	})
	return out, err
}

// SetClosed closes or opens runs (absent ones are skipped); closing waits
// for the writes in flight on the run (they hold its shared lock).
func (s *Service) SetClosed(ctx context.Context, sc scope.Scope, ids []uuid.UUID, closed bool) ([]Run, error) {
	return s.Close(ctx, sc, ids, closed, nil)
}

// Close is SetClosed with, when closing, the runs' final status: a client
// that drives its own loop (the compatible SDK's local evaluation) closes
// with the status it rolled up from its scenarios. The status applies to
// runs being closed now; an already closed run is answered unchanged.
func (s *Service) Close(ctx context.Context, sc scope.Scope, ids []uuid.UUID, closed bool, status *Status) ([]Run, error) {
	if err := s.checkBatch(len(ids), "run_ids"); err != nil {
		return nil, err
	}
	var out []Run
	err := s.store.InTx(ctx, func(st Store) error {
		runs, err := st.LockRuns(ctx, sc.ProjectID, DedupIDs(ids), true)
		if err != nil {
			return err
		}
		for i := range runs {
			r := &runs[i]
			if r.Flags.IsClosed == closed {
				out = append(out, *r)
				continue
			}
			r.Flags.IsClosed = closed
			if closed && status != nil {
				r.Status = *status
				if final(*status) && !r.Flags.IsLive {
					r.Flags.IsActive = false // as Settle does for a final status
				}
			}
			r.UpdatedAt, r.UpdatedByID = ptrTime(s.now()), user(sc)
			u, err := st.UpdateRun(ctx, sc.ProjectID, *r)
			if err != nil {
				return err
			}
			out = append(out, *u)
		}
		return nil
	})
	return out, err
}

// RunDefaultQueue returns the run's live default queue, or nil. An
// archived one (the run lost its human steps) is nil too, as in the
// compatible API: clients open what this answers as the run's queue. The
// archived queue stays readable by id and in queries with
// include_archived.
func (s *Service) RunDefaultQueue(ctx context.Context, sc scope.Scope, id uuid.UUID) (*Queue, error) {
	q, err := s.store.DefaultQueue(ctx, sc.ProjectID, id)
	if errors.Is(err, ErrNotFound) || (err == nil && q.DeletedAt != nil) {
		return nil, nil
	}
	return q, err
}
