// Package evalrun executes evaluation runs: it consumes the EVALS stream
// (Consumer) and runs each job (Executor). A run job sources the run's
// items (the pinned testset revision's testcases, a saved query's traces,
// or the scenarios a queue already has), mints one scenario per item with
// a deterministic id, writes the input cells and fans the scenarios out as
// process jobs; a process job claims the cells it is about to execute
// through the registry (never running a cell another worker holds), runs
// the application and the auto evaluators through invoke.Service with a
// deterministic trace per cell, writes each result, and settles the run; a
// window job does the same for one minute of a live run.
package evalrun

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"
	"golang.org/x/sync/singleflight"

	"github.com/assayhq/assay/pkg/evaluation"
	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/pkg/svcclient"
	"github.com/assayhq/assay/services/runtime/internal/invoke"
	"github.com/assayhq/assay/services/runtime/internal/registryclient"
	"github.com/assayhq/assay/services/runtime/internal/tracingclient"
)

// Metrics computes and stores a run's metrics (RunMetrics, through
// evalmetrics): the global record, and the per-scenario records of
// scenarioIDs (all of them when empty).
type Metrics interface {
	Refresh(ctx context.Context, sc scope.Scope, run *evaluation.Run, scenarioIDs []string) error
}

// Invoker runs one invocation in-process (invoke.Service): built-in
// handlers run here, hooks are called over HTTP by it.
type Invoker interface {
	Invoke(ctx context.Context, call invoke.Call) invoke.Outcome
}

// Jobs publishes the process jobs a run job fans out. The runtime may
// not publish on the EVALS stream (deployments/nats/auth.conf): the
// registry does, through registryclient.Client.FanOut.
type Jobs interface {
	FanOut(ctx context.Context, sc scope.Scope, jobs []evaluation.Job) error
}

// Executor runs jobs.
type Executor struct {
	Client    *registryclient.Client
	Tracing   *tracingclient.Client // a query source's traces, cached and application root spans
	Jobs      Jobs
	Invoke    Invoker
	Revisions invoke.Revisions // the revisions a step pins (their inputs schema)
	Metrics   Metrics          // nil: metrics are not computed here
	Worker    string           // this worker's name in claims
	Chunk     int              // scenarios per process job
	Lease     time.Duration
	// ActiveEvery is how often a running job re-reads whether its run is
	// still active (stop takes effect within about this long).
	ActiveEvery time.Duration
	// WindowGrace is how long after a live window's end its traces are
	// queried, so the last ones are stored by then.
	WindowGrace time.Duration
	// Waits hears that a run's cells wait on a provider's rate limit, for
	// the run's progress (nil: not reported).
	Waits WaitReporter
	// Cells lets a cell identical to one done before reuse it (nil: every
	// cell is invoked).
	Cells CellCache
	// BudgetDay is the period a live run's data.budget is per: 24 h (a
	// UTC day) unless set; periods start at the Unix epoch, so a day
	// starts at midnight UTC.
	BudgetDay time.Duration
	// Now is the clock of the daily budget (nil: time.Now).
	Now func() time.Time
	// Phases hears how long each phase of a job took (nil: not timed).
	Phases Phases
	Log    *slog.Logger

	flight singleflight.Group // whole-run metrics computations in flight, by run id
}

// Phases hears the time a job spent in one of its phases: the registry's
// reads ("scenarios", "results", "sources"), "claim", building the cells'
// requests ("prepare"), the cell cache's "lookup", running the cells
// ("cells"), writing their results ("write"), "metrics" and "settle".
// The runtime exports it as runtime_eval_phase_seconds; a job's phases
// run one after another, except writes, which overlap the cells.
type Phases interface {
	Observe(phase string, d time.Duration)
}

// timed reports the time since start under phase.
func (x *Executor) timed(phase string, start time.Time) {
	if x.Phases != nil {
		x.Phases.Observe(phase, time.Since(start))
	}
}

// WaitReporter reports a run's wait on a provider's rate limit.
type WaitReporter interface {
	Report(sc scope.Scope, runID, provider string, until time.Time)
}

// ErrInterrupted is a job left unfinished because the worker is draining:
// the consumer hands it back to the stream for another worker.
var ErrInterrupted = errors.New("evalrun: interrupted by shutdown")

