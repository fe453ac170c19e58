package evaluations

import (
	"context"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/roles"
	"github.com/assayhq/assay/pkg/scope"
)

// NormTraceID returns a trace id as the wire shows it (32 lowercase hex),
// accepting also the 0x-prefixed and dashed UUID forms; false when v is
// none of them.
func NormTraceID(v string) (string, bool) {
	v = strings.ToLower(strings.TrimPrefix(strings.TrimPrefix(v, "0x"), "0X"))
	if len(v) == 36 {
		if u, err := uuid.Parse(v); err == nil {
			return hex.EncodeToString(u[:]), true
		}
		return "", false
	}
	if len(v) != 32 {
		return "", false
	}
	if _, err := hex.DecodeString(v); err != nil {
		return "", false
	}
	return v, true
}

// prepareResult validates one result at loc and normalises its ids.
func prepareResult(x *Result, loc ...any) error {
	at := func(k string) []any { return append(append([]any{}, loc...), k) }
	if x.ScenarioID == "" {
		return errs.Field("Field required", nil, at("scenario_id")...)
	}
	sid, err := ParseID(x.ScenarioID, at("scenario_id")...)
	if err != nil {
		return err
	}
	x.ScenarioID = sid.String()
	if x.StepKey == "" || len(x.StepKey) > MaxStepKey {
		return errs.Field("A step key is 1 to 255 characters", x.StepKey, at("step_key")...)
	}
	if x.RepeatIdx < 0 || x.RepeatIdx >= MaxRepeats {
		return errs.Field("Input should be between 0 and "+itoa(MaxRepeats-1), x.RepeatIdx, at("repeat_idx")...)
	}
	if x.Status, err = CheckStatus(x.Status, Pending, at("status")...); err != nil {
		return err
	}
	if x.TraceID != nil {
		t, ok := NormTraceID(*x.TraceID)
		if !ok {
			return errs.Field("Input should be a trace id (32 hex characters)", *x.TraceID, at("trace_id")...)
		}
		x.TraceID = &t
	}
	if x.TestcaseID != nil {
		id, err := ParseID(*x.TestcaseID, at("testcase_id")...)
		if err != nil {
			return err
		}
		s := id.String()
		x.TestcaseID = &s
	}
	if x.HashID != nil && (len(*x.HashID) == 0 || len(*x.HashID) > 255) {
		return errs.Field("A hash id is 1 to 255 characters", nil, at("hash_id")...)
	}
	if err := CheckObjects(x.Flags, x.Tags, x.Meta, loc...); err != nil {
		return err
	}
	x.Flags, x.Tags, x.Meta, x.Error = Nullable(x.Flags), Nullable(x.Tags), Nullable(x.Meta), Nullable(x.Error)
	if len(x.Error) > 1<<20 {
		return errs.Field("Object is too large", nil, at("error")...)
	}
	if x.Timestamp != nil {
		t := x.Timestamp.UTC()
		x.Timestamp = &t
	}
	return checkInterval(x.Interval, at("interval")...)
}

