package evaluations

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/scope"
)

// runIDsAt parses each record's run id (required), naming it at
// body.<key>.<i>.run_id when malformed.
func runIDsAt(key string, n int, runID func(i int) string) ([]uuid.UUID, error) {
	ids := make([]uuid.UUID, n)
	for i := 0; i < n; i++ {
		v := runID(i)
		if v == "" {
			return nil, errs.Field("Field required", nil, "body", key, i, "run_id")
		}
		id, err := ParseID(v, "body", key, i, "run_id")
		if err != nil {
			return nil, err
		}
		ids[i] = id
	}
	return ids, nil
}

// locOf names the first record of key whose run is id.
func locOf(key string, ids []uuid.UUID) func(uuid.UUID) []any {
	return func(id uuid.UUID) []any {
		for i, x := range ids {
			if x == id {
				return []any{"body", key, i, "run_id"}
			}
		}
		return []any{"body", key}
	}
}

// checkTimestamp normalises a scenario's or result's time bucket: the
// interval (minutes) must be positive.
func checkInterval(iv *int, loc ...any) error {
	if iv != nil && (*iv < 1 || *iv > 525600) {
		return errs.Field("Input should be between 1 and 525600 (minutes)", *iv, loc...)
	}
	return nil
}

// CreateScenarios creates scenarios in their runs. A client may choose
// the id: creating a scenario whose id already exists in the same run
// returns the stored one unchanged (the worker mints deterministic ids and
// may retry); the id existing in another run is a 409.
func (s *Service) CreateScenarios(ctx context.Context, sc scope.Scope, ss []Scenario) ([]Scenario, error) {
	if err := s.checkBatch(len(ss), "scenarios"); err != nil {
		return nil, err
	}
	runIDs, err := runIDsAt("scenarios", len(ss), func(i int) string { return ss[i].RunID })
	if err != nil {
		return nil, err
	}
	now := s.now()
	seen := map[string]int{}
	for i := range ss {
		x := &ss[i]
		x.RunID = runIDs[i].String()
		if x.ID == "" {
			x.ID = newID().String()
		} else {
			id, err := ParseID(x.ID, "body", "scenarios", i, "id")
			if err != nil {
				return nil, err
			}
			x.ID = id.String()
		}
		if j, dup := seen[x.ID]; dup && ss[j].RunID != x.RunID {
			return nil, errs.Field("The same id is sent for two runs", x.ID, "body", "scenarios", i, "id")
		}
		seen[x.ID] = i
		if err := prepareScenario(x, "body", "scenarios", i); err != nil {
			return nil, err
		}
		x.Lifecycle = Lifecycle{CreatedAt: &now, CreatedByID: user(sc)}
	}
	var out []Scenario
	err = s.store.InTx(ctx, func(st Store) error {
		if _, err := guardRuns(ctx, st, sc.ProjectID, runIDs, false, locOf("scenarios", runIDs)); err != nil {
			return err
		}
		stored, err := st.InsertScenarios(ctx, sc.ProjectID, ss)
		if err != nil {
			return err
		}
		for i := range stored {
			if stored[i].RunID != ss[i].RunID {
				return errs.Message(errs.Conflict, "evaluations.id_taken", "A scenario with this id exists in another run.",
					map[string]any{"scenario_id": stored[i].ID})
			}
		}
		out = stored
		return nil
	})
	return out, err
}

func prepareScenario(x *Scenario, loc ...any) error {
	at := func(k string) []any { return append(append([]any{}, loc...), k) }
	st, err := CheckStatus(x.Status, Pending, at("status")...)
	if err != nil {
		return err
	}
	x.Status = st
	if err := CheckObjects(x.Flags, x.Tags, x.Meta, loc...); err != nil {
		return err
	}
	x.Flags, x.Tags, x.Meta = Nullable(x.Flags), Nullable(x.Tags), Nullable(x.Meta)
	if x.Timestamp != nil {
		t := x.Timestamp.UTC()
		x.Timestamp = &t
	}
	return checkInterval(x.Interval, at("interval")...)
}