// Handle runs one job. drain ends when the worker shuts down: the job
// stops claiming cells, finishes those it runs and returns ErrInterrupted.
// A nil error means the job is done (including a run that was deleted,
// closed or stopped meanwhile: nothing is left to do for it).
func (x *Executor) Handle(ctx, drain context.Context, job evaluation.Job) error {
	sc, err := scopeOf(job)
	if err != nil {
		return err
	}
	run, err := x.Client.Run(ctx, sc, job.RunID)
	if errors.Is(err, svcclient.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if job.Kind == evaluation.KindMetrics {
		return x.metrics(ctx, sc, run, job.Slice.ScenarioIDs)
	}
	if !run.Flags.IsActive || run.Flags.IsClosed {
		return nil
	}
	j := &jobRun{x: x, job: job, sc: sc, plan: planOf(run), drain: drain, active: true, checkedAt: time.Now()}
	switch job.Kind {
	case evaluation.KindRun:
		return j.source(ctx)
	case evaluation.KindWindow:
		return j.window(ctx)
	case evaluation.KindProcess:
		return j.process(ctx)
	}
	return fmt.Errorf("evalrun: unknown job kind %q", job.Kind)
}

// workerMeta is the meta of a result this worker executed: which worker
// ran it (the write replaces the claim's meta).
func (x *Executor) workerMeta() json.RawMessage {
	b, _ := json.Marshal(map[string]any{"worker": x.Worker})
	return b
}

func scopeOf(job evaluation.Job) (scope.Scope, error) {
	p, err := uuid.Parse(job.ProjectID)
	if err != nil {
		return scope.Scope{}, fmt.Errorf("evalrun: job project %q: %w", job.ProjectID, err)
	}
	sc := scope.Scope{ProjectID: p}
	if job.UserID != "" {
		if sc.UserID, err = uuid.Parse(job.UserID); err != nil {
			return scope.Scope{}, fmt.Errorf("evalrun: job user %q: %w", job.UserID, err)
		}
	}
	return sc, nil
}

// metrics recomputes the run's metrics (the global record, and those of
// scenarioIDs, all when empty); without a Metrics it does nothing. A run
// closed before or while the job runs keeps the metrics it has: the
// registry refuses writes to it, and that refusal must not reach the
// consumer, which would mark the closed run failed over its closer's
// status.
func (x *Executor) metrics(ctx context.Context, sc scope.Scope, run *evaluation.Run, scenarioIDs []string) error {
	if x.Metrics == nil || run.Flags.IsClosed {
		return nil
	}
	err := x.Metrics.Refresh(ctx, sc, run, scenarioIDs)
	if errors.Is(err, svcclient.ErrClosed) {
		return nil
	}
	return err
}

// jobRun is one job's state.
type jobRun struct {
	x     *Executor
	job   evaluation.Job
	sc    scope.Scope
	plan  *plan
	drain context.Context

	mu        sync.Mutex
	checkedAt time.Time
	active    bool
}

// stillActive re-reads the run at most every ActiveEvery: a stopped,
// closed or deleted run ends the job's claiming and executing.
func (j *jobRun) stillActive(ctx context.Context) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	every := j.x.ActiveEvery
	if every <= 0 {
		every = time.Second
	}
	if time.Since(j.checkedAt) < every {
		return j.active
	}
	run, err := j.x.Client.Run(ctx, j.sc, j.job.RunID)
	switch {
	case errors.Is(err, svcclient.ErrNotFound):
		j.active = false
	case err != nil:
		// A registry hiccup is not a stop: the last answer stands.
	default:
		j.active = run.Flags.IsActive && !run.Flags.IsClosed
	}
	j.checkedAt = time.Now()
	return j.active
}

// watch cancels the returned context when the run stops being active,
// so cells in flight end within about ActiveEvery of a stop.
func (j *jobRun) watch(ctx context.Context) (context.Context, context.CancelFunc) {
	wctx, cancel := context.WithCancel(ctx)
	go func() {
		every := j.x.ActiveEvery
		if every <= 0 {
			every = time.Second
		}
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-wctx.Done():
				return
			case <-t.C:
				if !j.stillActive(wctx) {
					cancel()
					return
				}
			}
		}
	}()
	return wctx, cancel
}

func (j *jobRun) draining() bool { return j.drain != nil && j.drain.Err() != nil }

