package httpapi_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
)

// putDeep sets key to a list nested depth deep, a string at the bottom.
func putDeep(m pcommon.Map, key string, depth int) {
	v := m.PutEmptySlice(key)
	for i := 1; i < depth; i++ {
		v = v.AppendEmpty().SetEmptySlice()
	}
	v.AppendEmpty().SetStr("bottom")
}

// deepJSON is a JSON list nested depth deep, a string at the bottom.
func deepJSON(depth int) string {
	return strings.Repeat("[", depth) + `"bottom"` + strings.Repeat("]", depth)
}

// nesting is how many lists or objects enclose v's deepest value.
func nesting(v any) int {
	deepest := 0
	switch t := v.(type) {
	case []any:
		for _, e := range t {
			deepest = max(deepest, nesting(e))
		}
		return deepest + 1
	case map[string]any:
		for _, e := range t {
			deepest = max(deepest, nesting(e))
		}
		return deepest + 1
	}
	return 0
}

func (s *stack) spans(t *testing.T, traceID string) []any {
	t.Helper()
	r := s.do(t, "GET", "/api/spans/?trace_id="+traceID, nil, nil)
	require.Equal(t, http.StatusOK, r.status, string(r.body))
	list, _ := r.json(t)["spans"].([]any)
	return list
}

func spanNamed(t *testing.T, spans []any, name string) map[string]any {
	t.Helper()
	for _, sp := range spans {
		if m := sp.(map[string]any); m["span_name"] == name {
			return m
		}
	}
	t.Fatalf("no span named %q in %d spans", name, len(spans))
	return nil
}

func spanLimitsRecord(t *testing.T, span map[string]any) map[string]any {
	t.Helper()
	ag, _ := span["attributes"].(map[string]any)["ag"].(map[string]any)
	unsupported, _ := ag["unsupported"].(map[string]any)
	rec, ok := unsupported["span_limits"].(map[string]any)
	require.True(t, ok, "the cut is recorded under ag.unsupported.span_limits: %v", ag)
	return rec
}

// TestDeeplyNestedAttributeIsTrimmedStoredAndReadable: a span whose
// attribute nests 12,000 deep was answered 200, then dead-lettered by the
// writer (its canonical form decoded to more than the writer takes) and
// never became readable. It is now trimmed at the depth limit before the
// answer, stored through the real writer and read back with the cut recorded.
func TestDeeplyNestedAttributeIsTrimmedStoredAndReadable(t *testing.T) {
	s := newStack(t)
	t.Run("OTLP protobuf", func(t *testing.T) {
		tid := [16]byte{0xde, 0xe9, 1}
		td := otlpTraces(tid, 2, func(i int, sp ptrace.Span) {
			if i == 1 {
				putDeep(sp.Attributes(), "deep", 12000)
				sp.Attributes().PutStr("plain", "kept")
			}
		})
		r := s.do(t, "POST", "/api/otlp/v1/traces", protoBody(t, td), map[string]string{"Content-Type": "application/x-protobuf"})
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		resp := ptraceotlp.NewExportResponse()
		require.NoError(t, resp.UnmarshalProto(r.body))
		assert.Equal(t, int64(0), resp.PartialSuccess().RejectedSpans(), "trimmed, not rejected")

		var spans []any
		eventually(t, "both spans readable", func() bool {
			spans = s.spans(t, "dee90100000000000000000000000000")
			return len(spans) == 2
		})
		sp := spanNamed(t, spans, "span-1")
		attrs := sp["attributes"].(map[string]any)
		assert.Equal(t, "kept", attrs["plain"])
		assert.LessOrEqual(t, nesting(attrs["deep"]), 32, "nothing deeper than the depth limit is stored")
		assert.Greater(t, spanLimitsRecord(t, sp)["trimmed_nesting"], 0.0)
	})
	t.Run("native", func(t *testing.T) {
		body := fmt.Sprintf(`{"spans":[{"trace_id":"dee90200000000000000000000000000","span_id":"dee9020000000001","span_name":"deep",
			"start_time":%q,"attributes":{"deep":%s,"plain":"kept"}}]}`, time.Now().UTC().Format(time.RFC3339Nano), deepJSON(9000))
		r := s.do(t, "POST", "/api/spans/ingest", []byte(body), nil)
		require.Equal(t, http.StatusAccepted, r.status, string(r.body))
		assert.Equal(t, 1.0, r.json(t)["count"])
		var spans []any
		eventually(t, "the span readable", func() bool {
			spans = s.spans(t, "dee90200000000000000000000000000")
			return len(spans) == 1
		})
		attrs := spans[0].(map[string]any)["attributes"].(map[string]any)
		assert.Equal(t, "kept", attrs["plain"])
		assert.LessOrEqual(t, nesting(attrs["deep"]), 32)
		assert.Greater(t, spanLimitsRecord(t, spans[0].(map[string]any))["trimmed_nesting"], 0.0)
	})
}

