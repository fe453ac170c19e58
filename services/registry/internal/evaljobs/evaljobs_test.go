package evaljobs_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/evaluation"
	"github.com/assayhq/assay/pkg/logx"
	"github.com/assayhq/assay/pkg/natsx"
	"github.com/assayhq/assay/pkg/testutil/natstest"
	"github.com/assayhq/assay/services/registry/internal/evaljobs"
)

// TestPublishStoresOnceAndReadsBack: the stream is declared as the
// contract says (work queue, dedup window), a job is stored on its
// project's subject and decodes back, a job id within the window is
// stored once, and a publish with NATS down is a 503 kind.
func TestPublishStoresOnceAndReadsBack(t *testing.T) {
	ns := natstest.New(t)
	cfg := natsx.Config{URL: ns.URL(), PublishTimeout: time.Second}
	c, err := natsx.Connect(cfg, "test", logx.NewTo(io.Discard, logx.Config{Level: slog.LevelError}))
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Drain() })
	ctx := context.Background()
	require.NoError(t, evaljobs.Ensure(ctx, c, evaljobs.Config{Replicas: 1, DedupWindow: time.Minute}))
	require.NoError(t, evaljobs.Ensure(ctx, c, evaljobs.Config{Replicas: 1, DedupWindow: 2 * time.Minute}), "ensuring again updates")

	p := evaljobs.Publisher{P: natsx.NewPublisher(c, cfg)}
	job := evaluation.Job{Kind: evaluation.KindWindow, ProjectID: "p1", RunID: "r1", ID: "window:r1:60"}
	require.NoError(t, p.Publish(ctx, job))
	require.NoError(t, p.Publish(ctx, job), "a second replica publishing the same window")
	require.NoError(t, p.Publish(ctx, evaluation.Job{Kind: evaluation.KindRun, ProjectID: "p1", RunID: "r1"}))

	s, err := c.JS.Stream(ctx, evaluation.Stream)
	require.NoError(t, err)
	info, err := s.Info(ctx)
	require.NoError(t, err)
	assert.Equal(t, jetstream.WorkQueuePolicy, info.Config.Retention)
	assert.Equal(t, 2*time.Minute, info.Config.Duplicates)
	assert.EqualValues(t, 2, info.State.Msgs, "the duplicate window job is stored once")

	m, err := s.GetMsg(ctx, 1)
	require.NoError(t, err)
	got, err := evaluation.DecodeJob(m.Subject, m.Data)
	require.NoError(t, err)
	assert.Equal(t, job, got)

	assert.Error(t, p.Publish(ctx, evaluation.Job{Kind: evaluation.KindRun, RunID: "r1"}), "no project")
	ns.Shutdown()
	err = p.Publish(ctx, evaluation.Job{Kind: evaluation.KindRun, ProjectID: "p1", RunID: "r2"})
	require.Error(t, err)
	assert.Equal(t, errs.Unavailable, errs.KindOf(err))
}