// settle asks the registry to recompute the run's status (metrics first,
// so a finished run has them when its status says so).
func (j *jobRun) settle(ctx context.Context, scenarioIDs ...string) error {
	ids, compute, settle := j.metricScenarios(ctx, scenarioIDs)
	if compute {
		start := time.Now()
		var err error
		if ids == nil {
			// Every job that finds the whole run done computes the same
			// records: jobs of this worker finishing together share one
			// computation instead of each reading every trace.
			_, err, _ = j.x.flight.Do(j.job.RunID, func() (any, error) {
				return nil, j.x.Metrics.Refresh(ctx, j.sc, j.plan.run, nil)
			})
		} else {
			err = j.x.Metrics.Refresh(ctx, j.sc, j.plan.run, ids)
		}
		j.x.timed("metrics", start)
		if err != nil && j.x.Log != nil {
			// Metrics can be refreshed later (metrics/refresh); the run's
			// status must not wait on them.
			j.x.Log.Warn("evaluation metrics not computed", "run_id", j.job.RunID, "err", err)
		}
	}
	if !settle {
		return nil
	}
	defer j.x.timed("settle", time.Now())
	_, err := j.x.Client.Settle(ctx, j.sc, j.job.RunID)
	if errors.Is(err, svcclient.ErrClosed) {
		return nil
	}
	return err
}

// metricScenarios says whether the job settling scenarioIDs computes the
// run's metrics and for which scenarios (all when ids is empty), and
// whether it settles the run. The global record reads every cell's trace,
// so computing it in each of a run's process jobs read the run's traces
// once per job (ten times for 1,000 testcases in chunks of 100; most of
// a re-run's time, docs/benchmarks.md, "The same run again"). A plain
// run's metrics are computed once,
// by a job that finds none of the run's scenarios pending or running, for
// every scenario, before it settles the run: each job writes its results
// before it reads the scenarios, so of the jobs finishing last at least
// one sees them all done (two that both do compute the same records). A
// job that sees scenarios still at work neither computes nor settles: its
// settle would leave the running run running, or, had the last job's
// results landed meanwhile, make the run a success before that job's
// metrics are stored. Anything else keeps a refresh of the job's
// scenarios and a settle per job, as before: a run not running yet or
// stopped while the job ran, a scenario in errors (the run's status turns at once), human or custom
// annotations (scenarios stay pending while the run succeeds), a queue or
// a live run, or scenarios that could not be read.
func (j *jobRun) metricScenarios(ctx context.Context, scenarioIDs []string) (ids []string, compute, settle bool) {
	if j.x.Metrics == nil || len(scenarioIDs) == 0 {
		return nil, false, true
	}
	run := j.plan.run
	j.mu.Lock()
	active := j.active
	j.mu.Unlock()
	if run.Flags.IsLive || run.Flags.IsQueue || len(j.plan.manual) > 0 || run.Status != evaluation.Running || !active {
		return scenarioIDs, true, true
	}
	scs, err := j.x.Client.Scenarios(ctx, j.sc, j.job.RunID, nil)
	if err != nil {
		return scenarioIDs, true, true
	}
	open := false
	for _, s := range scs {
		switch s.Status {
		case evaluation.Pending, evaluation.Running, evaluation.Queued:
			open = true
		case evaluation.Errors, evaluation.Failure:
			return scenarioIDs, true, true
		}
	}
	if open {
		return nil, false, false
	}
	return nil, true, true
}

// publish fans scenario ids out as process jobs of at most Chunk each.
// Their ids derive from this job's, so a redelivered job publishing them
// again is stored once by the stream's duplicate window. Jobs (the
// registry) publishes them.
func (j *jobRun) publish(ctx context.Context, ids []string) error {
	chunk := j.x.Chunk
	if chunk <= 0 {
		chunk = 100
	}
	jobs := make([]evaluation.Job, 0, (len(ids)+chunk-1)/chunk)
	for i := 0; i < len(ids); i += chunk {
		part := ids[i:min(i+chunk, len(ids))]
		p := evaluation.Job{Kind: evaluation.KindProcess, ProjectID: j.job.ProjectID, UserID: j.job.UserID, RunID: j.job.RunID,
			Slice:    evaluation.Slice{ScenarioIDs: part, StepKeys: j.job.Slice.StepKeys, RepeatIdxs: j.job.Slice.RepeatIdxs},
			Statuses: j.job.Statuses, Overwrite: j.job.Overwrite}
		if j.job.ID != "" {
			p.ID = fmt.Sprintf("%s/process/%d", j.job.ID, i/chunk)
		}
		jobs = append(jobs, p)
	}
	err := j.x.Jobs.FanOut(ctx, j.sc, jobs)
	if errors.Is(err, svcclient.ErrNotFound) {
		return nil // the run was deleted meanwhile: nothing is left to do for it
	}
	if err != nil {
		return fmt.Errorf("evalrun: publish process jobs: %w", err)
	}
	return nil
}
