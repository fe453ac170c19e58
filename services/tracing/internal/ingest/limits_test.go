package ingest

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/assayhq/assay/pkg/chspans"
	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/genproto/spanspb"
	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/pkg/spanmodel"
	"github.com/assayhq/assay/pkg/spanstream"
)

// capturePublisher keeps what would be published, decoded as the writer
// decodes it.
type capturePublisher struct{ batches []*spanspb.SpanBatch }

func (c *capturePublisher) Publish(_ context.Context, _ string, data []byte, _ string) error {
	b, err := spanstream.DecodeBatch(data)
	if err != nil {
		return err
	}
	c.batches = append(c.batches, b)
	return nil
}

var small = spanmodel.Limits{MaxAttributes: 64, MaxValueLength: 256, MaxKeyLength: 128, MaxDepth: 8, MaxEvents: 2, MaxLinks: 2, MaxBytes: 16 << 10}

func otlpRaws(t *testing.T, mutate func(sp ptrace.Span)) []spanmodel.Raw {
	td := ptrace.NewTraces()
	sp := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	sp.SetTraceID(pcommon.TraceID{1, 2, 3})
	sp.SetSpanID(pcommon.SpanID{4, 5, 6})
	sp.SetName("span")
	now := time.Now()
	sp.SetStartTimestamp(pcommon.NewTimestampFromTime(now))
	sp.SetEndTimestamp(pcommon.NewTimestampFromTime(now.Add(time.Millisecond)))
	mutate(sp)
	b, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
	require.NoError(t, err)
	got, err := DecodeOTLP(b, false)
	require.NoError(t, err)
	return RawSpans(got)
}

// stored is the attributes of the one span published.
func stored(t *testing.T, pub *capturePublisher) (*spanspb.Span, map[string]any) {
	t.Helper()
	require.Len(t, pub.batches, 1)
	require.Len(t, pub.batches[0].Spans, 1)
	sp := pub.batches[0].Spans[0]
	var attrs map[string]any
	require.NoError(t, json.Unmarshal([]byte(chspans.ExpandAttributes(string(sp.AttributesJson), sp.AttrValues)), &attrs))
	return sp, attrs
}

func record(attrs map[string]any) map[string]any {
	ag, _ := attrs["ag"].(map[string]any)
	u, _ := ag["unsupported"].(map[string]any)
	r, _ := u["span_limits"].(map[string]any)
	return r
}

