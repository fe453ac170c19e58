package evalrun

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/assayhq/assay/services/runtime/internal/evalclient"
)

// maxClaim is how many cells one claim call names.
const maxClaim = 500

// source is a scenario's item, read once per job.
type source struct {
	scenario   evalclient.Scenario
	testcaseID string
	testcase   *evalclient.Testcase
	inputStep  *evalclient.Step
	traceID    string
	root       *evalclient.Span // the source trace's root span (query, traces)
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
	scs, err := j.x.Client.Scenarios(ctx, j.sc, j.job.RunID, j.job.Slice.ScenarioIDs)
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
	e := &cellRun{j: j, sem: make(chan struct{}, p.batchSize()), apps: map[evalclient.Cell]appResult{}, executed: map[evalclient.Cell]bool{}}
	e.out.e = e
	lastProgress := time.Now()
	lease := j.x.Lease
	if lease <= 0 {
		lease = 5 * time.Minute
	}
	for {
		if j.draining() {
			return ErrInterrupted
		}
		if !j.stillActive(ctx) || wctx.Err() != nil {
			return j.settle(ctx, ids...)
		}
		results, err := j.x.Client.Results(ctx, j.sc, evalclient.ResultFilter{RunID: j.job.RunID, ScenarioIDs: ids})
		if err != nil {
			return err
		}
		byCell := make(map[evalclient.Cell]*evalclient.Result, len(results))
		for i := range results {
			byCell[results[i].Of()] = &results[i]
		}
		if err := j.loadSources(ctx, srcs, byCell); err != nil {
			return err
		}
		todo, waiting := j.targets(scs, byCell, e.executedSet())
		if len(todo) == 0 && waiting == 0 {
			break
		}
		var claimed []evalclient.Result
		for i := 0; i < len(todo); i += maxClaim {
			got, err := j.x.Client.Claim(ctx, j.sc, evalclient.Claim{RunID: j.job.RunID, Worker: j.x.Worker,
				LeaseSeconds: int(lease / time.Second), Statuses: j.job.Statuses, Overwrite: j.job.Overwrite,
				Cells: todo[i:min(i+maxClaim, len(todo))]})
			if errors.Is(err, evalclient.ErrClosed) {
				return nil
			}
			if err != nil {
				return err
			}
			claimed = append(claimed, got...)
		}
		if len(claimed) == 0 {
			// Everything left is held by another worker or waits on a
			// cell that is: wait, bounded by a lease and a margin (a dead
			// worker's claims expire within a lease).
			if time.Since(lastProgress) > lease+time.Minute {
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

// loadSources reads each scenario's item from its input cell: testcases
// in one batch, source trace roots one by one.
func (j *jobRun) loadSources(ctx context.Context, srcs map[string]*source, byCell map[evalclient.Cell]*evalclient.Result) error {
	var need []string
	for id, s := range srcs {
		if s.loaded {
			continue
		}
		for i := range j.plan.inputs {
			in := &j.plan.inputs[i]
			r := byCell[evalclient.Cell{ScenarioID: id, StepKey: in.Key, RepeatIdx: 0}]
			if r == nil {
				continue
			}
			s.inputStep = in
			s.testcaseID, s.traceID = r.TestcaseID, r.TraceID
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
		byID := map[string]*evalclient.Testcase{}
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
			root, err := j.x.Client.RootSpan(ctx, j.sc, s.traceID)
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
func (j *jobRun) targets(scs []evalclient.Scenario, byCell map[evalclient.Cell]*evalclient.Result, executed map[evalclient.Cell]bool) ([]evalclient.Cell, int) {
	p, job := j.plan, j.job
	stepOK := func(k string) bool { return len(job.Slice.StepKeys) == 0 || slices.Contains(job.Slice.StepKeys, k) }
	repeatOK := func(r int) bool { return len(job.Slice.RepeatIdxs) == 0 || slices.Contains(job.Slice.RepeatIdxs, r) }
	claimable := func(c evalclient.Cell) bool {
		if executed[c] {
			return false
		}
		r := byCell[c]
		if r == nil || job.Overwrite {
			return true
		}
		switch r.Status {
		case evalclient.Pending, evalclient.Running: // what the claim takes
			return true
		}
		return slices.Contains(job.Statuses, r.Status)
	}
	var todo []evalclient.Cell
	waiting := 0
	for _, s := range scs {
		queued := map[evalclient.Cell]bool{}
		if p.app != nil && stepOK(p.app.Key) {
			for r := range p.repeats {
				if (r == 0 || p.split) && repeatOK(r) {
					c := evalclient.Cell{ScenarioID: s.ID, StepKey: p.app.Key, RepeatIdx: r}
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
				c := evalclient.Cell{ScenarioID: s.ID, StepKey: ev.Key, RepeatIdx: r}
				if !claimable(c) {
					continue
				}
				if p.app != nil {
					dep := evalclient.Cell{ScenarioID: s.ID, StepKey: p.app.Key, RepeatIdx: p.appRepeat(r)}
					d := byCell[dep]
					switch {
					case d != nil && d.Status == evalclient.Success && !queued[dep]:
					case queued[dep] || (d != nil && d.Status == evalclient.Running):
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
	apps     map[evalclient.Cell]appResult
	executed map[evalclient.Cell]bool
	out      resultBuffer
}

func (e *cellRun) executedSet() map[evalclient.Cell]bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return maps.Clone(e.executed)
}

// execute runs the claimed cells concurrently; exec ends when the run is
// stopped (cells then in flight are released as pending), ctx is the
// job's (results are written with it).
func (e *cellRun) execute(exec, ctx context.Context, claimed []evalclient.Result, srcs map[string]*source, byCell map[evalclient.Cell]*evalclient.Result) {
	var wg sync.WaitGroup
	for _, r := range claimed {
		c := r.Of()
		e.mu.Lock()
		e.executed[c] = true
		e.mu.Unlock()
		src := srcs[c.ScenarioID]
		step := e.j.plan.step(c.StepKey)
		if src == nil || step == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case e.sem <- struct{}{}:
			case <-exec.Done():
				e.release(ctx, c, src)
				return
			}
			defer func() { <-e.sem }()
			if exec.Err() != nil || e.j.draining() {
				e.release(ctx, c, src)
				return
			}
			e.run(exec, ctx, c, step, src, byCell)
		}()
	}
	wg.Wait()
	e.out.flush(ctx)
}

// release hands a claimed cell back (pending) when the run stopped or the
// worker drains before it ran, so a later job runs it; it is written with
// the pass's results.
func (e *cellRun) release(ctx context.Context, c evalclient.Cell, src *source) {
	e.out.add(ctx, evalclient.Result{RunID: e.j.job.RunID, ScenarioID: c.ScenarioID, StepKey: c.StepKey, RepeatIdx: c.RepeatIdx,
		Status: evalclient.Pending, Timestamp: src.scenario.Timestamp, Interval: src.scenario.Interval}, nil)
}

// step finds a step by key.
func (p *plan) step(key string) *evalclient.Step {
	for i := range p.run.Data.Steps {
		if p.run.Data.Steps[i].Key == key {
			return &p.run.Data.Steps[i]
		}
	}
	return nil
}