// UpsertResults writes results on their cells (run, scenario, step key,
// repeat): a new cell is created, an existing one replaced (keeping its
// id). Two results for one cell in a request: the last wins. The status
// of every scenario touched is recomputed in the same transaction. A
// result of a closed run is a 409; a scenario of another run, or a
// malformed step key (checkUndeclaredKey), is a 422.
//
// A step key the run does not declare is stored: the compatible
// platform's annotation drawers write keys of the form
// "<invocation step key>.<evaluator slug>" for evaluators that are not
// steps of the run, and their annotation would otherwise lose its link to
// the scenario. Such a cell is treated as a human annotation
// (undeclared); every read of the run's cells lists it (UndeclaredSteps).
func (s *Service) UpsertResults(ctx context.Context, sc scope.Scope, rs []Result) ([]Result, error) {
	if err := s.checkBatch(len(rs), "results"); err != nil {
		return nil, err
	}
	runIDs, err := runIDsAt("results", len(rs), func(i int) string { return rs[i].RunID })
	if err != nil {
		return nil, err
	}
	now := s.now()
	type cell struct {
		run, scen, step string
		rep             int
	}
	last := map[cell]int{}
	for i := range rs {
		x := &rs[i]
		x.RunID = runIDs[i].String()
		if err := prepareResult(x, "body", "results", i); err != nil {
			return nil, err
		}
		if x.ID == "" {
			x.ID = newID().String()
		} else if _, err := ParseID(x.ID, "body", "results", i, "id"); err != nil {
			return nil, err
		}
		x.Lifecycle = Lifecycle{CreatedAt: &now, CreatedByID: user(sc), UpdatedAt: &now, UpdatedByID: user(sc)}
		last[cell{x.RunID, x.ScenarioID, x.StepKey, x.RepeatIdx}] = i
	}
	uniq := make([]Result, 0, len(last))
	for i := range rs {
		x := &rs[i]
		if last[cell{x.RunID, x.ScenarioID, x.StepKey, x.RepeatIdx}] == i {
			uniq = append(uniq, *x)
		}
	}
	var out []Result
	err = s.store.InTx(ctx, func(st Store) error {
		runs, err := guardRuns(ctx, st, sc.ProjectID, runIDs, false, locOf("results", runIDs))
		if err != nil {
			return err
		}
		for i := range rs {
			st := step(runs[runIDs[i]], rs[i].StepKey)
			if st == nil {
				if err := checkUndeclaredKey(rs[i].StepKey, "body", "results", i, "step_key"); err != nil {
					return err
				}
				st = undeclared(rs[i].StepKey)
			}
			if err := mayWrite(sc, st, i); err != nil {
				return err
			}
		}
		out, err = st.UpsertResults(ctx, sc.ProjectID, uniq)
		if err != nil {
			return err
		}
		return s.recompute(ctx, st, sc.ProjectID, runs, out)
	})
	if err != nil {
		return nil, s.locateScenario(ctx, sc.ProjectID, err, "results", len(rs), func(i int) (string, string) { return rs[i].RunID, rs[i].ScenarioID })
	}
	return out, nil
}

// HasStep tells whether run r declares a step with key.
func HasStep(r *Run, key string) bool { return step(r, key) != nil }

// checkUndeclaredKey refuses a step key the run does not declare when it
// has control characters: no client writes one, and it would break the
// CSV export's and the console's column headers. (The length is checked
// with every result, by prepareResult.)
func checkUndeclaredKey(k string, loc ...any) error {
	for _, c := range k {
		if c < 0x20 || c == 0x7f {
			return errs.Field("A step key the run does not declare has no control characters", k, loc...)
		}
	}
	return nil
}

// UndeclaredCells are the run's cells under step keys the run does not
// declare, by key and repeat, at most limit (see UpsertResults).
func (s *Service) UndeclaredCells(ctx context.Context, p uuid.UUID, r *Run, limit int) ([]Cell, error) {
	if limit <= 0 {
		return nil, nil
	}
	keys := make([]string, len(r.Data.Steps))
	for i, st := range r.Data.Steps {
		keys[i] = st.Key
	}
	return s.store.CellKeys(ctx, p, uuid.MustParse(r.ID), keys, limit)
}

// UndeclaredSteps are the steps of the run's cells whose keys it does not
// declare, as the human annotations they stand for (undeclared), by key,
// read from at most limit of those cells (the reports' bound on a run's
// shape, evalreports.MaxExportCells).
func (s *Service) UndeclaredSteps(ctx context.Context, p uuid.UUID, r *Run, limit int) ([]Step, error) {
	cells, err := s.UndeclaredCells(ctx, p, r, limit)
	if err != nil {
		return nil, err
	}
	var out []Step
	for i, c := range cells {
		if i == 0 || cells[i-1].StepKey != c.StepKey {
			out = append(out, *undeclared(c.StepKey))
		}
	}
	return out, nil
}

// undeclared is the step a cell with a key the run does not declare
// stands for: a human annotation, which is what the compatible clients
// write under such keys (annotation drawers, queue forms).
func undeclared(key string) *Step {
	return &Step{Key: key, Type: TypeAnnotation, Origin: OriginHuman}
}

func step(r *Run, key string) *Step {
	for i := range r.Data.Steps {
		if r.Data.Steps[i].Key == key {
			return &r.Data.Steps[i]
		}
	}
	return nil
}

