package natsx_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/pkg/logx"
	"github.com/assayhq/assay/pkg/natsx"
	"github.com/assayhq/assay/pkg/testutil/natstest"
)

func TestPublishWaitsForAckAndDedups(t *testing.T) {
	ns := natstest.New(t)
	cfg := natsx.Config{URL: ns.URL(), PublishTimeout: 2 * time.Second}
	c, err := natsx.Connect(cfg, "test", logx.NewTo(io.Discard, logx.Config{Level: slog.LevelError}))
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Drain() })
	ctx := context.Background()

	stream, err := c.EnsureStream(ctx, jetstream.StreamConfig{Name: "T", Subjects: []string{"t.>"}, Storage: jetstream.FileStorage, Duplicates: time.Minute})
	require.NoError(t, err)
	// Ensuring again with a changed setting updates instead of failing.
	_, err = c.EnsureStream(ctx, jetstream.StreamConfig{Name: "T", Subjects: []string{"t.>"}, Storage: jetstream.FileStorage, Duplicates: 2 * time.Minute})
	require.NoError(t, err)

	p := natsx.NewPublisher(c, cfg)
	ack, err := p.Publish(ctx, "t.a", []byte("one"), "id-1")
	require.NoError(t, err)
	assert.False(t, ack.Duplicate)
	ack, err = p.Publish(ctx, "t.a", []byte("one again"), "id-1")
	require.NoError(t, err)
	assert.True(t, ack.Duplicate, "a retry with the same Nats-Msg-Id is stored once")
	_, err = p.Publish(ctx, "t.b", []byte("two"), "")
	require.NoError(t, err)

	info, err := stream.Info(ctx)
	require.NoError(t, err)
	assert.EqualValues(t, 2, info.State.Msgs)

	_, err = p.Publish(ctx, "nostream.x", []byte("lost"), "")
	assert.Error(t, err, "a publish no stream takes is an error, not a silent drop")

	require.NoError(t, c.Check(ctx))
	ns.Shutdown()
	_, err = p.Publish(ctx, "t.a", []byte("down"), "")
	assert.Error(t, err, "no ack, no success")
	assert.Error(t, c.Check(ctx))
}

// A stream larger than the server's store limit is refused with an error an
// operator can act on, not only JetStream's "insufficient storage resources".
func TestEnsureStreamTooLargeSaysWhatToChange(t *testing.T) {
	ns := natstest.New(t)
	c, err := natsx.Connect(natsx.Config{URL: ns.URL(), PublishTimeout: time.Second}, "test", logx.NewTo(io.Discard, logx.Config{Level: slog.LevelError}))
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Drain() })

	_, err = c.EnsureStream(context.Background(), jetstream.StreamConfig{Name: "BIG", Subjects: []string{"big.>"},
		Storage: jetstream.FileStorage, MaxBytes: 2 * natstest.MaxStore})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "insufficient storage resources")
	assert.Contains(t, err.Error(), "_STREAM_MAX_BYTES")
	assert.Contains(t, err.Error(), "max_file_store")
}
