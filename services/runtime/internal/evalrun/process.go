package evalrun

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/assayhq/assay/pkg/evaluation"
	"github.com/assayhq/assay/pkg/svcclient"
	"github.com/assayhq/assay/services/runtime/internal/registryclient"
	"github.com/assayhq/assay/services/runtime/internal/tracingclient"
)

// maxClaim is how many cells one claim call names.
const maxClaim = 500

// source is a scenario's item, read once per job.
type source struct {
	scenario   evaluation.Scenario
	testcaseID string
	testcase   *registryclient.Testcase
	inputStep  *evaluation.Step
	traceID    string
	root       *tracingclient.Span // the source trace's root span (query, traces)
	loaded     bool
}

// appResult is what evaluators read of an application cell.
type appResult struct {
	traceID, spanID string
	outputs         any
}

// process serves a process job: pass after pass, it claims the cells of
// its scenarios that are not done (applications first, then the
// evaluators whose application succeeded) and executes what it got, until
// nothing is left to run or to wait for; then it settles the run. A cell
// another worker holds is waited for (its lease lets it be claimed if
// that worker died); a cell is executed at most once per job.
func (j *jobRun) process(ctx context.Context) error {
	p := j.plan
	start := time.Now()
	scs, err := j.x.Client.Scenarios(ctx, j.sc, j.job.RunID, j.job.Slice.ScenarioIDs)
	j.x.timed("scenarios", start)
	if err != nil {
		return err
	}
	chunk := j.x.Chunk
	if chunk <= 0 {
		chunk = 100
	}
	if len(j.job.Slice.ScenarioIDs) == 0 && len(scs) > chunk {
		// A whole-run process (re-run of failed cells): shared out.
		ids := make([]string, len(scs))
		for i, s := range scs {
			ids[i] = s.ID
		}
		return j.publish(ctx, ids)
	}
	if len(scs) == 0 || !p.executable() {
		return j.settle(ctx)
	}
	ids := make([]string, len(scs))
	srcs := map[string]*source{}
	for i, s := range scs {
		ids[i] = s.ID
		srcs[s.ID] = &source{scenario: s}
	}

	wctx, cancel := j.watch(ctx)
	defer cancel()
	e := &cellRun{j: j, sem: make(chan struct{}, p.batchSize()), apps: map[evaluation.Cell]appResult{}, executed: map[evaluation.Cell]bool{},
		held: map[evaluation.Cell]bool{}, budget: newBudget(j.plan.run)}
	e.out.e = e
	lastProgress := time.Now()
	lease := j.x.lease()
	stopBeat := e.heartbeat(ctx, lease)
	defer stopBeat()
	for {
		if j.draining() {
			return ErrInterrupted
		}
		if !j.stillActive(ctx) || wctx.Err() != nil {
			return j.settle(ctx, ids...)
		}
		if over, err := j.overBudget(ctx, e.budget); err != nil {
			return err
		} else if over {
			return j.settle(ctx, ids...)
		}
		start := time.Now()
		results, err := j.x.Client.Results(ctx, j.sc, registryclient.ResultFilter{RunID: j.job.RunID, ScenarioIDs: ids})
		j.x.timed("results", start)
		if err != nil {
			return err
		}
		byCell := make(map[evaluation.Cell]*evaluation.Result, len(results))
		for i := range results {
			byCell[results[i].Of()] = &results[i]
		}
		start = time.Now()
		err = j.loadSources(ctx, srcs, byCell)
		j.x.timed("sources", start)
		if err != nil {
			return err
		}
		todo, waiting := j.targets(scs, byCell, e.executedSet())
		if len(todo) == 0 && waiting == 0 {
			break
		}
		var claimed []evaluation.Result
		start = time.Now()
		for i := 0; i < len(todo); i += maxClaim {
			got, err := j.x.Client.Claim(ctx, j.sc, registryclient.Claim{RunID: j.job.RunID, Worker: j.x.Worker,
				LeaseSeconds: int(lease / time.Second), Statuses: j.job.Statuses, Overwrite: j.job.Overwrite,
				Cells: todo[i:min(i+maxClaim, len(todo))]})
			if errors.Is(err, svcclient.ErrClosed) {
				return nil
			}
			if err != nil {
				return err
			}
			claimed = append(claimed, got...)
		}
		j.x.timed("claim", start)
		e.hold(claimed)
		if len(claimed) == 0 {
			// Everything left is held by another worker or waits on a
			// cell that is: wait (a dead worker's claims expire within a
			// lease; a live one renews them while its cells run, so the
			// bound leaves room for long cells).
			if time.Since(lastProgress) > lease+stallWait {
				return fmt.Errorf("evalrun: %d cells of run %s stayed held by other workers for %s", len(todo)+waiting, j.job.RunID, time.Since(lastProgress).Round(time.Second))
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(time.Second):
			}
			continue
		}
		lastProgress = time.Now()
		e.execute(wctx, ctx, claimed, srcs, byCell)
	}
	return j.settle(ctx, ids...)
}

