package ingest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/assayhq/assay/pkg/chspans"
	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/genproto/spanspb"
	"github.com/assayhq/assay/pkg/httpx"
	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/pkg/spanmodel"
	"github.com/assayhq/assay/pkg/spanstream"
	"github.com/assayhq/assay/pkg/testutil/fuzzbound"
	"github.com/assayhq/assay/services/tracing/internal/ingest"
)

// ingestBound is the allocation budget of one request through decode,
// normalise, encode and the reader's decode. Linear code stays far below it
// (a small span costs a few KiB of maps and strings per ~50 bytes of
// protobuf); work quadratic in nesting depth or width crosses it within a
// few hundred levels.
var ingestBound = fuzzbound.Bound{PerByte: 2048, Fixed: 4 << 20}

// capture is the publisher at the end of the use case: it keeps the last
// message so the target can check that the writer and reader can use it.
type capture struct{ data []byte }

func (c *capture) Publish(_ context.Context, _ string, data []byte, _ string) error {
	c.data = data
	return nil
}

// fuzzIngest is the ingest use case as the tracing service builds it, with
// the publish step captured.
func fuzzIngest(t testing.TB) (*ingest.Service, *capture) {
	prices, err := spanmodel.LoadPrices("")
	if err != nil {
		t.Fatal(err)
	}
	pub := &capture{}
	return ingest.NewService(pub, &spanmodel.Normalizer{Prices: prices}), pub
}

// requireClientError fails unless err is a typed error answered with a 4xx.
func requireClientError(t *testing.T, what string, err error) {
	t.Helper()
	if st := httpx.Status(errs.KindOf(err)); st < 400 || st >= 500 {
		t.Fatalf("%s: client input answered %d: %v", what, st, err)
	}
}

// ingestAndCheck runs the use case on raws and checks what an answer
// promises: every span is accepted or rejected with a reason, the answer
// encodes, and what was accepted is writable (the writer decodes the
// message) and readable (the reader decodes every stored JSON column).
func ingestAndCheck(t *testing.T, svc *ingest.Service, pub *capture, raws []spanmodel.Raw, key []byte, isJSON bool) {
	t.Helper()
	pub.data = nil
	res, err := svc.Ingest(context.Background(), scope.Scope{ProjectID: fuzzProject}, raws, key)
	if err != nil {
		requireClientError(t, "ingest", err)
		return
	}
	if n := len(res.Links) + len(res.Rejected); n != len(raws) {
		t.Fatalf("%d spans in, %d accepted + %d rejected: some were dropped without a reason", len(raws), len(res.Links), len(res.Rejected))
	}
	if _, err := ingest.Response(res.Rejected, isJSON); err != nil {
		t.Fatalf("the OTLP answer does not encode: %v", err)
	}
	if len(res.Links) == 0 {
		return
	}
	batch, err := spanstream.DecodeBatch(pub.data)
	if err != nil {
		t.Fatalf("accepted, then the writer cannot decode the message (it would be dead-lettered): %v", err)
	}
	if len(batch.Spans) != len(res.Links) {
		t.Fatalf("%d spans acknowledged, %d in the message", len(res.Links), len(batch.Spans))
	}
	for _, sp := range batch.Spans {
		requireReadable(t, sp)
	}
}

// requireReadable decodes a stored span's JSON the way the query service
// does (query.parseRows): a span it cannot decode would poison the project.
func requireReadable(t *testing.T, sp *spanspb.Span) {
	t.Helper()
	var attrs map[string]any
	if err := json.Unmarshal([]byte(chspans.ExpandAttributes(string(sp.AttributesJson), sp.AttrValues)), &attrs); err != nil && len(sp.AttributesJson) > 0 {
		t.Fatalf("span %s/%s stored with attributes the reader cannot decode: %v", sp.TraceId, sp.SpanId, err)
	}
	for i, e := range sp.Events {
		if len(e.AttributesJson) > 0 && !json.Valid(e.AttributesJson) {
			t.Fatalf("span %s/%s: event %d attributes are not JSON", sp.TraceId, sp.SpanId, i)
		}
	}
	for i, l := range sp.Links {
		if len(l.AttributesJson) > 0 && !json.Valid(l.AttributesJson) {
			t.Fatalf("span %s/%s: link %d attributes are not JSON", sp.TraceId, sp.SpanId, i)
		}
	}
}

