package simpleevals

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"

	"github.com/assayhq/assay/pkg/evaluation"
	"github.com/assayhq/assay/services/registry/internal/evaluations"
)

// LiveRun is an active live run of some project, as the ticker reads it.
type LiveRun struct {
	ProjectID uuid.UUID
	RunID     uuid.UUID
	// UserID is who created the run: its window jobs execute on their
	// behalf. Nil for a run created by a system call.
	UserID *uuid.UUID
}

// LiveRuns lists the active, open live runs of every project; pgstore
// implements it.
type LiveRuns interface {
	ActiveLiveRuns(ctx context.Context) ([]LiveRun, error)
}

// Ticker publishes, once per interval, one window job per active live
// run over the interval that just ended (the compatible platform: a cron refreshes live
// runs every minute). Windows are aligned on the interval, and a window's
// job id is window:<run id>:<oldest, unix seconds>, so every registry
// replica may tick: JetStream's duplicate window stores each window once.
type Ticker struct {
	Runs     LiveRuns
	Jobs     evaluations.Jobs
	Interval time.Duration
	Log      *slog.Logger
	now      func() time.Time
}

// Tick publishes the window that ended at or before now, [oldest, newest)
// with newest = now floored to the interval, for every active live run.
// It returns the first publish error after trying every run.
func (t *Ticker) Tick(ctx context.Context, now time.Time) error {
	newest := now.UTC().Truncate(t.Interval)
	oldest := newest.Add(-t.Interval)
	runs, err := t.Runs.ActiveLiveRuns(ctx)
	if err != nil {
		return fmt.Errorf("list live runs: %w", err)
	}
	var first error
	for _, r := range runs {
		j := evaluation.Job{Kind: evaluation.KindWindow, ProjectID: r.ProjectID.String(), RunID: r.RunID.String(),
			Oldest: &oldest, Newest: &newest, ID: fmt.Sprintf("window:%s:%d", r.RunID, oldest.Unix())}
		if r.UserID != nil {
			j.UserID = r.UserID.String()
		}
		if err := t.Jobs.Publish(ctx, j); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Run ticks at every interval boundary until ctx ends. A failed tick is
// logged and the next one goes on: a window missed while NATS was down is
// not replayed (live runs evaluate what is recent).
func (t *Ticker) Run(ctx context.Context) error {
	if t.Interval < time.Second {
		// Window ids count in seconds: shorter windows would share ids.
		return fmt.Errorf("live ticker: interval must be at least 1s, got %s", t.Interval)
	}
	now := time.Now
	if t.now != nil {
		now = t.now
	}
	for {
		n := now()
		next := n.Truncate(t.Interval).Add(t.Interval)
		timer := time.NewTimer(next.Sub(n))
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil
		case <-timer.C:
		}
		// The boundary itself: a timer that fires a little early or late
		// still names the window that just ended.
		tickCtx, cancel := context.WithTimeout(ctx, t.Interval)
		if err := t.Tick(tickCtx, next); err != nil && t.Log != nil {
			t.Log.WarnContext(ctx, "live evaluation tick failed", "err", err)
		}
		cancel()
	}
}
