// Command sdkbench measures what one standard OpenTelemetry SDK exporter
// process gets through tracing, for
// scripts/bench/sdk.sh: the real Go SDK (go.opentelemetry.io/otel/sdk), a
// batch span processor of -batch-span batches (one export in flight, as
// the processor works), ~1.1 KB spans shaped like loadgen's, produced at
// -rate spans/s for -duration against tracing's OTLP/HTTP (protobuf) port,
// then its OTLP/gRPC port. For each it prints the spans stored per second
// (counted in ClickHouse once all arrived), the spans the SDK dropped on
// the client side (its queue full: ended spans that never reached the
// exporter), export errors, and the latency of each export request
// (ExportSpans, timed around the real exporter); then how far apart the
// two transports are.
//
//	sdkbench -provision <postgres URL>   creates api_keys there, prints "<project> <key>"
//	sdkbench -key <key> -project <id> [-http URL] [-grpc host:port] -clickhouse URL -duration 20s
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.26.0"

	"github.com/assayhq/assay/pkg/apikey"
	"github.com/assayhq/assay/pkg/testutil/pgtest"
)

func main() {
	provision := flag.String("provision", "", "create the api_keys table in this PostgreSQL database, store a new key and print \"<project> <key>\"")
	key := flag.String("key", "", "API key (prefix.secret)")
	project := flag.String("project", "", "the key's project id (to count stored spans)")
	httpURL := flag.String("http", "http://127.0.0.1:4318", "tracing's OTLP/HTTP base URL (empty: skip)")
	grpcAddr := flag.String("grpc", "127.0.0.1:4317", "tracing's OTLP/gRPC address (empty: skip)")
	chURL := flag.String("clickhouse", "clickhouse://default@127.0.0.1:59000/default", "ClickHouse URL of tracing's span table")
	dur := flag.Duration("duration", 20*time.Second, "how long each transport is fed spans")
	rate := flag.Int("rate", 20000, "spans/s the application ends (0: as fast as one goroutine can)")
	batch := flag.Int("batch", 512, "batch span processor: spans per export (WithMaxExportBatchSize)")
	queue := flag.Int("queue", 2048, "batch span processor: queue size (WithMaxQueueSize; the SDK default is 2048)")
	flag.Parse()
	ctx := context.Background()
	if *provision != "" {
		p, k := provisionKey(ctx, *provision)
		fmt.Println(p, k)
		return
	}
	if *key == "" || *project == "" {
		log.Fatal("sdkbench: -key and -project are required (see -provision)")
	}
	opts, err := clickhouse.ParseDSN(*chURL)
	if err != nil {
		log.Fatal(err)
	}
	ch, err := clickhouse.Open(opts)
	if err != nil {
		log.Fatal(err)
	}
	// The SDK reports what it cannot export through the global handler.
	var handled atomic.Int64
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		if handled.Add(1) <= 3 {
			log.Printf("otel: %v", err)
		}
	}))
	auth := "ApiKey " + *key
	var results []result
	if *httpURL != "" {
		exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(strings.TrimSuffix(*httpURL, "/")+"/v1/traces"),
			otlptracehttp.WithHeaders(map[string]string{"Authorization": auth}))
		if err != nil {
			log.Fatal(err)
		}
		results = append(results, run(ctx, ch, "http", exp, *project, *dur, *rate, *batch, *queue))
	}
	if *grpcAddr != "" {
		exp, err := otlptracegrpc.New(ctx, otlptracegrpc.WithEndpoint(*grpcAddr), otlptracegrpc.WithInsecure(),
			otlptracegrpc.WithHeaders(map[string]string{"authorization": auth}))
		if err != nil {
			log.Fatal(err)
		}
		results = append(results, run(ctx, ch, "grpc", exp, *project, *dur, *rate, *batch, *queue))
	}
	for _, r := range results {
		r.print()
	}
	if len(results) == 2 && results[0].storedRate > 0 {
		h, g := results[0], results[1]
		fmt.Printf("sdk: grpc vs http: %+.1f%% spans/s stored, export p50 %s vs %s (target: within 10%%)\n",
			100*(g.storedRate-h.storedRate)/h.storedRate, g.p50, h.p50)
	}
	if n := handled.Load(); n > 0 {
		fmt.Printf("sdk: %d errors reported to the OpenTelemetry error handler\n", n)
	}
}

// timed is the real exporter, with each ExportSpans timed and counted.
type timed struct {
	sdktrace.SpanExporter
	mu       sync.Mutex
	lat      []time.Duration
	exported atomic.Int64 // spans handed to the exporter
	failed   atomic.Int64 // of those, in exports that returned an error
}

func (t *timed) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	start := time.Now()
	err := t.SpanExporter.ExportSpans(ctx, spans)
	d := time.Since(start)
	t.exported.Add(int64(len(spans)))
	if err != nil {
		t.failed.Add(int64(len(spans)))
	}
	t.mu.Lock()
	t.lat = append(t.lat, d)
	t.mu.Unlock()
	return err
}

