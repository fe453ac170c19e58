package evalrun

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/assayhq/assay/pkg/evaljob"
	"github.com/assayhq/assay/services/runtime/internal/evalclient"
)

// ConsumerName is the durable pull consumer every runtime replica shares
// on the EVALS work queue: a job goes to one replica at a time.
const ConsumerName = "runtime-evals"

// Consumer pulls jobs and runs up to Jobs at once.
type Consumer struct {
	JS   jetstream.JetStream
	Exec *Executor
	Jobs int
	// AckWait is how long a job may go without a heartbeat before
	// JetStream hands it to another worker (a killed worker's jobs come
	// back after this long); a running job heartbeats every AckWait/3.
	AckWait time.Duration
	// MaxDeliver bounds the deliveries of a job that keeps failing; the
	// last failure marks the run failed.
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
	cons, err := c.JS.CreateOrUpdateConsumer(ctx, evaljob.Stream, jetstream.ConsumerConfig{
		Durable:    ConsumerName,
		AckPolicy:  jetstream.AckExplicitPolicy,
		AckWait:    c.AckWait,
		MaxDeliver: c.MaxDeliver,
	})
	if err != nil {
		return fmt.Errorf("create %s consumer: %w", ConsumerName, err)
	}
	jobs := max(c.Jobs, 1)
	slots := make(chan struct{}, jobs)
	// Jobs run on a context that outlives ctx by the drain: they see the
	// drain through ctx (stop claiming) and are cut only after it.
	jobCtx, cut := context.WithCancel(context.WithoutCancel(ctx))
	defer cut()
	var wg sync.WaitGroup
loop:
	for {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			break loop
		}
		batch, err := cons.Fetch(1, jetstream.FetchMaxWait(time.Second))
		if err != nil {
			<-slots
			if ctx.Err() != nil {
				break loop
			}
			c.Log.Warn("fetch evaluation job", "err", err)
			time.Sleep(time.Second)
			continue
		}
		got := false
		for msg := range batch.Messages() {
			got = true
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() { <-slots }()
				c.handle(jobCtx, ctx, msg)
			}()
		}
		if !got {
			<-slots
		}
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

// handle runs one job with heartbeats and settles its message: ack when
// done, nak when interrupted by the drain (another worker resumes it),
// nak with a delay on a transient failure, and on a permanent failure or
// the last delivery, fail the run and terminate the message.
func (c *Consumer) handle(ctx, drain context.Context, msg jetstream.Msg) {
	job, err := evaljob.Decode(msg.Subject(), msg.Data())
	if err != nil {
		c.Log.Error("undecodable evaluation job dropped", "subject", msg.Subject(), "err", err)
		_ = msg.Term()
		return
	}
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
	err = c.run(ctx, drain, job)
	stopBeat()
	log := c.Log.With("kind", job.Kind, "run_id", job.RunID, "project_id", job.ProjectID)
	switch {
	case err == nil:
		_ = msg.Ack()
	case errors.Is(err, ErrInterrupted) || (drain.Err() != nil && ctx.Err() != nil):
		_ = msg.Nak()
	default:
		meta, _ := msg.Metadata()
		last := meta == nil || (c.MaxDeliver > 0 && int(meta.NumDelivered) >= c.MaxDeliver)
		if evalclient.Transient(err) && !errors.Is(err, errCrashed) && !last {
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
func (c *Consumer) run(ctx, drain context.Context, job evaljob.Job) (err error) {
	defer func() {
		if p := recover(); p != nil {
			c.Log.Error("evaluation job panicked", "panic", p, "stack", string(debug.Stack()))
			err = fmt.Errorf("%w: %v", errCrashed, p)
		}
	}()
	return c.Exec.Handle(ctx, drain, job)
}