// TestOversizedSpanIsRejectedAloneBeforeTheAnswer: a span over the encoded
// size limit (8 MiB by default) is named in the partial success; its
// neighbours are stored.
func TestOversizedSpanIsRejectedAloneBeforeTheAnswer(t *testing.T) {
	s := newStack(t)
	tid := [16]byte{0xb1, 0x9b}
	td := otlpTraces(tid, 3, func(i int, sp ptrace.Span) {
		if i == 1 {
			// 9 × 1 MiB of text, stored once (the leaf values; the JSON
			// points to them), in a body under the stack's 10 MiB.
			for j := 0; j < 9; j++ {
				sp.Attributes().PutStr(fmt.Sprintf("blob%d", j), strings.Repeat(string(rune('a'+j)), 1<<20-1))
			}
		}
	})
	r := s.do(t, "POST", "/api/otlp/v1/traces", protoBody(t, td), map[string]string{"Content-Type": "application/x-protobuf"})
	require.Equal(t, http.StatusOK, r.status, string(r.body))
	resp := ptraceotlp.NewExportResponse()
	require.NoError(t, resp.UnmarshalProto(r.body))
	assert.Equal(t, int64(1), resp.PartialSuccess().RejectedSpans())
	assert.Contains(t, resp.PartialSuccess().ErrorMessage(), "span 1:")
	assert.Contains(t, resp.PartialSuccess().ErrorMessage(), "TRACING_SPAN_MAX_BYTES")
	eventually(t, "the two others stored", func() bool {
		return len(s.spans(t, "b19b0000000000000000000000000000")) == 2
	})
}

// TestOneEntityRoutesAnswer413OverALimit: an annotation or simple trace is
// one span; over a limit it is refused whole, naming the limit, rather than
// stored differently from what the answer echoes.
func TestOneEntityRoutesAnswer413OverALimit(t *testing.T) {
	s := newStack(t)
	long := strings.Repeat("x", 1<<20+1)
	link := map[string]any{"trace_id": tidA, "span_id": "a000000000000001"}
	for _, tt := range []struct{ path, item string }{{"/api/simple/traces/", "trace"}, {"/api/annotations/", "annotation"}} {
		t.Run(tt.item, func(t *testing.T) {
			r := s.doJSON(t, "POST", tt.path, map[string]any{tt.item: map[string]any{
				"data": map[string]any{"outputs": long}, "links": map[string]any{"invocation": link},
				"references": map[string]any{"evaluator": map[string]any{"slug": "judge"}}}})
			require.Equal(t, http.StatusRequestEntityTooLarge, r.status, "%.300s", r.body)
			assert.Contains(t, string(r.body), "TRACING_SPAN_MAX_VALUE_LENGTH")
			assert.Contains(t, string(r.body), "ag.data.outputs")
		})
	}
}

// TestInvalidUTF8IsRepairedNotA500: protobuf strings must be UTF-8, so a
// span name or attribute with invalid bytes failed the whole OTLP request
// with 500. The bytes are replaced with U+FFFD (as protobuf-JSON and the
// collector's own conversions do) and every span is stored.
func TestInvalidUTF8IsRepairedNotA500(t *testing.T) {
	s := newStack(t)
	tid := [16]byte{0x07, 0xf8}
	td := otlpTraces(tid, 2, func(i int, sp ptrace.Span) {
		if i == 1 {
			sp.SetName("caf\xe9")
			sp.Attributes().PutStr("note", "x\xffy")
			sp.Attributes().PutStr("k\xfe", "v")
			sp.Status().SetMessage("bad\xc3")
			ev := sp.Events().AppendEmpty()
			ev.SetName("ev\xff")
		}
	})
	r := s.do(t, "POST", "/api/otlp/v1/traces", protoBody(t, td), map[string]string{"Content-Type": "application/x-protobuf"})
	require.Equal(t, http.StatusOK, r.status, string(r.body))
	resp := ptraceotlp.NewExportResponse()
	require.NoError(t, resp.UnmarshalProto(r.body))
	assert.Equal(t, int64(0), resp.PartialSuccess().RejectedSpans())
	var spans []any
	eventually(t, "both spans stored", func() bool {
		spans = s.spans(t, "07f80000000000000000000000000000")
		return len(spans) == 2
	})
	sp := spanNamed(t, spans, "caf\ufffd")
	attrs := sp["attributes"].(map[string]any)
	assert.Equal(t, "x\ufffdy", attrs["note"])
	assert.Equal(t, "v", attrs["k\ufffd"])
	assert.Equal(t, "bad\ufffd", sp["status_message"])
}