var fuzzProject = uuid.MustParse("0190f0a0-0000-7000-8000-0000000000aa")

// FuzzOTLP: any OTLP/HTTP body (protobuf or JSON) is refused with a 4xx,
// or every span in it is accepted or rejected with a reason; what is
// accepted is writable and readable; and the work is linear in the body.
func FuzzOTLP(f *testing.F) {
	for _, td := range otlpSeeds() {
		req := ptraceotlp.NewExportRequestFromTraces(td)
		pb, err := req.MarshalProto()
		if err != nil {
			f.Fatal(err)
		}
		js, err := req.MarshalJSON()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(pb, false)
		f.Add(js, true)
	}
	f.Add([]byte(`{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"zz"}]}]}]}`), true)
	f.Add([]byte(`{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"5b8efff798038103d269b633813fc60c","spanId":"eee19b7ec3c1b174","name":"a\u0000b","attributes":[{"key":"k","value":{"kvlistValue":{"values":[{"key":"x","value":{"arrayValue":{"values":[{"intValue":"7"}]}}}]}}}]}]}]}]}`), true)
	svc, pub := fuzzIngest(f)
	f.Fuzz(func(t *testing.T, body []byte, isJSON bool) {
		ingestBound.Check(t, len(body), func() {
			td, err := ingest.DecodeOTLP(body, isJSON)
			if err != nil {
				requireClientError(t, "decode", err)
				return
			}
			raws := ingest.RawSpans(td)
			if len(raws) != td.SpanCount() {
				t.Fatalf("%d spans decoded, %d converted", td.SpanCount(), len(raws))
			}
			ingestAndCheck(t, svc, pub, raws, body, isJSON)
		})
	})
}

// FuzzNative: any native JSON body (flat {"spans":[...]} or nested
// {"traces":{...}}) is refused with a 4xx, or every span is accepted or
// rejected alone; what is accepted is writable and readable; the work is
// linear. The HTTP handlers' answers are fuzzed in httpapi (FuzzIngestHTTP).
func FuzzNative(f *testing.F) {
	for _, s := range nativeSeeds() {
		f.Add([]byte(s))
	}
	svc, pub := fuzzIngest(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		ingestBound.Check(t, len(body), func() {
			m, err := ingest.DecodeJSON(body)
			if err != nil {
				requireClientError(t, "decode", err)
				return
			}
			raws, rejected, err := ingest.NativeSpans(m)
			if err != nil {
				requireClientError(t, "native body", err)
				return
			}
			for _, r := range rejected {
				if r.Msg == "" {
					t.Fatalf("span %d rejected without a reason", r.Index)
				}
			}
			ingestAndCheck(t, svc, pub, raws, body, true)
		})
	})
}

