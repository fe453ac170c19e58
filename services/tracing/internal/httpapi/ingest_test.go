package httpapi_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
)

func otlpTraces(traceID [16]byte, n int, mutate func(i int, sp ptrace.Span)) ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "checkout")
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName("test-scope")
	start := time.Now().Add(-time.Minute)
	for i := 0; i < n; i++ {
		sp := ss.Spans().AppendEmpty()
		sp.SetTraceID(traceID)
		sp.SetSpanID(pcommon.SpanID{0, 0, 0, 0, 0, 0, byte((i + 1) >> 8), byte(i + 1)})
		if i > 0 {
			sp.SetParentSpanID(pcommon.SpanID{0, 0, 0, 0, 0, 0, 0, 1})
		}
		sp.SetName(fmt.Sprintf("span-%d", i))
		sp.SetKind(ptrace.SpanKindClient)
		sp.SetStartTimestamp(pcommon.NewTimestampFromTime(start.Add(time.Duration(i) * time.Millisecond)))
		sp.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(time.Duration(i)*time.Millisecond + 250*time.Millisecond)))
		if mutate != nil {
			mutate(i, sp)
		}
	}
	return td
}

func protoBody(t *testing.T, td ptrace.Traces) []byte {
	b, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
	require.NoError(t, err)
	return b
}

func gzipped(t *testing.T, b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, err := zw.Write(b)
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	return buf.Bytes()
}

func (s *stack) trace(t *testing.T, id string) map[string]any {
	r := s.do(t, "GET", "/api/traces/"+id, nil, nil)
	require.Equal(t, http.StatusOK, r.status, string(r.body))
	return r.json(t)
}

func TestOTLPProtobufGzipToQuery(t *testing.T) {
	s := newStack(t)
	tid := [16]byte{0xab, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}
	td := otlpTraces(tid, 2, func(i int, sp ptrace.Span) {
		if i == 1 {
			a := sp.Attributes()
			a.PutStr("gen_ai.operation.name", "chat")
			a.PutStr("gen_ai.request.model", "gpt-4o-mini")
			a.PutInt("gen_ai.usage.input_tokens", 1000)
			a.PutInt("gen_ai.usage.output_tokens", 500)
			ev := sp.Events().AppendEmpty()
			ev.SetName("exception")
			ev.Attributes().PutStr("exception.type", "ValueError")
			ev.Attributes().PutStr("exception.message", "boom")
		}
	})
	r := s.do(t, "POST", "/api/otlp/v1/traces", gzipped(t, protoBody(t, td)),
		map[string]string{"Content-Type": "application/x-protobuf", "Content-Encoding": "gzip"})
	require.Equal(t, http.StatusOK, r.status, string(r.body))
	resp := ptraceotlp.NewExportResponse()
	require.NoError(t, resp.UnmarshalProto(r.body))
	assert.Equal(t, int64(0), resp.PartialSuccess().RejectedSpans())

	id := "ab0102030405060708090a0b0c0d0e0f"
	var got map[string]any
	eventually(t, "the trace to be queryable", func() bool {
		got = s.trace(t, id)
		return got["count"] == float64(1)
	})
	trace := got["trace"].(map[string]any)
	root := trace["spans"].(map[string]any)["span-0"].(map[string]any)
	assert.Equal(t, "invocation", root["trace_type"])
	assert.Equal(t, "SPAN_KIND_CLIENT", root["span_kind"])
	attrs := root["attributes"].(map[string]any)
	assert.Equal(t, "checkout", attrs["otel"].(map[string]any)["resource"].(map[string]any)["service"].(map[string]any)["name"])
	// The child's tokens and costs roll up into the root.
	metrics := attrs["ag"].(map[string]any)["metrics"].(map[string]any)
	assert.Equal(t, map[string]any{"prompt": 1000.0, "completion": 500.0, "total": 1500.0}, metrics["tokens"].(map[string]any)["cumulative"])
	assert.InDelta(t, 0.00045, metrics["costs"].(map[string]any)["cumulative"].(map[string]any)["total"], 1e-9)
	assert.Equal(t, 1.0, metrics["errors"].(map[string]any)["cumulative"])

	child := root["spans"].(map[string]any)["span-1"].(map[string]any)
	assert.Equal(t, "chat", child["span_type"])
	cag := child["attributes"].(map[string]any)["ag"].(map[string]any)
	assert.Equal(t, map[string]any{"type": "ValueError", "message": "boom"}, cag["exception"])
	assert.Equal(t, "gpt-4o-mini", cag["meta"].(map[string]any)["request"].(map[string]any)["model"])
}

