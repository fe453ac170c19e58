package evalrun

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"

	"github.com/assayhq/assay/pkg/evaluation"
	"github.com/assayhq/assay/pkg/svcclient"
)

// Queue is the work queue the jobs come from: the EVALS stream's durable
// consumer that every runtime replica shares (services/runtime/internal/evalqueue
// adapts JetStream's), so a job goes to one replica at a time.
type Queue interface {
	// Fetch asks for up to n jobs and waits at most wait for them; the
	// jobs come as they arrive, and the sequence ends with the fetch. An
	// error is a fetch that could not be made (nothing was delivered).
	Fetch(n int, wait time.Duration) (iter.Seq[Msg], error)
}

// Msg is one delivery of a job. The consumer settles every one: Ack when
// done, NakWithDelay to have it delivered again, Term to drop it; while it
// holds one, InProgress at least every AckWait keeps it from another
// worker.
type Msg interface {
	Subject() string
	Data() []byte
	Ack() error
	NakWithDelay(delay time.Duration) error
	InProgress() error
	Term() error
	// Delivered counts the deliveries of the message, this one included;
	// 0 when unknown.
	Delivered() int
}

// Consumer pulls jobs and runs up to Jobs at once, chosen fairly (see
// sched): it holds up to Lookahead more jobs, heartbeating them, so a job
// of a project that runs nothing does not wait behind another project's
// queue.
type Consumer struct {
	Queue Queue
	Exec  *Executor
	Jobs  int
	// ProjectJobs caps the jobs of one project running at once in this
	// process (0: no cap but Jobs).
	ProjectJobs int
	// Lookahead is how many jobs beyond the running ones this process
	// holds to choose from (0: first in, first out).
	Lookahead int
	// AckWait is how long a job may go without a heartbeat before
	// the queue hands it to another worker (a killed worker's jobs come
	// back after this long); a running job heartbeats every AckWait/3.
	// The queue is configured with it (evalqueue.Open).
	AckWait time.Duration
	// MaxDeliver bounds the deliveries of a job that keeps failing; the
	// last failure marks the run failed. The queue is configured with it.
	MaxDeliver int
	// RetryDelay is how long a transiently failed job waits before its
	// next delivery.
	RetryDelay time.Duration
	// DrainTimeout bounds how long shutdown waits for running jobs to
	// finish the cells they hold before handing the jobs back.
	DrainTimeout time.Duration
	Log          *slog.Logger
}

// Run consumes until ctx ends, then drains: running jobs stop claiming,
// finish their cells in flight and are handed back to the stream.
func (c *Consumer) Run(ctx context.Context) error {
	jobs := max(c.Jobs, 1)
	// room counts the messages this process holds, running or waiting.
	room := make(chan struct{}, jobs+max(c.Lookahead, 0))
	incoming := make(chan Msg)
	finished := make(chan *waitingJob, cap(room))
	fetched := make(chan struct{})
	go func() {
		defer close(fetched)
		c.fetch(ctx, room, incoming)
	}()
	// Jobs run on a context that outlives ctx by the drain: they see the
	// drain through ctx (stop claiming) and are cut only after it.
	jobCtx, cut := context.WithCancel(context.WithoutCancel(ctx))
	defer cut()
	var wg sync.WaitGroup
	q := &sched{jobs: jobs, perProject: c.ProjectJobs, keep: c.Lookahead > 0, byProject: map[string]int{}, byRun: map[string]int{}}
	beat := time.NewTicker(max(c.AckWait/3, 100*time.Millisecond))
	defer beat.Stop()
loop:
	for {
		for {
			w := q.next()
			if w == nil {
				break
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				c.handle(jobCtx, ctx, w.msg, w.job)
				finished <- w
			}()
		}
		select {
		case msg := <-incoming:
			job, err := evaluation.DecodeJob(msg.Subject(), msg.Data())
			if err != nil {
				c.Log.Error("undecodable evaluation job dropped", "subject", msg.Subject(), "err", err)
				_ = msg.Term()
				<-room
				continue
			}
			q.add(&waitingJob{msg: msg, job: job})
		case w := <-finished:
			q.done(w)
			<-room
		case <-beat.C:
			// Held jobs are this worker's: the queue must not give them to
			// another worker meanwhile.
			for _, w := range q.waiting {
				_ = w.msg.InProgress()
			}
		case <-ctx.Done():
			break loop
		}
	}
	// Jobs not started go back to the stream.
	<-fetched
	for _, w := range q.waiting {
		_ = w.msg.NakWithDelay(handBack)
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(c.DrainTimeout):
		cut()
		<-done
	}
	return nil
}

// fetch pulls messages while this process has room for them and passes
// them on; it returns when ctx ends (a message fetched then goes back).
func (c *Consumer) fetch(ctx context.Context, room chan struct{}, incoming chan<- Msg) {
	for {
		select {
		case room <- struct{}{}:
		case <-ctx.Done():
			return
		}
		n := 1
	more:
		for n < fetchBatch {
			select {
			case room <- struct{}{}:
				n++
			default:
				break more
			}
		}
		batch, err := c.Queue.Fetch(n, fetchWait)
		if err != nil {
			for range n {
				<-room
			}
			if ctx.Err() != nil {
				return
			}
			c.Log.Warn("fetch evaluation job", "err", err)
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Second):
			}
			continue
		}
		got := 0
		for msg := range batch {
			got++
			select {
			case incoming <- msg:
			case <-ctx.Done():
				_ = msg.NakWithDelay(handBack)
				<-room
			}
		}
		for range n - got {
			<-room
		}
		if ctx.Err() != nil {
			return
		}
	}
}