// TestSpanLimitsTrimAndRecord: over each limit a span is trimmed before it
// is published, and the cut is counted where a reader sees it; the trimmed
// span stays within the limits the encoder checks.
func TestSpanLimitsTrimAndRecord(t *testing.T) {
	deep := func(depth int) any {
		var v any = "bottom"
		for range depth {
			v = []any{v}
		}
		return v
	}
	for _, tt := range []struct {
		name   string
		mutate func(sp ptrace.Span)
		want   map[string]any // the record
		check  func(t *testing.T, sp *spanspb.Span, attrs map[string]any)
	}{
		{"a long string is cut at a character boundary", func(sp ptrace.Span) {
			sp.Attributes().PutStr("text", strings.Repeat("é", 200)) // 400 bytes
		}, map[string]any{"truncated_values": 1.0}, func(t *testing.T, _ *spanspb.Span, attrs map[string]any) {
			assert.Equal(t, strings.Repeat("é", 128), attrs["text"])
		}},
		{"too many attributes: the last in key order go", func(sp ptrace.Span) {
			for i := range 100 {
				sp.Attributes().PutStr(fmt.Sprintf("k%03d", i), "v")
			}
		}, nil, func(t *testing.T, sp *spanspb.Span, attrs map[string]any) {
			assert.LessOrEqual(t, len(sp.AttrKeys), small.MaxAttributes)
			assert.Equal(t, "v", attrs["k000"])
			assert.NotContains(t, attrs, "k099")
			assert.Greater(t, record(attrs)["dropped_attributes"], 30.0)
			assert.Equal(t, "invocation", attrs["ag"].(map[string]any)["type"].(map[string]any)["trace"], "ag is kept first")
		}},
		{"events beyond the limit: the latest are kept", func(sp ptrace.Span) {
			for i := range 5 {
				sp.Events().AppendEmpty().SetName(fmt.Sprintf("e%d", i))
			}
		}, map[string]any{"dropped_events": 3.0}, func(t *testing.T, sp *spanspb.Span, _ map[string]any) {
			require.Len(t, sp.Events, 2)
			assert.Equal(t, "e3", sp.Events[0].Name)
			assert.Equal(t, "e4", sp.Events[1].Name)
		}},
		{"links beyond the limit", func(sp ptrace.Span) {
			for i := range 5 {
				l := sp.Links().AppendEmpty()
				l.SetTraceID(pcommon.TraceID{9, byte(i)})
				l.SetSpanID(pcommon.SpanID{9, byte(i)})
			}
		}, map[string]any{"dropped_links": 3.0}, func(t *testing.T, sp *spanspb.Span, _ map[string]any) {
			assert.Len(t, sp.Links, 2)
		}},
		{"a value nested too deep becomes its JSON text", func(sp ptrace.Span) {
			require.NoError(t, sp.Attributes().PutEmptySlice("deep").FromRaw([]any{deep(20)}))
		}, map[string]any{"trimmed_nesting": 1.0}, func(t *testing.T, _ *spanspb.Span, attrs map[string]any) {
			v := attrs["deep"]
			for range 7 {
				v = v.([]any)[0]
			}
			// 21 lists: 7 kept (depths 1 to 7), the 14 below as text.
			assert.Equal(t, strings.Repeat("[", 14)+`"bottom"`+strings.Repeat("]", 14), v)
		}},
		{"a dotted key deeper than the limit is dropped", func(sp ptrace.Span) {
			sp.Attributes().PutStr("a.b.c.d.e.f.g.h.i.j", "x")
			sp.Attributes().PutStr("kept", "y")
		}, map[string]any{"dropped_attributes": 1.0}, func(t *testing.T, _ *spanspb.Span, attrs map[string]any) {
			assert.NotContains(t, attrs, "a")
			assert.Equal(t, "y", attrs["kept"])
		}},
		{"a long key is dropped", func(sp ptrace.Span) {
			sp.Attributes().PutStr(strings.Repeat("k", 200), "x")
		}, map[string]any{"dropped_attributes": 1.0}, nil},
		{"list indexes in keys cannot pad without bound", func(sp ptrace.Span) {
			sp.Attributes().PutStr("a.1000.b", "x")
			sp.Attributes().PutStr("c.1", "y")
		}, map[string]any{"dropped_attributes": 1.0}, func(t *testing.T, _ *spanspb.Span, attrs map[string]any) {
			assert.NotContains(t, attrs, "a")
			assert.Equal(t, []any{nil, "y"}, attrs["c"])
		}},
		{"JSON text the adapters parse is bounded too", func(sp ptrace.Span) {
			b, _ := json.Marshal(map[string]any{"q": deep(12)})
			sp.Attributes().PutStr("ag.data.inputs", "@ag.type=json:"+string(b))
		}, map[string]any{"trimmed_nesting": 1.0}, nil},
		{"invalid UTF-8 everywhere is repaired", func(sp ptrace.Span) {
			sp.SetName("n\xff")
			sp.Status().SetMessage("m\xfe")
			sp.Attributes().PutStr("k\xff", "v\xfe")
			sp.Attributes().PutEmptySlice("list").AppendEmpty().SetStr("\xc3")
			sp.Attributes().PutStr("ag.session.id", "s\xff")
			ev := sp.Events().AppendEmpty()
			ev.SetName("e\xff")
			ev.Attributes().PutStr("a", "\xff")
		}, nil, func(t *testing.T, sp *spanspb.Span, attrs map[string]any) {
			assert.Equal(t, "s\ufffd", sp.SessionId)
			assert.Equal(t, "n\ufffd", sp.SpanName)
			assert.Equal(t, "m\ufffd", sp.StatusMessage)
			assert.Equal(t, "v\ufffd", attrs["k\ufffd"])
			assert.Equal(t, []any{"\ufffd"}, attrs["list"])
			assert.Equal(t, "e\ufffd", sp.Events[0].Name)
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			pub := &capturePublisher{}
			svc := NewService(pub, &spanmodel.Normalizer{Limits: small})
			res, err := svc.Ingest(context.Background(), scope.Scope{ProjectID: uuid.New()}, otlpRaws(t, tt.mutate), nil)
			require.NoError(t, err)
			require.Empty(t, res.Rejected)
			sp, attrs := stored(t, pub)
			if tt.want != nil {
				assert.Equal(t, tt.want, record(attrs))
			}
			if tt.check != nil {
				tt.check(t, sp, attrs)
			}
			assert.LessOrEqual(t, len(sp.AttrKeys), small.MaxAttributes)
			for _, k := range sp.AttrKeys {
				assert.LessOrEqual(t, len(k), small.MaxKeyLength+len("ag.unsupported.span_limits"))
			}
		})
	}
}

