package writer_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/assayhq/assay/pkg/chspans"
	"github.com/assayhq/assay/pkg/chx"
	"github.com/assayhq/assay/pkg/genproto/spanspb"
	"github.com/assayhq/assay/pkg/natsx"
	"github.com/assayhq/assay/pkg/spanstream"
	"github.com/assayhq/assay/pkg/testutil/chserver"
	"github.com/assayhq/assay/pkg/testutil/chtest"
	"github.com/assayhq/assay/pkg/testutil/natstest"
	"github.com/assayhq/assay/pkg/testutil/writertest"
)

// pipeline is a private NATS, a ClickHouse database and the writer process.
type pipeline struct {
	nats   *natstest.Server
	conn   *natsx.Conn
	pub    *natsx.Publisher
	ch     driver.Conn
	chURL  string
	writer *writertest.Writer
	proj   string
	acked  atomic.Int64
	seq    atomic.Int64
}

func newPipeline(t *testing.T, chURL string, writerEnv ...string) *pipeline {
	t.Helper()
	ctx := context.Background()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	ns := natstest.New(t)
	conn, err := natsx.Connect(natsx.Config{URL: ns.URL(), PublishTimeout: 2 * time.Second}, "test", log)
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Drain() })
	_, err = conn.EnsureStream(ctx, spanstream.StreamConfig(1<<30, time.Minute))
	require.NoError(t, err)
	_, err = conn.EnsureStream(ctx, spanstream.DeadLetterStreamConfig())
	require.NoError(t, err)
	cfg := chx.Config{URL: chURL, DialTimeout: 5 * time.Second}
	require.NoError(t, chspans.Migrate(ctx, cfg, log))
	opts, err := clickhouse.ParseDSN(chURL)
	require.NoError(t, err)
	ch, err := clickhouse.Open(opts)
	require.NoError(t, err)
	t.Cleanup(func() { ch.Close() })
	p := &pipeline{nats: ns, conn: conn, pub: natsx.NewPublisher(conn, natsx.Config{PublishTimeout: 2 * time.Second}),
		ch: ch, chURL: chURL, proj: uuid.NewString()}
	p.writer = writertest.Start(t, ns.URL(), chURL, writerEnv...)
	return p
}

// batch is one ingest request's worth of ~1 KB spans.
func (p *pipeline) batch(n int) (*spanspb.SpanBatch, string) {
	i := p.seq.Add(1)
	b := &spanspb.SpanBatch{ProjectId: p.proj, ReceivedUnixNano: time.Now().UnixNano()}
	tid := fmt.Sprintf("%032x", i)
	pad := make([]byte, 700)
	for j := range pad {
		pad[j] = 'x'
	}
	for j := 0; j < n; j++ {
		b.Spans = append(b.Spans, &spanspb.Span{TraceId: tid, SpanId: fmt.Sprintf("%016x", j+1), SpanName: "s",
			StartUnixMicro: time.Now().UnixMicro(), EndUnixMicro: time.Now().UnixMicro(),
			AttributesJson: []byte(`{"pad":"` + string(pad) + `"}`)})
	}
	return b, fmt.Sprintf("msg-%d", i)
}