const (
	// fetchBatch bounds the messages one fetch asks for.
	fetchBatch = 16
	// fetchWait is how long a fetch waits for messages: the pull request
	// stays open on the server that long.
	fetchWait = time.Second
	// handBack delays the redelivery of a job handed back on shutdown
	// beyond fetchWait: handed back at once, it would be delivered again
	// into this worker's own fetch still open, handed back again, and so
	// on until its deliveries ran out (RUNTIME_EVAL_MAX_DELIVER) and the
	// job was lost (TestShutdownHandsJobsBack).
	handBack = 2 * fetchWait
)

// waitingJob is a fetched job: waiting for a slot, then running.
type waitingJob struct {
	msg Msg
	job evaluation.Job
}

// sched chooses which held job runs next. Of the jobs whose project is
// under its cap, it takes the one whose project runs the fewest jobs
// here, then whose run does, then the oldest: projects share the worker
// equally, and so do the runs of a project. With keep (a lookahead to see
// other projects' jobs in), the last free slot goes only to a project
// running nothing here, so a project's first job starts at once even
// while another project's queue fills the other slots.
type sched struct {
	jobs, perProject int
	keep             bool
	running          int
	byProject        map[string]int
	byRun            map[string]int
	waiting          []*waitingJob // in arrival order
}

func (q *sched) add(w *waitingJob) { q.waiting = append(q.waiting, w) }

// next removes and returns the job to start now, nil when none may start.
func (q *sched) next() *waitingJob {
	if q.running >= q.jobs {
		return nil
	}
	best := -1
	for i, w := range q.waiting {
		np := q.byProject[w.job.ProjectID]
		if q.perProject > 0 && np >= q.perProject {
			continue
		}
		if q.keep && q.jobs > 1 && q.running == q.jobs-1 && np > 0 {
			continue
		}
		if best < 0 {
			best = i
			continue
		}
		b := q.waiting[best]
		bp := q.byProject[b.job.ProjectID]
		if np != bp {
			if np < bp {
				best = i
			}
			continue
		}
		if nr, br := q.byRun[w.job.RunID], q.byRun[b.job.RunID]; nr < br {
			best = i
		}
	}
	if best < 0 {
		return nil
	}
	w := q.waiting[best]
	q.waiting = append(q.waiting[:best], q.waiting[best+1:]...)
	q.running++
	q.byProject[w.job.ProjectID]++
	q.byRun[w.job.RunID]++
	return w
}

// done records that a started job ended.
func (q *sched) done(w *waitingJob) {
	q.running--
	if q.byProject[w.job.ProjectID]--; q.byProject[w.job.ProjectID] <= 0 {
		delete(q.byProject, w.job.ProjectID)
	}
	if q.byRun[w.job.RunID]--; q.byRun[w.job.RunID] <= 0 {
		delete(q.byRun, w.job.RunID)
	}
}

// handle runs one job with heartbeats and settles its message: ack when
// done, nak when interrupted by the drain (another worker resumes it),
// nak with a delay on a transient failure, and on a permanent failure or
// the last delivery, fail the run and terminate the message.
func (c *Consumer) handle(ctx, drain context.Context, msg Msg, job evaluation.Job) {
	beat := max(c.AckWait/3, 100*time.Millisecond)
	hbCtx, stopBeat := context.WithCancel(ctx)
	go func() {
		t := time.NewTicker(beat)
		defer t.Stop()
		for {
			select {
			case <-hbCtx.Done():
				return
			case <-t.C:
				_ = msg.InProgress()
			}
		}
	}()
	err := c.run(ctx, drain, job)
	stopBeat()
	log := c.Log.With("kind", job.Kind, "run_id", job.RunID, "project_id", job.ProjectID)
	switch {
	case err == nil:
		_ = msg.Ack()
	case errors.Is(err, ErrInterrupted) || (drain.Err() != nil && ctx.Err() != nil):
		_ = msg.NakWithDelay(handBack)
	default:
		n := msg.Delivered()
		last := n == 0 || (c.MaxDeliver > 0 && n >= c.MaxDeliver)
		if svcclient.Transient(err) && !errors.Is(err, errCrashed) && !last {
			log.Warn("evaluation job failed, will retry", "err", err)
			_ = msg.NakWithDelay(c.RetryDelay)
			return
		}
		log.Error("evaluation job failed", "err", err)
		sc, serr := scopeOf(job)
		if serr == nil {
			fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			if ferr := c.Exec.Client.Fail(fctx, sc, job.RunID, err.Error()); ferr != nil {
				log.Error("evaluation run not marked failed", "err", ferr)
			}
			cancel()
		}
		_ = msg.Term()
	}
}

// errCrashed marks a job that panicked: a bug, which a retry would meet
// again, so its run fails at once.
var errCrashed = errors.New("evalrun: the job crashed")

// run is Exec.Handle with a panic turned into an error: a job that
// crashes fails its run instead of the worker.
func (c *Consumer) run(ctx, drain context.Context, job evaluation.Job) (err error) {
	defer func() {
		if p := recover(); p != nil {
			c.Log.Error("evaluation job panicked", "panic", p, "stack", string(debug.Stack()))
			err = fmt.Errorf("%w: %v", errCrashed, p)
		}
	}()
	return c.Exec.Handle(ctx, drain, job)
}