func TestOTLPJSONZstdPartialSuccess(t *testing.T) {
	s := newStack(t)
	tid := [16]byte{0xcd, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}
	td := otlpTraces(tid, 3, func(i int, sp ptrace.Span) {
		if i == 2 {
			sp.SetKind(ptrace.SpanKind(42)) // out of range: this span alone is rejected
		}
	})
	b, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalJSON()
	require.NoError(t, err)
	enc, err := zstd.NewWriter(nil)
	require.NoError(t, err)
	body := enc.EncodeAll(b, nil)
	r := s.do(t, "POST", "/api/otlp/v1/traces", body, map[string]string{"Content-Type": "application/json", "Content-Encoding": "zstd"})
	require.Equal(t, http.StatusOK, r.status, string(r.body))
	var resp struct {
		PartialSuccess struct {
			RejectedSpans string `json:"rejectedSpans"`
			ErrorMessage  string `json:"errorMessage"`
		} `json:"partialSuccess"`
	}
	require.NoError(t, json.Unmarshal(r.body, &resp), string(r.body))
	assert.Equal(t, "1", resp.PartialSuccess.RejectedSpans)
	assert.Contains(t, resp.PartialSuccess.ErrorMessage, "span_kind")

	id := "cd0102030405060708090a0b0c0d0e0f"
	eventually(t, "two spans stored", func() bool {
		r := s.do(t, "GET", "/api/spans/?trace_id="+id, nil, nil)
		return r.status == 200 && r.json(t)["count"] == float64(2)
	})
}

func TestOTLPLimitsAndBadBodies(t *testing.T) {
	s := newStack(t, func(o *options) {
		o.noWriter = true
		o.limits.MaxBody = 4096
		o.limits.MaxDecompressed = 8192
	})
	big := protoBody(t, otlpTraces([16]byte{1}, 200, nil))
	require.Greater(t, len(big), 8192)
	tests := []struct {
		name   string
		body   []byte
		header map[string]string
		status int
		detail string
	}{
		{"compressed body over the limit", bytes.Repeat([]byte{1}, 5000), nil, 413, "exceeds 4096"},
		{"decompressed body over the limit", gzipped(t, big), map[string]string{"Content-Encoding": "gzip"}, 413, "decompressed"},
		{"not protobuf", []byte("hello, world"), map[string]string{"Content-Type": "application/x-protobuf"}, 400, "protobuf"},
		{"not OTLP JSON", []byte(`{"resourceSpans": 3}`), map[string]string{"Content-Type": "application/json"}, 400, "JSON"},
		{"broken gzip", []byte("\x1f\x8bnope"), nil, 400, "gzip"},
		{"unknown encoding", []byte("x"), map[string]string{"Content-Encoding": "br"}, 400, "Content-Encoding"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := s.do(t, "POST", "/api/otlp/v1/traces", tt.body, tt.header)
			require.Equal(t, tt.status, r.status, string(r.body))
			assert.Contains(t, fmt.Sprint(r.json(t)["detail"]), tt.detail)
		})
	}
}

