package evaluations

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/evaluation"
	"github.com/assayhq/assay/pkg/scope"
)

// UpsertMetrics writes metrics on their shape's key: global (no scenario,
// no timestamp), variational (a scenario of the run) or temporal (a
// timestamp, floored to the minute). Scenario and timestamp together are a
// 422; a metric of a closed run a 409.
func (s *Service) UpsertMetrics(ctx context.Context, sc scope.Scope, ms []Metric) ([]Metric, error) {
	if err := s.checkBatch(len(ms), "metrics"); err != nil {
		return nil, err
	}
	runIDs, err := runIDsAt("metrics", len(ms), func(i int) string { return ms[i].RunID })
	if err != nil {
		return nil, err
	}
	now := s.now()
	type key struct {
		run, scen, ts string
	}
	last := map[key]int{}
	for i := range ms {
		m := &ms[i]
		m.RunID = runIDs[i].String()
		loc := []any{"body", "metrics", i}
		if m.ScenarioID != nil && m.Timestamp != nil {
			return nil, errs.Field("A metric is per scenario or per timestamp, not both", nil, append(loc, "timestamp")...)
		}
		if m.ScenarioID != nil {
			id, err := ParseID(*m.ScenarioID, append(loc, "scenario_id")...)
			if err != nil {
				return nil, err
			}
			v := id.String()
			m.ScenarioID = &v
		}
		if m.Timestamp != nil {
			t := FloorMinute(*m.Timestamp)
			m.Timestamp = &t
		}
		if m.ID == "" {
			m.ID = newID().String()
		} else if _, err := ParseID(m.ID, append(loc, "id")...); err != nil {
			return nil, err
		}
		if m.Status, err = CheckStatus(m.Status, Success, append(loc, "status")...); err != nil {
			return nil, err
		}
		if err := CheckObjects(m.Flags, m.Tags, m.Meta, loc...); err != nil {
			return nil, err
		}
		if err := CheckObjects(nil, nil, m.Data, loc...); err != nil { // data is sized like meta
			return nil, errs.Field("Input should be a dictionary of at most 1 MiB", nil, append(loc, "data")...)
		}
		if err := checkInterval(m.Interval, append(loc, "interval")...); err != nil {
			return nil, err
		}
		m.Data, m.Flags, m.Tags, m.Meta = Nullable(m.Data), Nullable(m.Flags), Nullable(m.Tags), Nullable(m.Meta)
		m.Lifecycle = Lifecycle{CreatedAt: &now, CreatedByID: user(sc), UpdatedAt: &now, UpdatedByID: user(sc)}
		k := key{run: m.RunID}
		if m.ScenarioID != nil {
			k.scen = *m.ScenarioID
		}
		if m.Timestamp != nil {
			k.ts = m.Timestamp.String()
		}
		last[k] = i
	}
	uniq := make([]Metric, 0, len(last))
	for i := range ms {
		m := &ms[i]
		k := key{run: m.RunID}
		if m.ScenarioID != nil {
			k.scen = *m.ScenarioID
		}
		if m.Timestamp != nil {
			k.ts = m.Timestamp.String()
		}
		if last[k] == i {
			uniq = append(uniq, *m)
		}
	}
	var out []Metric
	err = s.store.InTx(ctx, func(st Store) error {
		if _, err := guardRuns(ctx, st, sc.ProjectID, runIDs, false, locOf("metrics", runIDs)); err != nil {
			return err
		}
		out, err = st.UpsertMetrics(ctx, sc.ProjectID, uniq)
		return err
	})
	if err != nil {
		return nil, s.locateScenario(ctx, sc.ProjectID, err, "metrics", len(ms), func(i int) (string, string) {
			if ms[i].ScenarioID == nil {
				return ms[i].RunID, ""
			}
			return ms[i].RunID, *ms[i].ScenarioID
		})
	}
	return out, nil
}

// Metric returns the metric id, or nil.
func (s *Service) Metric(ctx context.Context, sc scope.Scope, id uuid.UUID) (*Metric, error) {
	xs, err := s.store.Metrics(ctx, sc.ProjectID, Filter{IDs: []uuid.UUID{id}, Windowing: UpTo(1)})
	if err != nil || len(xs) == 0 {
		return nil, err
	}
	return &xs[0], nil
}

// QueryMetrics returns a bounded page of the metrics matching f.
func (s *Service) QueryMetrics(ctx context.Context, sc scope.Scope, f Filter) (Page[Metric], error) {
	f.Windowing = s.window(f.Windowing)
	xs, err := s.store.Metrics(ctx, sc.ProjectID, f)
	if err != nil {
		return Page[Metric]{}, err
	}
	return page(xs, f.Windowing, func(x *Metric) string { return x.ID }), nil
}

