package scaleout_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/assayhq/assay/pkg/genproto/spanspb"
	"github.com/assayhq/assay/pkg/natsx"
	"github.com/assayhq/assay/pkg/spanstream"
	"github.com/assayhq/assay/pkg/testutil/chtest"
	"github.com/assayhq/assay/pkg/testutil/natscluster"
	"github.com/assayhq/assay/pkg/testutil/writertest"
)

// TestWriterPullsAgainWhenItsConsumerLeaderDies: the writer is connected
// to the node that leads its consumer, and that node is killed. A pull
// request the writer had parked there, or sends again during the election,
// may reach no leader: nats-server tells waiting requests of a leader change
// only when it had replicated them. Then only missing heartbeats can tell
// the writer, and it used to wait in short NextMaxWait slices, each with a
// fresh heartbeat check that never got to fire: it stalled for good, every
// later batch left in the stream (TestNATSClusterNodeKilledMidIngest, 2 runs
// in 11; this test, once in 3, when the leader moved at the start). Batches
// published after the kill are stored.
func TestWriterPullsAgainWhenItsConsumerLeaderDies(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a three-node NATS cluster")
	}
	cluster := natscluster.Start(t, 3)
	home := cluster.Nodes[0]
	chURL := chtest.NewURL(t)
	writer := writertest.Start(t, "nats://"+home.Client, chURL, "WRITER_STREAM_REPLICAS=3")

	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	nc, err := natsx.Connect(natsx.Config{URL: cluster.URL(), PublishTimeout: 10 * time.Second}, "test", log)
	require.NoError(t, err)
	t.Cleanup(func() { _ = nc.Drain() })
	pub := natsx.NewPublisher(nc, natsx.Config{PublishTimeout: 10 * time.Second})

	// The consumer's leader moves to the writer's node.
	waitFor(t, "the writer's consumer led by the writer's node", 60*time.Second, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		c, err := nc.JS.Consumer(ctx, spanstream.SpanStream, spanstream.WriterConsumer)
		if err != nil {
			return false
		}
		ci, err := c.Info(ctx)
		if err != nil || ci.Cluster == nil || ci.Cluster.Leader == "" {
			return false
		}
		if ci.Cluster.Leader == home.Name {
			return true
		}
		_, _ = nc.NC.Request(fmt.Sprintf("$JS.API.CONSUMER.LEADER.STEPDOWN.%s.%s", spanstream.SpanStream, spanstream.WriterConsumer), nil, 3*time.Second)
		time.Sleep(time.Second)
		return false
	})

	project := uuid.NewString()
	sent := 0
	send := func(batches int) {
		for range batches {
			sent++
			b := &spanspb.SpanBatch{ProjectId: project, ReceivedUnixNano: time.Now().UnixNano()}
			for j := range 10 {
				b.Spans = append(b.Spans, &spanspb.Span{TraceId: fmt.Sprintf("%032x", sent), SpanId: fmt.Sprintf("%016x", j+1), SpanName: "s",
					StartUnixMicro: time.Now().UnixMicro(), EndUnixMicro: time.Now().UnixMicro()})
			}
			data, err := proto.Marshal(b)
			require.NoError(t, err)
			// Through an election the publish is retried, as tracing's clients do.
			waitFor(t, "the batch acknowledged", 60*time.Second, func() bool {
				_, err := pub.Publish(context.Background(), spanstream.SpanSubject(project), data, fmt.Sprintf("%s-%d", project, sent))
				return err == nil
			})
		}
	}
	opts, err := clickhouse.ParseDSN(chURL)
	require.NoError(t, err)
	ch, err := clickhouse.Open(opts)
	require.NoError(t, err)
	defer ch.Close()
	stored := func(what string) {
		t.Helper()
		want := uint64(sent * 10)
		var n uint64
		t.Cleanup(func() {
			if t.Failed() {
				t.Logf("want %d spans, %d stored; writer log:\n%s", want, n, writer.Log())
			}
		})
		waitFor(t, what, 60*time.Second, func() bool {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			err := ch.QueryRow(ctx, "SELECT uniqExact(trace_id, span_id) FROM spans FINAL WHERE project_id = ?", project).Scan(&n)
			return err == nil && n >= want
		})
	}

	send(5)
	stored("the batches before the kill stored")
	home.Kill()
	send(5)
	stored("the batches after the kill stored")
}