func TestIngestAnswers429WhenBacklogIsFull(t *testing.T) {
	s := newStack(t, func(o *options) { o.noWriter = true; o.streamBytes = 64 << 10 })
	for i := 0; i < 100; i++ {
		body := protoBody(t, otlpTraces([16]byte{byte(i + 1)}, 20, nil))
		r := s.do(t, "POST", "/api/otlp/v1/traces", body, map[string]string{"Content-Type": "application/x-protobuf"})
		if r.status == http.StatusTooManyRequests {
			assert.Equal(t, "1", r.header.Get("Retry-After"))
			assert.Contains(t, fmt.Sprint(r.json(t)["detail"]), "backlog is full")
			return
		}
		require.Equal(t, http.StatusOK, r.status, string(r.body))
	}
	t.Fatal("the stream never filled up")
}

func TestRetriedRequestIsStoredOnce(t *testing.T) {
	s := newStack(t, func(o *options) { o.noWriter = true })
	body := protoBody(t, otlpTraces([16]byte{7}, 3, nil))
	for i := 0; i < 3; i++ {
		r := s.do(t, "POST", "/api/otlp/v1/traces", body, map[string]string{"Content-Type": "application/x-protobuf"})
		require.Equal(t, http.StatusOK, r.status)
	}
	st, err := s.conn.JS.Stream(t.Context(), "SPANS")
	require.NoError(t, err)
	info, err := st.Info(t.Context())
	require.NoError(t, err)
	assert.Equal(t, uint64(1), info.State.Msgs, "Nats-Msg-Id dedups the retries")
}

func TestOneMalformedSpanAmongThousandCostsOnlyItself(t *testing.T) {
	s := newStack(t)
	tid := [16]byte{0xee, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}
	td := otlpTraces(tid, 1000, func(i int, sp ptrace.Span) {
		if i == 500 {
			sp.SetTraceID(pcommon.TraceID{}) // an empty trace id: this span alone is rejected
		}
	})
	r := s.do(t, "POST", "/api/otlp/v1/traces", protoBody(t, td), map[string]string{"Content-Type": "application/x-protobuf"})
	require.Equal(t, http.StatusOK, r.status, string(r.body))
	resp := ptraceotlp.NewExportResponse()
	require.NoError(t, resp.UnmarshalProto(r.body))
	assert.Equal(t, int64(1), resp.PartialSuccess().RejectedSpans())
	eventually(t, "999 spans stored", func() bool {
		r := s.do(t, "GET", "/api/spans/?trace_id=ee0102030405060708090a0b0c0d0e0f", nil, nil)
		return r.json(t)["count"] == 999.0
	})
}

// TestTracesIngestReportsRejectedSpans: the list-shaped /traces/ingest
// stores the good spans and names the bad one, with its trace.
func TestTracesIngestReportsRejectedSpans(t *testing.T) {
	s := newStack(t)
	good := "cccccccccccccccccccccccccccccc01"
	body := map[string]any{"traces": []any{
		map[string]any{"trace_id": good, "spans": map[string]any{
			"root": map[string]any{"span_id": "cccccccccccccc01", "start_time": "2026-11-21T10:00:00Z", "end_time": "2026-11-21T10:00:01Z"}}},
		map[string]any{"trace_id": "cccccccccccccccccccccccccccccc02", "spans": map[string]any{
			"broken": map[string]any{"span_id": "not-a-span-id", "start_time": "2026-11-21T10:00:00Z", "end_time": "2026-11-21T10:00:01Z"}}},
	}}
	r := s.doJSON(t, "POST", "/api/traces/ingest", body)
	require.Equal(t, http.StatusAccepted, r.status, string(r.body))
	out := r.json(t)
	assert.Equal(t, []any{good}, out["trace_ids"])
	rejected, ok := out["rejected"].([]any)
	require.True(t, ok, string(r.body))
	require.Len(t, rejected, 1)
	assert.Contains(t, rejected[0].(map[string]any)["detail"], "traces[1]")
	eventually(t, "the good trace stored", func() bool {
		return s.do(t, "GET", "/api/traces/"+good, nil, nil).json(t)["count"] == 1.0
	})
}