// nativeSeeds are valid flat and nested bodies from the API tests, then
// hostile variants: wrong types, NUL, deep nesting, wide and long values.
func nativeSeeds() []string {
	const tid, sid = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"
	return []string{
		`{"spans":[{"trace_id":"` + tid + `","span_id":"` + sid + `","start_time":1714979289,"attributes":{"ag.type.span":"chat","a.0.b":1}}]}`,
		`{"spans":[{"trace_id":"` + tid + `","span_id":"` + sid + `","span_name":"llm","start_time":"2024-05-06T07:08:09Z","end_time":"2024-05-06T07:08:10.5Z",` +
			`"attributes":{"ag":{"type":{"span":"llm"},"data":{"inputs":{"prompt":[{"role":"user","content":"hi"}]},"outputs":{"completion":[{"role":"assistant","content":"yo"}]}},` +
			`"metrics":{"unit":{"tokens":{"prompt":10,"completion":5,"total":15}}},"meta":{"request":{"model":"gpt-4o-mini"}}}},` +
			`"events":[{"name":"exception","timestamp":1714979289500000,"attributes":{"exception.message":"boom"}}],"links":[{"trace_id":"` + tid + `","span_id":"0000000000000001"}]}]}`,
		`{"traces":{"` + tid + `":{"spans":{"root":{"span_id":"` + sid + `","links":[],"spans":{"c":[{"span_id":"0000000000000002"}]}}}}}}`,
		`{"traces":{"` + tid + `":{"spans":{"annotation":{"span_id":"` + sid + `","attributes":{"ag":{"type":{"trace":"annotation"},"data":{"outputs":{"score":1}}}},"links":{"invocation":{"trace_id":"` + tid + `","span_id":"0000000000000001"}}}}}}}`,
		`{"spans":[1,"x",{"links":{"k":{"trace_id":"x"}}}]}`,
		`{"spans":"str"}`, `{"traces":"str"}`, `{"spans":[{"attributes":"x"}]}`, `{"spans":[{"events":[1]}]}`, `{"spans":[{"links":"str"}]}`,
		`{"spans":[{"trace_id":"` + tid + `","span_id":"` + sid + `","span_name":"a\u0000b","attributes":{"k\u0000":"v\u0000"}}]}`,
		`{"spans":[{"trace_id":"` + tid + `","span_id":"` + sid + `","start_time":-1,"end_time":1e300}]}`,
		`{"spans":[{"trace_id":"` + tid + `","span_id":"` + sid + `","attributes":{"deep":` + strings.Repeat("[", 50) + strings.Repeat("]", 50) + `}}]}`,
		`{"spans":[{"trace_id":"` + tid + `","span_id":"` + sid + `","attributes":{"deep":` + strings.Repeat(`{"a":`, 50) + "1" + strings.Repeat("}", 50) + `}}]}`,
		`{"spans":[{"trace_id":"` + tid + `","span_id":"` + sid + `","attributes":` + wideJSON(300) + `}]}`,
		`{"spans":[{"trace_id":"` + tid + `","span_id":"` + sid + `","attributes":{"long":"` + strings.Repeat("x", 64<<10) + `"}}]}`,
		`{"traces":{"` + tid + `":{"spans":` + nestedNodes(30) + `}}}`,
	}
}