type result struct {
	via                             string
	ended, exported, failed, stored int64
	sendTime, total                 time.Duration
	storedRate                      float64
	p50, p99                        time.Duration
	exports                         int
	batch                           int
}

func (r result) print() {
	dropped := r.ended - r.exported
	fmt.Printf("sdk %s: %.0f spans/s stored (%d stored in %.1fs: %.1fs of spans, then the queue flushed and the last stored)\n",
		r.via, r.storedRate, r.stored, r.total.Seconds(), r.sendTime.Seconds())
	fmt.Printf("sdk %s: spans ended %d, exported %d, dropped by the SDK (queue full) %d (%.1f%%), in failed exports %d\n",
		r.via, r.ended, r.exported, dropped, 100*float64(dropped)/float64(max(r.ended, 1)), r.failed)
	fmt.Printf("sdk %s: export request of up to %d spans: p50 %s p99 %s (n=%d)\n", r.via, r.batch, r.p50, r.p99, r.exports)
}

var pad = strings.Repeat("lorem ipsum ", 60) // ~700 bytes: ~1.1 KB spans, as loadgen's

func run(ctx context.Context, ch clickhouse.Conn, via string, exp sdktrace.SpanExporter, project string, dur time.Duration, rate, batch, queue int) result {
	t := &timed{SpanExporter: exp}
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithBatcher(t, sdktrace.WithMaxExportBatchSize(batch), sdktrace.WithMaxQueueSize(queue)),
		sdktrace.WithResource(resource.NewWithAttributes(semconv.SchemaURL, semconv.ServiceName("sdkbench"))))
	tr := tp.Tracer("sdkbench")
	name := "sdkbench." + via
	attrs := []attribute.KeyValue{
		attribute.String("gen_ai.operation.name", "chat"), attribute.String("gen_ai.request.model", "gpt-4o-mini"),
		attribute.Int("gen_ai.usage.input_tokens", 120), attribute.Int("gen_ai.usage.output_tokens", 40),
		attribute.String("input.value", pad),
	}
	start := time.Now()
	deadline := start.Add(dur)
	var ended int64
	// Spans come in ticks of 10 ms: rate/100 spans each, a trace of one
	// root and its children, as an application's calls would.
	perTick := max(rate/100, 1)
	next := start
	for time.Now().Before(deadline) {
		if rate > 0 {
			if d := time.Until(next); d > 0 {
				time.Sleep(d)
			}
			next = next.Add(10 * time.Millisecond)
		}
		rctx, root := tr.Start(ctx, name)
		root.SetAttributes(attrs...)
		for i := 1; i < perTick; i++ {
			_, sp := tr.Start(rctx, name)
			sp.SetAttributes(attrs...)
			sp.End()
		}
		root.End()
		ended += int64(perTick)
	}
	sendTime := time.Since(start)
	if err := tp.Shutdown(ctx); err != nil {
		log.Printf("sdk %s: shutdown: %v", via, err)
	}
	want := t.exported.Load() - t.failed.Load()
	var stored uint64
	for waited := time.Now(); time.Since(waited) < 2*time.Minute; time.Sleep(100 * time.Millisecond) {
		if err := ch.QueryRow(ctx, "SELECT count() FROM spans WHERE project_id = ? AND span_name = ?", project, name).Scan(&stored); err != nil {
			log.Fatal(err)
		}
		if int64(stored) >= want {
			break
		}
	}
	total := time.Since(start)
	t.mu.Lock()
	defer t.mu.Unlock()
	return result{via: via, ended: ended, exported: t.exported.Load(), failed: t.failed.Load(), stored: int64(stored),
		sendTime: sendTime, total: total, storedRate: float64(stored) / total.Seconds(),
		p50: pct(t.lat, 50), p99: pct(t.lat, 99), exports: len(t.lat), batch: batch}
}

func pct(d []time.Duration, p int) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[(len(s)-1)*p/100].Round(100 * time.Microsecond)
}

// provisionKey creates the tables tracing's key verifier reads
// (pgtest.KeySchema) in the database at url and stores a new key for a new
// project, created by the owner of its organization.
func provisionKey(ctx context.Context, url string) (string, string) {
	c, err := pgx.Connect(ctx, url)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close(ctx)
	project, org, owner, k := uuid.New(), uuid.New(), uuid.New(), apikey.Generate()
	if _, err := c.Exec(ctx, pgtest.KeySchema); err != nil {
		log.Fatal(err)
	}
	b := &pgx.Batch{}
	b.Queue(`INSERT INTO organizations (id, owner_user_id) VALUES ($1, $2)`, org, owner)
	b.Queue(`INSERT INTO projects (id, organization_id, workspace_id) VALUES ($1, $2, $3)`, project, org, uuid.New())
	b.Queue(`INSERT INTO api_keys (id, project_id, prefix, secret_hash, created_by_id) VALUES ($1, $2, $3, $4, $5)`,
		uuid.New(), project, k.Prefix, k.Hash(), owner)
	if err := c.SendBatch(ctx, b).Close(); err != nil {
		log.Fatal(err)
	}
	return project.String(), k.String()
}