// send publishes like tracing does for one request and counts the spans
// only when JetStream acknowledged them (the 202); a client retries the
// rest, with the same message id.
func (p *pipeline) send(t *testing.T, n int) {
	b, id := p.batch(n)
	data, err := proto.Marshal(b)
	require.NoError(t, err)
	deadline := time.Now().Add(60 * time.Second)
	for {
		if _, err := p.pub.Publish(context.Background(), spanstream.SpanSubject(p.proj), data, id); err == nil {
			p.acked.Add(int64(n))
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("publish never acknowledged: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (p *pipeline) counts(t *testing.T) (final, distinct uint64) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	row := p.ch.QueryRow(ctx, "SELECT count(), uniqExact(trace_id, span_id) FROM spans FINAL WHERE project_id = ? AND deleted = 0", p.proj)
	if err := row.Scan(&final, &distinct); err != nil {
		return 0, 0 // ClickHouse may be down in the middle of a test
	}
	return final, distinct
}

// waitAll waits until every acknowledged span is stored exactly once.
func (p *pipeline) waitAll(t *testing.T) {
	t.Helper()
	want := uint64(p.acked.Load())
	var final, distinct uint64
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		final, distinct = p.counts(t)
		if final == want && distinct == want {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("stored %d rows (%d distinct spans), want every one of the %d acknowledged spans exactly once\nwriter log:\n%s",
		final, distinct, want, p.writer.Log())
}

func TestNoLossWhenWriterIsKilled(t *testing.T) {
	t.Parallel()
	p := newPipeline(t, chtest.NewURL(t), "WRITER_BATCH_ROWS=2000")
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
				p.send(t, 100)
			}
		}
	}()
	for round := 0; round < 3; round++ {
		// Kill while batches are in flight: some spans stored, some not.
		require.Eventually(t, func() bool { f, _ := p.counts(t); return f > uint64(round*2000) }, 60*time.Second, 20*time.Millisecond)
		p.writer.Kill()
		time.Sleep(200 * time.Millisecond) // let unwritten batches pile up
		p.writer.Restart()
	}
	close(stop)
	wg.Wait()
	p.waitAll(t)
}

func TestNoLossWhenClickHouseStops(t *testing.T) {
	t.Parallel()
	srv := chserver.Start(t)
	p := newPipeline(t, srv.URL("noloss"))
	for i := 0; i < 20; i++ {
		p.send(t, 100)
	}
	srv.Stop()
	// Ingest keeps being acknowledged while ClickHouse is down.
	outage := time.Now().Add(30 * time.Second)
	for time.Now().Before(outage) {
		p.send(t, 100)
		time.Sleep(200 * time.Millisecond)
	}
	srv.Restart()
	p.send(t, 100)
	p.waitAll(t)
}

func TestNoLossWhenNATSRestarts(t *testing.T) {
	t.Parallel()
	p := newPipeline(t, chtest.NewURL(t))
	for i := 0; i < 20; i++ {
		p.send(t, 100)
	}
	p.nats.Shutdown()
	time.Sleep(500 * time.Millisecond)
	p.nats.Start()
	for i := 0; i < 20; i++ {
		p.send(t, 100)
	}
	p.waitAll(t)
}

func TestPoisonBatchGoesToDeadLetter(t *testing.T) {
	t.Parallel()
	p := newPipeline(t, chtest.NewURL(t))
	p.send(t, 10)
	_, err := p.pub.Publish(context.Background(), spanstream.SpanSubject(p.proj), []byte("not a span batch"), "poison")
	require.NoError(t, err)
	p.send(t, 10)
	p.waitAll(t)
	require.Eventually(t, func() bool {
		st, err := p.conn.JS.Stream(context.Background(), spanstream.DeadLetterStream)
		if err != nil {
			return false
		}
		info, err := st.Info(context.Background())
		return err == nil && info.State.Msgs == 1
	}, 30*time.Second, 50*time.Millisecond)
}

// TestLargeSpansFlushByBytes: with large spans, the rows of one insert can
// be far more bytes than the writer should hold; a batch is inserted once
// its decoded bytes reach WRITER_BATCH_BYTES, whatever its rows.
func TestLargeSpansFlushByBytes(t *testing.T) {
	t.Parallel()
	p := newPipeline(t, chtest.NewURL(t), "WRITER_BATCH_ROWS=1000000", "WRITER_FLUSH_INTERVAL=10m", "WRITER_BATCH_BYTES=1048576")
	for i := 0; i < 20; i++ {
		p.send(t, 100) // ~75 KB each
	}
	require.Eventually(t, func() bool { f, _ := p.counts(t); return f >= 1000 }, 30*time.Second, 50*time.Millisecond,
		"no insert before the rows or the interval: %s", p.writer.Log())
}

// TestBacklogDrainsInBoundedMemory: a backlog of large, incompressible
// batches (about 250 MB) is drained with the writer's memory bounded by its
// configuration: WRITER_FETCH_MESSAGES batches fetched ahead (64, not 512
// whatever their size), inserts of WRITER_BATCH_BYTES, and the heap's soft
// limit. The writer's RSS, sampled from its /metrics while it
// drains, stays far below the backlog; every span is stored.
func TestBacklogDrainsInBoundedMemory(t *testing.T) {
	t.Parallel()
	p := newPipeline(t, chtest.NewURL(t), "WRITER_BATCH_BYTES=4194304", "WRITER_MEMORY_LIMIT=67108864")
	p.writer.Stop()
	rnd := make([]byte, 75_000)
	for i := 0; i < 250; i++ {
		b := &spanspb.SpanBatch{ProjectId: p.proj, ReceivedUnixNano: time.Now().UnixNano()}
		for j := 0; j < 10; j++ {
			_, _ = rand.Read(rnd)
			b.Spans = append(b.Spans, &spanspb.Span{TraceId: fmt.Sprintf("%032x", i), SpanId: fmt.Sprintf("%016x", j+1),
				StartUnixMicro: time.Now().UnixMicro(), EndUnixMicro: time.Now().UnixMicro(),
				AttributesJson: []byte(`{"pad":"` + base64.StdEncoding.EncodeToString(rnd) + `"}`)})
		}
		data, err := proto.Marshal(b) // ~1 MB, as stored: incompressible
		require.NoError(t, err)
		_, err = p.pub.Publish(context.Background(), spanstream.SpanSubject(p.proj), data, fmt.Sprintf("big-%d", i))
		require.NoError(t, err)
		p.acked.Add(10)
	}
	p.writer.Restart()
	var peak float64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			if rss := residentBytes(p.writer.MetricsURL + "/metrics"); rss > peak {
				peak = rss
			}
		}
	}()
	p.waitAll(t)
	close(stop)
	<-sampled
	t.Logf("writer peak RSS while draining %d MB of batches: %.0f MB", 250*10*100_000>>20, peak/(1<<20))
	require.NotZero(t, peak, "no RSS sampled")
	require.Less(t, peak, float64(200<<20), "the writer held the backlog in memory")
}

// residentBytes is process_resident_memory_bytes of a /metrics page, 0 if
// it cannot be read.
func residentBytes(url string) float64 {
	resp, err := http.Get(url)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, "process_resident_memory_bytes "); ok {
			f, _ := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return f
		}
	}
	return 0
}