func wideJSON(n int) string {
	var b strings.Builder
	b.WriteByte('{')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"attr.%d":"value %d"`, i, i)
	}
	b.WriteByte('}')
	return b.String()
}

// nestedNodes is a nested-form span tree depth levels deep.
func nestedNodes(depth int) string {
	var b strings.Builder
	for i := range depth {
		fmt.Fprintf(&b, `{"n%d":{"span_id":"%016x","spans":`, i, i+1)
	}
	b.WriteString("{}")
	b.WriteString(strings.Repeat("}}", depth))
	return b.String()
}

// otlpSeeds are real OTLP requests built with pdata: GenAI spans of the
// conventions the adapters read, then hostile shapes (deep and wide
// attributes, long strings, NUL, many spans, no ids).
func otlpSeeds() []ptrace.Traces {
	var out []ptrace.Traces
	add := func(n int, mutate func(i int, sp ptrace.Span)) {
		td := ptrace.NewTraces()
		rs := td.ResourceSpans().AppendEmpty()
		rs.Resource().Attributes().PutStr("service.name", "fuzz")
		ss := rs.ScopeSpans().AppendEmpty()
		ss.Scope().SetName("seed")
		start := time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)
		for i := range n {
			sp := ss.Spans().AppendEmpty()
			sp.SetTraceID(pcommon.TraceID{0xab, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15})
			sp.SetSpanID(pcommon.SpanID{0, 0, 0, 0, 0, 0, byte((i + 1) >> 8), byte(i + 1)})
			if i > 0 {
				sp.SetParentSpanID(pcommon.SpanID{0, 0, 0, 0, 0, 0, 0, 1})
			}
			sp.SetName(fmt.Sprintf("span-%d", i))
			sp.SetKind(ptrace.SpanKindClient)
			sp.SetStartTimestamp(pcommon.NewTimestampFromTime(start.Add(time.Duration(i) * time.Millisecond)))
			sp.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(time.Second)))
			mutate(i, sp)
		}
		out = append(out, td)
	}
	add(2, func(i int, sp ptrace.Span) {
		a := sp.Attributes()
		a.PutStr("gen_ai.operation.name", "chat")
		a.PutStr("gen_ai.request.model", "gpt-4o-mini")
		a.PutInt("gen_ai.usage.input_tokens", 1000)
		a.PutInt("gen_ai.usage.output_tokens", 500)
		a.PutStr("gen_ai.prompt.0.role", "user")
		a.PutStr("gen_ai.prompt.0.content", "What is 2+2?")
		a.PutStr("ag.data.inputs", `@ag.type=json:{"a":1}`)
		ev := sp.Events().AppendEmpty()
		ev.SetName("exception")
		ev.Attributes().PutStr("exception.message", "boom")
		l := sp.Links().AppendEmpty()
		l.SetTraceID(pcommon.TraceID{1})
		l.SetSpanID(pcommon.SpanID{2})
		l.Attributes().PutStr("key", "invocation")
		sp.Status().SetCode(ptrace.StatusCodeError)
		sp.Status().SetMessage("failed")
	})
	add(1, func(_ int, sp ptrace.Span) { // OpenInference
		a := sp.Attributes()
		a.PutStr("openinference.span.kind", "LLM")
		a.PutStr("input.value", `{"messages":[{"role":"user","content":"hi"}]}`)
		a.PutStr("input.mime_type", "application/json")
		a.PutStr("llm.model_name", "gpt-4o")
		a.PutInt("llm.token_count.prompt", 3)
		a.PutDouble("llm.invocation_parameters.temperature", 0.5)
		a.PutBool("stream", true)
		a.PutEmptyBytes("blob").FromRaw([]byte{0, 1, 0xff})
	})
	add(1, func(_ int, sp ptrace.Span) { // deep array and map attributes
		deepArray(sp.Attributes().PutEmptySlice("deep.array"), 40)
		deepMap(sp.Attributes().PutEmptyMap("deep.map"), 40)
	})
	add(1, func(_ int, sp ptrace.Span) { // wide
		for i := range 500 {
			sp.Attributes().PutStr(fmt.Sprintf("wide.%d", i), "v")
		}
		for i := range 50 {
			sp.Events().AppendEmpty().SetName(fmt.Sprintf("event-%d", i))
		}
	})
	add(1, func(_ int, sp ptrace.Span) { // long strings, NUL, odd numbers
		sp.Attributes().PutStr("long", strings.Repeat("lorem ipsum ", 20000))
		sp.Attributes().PutStr("nul\x00key", "nul\x00value")
		sp.Attributes().PutDouble("inf", math.Inf(1))
		sp.Attributes().PutDouble("nan", math.NaN())
		sp.Attributes().PutInt("min", -1<<63)
		sp.SetName("name\x00with\x00nul")
	})
	add(100, func(i int, sp ptrace.Span) {
		sp.Attributes().PutStr("gen_ai.operation.name", "chat")
		sp.Attributes().PutInt("gen_ai.usage.input_tokens", int64(i))
	})
	add(2, func(i int, sp ptrace.Span) { // no ids: rejected alone
		if i == 1 {
			sp.SetTraceID(pcommon.TraceID{})
			sp.SetSpanID(pcommon.SpanID{})
		}
	})
	return out
}

func deepArray(s pcommon.Slice, depth int) {
	for range depth {
		s.AppendEmpty().SetStr("x")
		s = s.AppendEmpty().SetEmptySlice()
	}
}

func deepMap(m pcommon.Map, depth int) {
	for range depth {
		m.PutStr("x", "y")
		m = m.PutEmptyMap("m")
	}
}