// DeleteMetrics deletes metrics; a metric of a closed run is a 409.
func (s *Service) DeleteMetrics(ctx context.Context, sc scope.Scope, ids []uuid.UUID) ([]uuid.UUID, error) {
	return s.deleteChildren(ctx, sc, KindMetric, ids, func(st Store, f Filter) ([]string, error) {
		xs, err := st.Metrics(ctx, sc.ProjectID, f)
		runs := make([]string, len(xs))
		for i := range xs {
			runs[i] = xs[i].RunID
		}
		return runs, err
	})
}

// RefreshMetrics publishes one metrics job per run (the runtime's workers
// recompute them from the cells' traces), waits for them to be stored
// (at most Config.RefreshWait) and returns the metrics asked for: those of
// the scenarios named, or the run-level ones when none is. The compatible
// SDK reads the first record of the answer right away (and marks its
// scenario failed when there is none), so the answer must hold what the
// job computed, not what was stored before it ran. Past the wait, the
// records stored so far are answered. Without a job stream it is a 503; a
// closed run a 409.
func (s *Service) RefreshMetrics(ctx context.Context, sc scope.Scope, f Filter) (Page[Metric], error) {
	if s.jobs == nil {
		return Page[Metric]{}, ErrJobsUnavailable
	}
	if len(f.RunIDs) == 0 {
		return Page[Metric]{}, errs.Field("Field required", nil, "body", "metrics", "run_ids")
	}
	if err := s.checkBatch(len(f.RunIDs), "run_ids"); err != nil {
		return Page[Metric]{}, err
	}
	runs, err := guardRuns(ctx, s.store, sc.ProjectID, f.RunIDs, false, func(uuid.UUID) []any { return []any{"body", "metrics", "run_ids"} })
	if err != nil {
		return Page[Metric]{}, err
	}
	slice := evaluation.Slice{}
	for _, id := range f.ScenarioIDs {
		slice.ScenarioIDs = append(slice.ScenarioIDs, id.String())
	}
	published := s.now()
	stamp := published.UnixNano()
	for _, id := range DedupIDs(f.RunIDs) {
		j := evaluation.Job{Kind: evaluation.KindMetrics, ProjectID: sc.ProjectID.String(), RunID: runs[id].ID, Slice: slice,
			ID: fmt.Sprintf("metrics:%s:%d", id, stamp)}
		if sc.UserID != uuid.Nil {
			j.UserID = sc.UserID.String()
		}
		if err := s.jobs.Publish(ctx, j); err != nil {
			return Page[Metric]{}, errs.Wrap(errs.Unavailable, "evaluations.jobs_unavailable", err)
		}
	}
	if len(f.ScenarioIDs) == 0 && f.HasScenario == nil {
		no := false
		f.HasScenario = &no // the run-level records
	}
	if err := s.awaitMetrics(ctx, sc, f, published); err != nil {
		return Page[Metric]{}, err
	}
	return s.QueryMetrics(ctx, sc, f)
}

// refreshPoll is how often awaitMetrics reads the records back.
const refreshPoll = 50 * time.Millisecond

// awaitMetrics waits until every record the refresh f asks for was
// written after since: the global record of each run, or each named
// scenario's. It gives up silently after Config.RefreshWait (the job may
// still be waiting for traces); only a failing read or the caller going
// away is an error.
func (s *Service) awaitMetrics(ctx context.Context, sc scope.Scope, f Filter, since time.Time) error {
	if s.cfg.RefreshWait <= 0 {
		return nil
	}
	want := len(DedupIDs(f.RunIDs))
	if len(f.ScenarioIDs) > 0 {
		want = len(DedupIDs(f.ScenarioIDs))
	}
	q := f
	q.HasTimestamp = ptrBool(false)
	q.Windowing = UpTo(s.cfg.MaxLimit)
	since = since.Truncate(time.Microsecond) // PostgreSQL's precision
	deadline := time.Now().Add(s.cfg.RefreshWait)
	for {
		xs, err := s.store.Metrics(ctx, sc.ProjectID, q)
		if err != nil {
			return err
		}
		fresh := map[string]bool{}
		for _, m := range xs {
			at := m.UpdatedAt
			if at == nil {
				at = m.CreatedAt // written once: never updated
			}
			if at != nil && !at.Before(since) {
				k := m.RunID
				if m.ScenarioID != nil {
					k = *m.ScenarioID
				}
				fresh[k] = true
			}
		}
		if len(fresh) >= want || !time.Now().Before(deadline) {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(refreshPoll):
		}
	}
}

func ptrBool(b bool) *bool { return &b }
