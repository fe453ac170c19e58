package natsx_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/pkg/logx"
	"github.com/assayhq/assay/pkg/natsx"
	"github.com/assayhq/assay/pkg/testutil/natstest"
)

// TestBacklog: a consumer's backlog (waiting, unacked, the age of the
// oldest not acknowledged) is read from JetStream as it is, and exported as
// gauges at each scrape.
func TestBacklog(t *testing.T) {
	ns := natstest.New(t)
	log := logx.NewTo(io.Discard, logx.Config{Level: slog.LevelError})
	c, err := natsx.Connect(natsx.Config{URL: ns.URL(), PublishTimeout: 2 * time.Second}, "test", log)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Drain() })
	ctx := context.Background()
	_, err = c.EnsureStream(ctx, jetstream.StreamConfig{Name: "B", Subjects: []string{"b.>"}, Storage: jetstream.MemoryStorage})
	require.NoError(t, err)
	cons, err := c.JS.CreateOrUpdateConsumer(ctx, "B", jetstream.ConsumerConfig{Durable: "w", AckPolicy: jetstream.AckExplicitPolicy, AckWait: time.Minute})
	require.NoError(t, err)

	b, err := natsx.ReadBacklog(ctx, c.JS, "B", "w")
	require.NoError(t, err)
	assert.Equal(t, natsx.Backlog{}, b, "nothing published")

	stored := time.Now()
	for range 3 {
		_, err = c.JS.Publish(ctx, "b.x", []byte("m"))
		require.NoError(t, err)
	}
	batch, err := cons.Fetch(2, jetstream.FetchMaxWait(5*time.Second))
	require.NoError(t, err)
	var got []jetstream.Msg
	for m := range batch.Messages() {
		got = append(got, m)
	}
	require.Len(t, got, 2)
	require.NoError(t, got[1].DoubleAck(ctx)) // the second acked, the first not
	time.Sleep(20 * time.Millisecond)         // an age measurable on any clock
	b, err = natsx.ReadBacklog(ctx, c.JS, "B", "w")
	require.NoError(t, err)
	assert.EqualValues(t, 1, b.Pending, "the third is not delivered")
	assert.Equal(t, 1, b.Unacked, "the first is delivered, not acked")
	assert.Greater(t, b.OldestAge, 10*time.Millisecond)
	assert.Less(t, b.OldestAge, time.Since(stored)+time.Second, "the age is the first message's")

	reg := prometheus.NewRegistry()
	reg.MustRegister(natsx.BacklogCollector(c.JS, "B", "w", "test_backlog", "Test messages", log))
	families, err := reg.Gather()
	require.NoError(t, err)
	values := map[string]float64{}
	for _, f := range families {
		values[f.GetName()] = f.GetMetric()[0].GetGauge().GetValue()
	}
	assert.Equal(t, 1.0, values["test_backlog_pending_messages"])
	assert.Equal(t, 1.0, values["test_backlog_unacked_messages"])
	assert.Greater(t, values["test_backlog_oldest_unacked_age_seconds"], 0.01)

	require.NoError(t, got[0].DoubleAck(ctx))
	batch, err = cons.Fetch(1, jetstream.FetchMaxWait(5*time.Second))
	require.NoError(t, err)
	for m := range batch.Messages() {
		require.NoError(t, m.DoubleAck(ctx))
	}
	b, err = natsx.ReadBacklog(ctx, c.JS, "B", "w")
	require.NoError(t, err)
	assert.Equal(t, natsx.Backlog{}, b, "everything acked")

	_, err = natsx.ReadBacklog(ctx, c.JS, "B", "nobody")
	assert.Error(t, err, "a consumer that does not exist")
}
