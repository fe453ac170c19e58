package evaluations

import (
	"context"
	"encoding/json"
	"time"

	"github.com/google/uuid"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/scope"
)

// Progress is a run's scenarios and cells counted by status; Expected is
// the number of cells its scenarios should have (steps × repeats, the
// invocations at repeat 0 unless split).
type Progress struct {
	RunID     string `json:"run_id"`
	Status    Status `json:"status"`
	Scenarios Counts `json:"-"`
	Results   Counts `json:"-"`
	Expected  int    `json:"-"`
	// Waiting lists the provider rate limits the run's cells wait on now
	// (the runtime reports them; empty when none): the run is queued
	// behind a provider, not stuck.
	Waiting []ProviderWait `json:"-"`
}

// ProviderWait is a provider's rate limit a run's cells wait on, until
// Until (the runtime's estimate, renewed while the limit lasts).
type ProviderWait struct {
	Provider string    `json:"provider"`
	Until    time.Time `json:"until"`
}

// WaitsFunc reads the provider waits of a run (package modelcalls).
type WaitsFunc func(ctx context.Context, project, run uuid.UUID) ([]ProviderWait, error)

// SetWaits makes the progress answer show the provider waits f reads.
func (s *Service) SetWaits(f WaitsFunc) { s.waits = f }

// MarshalJSON renders {run_id, status, scenarios:{<status>:n,…,total},
// results:{<status>:n,…,total, expected}, waiting?:[{provider, until}]},
// waiting only while the run waits on a provider.
func (p Progress) MarshalJSON() ([]byte, error) {
	counts := func(c Counts) map[string]int {
		m := map[string]int{"total": 0}
		for st, n := range c {
			m[string(st)] = n
			m["total"] += n
		}
		return m
	}
	res := counts(p.Results)
	res["expected"] = p.Expected
	out := map[string]any{"run_id": p.RunID, "status": p.Status, "scenarios": counts(p.Scenarios), "results": res}
	if len(p.Waiting) > 0 {
		out["waiting"] = p.Waiting
	}
	return json.Marshal(out)
}

// Progress returns the run's progress, or nil when it does not exist.
func (s *Service) Progress(ctx context.Context, sc scope.Scope, id uuid.UUID) (*Progress, error) {
	r, err := s.Run(ctx, sc, id)
	if err != nil || r == nil {
		return nil, err
	}
	p, err := s.progress(ctx, s.store, sc.ProjectID, r)
	if err != nil || s.waits == nil || final(r.Status) {
		return p, err
	}
	// A wait is shown while the run still has work; a failure to read it
	// must not hide the counts.
	if w, werr := s.waits(ctx, sc.ProjectID, id); werr == nil {
		p.Waiting = w
	}
	return p, nil
}

func (s *Service) progress(ctx context.Context, st Store, p uuid.UUID, r *Run) (*Progress, error) {
	scen, res, err := st.ResultCounts(ctx, p, uuid.MustParse(r.ID))
	if err != nil {
		return nil, err
	}
	total := 0
	for _, n := range scen {
		total += n
	}
	return &Progress{RunID: r.ID, Status: r.Status, Scenarios: scen, Results: res, Expected: total * len(Expected(r, false))}, nil
}

// Settle recomputes a run's status from its scenarios in one transaction
// (the runtime's worker calls it after a slice): cancelled and failure are
// kept; else errors if any scenario has errors; else running if any
// scenario is pending or running and the run has executable cells left
// (inputs, invocations and auto annotations; human and custom
// annotations wait for people or the SDK) or is a queue run; else
// success. A live run stays running (it is never final). A final status
// sets is_active=false unless the run is live. Closed runs settle too:
// the status is bookkeeping of work already done, not a change to the
// records.
func (s *Service) Settle(ctx context.Context, sc scope.Scope, id uuid.UUID) (*Run, *Progress, error) {
	var (
		run  *Run
		prog *Progress
	)
	err := s.store.InTx(ctx, func(st Store) error {
		r, err := lockRun(ctx, st, sc.ProjectID, id)
		if err != nil {
			return err
		}
		scen, _, err := st.ResultCounts(ctx, sc.ProjectID, id)
		if err != nil {
			return err
		}
		next := r.Status
		switch {
		case r.Status == Cancelled || r.Status == Failure:
		case scen[Errors] > 0 && !r.Flags.IsLive:
			next = Errors
		case r.Flags.IsLive:
			next = Running
			if scen[Errors] > 0 {
				next = Errors
			}
		default:
			open := scen[Pending]+scen[Running]+scen[Queued] > 0
			left := false
			if open && !r.Flags.IsQueue {
				if left, err = st.PendingExecutable(ctx, sc.ProjectID, id, Expected(r, true)); err != nil {
					return err
				}
			}
			if open && (left || r.Flags.IsQueue) {
				next = Running
			} else {
				next = Success
			}
		}
		active := r.Flags.IsActive
		if final(next) && !r.Flags.IsLive {
			active = false
		}
		if next != r.Status || active != r.Flags.IsActive {
			r.Status, r.Flags.IsActive = next, active
			r.UpdatedAt = ptrTime(s.now())
			if r, err = st.UpdateRun(ctx, sc.ProjectID, *r); err != nil {
				return err
			}
		}
		run = r
		prog, err = s.progress(ctx, st, sc.ProjectID, r)
		return err
	})
	return run, prog, err
}

// final reports whether a run in status st has nothing left to do.
func final(st Status) bool {
	return st == Success || st == Errors || st == Failure || st == Cancelled
}

