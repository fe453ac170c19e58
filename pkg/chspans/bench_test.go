package chspans_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/google/uuid"

	"github.com/assayhq/assay/pkg/chspans"
	"github.com/assayhq/assay/pkg/chx"
	"github.com/assayhq/assay/pkg/genproto/spanspb"
	"github.com/assayhq/assay/pkg/testutil/chtest"
)

// BenchSpan is shaped like a normalised span of the load script: a GenAI
// chat span of ~1 KB as sent.
func benchSpan(trace, span int, start time.Time) *spanspb.Span {
	pad := strings.Repeat("lorem ipsum ", 60)
	attrs := `{"ag":{"meta":{"request":{"model":"gpt-4o-mini"}},"metrics":{"duration":{"cumulative":1,"incremental":1},` +
		`"tokens":{"cumulative":{"completion":40,"prompt":120,"total":160},"incremental":{"completion":40,"prompt":120,"total":160}}},` +
		`"type":{"span":"chat","trace":"invocation"},"unsupported":{"data":{"inputs":"` + pad + `"}}},"gen_ai":{"operation":{"name":"chat"},` +
		`"request":{"model":"gpt-4o-mini"},"usage":{"input_tokens":120,"output_tokens":40}},"input":{"value":"` + pad + `"},"otel":{"resource":{"service":{"name":"loadgen"}}}}`
	return &spanspb.Span{
		TraceId: fmt.Sprintf("%032x", trace), SpanId: fmt.Sprintf("%016x", span+1), ParentId: "0000000000000001",
		TraceType: "invocation", SpanType: "chat", SpanKind: "SPAN_KIND_INTERNAL", SpanName: "llm.call",
		StartUnixMicro: start.UnixMicro(), EndUnixMicro: start.Add(time.Millisecond).UnixMicro(), StatusCode: "STATUS_CODE_UNSET",
		AttributesJson: []byte(attrs),
		AttrKeys: []string{"ag.meta.request.model", "ag.metrics.duration.cumulative", "ag.metrics.duration.incremental",
			"ag.metrics.tokens.cumulative.completion", "ag.metrics.tokens.cumulative.prompt", "ag.metrics.tokens.cumulative.total",
			"ag.metrics.tokens.incremental.completion", "ag.metrics.tokens.incremental.prompt", "ag.metrics.tokens.incremental.total",
			"ag.type.span", "ag.type.trace", "ag.unsupported.data.inputs", "gen_ai.operation.name", "gen_ai.request.model",
			"gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens", "input.value", "otel.resource.service.name"},
		AttrValues: []string{"gpt-4o-mini", "1", "1", "40", "120", "160", "40", "120", "160", "chat", "invocation", pad,
			"chat", "gpt-4o-mini", "120", "40", pad, "loadgen"},
		CreatedUnixMicro: start.UnixMicro(),
	}
}

// benchBatches is 20k load-script rows in batches of 500, and their expiry.
func benchBatches() (int, []*spanspb.SpanBatch, chspans.Expiry) {
	const rows, perBatch = 20000, 500
	now := time.Now()
	var batches []*spanspb.SpanBatch
	for i := 0; i < rows/perBatch; i++ {
		sb := &spanspb.SpanBatch{ProjectId: uuid.NewString(), ReceivedUnixNano: now.UnixNano()}
		for j := 0; j < perBatch; j++ {
			sb.Spans = append(sb.Spans, benchSpan(i, j, now))
		}
		batches = append(batches, sb)
	}
	return rows, batches, func(string, time.Time) time.Time { return now.Add(48 * time.Hour) }
}

func benchConn(b *testing.B) driver.Conn {
	ctx := context.Background()
	cfg := chx.Config{URL: chtest.NewURL(b), DialTimeout: 5 * time.Second}
	if err := chspans.Migrate(ctx, cfg, slog.New(slog.NewTextHandler(io.Discard, nil))); err != nil {
		b.Fatal(err)
	}
	conn, err := chx.Open(ctx, cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { conn.Close() })
	return conn
}

// BenchmarkInsert is the writer's insert of load-script rows, 20k per
// insert, into the ClickHouse of TEST_CLICKHOUSE_URL.
func BenchmarkInsert(b *testing.B) {
	conn := benchConn(b)
	rows, batches, exp := benchBatches()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := chspans.Insert(context.Background(), conn, batches, exp); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*rows)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkPrepare is the writer's own CPU of an insert: the driver's
// columns built from 20k rows, nothing sent.
func BenchmarkPrepare(b *testing.B) {
	conn := benchConn(b)
	rows, batches, exp := benchBatches()
	b.ReportAllocs()
	for b.Loop() {
		batch, _, err := chspans.Prepare(context.Background(), conn, batches, exp)
		if err != nil {
			b.Fatal(err)
		}
		_ = batch.Abort()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*rows), "ns/row")
}
