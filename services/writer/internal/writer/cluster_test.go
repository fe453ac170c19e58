package writer_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/pkg/chspans"
	"github.com/assayhq/assay/pkg/chx"
	"github.com/assayhq/assay/pkg/genproto/spanspb"
	"github.com/assayhq/assay/pkg/natsx"
	"github.com/assayhq/assay/pkg/spanstream"
	"github.com/assayhq/assay/pkg/testutil/chserver"
	"github.com/assayhq/assay/pkg/testutil/freeport"
	"github.com/assayhq/assay/pkg/testutil/natstest"
	"github.com/assayhq/assay/pkg/testutil/writertest"
	"github.com/assayhq/assay/pkg/testutil/zktest"
	"github.com/assayhq/assay/services/writer/internal/chstore"
)

// TestClusterSchemaReplicaStoppedMidIngest: the cluster schema
// (WRITER_CLICKHOUSE_CLUSTER) on two ClickHouse replicas of one shard,
// coordinated by ZooKeeper; the writer ingests through the Distributed
// table while the replica it is not connected to is stopped and restarted:
// both replicas end with every acknowledged span, once.
func TestClusterSchemaReplicaStoppedMidIngest(t *testing.T) {
	if testing.Short() {
		t.Skip("runs ZooKeeper and two ClickHouse servers")
	}
	if !zktest.Available() {
		t.Skip("no ZooKeeper (Debian package zookeeper) or java: `scripts/deps.sh up test` (make test) installs them")
	}
	zk := zktest.Start(t)
	ports := []int{freeport.Port(t), freeport.Port(t)}
	var servers []*chserver.Server
	for i := range 2 {
		servers = append(servers, chserver.StartWith(t, chserver.Options{TCPPort: ports[i], Config: fmt.Sprintf(`
  <interserver_http_port>%d</interserver_http_port>
  <interserver_http_host>127.0.0.1</interserver_http_host>
  <zookeeper><node><host>127.0.0.1</host><port>%d</port></node></zookeeper>
  <macros><shard>1</shard><replica>r%d</replica></macros>
  <distributed_ddl><path>/clickhouse/task_queue/ddl</path></distributed_ddl>
  <remote_servers><assay><shard><internal_replication>true</internal_replication>
    <replica><host>127.0.0.1</host><port>%d</port></replica>
    <replica><host>127.0.0.1</host><port>%d</port></replica>
  </shard></assay></remote_servers>`, freeport.Port(t), zk, i+1, ports[0], ports[1])}))
	}
	t.Cleanup(func() {
		if t.Failed() {
			for i, s := range servers {
				t.Logf("replica %d error log:\n%s", i+1, s.ErrorLog())
			}
		}
	})
	ctx := context.Background()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	url := servers[0].URL("spans_cluster")
	cfg := chx.Config{URL: url, DialTimeout: 5 * time.Second, Cluster: "assay"}
	require.NoError(t, chspans.Migrate(ctx, cfg, log))
	require.NoError(t, chspans.Migrate(ctx, cfg, log), "a second start changes nothing")

	ns := natstest.New(t)
	conn, err := natsx.Connect(natsx.Config{URL: ns.URL(), PublishTimeout: 2 * time.Second}, "test", log)
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Drain() })
	_, err = conn.EnsureStream(ctx, spanstream.StreamConfig(1<<30, time.Minute))
	require.NoError(t, err)
	_, err = conn.EnsureStream(ctx, spanstream.DeadLetterStreamConfig())
	require.NoError(t, err)
	p := &pipeline{nats: ns, conn: conn, pub: natsx.NewPublisher(conn, natsx.Config{PublishTimeout: 2 * time.Second}), proj: uuid.NewString()}
	p.writer = writertest.Start(t, ns.URL(), url, "WRITER_CLICKHOUSE_CLUSTER=assay", "WRITER_BATCH_ROWS=1000")

	replica := func(i int) driver.Conn {
		opts, err := clickhouse.ParseDSN(servers[i].URL("spans_cluster"))
		require.NoError(t, err)
		c, err := clickhouse.Open(opts)
		require.NoError(t, err)
		t.Cleanup(func() { c.Close() })
		return c
	}
	counts := func(c driver.Conn, table string) (rows, distinct uint64) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := c.QueryRow(ctx, "SELECT count(), uniqExact(trace_id, span_id) FROM "+table+" FINAL WHERE project_id = ?", p.proj).Scan(&rows, &distinct); err != nil {
			return 0, 0
		}
		return rows, distinct
	}
	r1 := replica(0)

	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
				p.send(t, 100)
			}
		}
	})
	waitFor(t, "spans on the replicas", 60*time.Second, func() bool { n, _ := counts(r1, "spans"); return n >= 2000 })
	servers[1].Stop()
	before := p.acked.Load()
	waitFor(t, "ingest going on with one replica", 60*time.Second, func() bool { return p.acked.Load() >= before+3000 })
	servers[1].Restart()
	before = p.acked.Load()
	waitFor(t, "ingest after the restart", 60*time.Second, func() bool { return p.acked.Load() >= before+2000 })
	close(stop)
	wg.Wait()

	want := uint64(p.acked.Load())
	r2 := replica(1)
	for i, c := range []driver.Conn{r1, r2} {
		var rows, distinct uint64
		poll(90*time.Second, func() bool { rows, distinct = counts(c, "spans_local"); return distinct >= want })
		require.Equal(t, want, distinct, "replica %d: every acknowledged span", i+1)
		require.Equal(t, want, rows, "replica %d: once", i+1)
	}
	rows, distinct := counts(r2, "spans")
	require.Equal(t, want, distinct, "queries through the Distributed table see them")
	require.Equal(t, want, rows)
	t.Logf("%d spans on both replicas", want)

	// Retention on the cluster: an expired project's partition is dropped
	// from both replicas, the other project's kept.
	chConn, err := chx.Open(ctx, cfg)
	require.NoError(t, err)
	defer chConn.Close()
	short, long := uuid.NewString(), uuid.NewString()
	store, err := chstore.New(chConn, chstore.RetentionConfig{Default: 90 * 24 * time.Hour, Projects: short + "=168h"}, log)
	require.NoError(t, err)
	store.Cluster = "assay"
	old := time.Now().Add(-10 * 24 * time.Hour)
	span := &spanspb.Span{TraceId: "0123456789abcdef0123456789abcdef", SpanId: "0000000000000001", StartUnixMicro: old.UnixMicro(), EndUnixMicro: old.UnixMicro()}
	_, err = store.Insert(ctx, []*spanspb.SpanBatch{
		{ProjectId: short, ReceivedUnixNano: old.UnixNano(), Spans: []*spanspb.Span{span}},
		{ProjectId: long, ReceivedUnixNano: old.UnixNano(), Spans: []*spanspb.Span{span}},
	})
	require.NoError(t, err)
	dropped, err := store.DropExpired(ctx)
	require.NoError(t, err)
	require.Len(t, dropped, 1, "the short-retention project's partition")
	for i, c := range []driver.Conn{r1, r2} {
		var left []string
		poll(30*time.Second, func() bool {
			left = nil
			rows, err := c.Query(ctx, "SELECT project_id FROM spans_local WHERE project_id IN (?, ?)", short, long)
			if err != nil {
				return false
			}
			defer rows.Close()
			for rows.Next() {
				var p string
				_ = rows.Scan(&p)
				left = append(left, p)
			}
			return len(left) == 1
		})
		require.Equal(t, []string{long}, left, "replica %d after retention", i+1)
	}
}

func waitFor(t *testing.T, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for: %s", timeout, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func poll(timeout time.Duration, cond func() bool) {
	deadline := time.Now().Add(timeout)
	for !cond() && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
}
