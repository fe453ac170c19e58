package ingest_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/uuid"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/assayhq/assay/pkg/model"
	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/services/tracing/internal/ingest"
	"github.com/assayhq/assay/services/tracing/internal/normalize"
)

// decodingPublisher fails the publish of anything the writer could not
// decode: whatever ingest accepts must be writable.
type decodingPublisher struct{ t *testing.T }

func (d decodingPublisher) Publish(_ context.Context, _ string, data []byte, _ string) error {
	if _, err := model.DecodeBatch(data); err != nil {
		d.t.Fatalf("published a batch the writer cannot decode: %v", err)
	}
	return nil
}

// ingestAll runs raws through the whole ingest use case: limits,
// normalisation, encoding and the publish.
func ingestAll(t *testing.T, raws []normalize.Raw) {
	svc := ingest.NewService(decodingPublisher{t}, &normalize.Normalizer{})
	if _, err := svc.Ingest(context.Background(), scope.Scope{ProjectID: uuid.New()}, raws, nil); err != nil {
		t.Fatalf("ingest failed on a decodable body: %v", err)
	}
}

// FuzzOTLP: any body is decoded, normalised and published decodably, or
// rejected; never a panic.
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
	// The hostile shapes of issue 12: a list nested deep, invalid UTF-8.
	deep := sp.Attributes().PutEmptySlice("deep")
	for range 2000 {
		deep = deep.AppendEmpty().SetEmptySlice()
	}
	sp.SetName("caf\xe9")
	sp.Attributes().PutStr("k\xff", "v\xfe")
	hostile, _ := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
	f.Add(hostile, false)
	f.Add([]byte(`{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"zz"}]}]}]}`), true)
	f.Fuzz(func(t *testing.T, body []byte, isJSON bool) {
		traces, err := ingest.DecodeOTLP(body, isJSON)
		if err != nil {
			return
		}
		ingestAll(t, ingest.RawSpans(traces))
	})
}

// FuzzNative: any JSON body yields accepted spans, published decodably,
// and rejected ones; never a panic.
func FuzzNative(f *testing.F) {
	f.Add([]byte(`{"spans":[{"trace_id":"0af7651916cd43dd8448eb211c80319c","span_id":"b7ad6b7169203331","start_time":1714979289,"attributes":{"ag.type.span":"chat","a.0.b":1}}]}`))
	f.Add([]byte(`{"traces":{"0af7651916cd43dd8448eb211c80319c":{"spans":{"root":{"span_id":"b7ad6b7169203331","links":[],"spans":{"c":[{"span_id":"0000000000000002"}]}}}}}}`))
	f.Add([]byte(`{"spans":[1,"x",{"links":{"k":{"trace_id":"x"}}}]}`))
	f.Add([]byte(`{"spans":[{"trace_id":"0af7651916cd43dd8448eb211c80319c","span_id":"b7ad6b7169203331","attributes":{"a.1023.b.1023.c":1,"d":` +
		strings.Repeat("[", 3000) + strings.Repeat("]", 3000) + `}},{"events":"x"}],"traces":{"t":{"spans":{"n":{"spans":3}}}}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		m, err := ingest.DecodeJSON(body)
		if err != nil {
			return
		}
		raws, _, err := ingest.NativeSpans(m)
		if err != nil {
			return
		}
		ingestAll(t, raws)
	})
}
