package scaleout_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/google/uuid"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/pkg/natsx"
	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/pkg/spanstream"
	"github.com/assayhq/assay/pkg/testutil/chtest"
	"github.com/assayhq/assay/pkg/testutil/natscluster"
	"github.com/assayhq/assay/pkg/testutil/svctest"
	"github.com/assayhq/assay/pkg/testutil/writertest"
)

const token = "test-internal-token-0123456789"

// ingester sends native ingest requests to tracing replicas and counts the
// spans of each request once it is answered 202. A request answered
// otherwise is sent again, same body, until 202, as a client retries: the
// stream's duplicate window stores a retried body once even when the first
// attempt was stored but its answer lost.
type ingester struct {
	urls    []string
	project uuid.UUID
	seq     atomic.Int64
	acked   atomic.Int64
	retries atomic.Int64
	client  *http.Client
}

func (g *ingester) send(t *testing.T, spans int) error {
	i := g.seq.Add(1)
	var b bytes.Buffer
	b.WriteString(`{"spans":[`)
	for j := range spans {
		if j > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"trace_id":"%032x","span_id":"%016x","span_name":"s%d"}`, i, j+1, j)
	}
	b.WriteString(`]}`)
	body := b.Bytes()
	deadline := time.Now().Add(60 * time.Second)
	for attempt := 0; ; attempt++ {
		// Spread over the replicas, and move to the next on a retry.
		url := g.urls[(int(i)+attempt)%len(g.urls)]
		req, err := http.NewRequest("POST", url+"/api/tracing/spans/ingest", bytes.NewReader(body))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		scope.Set(req.Header, token, scope.Scope{ProjectID: g.project})
		res, err := g.client.Do(req)
		if err == nil {
			_, _ = io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if res.StatusCode == http.StatusAccepted {
				g.acked.Add(int64(spans))
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("request %d never answered 202 (last: %v)", i, err)
		}
		g.retries.Add(1)
		time.Sleep(50 * time.Millisecond)
	}
}

// TestNATSClusterNodeKilledMidIngest: streams at R3 on three nats-server
// processes, ingest running through two tracing replicas, the streams'
// leader killed with SIGKILL and restarted: every span answered 202 is in
// ClickHouse exactly once.
func TestNATSClusterNodeKilledMidIngest(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a three-node NATS cluster")
	}
	cluster := natscluster.Start(t, 3)
	chURL := chtest.NewURL(t)
	env := func(extra ...string) []string {
		return append([]string{
			"TRACING_NATS_URL=" + cluster.URL(), "TRACING_CLICKHOUSE_URL=" + chURL, "TRACING_TOKEN_FROM_GATEWAY=" + token,
			"TRACING_TOKEN_TO_REGISTRY=no-registry-here-0123456789",
			"TRACING_STREAM_REPLICAS=3", "TRACING_OTLP_HTTP_ADDR=", "TRACING_OTLP_GRPC_ADDR=", "TRACING_LOG_LEVEL=warn",
			// A publish waits for the ack through a leader election (a few seconds).
			"TRACING_NATS_PUBLISH_TIMEOUT=10s",
		}, extra...)
	}
	var tracing []*svctest.Service
	for range 2 {
		tracing = append(tracing, svctest.Start(t, svctest.Options{Pkg: "services/tracing/cmd/tracing", AddrVar: "TRACING_ADDR", Env: env()}))
	}
	writer := writertest.Start(t, cluster.URL(), chURL, "WRITER_STREAM_REPLICAS=3", "WRITER_LOG_LEVEL=info")
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("writer log:\n%s", writer.Log())
		}
	})

	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	nc, err := natsx.Connect(natsx.Config{URL: cluster.URL(), PublishTimeout: 5 * time.Second}, "test", log)
	require.NoError(t, err)
	t.Cleanup(func() { _ = nc.Drain() })
	info := streamInfo(t, nc.JS, spanstream.SpanStream)
	require.Equal(t, 3, info.Config.Replicas, "SPANS is declared at R3")
	require.Len(t, info.Cluster.Replicas, 2, "two followers besides the leader")

	g := &ingester{project: uuid.New(), client: &http.Client{Timeout: 30 * time.Second}}
	for _, s := range tracing {
		g.urls = append(g.urls, s.URL)
	}
	stop := make(chan struct{})
	errs := make(chan error, 4)
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if err := g.send(t, 20); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	waitFor(t, "ingest running", 30*time.Second, func() bool { return g.acked.Load() >= 2000 })
	leader := cluster.Node(streamInfo(t, nc.JS, spanstream.SpanStream).Cluster.Leader)
	require.NotNil(t, leader)
	leader.Kill()
	before := g.acked.Load()
	// Ingest goes on, on the two nodes left, once they elected a new leader.
	waitFor(t, "ingest on without the killed leader", 60*time.Second, func() bool { return g.acked.Load() >= before+2000 })
	leader.Restart()
	leader.WaitHealthy(60 * time.Second)
	before = g.acked.Load()
	waitFor(t, "ingest on after the restart", 60*time.Second, func() bool { return g.acked.Load() >= before+1000 })
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	opts, err := clickhouse.ParseDSN(chURL)
	require.NoError(t, err)
	ch, err := clickhouse.Open(opts)
	require.NoError(t, err)
	defer ch.Close()
	want := uint64(g.acked.Load())
	var rows, distinct uint64
	var qerr error
	t.Cleanup(func() {
		if t.Failed() {
			// Where the spans are: in the stream, held by the writer, or gone.
			t.Logf("want %d spans; ClickHouse has %d rows, %d distinct (last error: %v)", want, rows, distinct, qerr)
			t.Logf("SPANS: %+v", streamInfo(t, nc.JS, spanstream.SpanStream).State)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if c, err := nc.JS.Consumer(ctx, spanstream.SpanStream, spanstream.WriterConsumer); err != nil {
				t.Logf("writer consumer: %v", err)
			} else if ci, err := c.Info(ctx); err != nil {
				t.Logf("writer consumer info: %v", err)
			} else {
				t.Logf("writer consumer: pending %d, ack pending %d, redelivered %d, waiting %d, delivered %+v, ack floor %+v, cluster %+v",
					ci.NumPending, ci.NumAckPending, ci.NumRedelivered, ci.NumWaiting, ci.Delivered, ci.AckFloor, ci.Cluster)
			}
			for _, n := range cluster.Nodes {
				t.Logf("%s log:\n%s", n.Name, n.Log())
			}
		}
	})
	waitFor(t, "every acknowledged span stored", 90*time.Second, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		qerr = ch.QueryRow(ctx, "SELECT count(), uniqExact(trace_id, span_id) FROM spans FINAL WHERE project_id = ? AND deleted = 0",
			g.project).Scan(&rows, &distinct)
		return qerr == nil && rows >= want && distinct >= want
	})
	require.Equal(t, want, distinct, "every span answered 202 is stored")
	require.Equal(t, want, rows, "and stored once")
	t.Logf("%d spans in %d requests answered 202, %d retries, leader %s killed and restarted", want, g.seq.Load(), g.retries.Load(), leader.Name)
}

func streamInfo(t *testing.T, js jetstream.JetStream, name string) *jetstream.StreamInfo {
	t.Helper()
	var info *jetstream.StreamInfo
	waitFor(t, "stream "+name+" info", 30*time.Second, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		s, err := js.Stream(ctx, name)
		if err != nil {
			return false
		}
		info, err = s.Info(ctx)
		return err == nil && info.Cluster != nil && info.Cluster.Leader != ""
	})
	return info
}

// waitFor polls cond every 50 ms until it holds, failing after timeout.
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