// mayWrite lets a caller whose role only annotates (an annotator) write
// the results of human steps and nothing else: the status, error and
// trace of an automatic step are what the run measured, and an annotator
// rewriting them would falsify the run. The gateway's route table lets
// annotate through to the results routes because human steps are
// written there too. A scope without a role is the platform's own caller
// (the runtime's worker, with the internal token), which the gateway never
// forwards for a user.
func mayWrite(sc scope.Scope, st *Step, i int) error {
	r := roles.Role(sc.Role)
	if !r.Valid() || r.Can(roles.RunEvaluation) || st.Origin == OriginHuman {
		return nil
	}
	return errs.Message(errs.Forbidden, "auth.forbidden",
		fmt.Sprintf("Your role (%s) lacks the %q permission: results[%d].step_key '%s' is a %s step; only human steps take its results.",
			r, roles.RunEvaluation, i, st.Key, st.Origin),
		map[string]any{"permission": string(roles.RunEvaluation), "role": string(r), "field": fmt.Sprintf("results[%d].step_key", i), "value": st.Key})
}

// recompute recomputes the status of the scenarios the results touched.
func (s *Service) recompute(ctx context.Context, st Store, p uuid.UUID, runs map[uuid.UUID]*Run, rs []Result) error {
	byRun := map[uuid.UUID][]uuid.UUID{}
	for _, x := range rs {
		rid, sid := uuid.MustParse(x.RunID), uuid.MustParse(x.ScenarioID)
		byRun[rid] = append(byRun[rid], sid)
	}
	for rid, sids := range byRun {
		r := runs[rid]
		if r == nil {
			continue
		}
		if err := st.RecomputeScenarios(ctx, p, rid, DedupIDs(sids), Expected(r, false)); err != nil {
			return err
		}
	}
	return nil
}

// Result returns the result id, or nil.
func (s *Service) Result(ctx context.Context, sc scope.Scope, id uuid.UUID) (*Result, error) {
	xs, err := s.store.Results(ctx, sc.ProjectID, Filter{IDs: []uuid.UUID{id}, Windowing: UpTo(1)})
	if err != nil || len(xs) == 0 {
		return nil, err
	}
	return &xs[0], nil
}

// QueryResults returns a bounded page of the results matching f.
func (s *Service) QueryResults(ctx context.Context, sc scope.Scope, f Filter) (Page[Result], error) {
	f.Windowing = s.window(f.Windowing)
	xs, err := s.store.Results(ctx, sc.ProjectID, f)
	if err != nil {
		return Page[Result]{}, err
	}
	return page(xs, f.Windowing, func(x *Result) string { return x.ID }), nil
}

// DeleteResults deletes results and recomputes their scenarios; a result
// of a closed run is a 409.
func (s *Service) DeleteResults(ctx context.Context, sc scope.Scope, ids []uuid.UUID) ([]uuid.UUID, error) {
	if err := s.checkBatch(len(ids), "result_ids"); err != nil {
		return nil, err
	}
	var out []uuid.UUID
	err := s.store.InTx(ctx, func(st Store) error {
		xs, err := st.Results(ctx, sc.ProjectID, Filter{IDs: ids, Windowing: UpTo(len(ids))})
		if err != nil {
			return err
		}
		runIDs := make([]uuid.UUID, len(xs))
		for i := range xs {
			runIDs[i] = uuid.MustParse(xs[i].RunID)
		}
		runs, err := guardRuns(ctx, st, sc.ProjectID, runIDs, false, func(uuid.UUID) []any { return []any{"body"} })
		if err != nil {
			return err
		}
		if out, err = st.Delete(ctx, sc.ProjectID, KindResult, ids); err != nil {
			return err
		}
		return s.recompute(ctx, st, sc.ProjectID, runs, xs)
	})
	return out, err
}

// ClaimRequest is a worker's claim of cells (internal route).
type ClaimRequest struct {
	RunID        string        `json:"run_id"`
	Worker       string        `json:"worker"`
	LeaseSeconds float64       `json:"lease_seconds"`
	Statuses     []Status      `json:"statuses"`
	Overwrite    bool          `json:"overwrite"`
	Cells        []ClaimCellIn `json:"cells"`
}

// ClaimCellIn is one cell of a ClaimRequest.
type ClaimCellIn struct {
	ScenarioID string `json:"scenario_id"`
	StepKey    string `json:"step_key"`
	RepeatIdx  int    `json:"repeat_idx"`
}