// TestSpanOverItsSizeIsRejectedAlone: the size limit rejects, it does not
// trim; the neighbours are published.
func TestSpanOverItsSizeIsRejectedAlone(t *testing.T) {
	pub := &capturePublisher{}
	svc := NewService(pub, &spanmodel.Normalizer{Limits: small})
	raws := otlpRaws(t, func(sp ptrace.Span) {
		for i := range 60 { // 60 × 250 bytes, stored twice: over 16 KiB
			sp.Attributes().PutStr(fmt.Sprintf("k%02d", i), strings.Repeat(string(rune('a'+i%26)), 250-i))
		}
	})
	raws = append(raws, otlpRaws(t, func(sp ptrace.Span) { sp.SetSpanID(pcommon.SpanID{7}) })...)
	res, err := svc.Ingest(context.Background(), scope.Scope{ProjectID: uuid.New()}, raws, nil)
	require.NoError(t, err)
	require.Len(t, res.Rejected, 1)
	assert.Equal(t, 0, res.Rejected[0].Index)
	assert.True(t, res.Rejected[0].Limit)
	assert.Contains(t, res.Rejected[0].Msg, "TRACING_SPAN_MAX_BYTES")
	require.Len(t, pub.batches, 1)
	assert.Len(t, pub.batches[0].Spans, 1)
}

// TestStrictSpanIsRejectedOverAnyLimit: a strict span (one-span routes) is
// refused, naming the limit and where, instead of stored trimmed.
func TestStrictSpanIsRejectedOverAnyLimit(t *testing.T) {
	pub := &capturePublisher{}
	svc := NewService(pub, &spanmodel.Normalizer{Limits: small})
	raw := spanmodel.Raw{TraceID: "0102030000000000000000000000000f", SpanID: "0405060000000001", Strict: true,
		Attributes: map[string]any{"ag": map[string]any{"data": map[string]any{"outputs": strings.Repeat("x", 300)}}}}
	res, err := svc.Ingest(context.Background(), scope.Scope{ProjectID: uuid.New()}, []spanmodel.Raw{raw}, nil)
	require.NoError(t, err)
	require.Len(t, res.Rejected, 1)
	assert.True(t, res.Rejected[0].Limit)
	assert.Equal(t, "attributes.ag.data.outputs: a string of 300 bytes is over TRACING_SPAN_MAX_VALUE_LENGTH (256)", res.Rejected[0].Msg)
	assert.Empty(t, pub.batches)
}

// TestRequestOverOneMessageIsRefusedWhole: a request whose spans together
// encode to more than one message carries is a 413 and publishes nothing
// (one message per request; the writer could not decode a larger one).
func TestRequestOverOneMessageIsRefusedWhole(t *testing.T) {
	pub := &capturePublisher{}
	svc := NewService(pub, &spanmodel.Normalizer{})
	svc.maxBatch = 64 << 10
	td, err := DecodeOTLP(benchRequest(200), false)
	require.NoError(t, err)
	_, err = svc.Ingest(context.Background(), scope.Scope{ProjectID: uuid.New()}, RawSpans(td), nil)
	require.Error(t, err)
	assert.Equal(t, errs.TooLarge, errs.KindOf(err))
	assert.Contains(t, err.Error(), "65536 bytes")
	assert.Empty(t, pub.batches)
}

// TestSharedResourceCutIsRecordedOnEverySpan: the spans of one OTLP
// resource share its attributes, trimmed once; each span says so.
func TestSharedResourceCutIsRecordedOnEverySpan(t *testing.T) {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	for i := range 100 {
		rs.Resource().Attributes().PutStr(fmt.Sprintf("r%03d", i), "v")
	}
	for i := range 2 {
		sp := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
		sp.SetTraceID(pcommon.TraceID{1})
		sp.SetSpanID(pcommon.SpanID{byte(i + 1)})
	}
	pub := &capturePublisher{}
	svc := NewService(pub, &spanmodel.Normalizer{Limits: small})
	_, err := svc.Ingest(context.Background(), scope.Scope{ProjectID: uuid.New()}, RawSpans(td), nil)
	require.NoError(t, err)
	require.Len(t, pub.batches, 1)
	require.Len(t, pub.batches[0].Spans, 2)
	var dropped []any
	for _, sp := range pub.batches[0].Spans {
		var attrs map[string]any
		require.NoError(t, json.Unmarshal(sp.AttributesJson, &attrs))
		dropped = append(dropped, record(attrs)["dropped_attributes"])
	}
	// 36 resource attributes over the 64 of the raw pass, and more once
	// the canonical span (otel.resource beside the derived ag fields) is
	// within them: the same on both spans.
	assert.GreaterOrEqual(t, dropped[0], 36.0)
	assert.Equal(t, dropped[0], dropped[1])
}