// Fail marks a run failed (a crash of its job): status failure (kept as
// it is on a closed run), is_active=false, the error under meta.error.
func (s *Service) Fail(ctx context.Context, sc scope.Scope, id uuid.UUID, cause json.RawMessage) (*Run, error) {
	return s.end(ctx, sc, id, cause, failing)
}

// Cancel stops a run for the worker's reason (a budget reached): a run not
// yet final becomes cancelled, is_active=false, and the reason is kept
// under meta.stop ({type, message, ...}) for the console and the CLI. The
// cells that will not run now (pending, or never claimed) become
// cancelled, and so do their scenarios, so the results read what
// happened rather than work still to come (testCancelMarksUnrunCells);
// cells in flight finish and are written by their worker.
func (s *Service) Cancel(ctx context.Context, sc scope.Scope, id uuid.UUID, why json.RawMessage) (*Run, error) {
	return s.end(ctx, sc, id, why, cancelling)
}

// ending is how the worker ends a run: the status it takes and where its
// reason goes.
type ending struct {
	status Status
	// key is the reason's body field and its key under meta.
	key string
	// max bounds the reason, in bytes.
	max int
	// overFinal lets status replace a final one: a job crashing after the
	// run's last cell still fails it, a budget reached then stops nothing.
	overFinal bool
	// keepNull records a null reason (error: null still says the job
	// failed); a stop without a reason records none.
	keepNull bool
	// unrunCells marks the cells that will not run now, and their
	// scenarios, cancelled.
	unrunCells bool
}

var (
	failing    = ending{status: Failure, key: "error", max: 1 << 20, overFinal: true, keepNull: true}
	cancelling = ending{status: Cancelled, key: "stop", max: 1 << 16, unrunCells: true}
)

// end is Fail and Cancel: the run turns inactive with its reason under
// meta, and takes e's status unless it is closed (a closed run's status is
// the closer's: the compatible SDK closes with the status of its own loop,
// and a job ending after the close, such as a late metrics job, records
// its reason but flips nothing).
func (s *Service) end(ctx context.Context, sc scope.Scope, id uuid.UUID, reason json.RawMessage, e ending) (*Run, error) {
	if len(reason) > e.max {
		return nil, errs.Field("Object is too large", nil, "body", e.key)
	}
	var run *Run
	err := s.store.InTx(ctx, func(st Store) error {
		r, err := lockRun(ctx, st, sc.ProjectID, id)
		if err != nil {
			return err
		}
		meta := map[string]json.RawMessage{}
		if len(r.Meta) > 0 {
			_ = json.Unmarshal(r.Meta, &meta)
		}
		switch {
		case Nullable(reason) != nil:
			meta[e.key] = reason
		case e.keepNull:
			meta[e.key] = json.RawMessage(`null`)
		}
		r.Meta, _ = json.Marshal(meta)
		ended := !r.Flags.IsClosed && (e.overFinal || !final(r.Status))
		if ended {
			r.Status = e.status
		}
		r.Flags.IsActive = false
		r.UpdatedAt = ptrTime(s.now())
		if run, err = st.UpdateRun(ctx, sc.ProjectID, *r); err != nil || !ended || !e.unrunCells {
			return err
		}
		return cancelCells(ctx, st, sc.ProjectID, r)
	})
	return run, err
}

// CancelCells marks the unrun cells of a run stopped by its owner
// (Simple.Stop) cancelled, as Cancel does for a budget.
func (s *Service) CancelCells(ctx context.Context, sc scope.Scope, id uuid.UUID) error {
	return s.store.InTx(ctx, func(st Store) error {
		r, err := lockRun(ctx, st, sc.ProjectID, id)
		if err != nil || r.Status != Cancelled || r.Flags.IsClosed {
			return err
		}
		return cancelCells(ctx, st, sc.ProjectID, r)
	})
}

// cancelCells marks r's unrun cells cancelled and recomputes its
// scenarios. A live run's are left: its scenarios are its windows', each
// scored or not when its window came, not work the stop cut short.
func cancelCells(ctx context.Context, st Store, p uuid.UUID, r *Run) error {
	if r.Flags.IsLive {
		return nil
	}
	id := uuid.MustParse(r.ID)
	if _, err := st.MarkUnrun(ctx, p, id, Expected(r, true), Cancelled); err != nil {
		return err
	}
	return st.RecomputeRun(ctx, p, id, Expected(r, false))
}

// ReopenCells makes a cancelled run's cancelled cells pending again, for
// the workers to claim when it is started again (Cancel marked them; a
// claim takes pending cells, not cancelled ones), and recomputes its
// scenarios. A live run's cells are its windows' and are left as they are.
func (s *Service) ReopenCells(ctx context.Context, sc scope.Scope, id uuid.UUID) error {
	return s.store.InTx(ctx, func(st Store) error {
		r, err := lockRun(ctx, st, sc.ProjectID, id)
		if err != nil || r.Flags.IsLive || r.Flags.IsClosed {
			return err
		}
		if _, err := st.MarkUnrun(ctx, sc.ProjectID, id, nil, Pending); err != nil {
			return err
		}
		return st.RecomputeRun(ctx, sc.ProjectID, id, Expected(r, false))
	})
}

// lockRun locks one run exclusively, closed or not (the worker's settle and
// fail still apply to a closed run); a missing run is the run's 404.
func lockRun(ctx context.Context, st Store, p, id uuid.UUID) (*Run, error) {
	runs, err := st.LockRuns(ctx, p, []uuid.UUID{id}, true)
	if err != nil {
		return nil, err
	}
	if len(runs) == 0 {
		return nil, RunNotFound(id.String())
	}
	return &runs[0], nil
}