// Claim marks the listed cells running for the worker, for lease seconds,
// and returns exactly the cells this call claimed (Store.ClaimResults):
// two workers never both get one cell. The claimed scenarios' statuses are
// recomputed. A closed or inactive run claims nothing.
func (s *Service) Claim(ctx context.Context, sc scope.Scope, in ClaimRequest) ([]Result, error) {
	c, err := s.claimOf(sc, in)
	if err != nil {
		return nil, err
	}
	if len(c.Cells) == 0 {
		return []Result{}, nil
	}
	rid := c.RunID
	var out []Result
	err = s.store.InTx(ctx, func(st Store) error {
		out, err = st.ClaimResults(ctx, sc.ProjectID, c)
		if err != nil || len(out) == 0 {
			return err
		}
		runs, err := st.LockRuns(ctx, sc.ProjectID, []uuid.UUID{rid}, false)
		if err != nil || len(runs) == 0 {
			return err
		}
		return s.recompute(ctx, st, sc.ProjectID, map[uuid.UUID]*Run{rid: &runs[0]}, out)
	})
	return out, err
}

// Renew extends, to lease seconds from now, the claims the worker still
// holds on the listed cells (running, claimed by it), and returns how many
// it extended: a worker renews the cells it runs every third of its lease,
// so a cell longer than the lease is never taken over while its worker
// lives, and a dead worker's cells are free a lease after its last renewal.
// A cell another worker took over (or that is done) is not touched.
func (s *Service) Renew(ctx context.Context, sc scope.Scope, in ClaimRequest) (int, error) {
	c, err := s.claimOf(sc, in)
	if err != nil || len(c.Cells) == 0 {
		return 0, err
	}
	return s.store.RenewClaims(ctx, sc.ProjectID, c)
}

// claimOf checks a claim (or renewal) request.
func (s *Service) claimOf(sc scope.Scope, in ClaimRequest) (Claim, error) {
	rid, err := ParseID(in.RunID, "body", "run_id")
	if err != nil {
		return Claim{}, err
	}
	if in.Worker == "" || len(in.Worker) > maxWorkerLen {
		return Claim{}, errs.Field("A worker name is 1 to 255 characters", nil, "body", "worker")
	}
	if !(in.LeaseSeconds > 0 && in.LeaseSeconds <= maxLease.Seconds()) { // before the conversion, which overflows
		return Claim{}, errs.Field("Input should be between 0 and 86400 seconds", in.LeaseSeconds, "body", "lease_seconds")
	}
	lease := time.Duration(in.LeaseSeconds * float64(time.Second))
	if lease <= 0 {
		return Claim{}, errs.Field("Input should be between 0 and 86400 seconds", in.LeaseSeconds, "body", "lease_seconds")
	}
	if err := s.checkBatch(len(in.Cells), "cells"); err != nil {
		return Claim{}, err
	}
	for i, st := range in.Statuses {
		if _, err := CheckStatus(st, "", "body", "statuses", i); err != nil || st == "" {
			return Claim{}, errs.Field("Input should be a status", string(st), "body", "statuses", i)
		}
	}
	c := Claim{RunID: rid, Worker: in.Worker, Until: s.now().Add(lease), Statuses: in.Statuses, Overwrite: in.Overwrite}
	if sc.UserID != uuid.Nil {
		u := sc.UserID
		c.UserID = &u
	}
	for i, x := range in.Cells {
		sid, err := ParseID(x.ScenarioID, "body", "cells", i, "scenario_id")
		if err != nil {
			return Claim{}, err
		}
		if x.StepKey == "" || len(x.StepKey) > MaxStepKey {
			return Claim{}, errs.Field("A step key is 1 to 255 characters", x.StepKey, "body", "cells", i, "step_key")
		}
		if x.RepeatIdx < 0 || x.RepeatIdx >= MaxRepeats {
			return Claim{}, errs.Field("Input should be between 0 and "+itoa(MaxRepeats-1), x.RepeatIdx, "body", "cells", i, "repeat_idx")
		}
		c.Cells = append(c.Cells, ClaimCell{ScenarioID: sid, StepKey: x.StepKey, RepeatIdx: x.RepeatIdx})
	}
	return c, nil
}
