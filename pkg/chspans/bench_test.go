package chspans_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/google/uuid"

	"github.com/assayhq/assay/pkg/chspans"
	"github.com/assayhq/assay/pkg/chx"
	"github.com/assayhq/assay/pkg/genproto/spanspb"
	"github.com/assayhq/assay/pkg/spanmodel"
	"github.com/assayhq/assay/pkg/testutil/chtest"
)

// BenchSpan is shaped like a normalised span of the load script: a GenAI
// chat span of ~1 KB as sent, its attribute columns as this encoder
// writes them (benchRow).
func benchSpan(trace, span int, start time.Time) *spanspb.Span {
	row := benchRow()
	return &spanspb.Span{
		TraceId: fmt.Sprintf("%032x", trace), SpanId: fmt.Sprintf("%016x", span+1), ParentId: "0000000000000001",
		TraceType: "invocation", SpanType: "chat", SpanKind: "SPAN_KIND_INTERNAL", SpanName: "llm.call",
		StartUnixMicro: start.UnixMicro(), EndUnixMicro: start.Add(time.Millisecond).UnixMicro(), StatusCode: "STATUS_CODE_UNSET",
		AttributesJson: row.AttributesJson, AttrKeys: row.AttrKeys, AttrValues: row.AttrValues,
		CreatedUnixMicro: start.UnixMicro(),
	}
}

// benchRow is the load script's span encoded: its attributes JSON, keys
// and values.
var benchRow = sync.OnceValue(func() *spanspb.Span {
	pad := strings.Repeat("lorem ipsum ", 60)
	attrs := `{"ag":{"meta":{"request":{"model":"gpt-4o-mini"}},"metrics":{"duration":{"cumulative":1,"incremental":1},` +
		`"tokens":{"cumulative":{"completion":40,"prompt":120,"total":160},"incremental":{"completion":40,"prompt":120,"total":160}}},` +
		`"type":{"span":"chat","trace":"invocation"},"unsupported":{"data":{"inputs":"` + pad + `"}}},"gen_ai":{"operation":{"name":"chat"},` +
		`"request":{"model":"gpt-4o-mini"},"usage":{"input_tokens":120,"output_tokens":40}},"input":{"value":"` + pad + `"},"otel":{"resource":{"service":{"name":"loadgen"}}}}`
	var m map[string]any
	if err := json.Unmarshal([]byte(attrs), &m); err != nil {
		panic(err)
	}
	return chspans.Proto(&spanmodel.Span{Attributes: m}, time.Now(), "")
})

// llmAttributes is a model call's canonical attributes shaped like those of
// loadgen's realistic corpus (services/tracing/cmd/loadgen/traces.go, as
// normalised): the prompt's messages (a system prompt with retrieved
// documents, a question) under ag.data.inputs.prompt and the raw
// llm.input_messages, the answer under ag.data.outputs.completion and
// llm.output_messages, input.value and output.value, and the metrics.
// seed varies the texts.
func llmAttributes(seed int) map[string]any {
	words := strings.Fields("the a model answer document retrieval context question user system assistant " +
		"token price latency policy refund order shipment account invoice customer support agent tool search result")
	next := uint32(seed*2654435761 + 1)
	text := func(n int) string {
		var b strings.Builder
		for b.Len() < n {
			next = next*1664525 + 1013904223
			b.WriteString(words[next>>16%uint32(len(words))])
			b.WriteByte(' ')
		}
		return b.String()
	}
	system, question, answer := text(1400), text(140), text(350)
	msg := func(role, content string) map[string]any { return map[string]any{"role": role, "content": content} }
	raw := func(role, content string) map[string]any {
		return map[string]any{"message": map[string]any{"role": role, "content": content}}
	}
	return map[string]any{
		"ag": map[string]any{
			"data": map[string]any{
				"inputs":  map[string]any{"prompt": []any{msg("system", system), msg("user", question)}},
				"outputs": map[string]any{"completion": []any{msg("assistant", answer)}},
			},
			"meta":    map[string]any{"request": map[string]any{"model": "gpt-4o-mini", "temperature": 0.2}},
			"metrics": map[string]any{"tokens": map[string]any{"incremental": map[string]any{"prompt": 412.0, "completion": 88.0, "total": 500.0}}},
			"type":    map[string]any{"span": "chat", "trace": "invocation"},
		},
		"llm": map[string]any{
			"input_messages":  []any{raw("system", system), raw("user", question)},
			"output_messages": []any{raw("assistant", answer)},
			"model_name":      "gpt-4o-mini",
		},
		"input":         map[string]any{"value": question, "mime_type": "text/plain"},
		"output":        map[string]any{"value": answer, "mime_type": "text/plain"},
		"openinference": map[string]any{"span": map[string]any{"kind": "LLM"}},
		"otel":          map[string]any{"resource": map[string]any{"service": map[string]any{"name": "support-bot"}}},
		"session":       map[string]any{"id": "s-" + text(8)},
	}
}

// BenchmarkEncode is the stored row's encoding of a model call's span
// (chspans.Encode, as tracing ingest and the runtime do it), 64 distinct
// spans in turn.
func BenchmarkEncode(b *testing.B) {
	now := time.Now()
	spans := make([]*spanmodel.Span, 64)
	for i := range spans {
		spans[i] = &spanmodel.Span{TraceID: fmt.Sprintf("%032x", i+1), SpanID: fmt.Sprintf("%016x", i+1), SpanName: "chat gpt-4o-mini",
			Start: now, End: now.Add(time.Second), Attributes: llmAttributes(i)}
	}
	lim := spanmodel.DefaultLimits
	b.ReportAllocs()
	bytes, i := 0, 0
	for b.Loop() {
		p, _, err := chspans.Encode(spans[i%len(spans)], &lim, now, "")
		if err != nil {
			b.Fatal(err)
		}
		bytes += len(p.AttributesJson) + textBytes(p.AttrValues)
		i++
	}
	b.ReportMetric(float64(bytes)/float64(i), "attr-bytes/span")
}

func textBytes(vals []string) int {
	n := 0
	for _, v := range vals {
		n += len(v)
	}
	return n
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
