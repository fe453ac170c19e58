package ingest_test

import (
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/assayhq/assay/services/tracing/internal/ingest"
	"github.com/assayhq/assay/services/tracing/internal/normalize"
)

// FuzzOTLP: any body is decoded and normalised, or rejected; never a panic.
func FuzzOTLP(f *testing.F) {
	td := ptrace.NewTraces()
	sp := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	sp.SetTraceID(pcommon.TraceID{1, 2, 3})
	sp.SetSpanID(pcommon.SpanID{4, 5})
	sp.Attributes().PutStr("gen_ai.operation.name", "chat")
	sp.Attributes().PutStr("ag.data.inputs", "@ag.type=json:{\"a\":1}")
	req := ptraceotlp.NewExportRequestFromTraces(td)
	pb, _ := req.MarshalProto()
	js, _ := req.MarshalJSON()
	f.Add(pb, false)
	f.Add(js, true)
	f.Add([]byte(`{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"zz"}]}]}]}`), true)
	n := &normalize.Normalizer{}
	f.Fuzz(func(t *testing.T, body []byte, isJSON bool) {
		traces, err := ingest.DecodeOTLP(body, isJSON)
		if err != nil {
			return
		}
		n.Batch(ingest.RawSpans(traces))
	})
}

// FuzzNative: any JSON body yields accepted and rejected spans, never a panic.
func FuzzNative(f *testing.F) {
	f.Add([]byte(`{"spans":[{"trace_id":"0af7651916cd43dd8448eb211c80319c","span_id":"b7ad6b7169203331","start_time":1714979289,"attributes":{"ag.type.span":"chat","a.0.b":1}}]}`))
	f.Add([]byte(`{"traces":{"0af7651916cd43dd8448eb211c80319c":{"spans":{"root":{"span_id":"b7ad6b7169203331","links":[],"spans":{"c":[{"span_id":"0000000000000002"}]}}}}}}`))
	f.Add([]byte(`{"spans":[1,"x",{"links":{"k":{"trace_id":"x"}}}]}`))
	n := &normalize.Normalizer{}
	f.Fuzz(func(t *testing.T, body []byte) {
		m, err := ingest.DecodeJSON(body)
		if err != nil {
			return
		}
		raws, _ := ingest.NativeSpans(m)
		n.Batch(raws)
	})
}
