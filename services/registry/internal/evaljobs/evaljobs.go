// Package evaljobs is the registry's side of the EVALS stream: it declares
// the stream at start and publishes the jobs the evaluations use cases ask
// for (pkg/evaljob), waiting for JetStream's acknowledgement so a 2xx means
// the job is stored.
package evaljobs

import (
	"context"
	"fmt"
	"time"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/evaljob"
	"github.com/assayhq/assay/pkg/evaluation"
	"github.com/assayhq/assay/pkg/natsx"
)

// Config is the EVALS stream as the registry declares it.
// Variables: REGISTRY_EVALS_*.
type Config struct {
	Replicas    int           `default:"1" desc:"replicas of the EVALS job stream (3 on a NATS cluster)"`
	DedupWindow time.Duration `split_words:"true" default:"10m" desc:"how long the EVALS stream remembers job ids (a retried publish, or a live window published by several registry replicas, is stored once)"`
}

// Ensure creates or updates the EVALS stream.
func Ensure(ctx context.Context, c *natsx.Conn, cfg Config) error {
	if _, err := c.EnsureStream(ctx, evaljob.StreamConfig(cfg.Replicas, cfg.DedupWindow)); err != nil {
		return fmt.Errorf("ensure evals stream: %w", err)
	}
	return nil
}

// Publisher publishes jobs on the EVALS stream.
type Publisher struct{ P evaljob.Publisher }

// Publish stores job; it returns once JetStream acknowledged it (a
// duplicate job id within the window is acknowledged and stored once).
func (p Publisher) Publish(ctx context.Context, job evaluation.Job) error {
	if err := evaljob.Publish(ctx, p.P, job); err != nil {
		// A 503: the records are written, the job is not; the client
		// retries (start, process and refresh are idempotent).
		return &errs.Error{Kind: errs.Unavailable, Code: "evaluations.jobs_unavailable",
			Msg: "The evaluation job stream is unavailable; retry shortly.",
			Err: fmt.Errorf("publish %s job of run %s: %w", job.Kind, job.RunID, err)}
	}
	return nil
}