// stallWait is how long, beyond a lease, a job waits on cells other
// workers hold before it gives up (and is retried).
const stallWait = 10 * time.Minute

// lease is how long a claim holds without renewal (Executor.Lease).
func (x *Executor) lease() time.Duration {
	if x.Lease <= 0 {
		return 15 * time.Second
	}
	return x.Lease
}

// heartbeat renews, every third of the lease, the claims of the cells
// the job holds (claimed, result not yet written), until stopped: a cell
// that runs longer than the lease stays this worker's, and once the
// worker dies its cells are free within a lease.
func (e *cellRun) heartbeat(ctx context.Context, lease time.Duration) (stop func()) {
	hctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(max(lease/3, 10*time.Millisecond))
		defer t.Stop()
		for {
			select {
			case <-hctx.Done():
				return
			case <-t.C:
			}
			cells := e.heldCells()
			for i := 0; i < len(cells); i += maxClaim {
				part := cells[i:min(i+maxClaim, len(cells))]
				// Fewer renewed than sent is fine: cells written meanwhile.
				_, err := e.j.x.Client.Renew(hctx, e.j.sc, registryclient.Claim{RunID: e.j.job.RunID, Worker: e.j.x.Worker,
					LeaseSeconds: max(int(lease/time.Second), 1), Cells: part})
				if err != nil && hctx.Err() == nil && e.j.x.Log != nil {
					e.j.x.Log.Warn("evaluation claims not renewed", "run_id", e.j.job.RunID, "cells", len(part), "err", err)
				}
			}
		}
	}()
	return func() { cancel(); <-done }
}

// hold records claimed cells as held until their result is written.
func (e *cellRun) hold(claimed []evaluation.Result) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, r := range claimed {
		e.held[r.Of()] = true
	}
}

// unhold forgets cells whose result was written (or that will not run).
func (e *cellRun) unhold(cells ...evaluation.Cell) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, c := range cells {
		delete(e.held, c)
	}
}

func (e *cellRun) heldCells() []evaluation.Cell {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]evaluation.Cell, 0, len(e.held))
	for c := range e.held {
		out = append(out, c)
	}
	return out
}

// loadSources reads each scenario's item from its input cell: testcases
// in one batch, source trace roots one by one.
func (j *jobRun) loadSources(ctx context.Context, srcs map[string]*source, byCell map[evaluation.Cell]*evaluation.Result) error {
	var need []string
	for id, s := range srcs {
		if s.loaded {
			continue
		}
		for i := range j.plan.inputs {
			in := &j.plan.inputs[i]
			r := byCell[evaluation.Cell{ScenarioID: id, StepKey: in.Key, RepeatIdx: 0}]
			if r == nil {
				continue
			}
			s.inputStep = in
			s.testcaseID, s.traceID = text(r.TestcaseID), text(r.TraceID)
			break
		}
		if s.testcaseID != "" {
			need = append(need, s.testcaseID)
		}
	}
	if len(need) > 0 {
		tcs, err := j.x.Client.Testcases(ctx, j.sc, need)
		if err != nil {
			return fmt.Errorf("evalrun: testcases: %w", err)
		}
		byID := map[string]*registryclient.Testcase{}
		for i := range tcs {
			byID[tcs[i].ID] = &tcs[i]
		}
		for _, s := range srcs {
			if s.testcaseID != "" && !s.loaded {
				s.testcase = byID[s.testcaseID]
			}
		}
	}
	for _, s := range srcs {
		if s.loaded {
			continue
		}
		if s.traceID != "" {
			root, err := j.x.Tracing.RootSpan(ctx, j.sc, s.traceID)
			if err != nil {
				return fmt.Errorf("evalrun: source trace %s: %w", s.traceID, err)
			}
			s.root = root
		}
		s.loaded = true
	}
	return nil
}

// targets lists the cells to claim this pass, and how many more cells
// wait on a cell that is running or about to run.
func (j *jobRun) targets(scs []evaluation.Scenario, byCell map[evaluation.Cell]*evaluation.Result, executed map[evaluation.Cell]bool) ([]evaluation.Cell, int) {
	p, job := j.plan, j.job
	stepOK := func(k string) bool { return len(job.Slice.StepKeys) == 0 || slices.Contains(job.Slice.StepKeys, k) }
	repeatOK := func(r int) bool { return len(job.Slice.RepeatIdxs) == 0 || slices.Contains(job.Slice.RepeatIdxs, r) }
	claimable := func(c evaluation.Cell) bool {
		if executed[c] {
			return false
		}
		r := byCell[c]
		if r == nil || job.Overwrite {
			return true
		}
		switch r.Status {
		case evaluation.Pending, evaluation.Running: // what the claim takes
			return true
		}
		return slices.Contains(job.Statuses, string(r.Status))
	}
	var todo []evaluation.Cell
	waiting := 0
	for _, s := range scs {
		queued := map[evaluation.Cell]bool{}
		if p.app != nil && stepOK(p.app.Key) {
			for r := range p.run.StepRepeats(p.app) {
				if repeatOK(r) {
					c := evaluation.Cell{ScenarioID: s.ID, StepKey: p.app.Key, RepeatIdx: r}
					if claimable(c) {
						todo = append(todo, c)
						queued[c] = true
					}
				}
			}
		}
		for i := range p.auto {
			ev := &p.auto[i]
			if !stepOK(ev.Key) {
				continue
			}
			for r := range p.repeats {
				if !repeatOK(r) {
					continue
				}
				c := evaluation.Cell{ScenarioID: s.ID, StepKey: ev.Key, RepeatIdx: r}
				if !claimable(c) {
					continue
				}
				if p.app != nil {
					dep := evaluation.Cell{ScenarioID: s.ID, StepKey: p.app.Key, RepeatIdx: p.appRepeat(r)}
					d := byCell[dep]
					switch {
					case d != nil && d.Status == evaluation.Success && !queued[dep]:
					case queued[dep] || (d != nil && d.Status == evaluation.Running):
						waiting++
						continue
					default:
						// The application failed (or is not to run in this
						// job): its evaluators have nothing to read.
						continue
					}
				}
				todo = append(todo, c)
			}
		}
	}
	return todo, waiting
}