// EditScenarios replaces scenarios whole (the compatible platform: an edit is a full
// PUT, a field left out is wiped); the run cannot change. A scenario of
// a closed run is a 409, an absent one is skipped.
func (s *Service) EditScenarios(ctx context.Context, sc scope.Scope, ss []Scenario) ([]Scenario, error) {
	if err := s.checkBatch(len(ss), "scenarios"); err != nil {
		return nil, err
	}
	ids := make([]uuid.UUID, len(ss))
	for i := range ss {
		id, err := ParseID(ss[i].ID, "body", "scenarios", i, "id")
		if err != nil {
			return nil, err
		}
		ids[i] = id
		if err := prepareScenario(&ss[i], "body", "scenarios", i); err != nil {
			return nil, err
		}
	}
	now := s.now()
	var out []Scenario
	err := s.store.InTx(ctx, func(st Store) error {
		cur, err := st.Scenarios(ctx, sc.ProjectID, Filter{IDs: ids, Windowing: UpTo(len(ids))})
		if err != nil {
			return err
		}
		runOf := map[string]string{}
		var runIDs []uuid.UUID
		for _, c := range cur {
			runOf[c.ID] = c.RunID
			runIDs = append(runIDs, uuid.MustParse(c.RunID))
		}
		if _, err := guardRuns(ctx, st, sc.ProjectID, runIDs, false, func(uuid.UUID) []any { return []any{"body", "scenarios"} }); err != nil {
			return err
		}
		var upd []Scenario
		for i := range ss {
			run, ok := runOf[ids[i].String()]
			if !ok {
				continue
			}
			x := ss[i]
			x.ID, x.RunID = ids[i].String(), run
			x.UpdatedAt, x.UpdatedByID = &now, user(sc)
			upd = append(upd, x)
		}
		out, err = st.UpdateScenarios(ctx, sc.ProjectID, upd)
		return err
	})
	return out, err
}

// DeleteScenarios deletes scenarios with their results and metrics; a
// scenario of a closed run is a 409.
func (s *Service) DeleteScenarios(ctx context.Context, sc scope.Scope, ids []uuid.UUID) ([]uuid.UUID, error) {
	return s.deleteChildren(ctx, sc, KindScenario, ids, func(st Store, f Filter) ([]string, error) {
		xs, err := st.Scenarios(ctx, sc.ProjectID, f)
		runs := make([]string, len(xs))
		for i := range xs {
			runs[i] = xs[i].RunID
		}
		return runs, err
	})
}

// deleteChildren deletes records of kind under the closed-run guard of
// the runs they belong to (runsOf reads them).
func (s *Service) deleteChildren(ctx context.Context, sc scope.Scope, kind Kind, ids []uuid.UUID, runsOf func(Store, Filter) ([]string, error)) ([]uuid.UUID, error) {
	if err := s.checkBatch(len(ids), string(kind)+"_ids"); err != nil {
		return nil, err
	}
	var out []uuid.UUID
	err := s.store.InTx(ctx, func(st Store) error {
		runs, err := runsOf(st, Filter{IDs: ids, IncludeArchived: true, Windowing: UpTo(len(ids))})
		if err != nil {
			return err
		}
		runIDs := make([]uuid.UUID, len(runs))
		for i, r := range runs {
			runIDs[i] = uuid.MustParse(r)
		}
		if _, err := guardRuns(ctx, st, sc.ProjectID, runIDs, false, func(uuid.UUID) []any { return []any{"body"} }); err != nil {
			return err
		}
		out, err = st.Delete(ctx, sc.ProjectID, kind, ids)
		return err
	})
	return out, err
}

// Scenario returns the scenario id, or nil.
func (s *Service) Scenario(ctx context.Context, sc scope.Scope, id uuid.UUID) (*Scenario, error) {
	xs, err := s.store.Scenarios(ctx, sc.ProjectID, Filter{IDs: []uuid.UUID{id}, Windowing: s.window(nil)})
	if err != nil || len(xs) == 0 {
		return nil, err
	}
	return &xs[0], nil
}

// QueryScenarios returns a bounded page of the scenarios matching f.
func (s *Service) QueryScenarios(ctx context.Context, sc scope.Scope, f Filter) (Page[Scenario], error) {
	f.Windowing = s.window(f.Windowing)
	xs, err := s.store.Scenarios(ctx, sc.ProjectID, f)
	if err != nil {
		return Page[Scenario]{}, err
	}
	return page(xs, f.Windowing, func(x *Scenario) string { return x.ID }), nil
}

// FloorMinute is t floored to the minute (time buckets).
func FloorMinute(t time.Time) time.Time { return t.UTC().Truncate(time.Minute) }

// locateScenario turns the store's ErrUnknownScenario into a 422 naming the
// first record (body.<key>.<i>.scenario_id) whose scenario is not one of
// its run's; it reads after the failed transaction, so it only names the
// culprit and decides nothing. Other errors pass through.
func (s *Service) locateScenario(ctx context.Context, p uuid.UUID, err error, key string, n int, at func(i int) (run, scen string)) error {
	if !errors.Is(err, ErrUnknownScenario) {
		return err
	}
	ids := make([]uuid.UUID, 0, n)
	for i := 0; i < n; i++ {
		if _, sc := at(i); sc != "" {
			ids = append(ids, uuid.MustParse(sc))
		}
	}
	found, ferr := s.store.Scenarios(ctx, p, Filter{IDs: ids, Windowing: UpTo(len(ids))})
	if ferr != nil {
		return err
	}
	runOf := make(map[string]string, len(found))
	for _, x := range found {
		runOf[x.ID] = x.RunID
	}
	for i := 0; i < n; i++ {
		run, sc := at(i)
		if sc != "" && runOf[sc] != run {
			return errs.Field("Scenario not found in this run", sc, "body", key, i, "scenario_id")
		}
	}
	return err
}