// cellRun executes claimed cells under the run's batch_size semaphore.
type cellRun struct {
	j   *jobRun
	sem chan struct{}

	mu       sync.Mutex
	apps     map[evaluation.Cell]appResult
	executed map[evaluation.Cell]bool
	held     map[evaluation.Cell]bool // claimed, result not yet written: renewed by heartbeat
	out      resultBuffer
	budget   *budget // nil without data.budget
}

func (e *cellRun) executedSet() map[evaluation.Cell]bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return maps.Clone(e.executed)
}

// execute runs the claimed cells concurrently; exec ends when the run is
// stopped (cells then in flight are released as pending), ctx is the
// job's (results are written with it). It builds every cell's request
// first, then looks them all up in the cell cache in one call, then runs
// them: a re-run's pass costs one lookup, not one per cell.
func (e *cellRun) execute(exec, ctx context.Context, claimed []evaluation.Result, srcs map[string]*source, byCell map[evaluation.Cell]*evaluation.Result) {
	type cellJob struct {
		c    evaluation.Cell
		src  *source
		step *evaluation.Step
		call *call
		done bool // released: not to run
	}
	var cells []*cellJob
	for _, r := range claimed {
		c := r.Of()
		e.mu.Lock()
		e.executed[c] = true
		e.mu.Unlock()
		src := srcs[c.ScenarioID]
		step := e.j.plan.step(c.StepKey)
		if src == nil || step == nil {
			e.unhold(c)
			continue
		}
		cells = append(cells, &cellJob{c: c, src: src, step: step})
	}
	// each runs fn for every cell not released, under the run's batch_size
	// semaphore, and waits for them all.
	each := func(fn func(cj *cellJob)) {
		var wg sync.WaitGroup
		for _, cj := range cells {
			if cj.done {
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				select {
				case e.sem <- struct{}{}:
				case <-exec.Done():
					cj.done = true
					e.release(ctx, cj.c, cj.src)
					return
				}
				defer func() { <-e.sem }()
				if exec.Err() != nil || e.j.draining() || e.budget.reached() {
					// The budget reached: the cell is not run, and the next
					// pass cancels the run (overBudget).
					cj.done = true
					e.release(ctx, cj.c, cj.src)
					return
				}
				fn(cj)
			}()
		}
		wg.Wait()
	}
	x := e.j.x
	start := time.Now()
	each(func(cj *cellJob) { cj.call = e.prepare(exec, cj.c, cj.step, cj.src, byCell) })
	x.timed("prepare", start)
	if x.Cells != nil {
		calls := make([]*call, 0, len(cells))
		for _, cj := range cells {
			if !cj.done {
				calls = append(calls, cj.call)
			}
		}
		start = time.Now()
		e.lookup(exec, calls)
		x.timed("lookup", start)
	}
	start = time.Now()
	each(func(cj *cellJob) { e.run(exec, ctx, cj.c, cj.call, cj.src) })
	e.out.flush(ctx)
	x.timed("cells", start)
}

// release hands back a claimed cell that did not run, written with the
// pass's results: pending when the worker drains (another worker runs
// it), cancelled when the run was stopped or reached its budget, as the
// registry marks the stopped run's other unrun cells (Service.Cancel); a
// start makes them pending again (Service.ReopenCells).
func (e *cellRun) release(ctx context.Context, c evaluation.Cell, src *source) {
	st := evaluation.Cancelled
	if e.j.draining() {
		st = evaluation.Pending
	}
	e.out.add(ctx, evaluation.Result{RunID: e.j.job.RunID, ScenarioID: c.ScenarioID, StepKey: c.StepKey, RepeatIdx: c.RepeatIdx,
		Status: st, Timestamp: src.scenario.Timestamp, Interval: src.scenario.Interval}, nil)
}

// step finds a step by key.
func (p *plan) step(key string) *evaluation.Step {
	for i := range p.run.Data.Steps {
		if p.run.Data.Steps[i].Key == key {
			return &p.run.Data.Steps[i]
		}
	}
	return nil
}
