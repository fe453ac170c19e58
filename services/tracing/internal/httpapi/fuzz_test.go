package httpapi_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/pkg/chspans"
	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/pkg/spanstream"
	"github.com/assayhq/assay/pkg/testutil/fuzzbound"
)

// httpBound is the allocation budget of one request through the real HTTP
// stack (client, echo, handler, NATS or ClickHouse client): a larger fixed
// part than the in-process targets for the connections' buffers.
var httpBound = fuzzbound.Bound{PerByte: 4096, Fixed: 32 << 20}

// fuzzRoute is one route a fuzz target sends bodies to.
type fuzzRoute struct {
	method, path, contentType string
}

// pickRoute maps any fuzzed route name to a route: a known name to itself,
// anything else by its hash, so every mutation still reaches a handler.
func pickRoute(routes []fuzzRoute, name string) fuzzRoute {
	for _, r := range routes {
		if r.method+" "+r.path == name {
			return r
		}
	}
	h := fnv.New32a()
	h.Write([]byte(name))
	return routes[h.Sum32()%uint32(len(routes))]
}

// send posts body as the gateway would and returns status, header, body.
func (s *stack) send(t *testing.T, r fuzzRoute, body []byte) response {
	t.Helper()
	req, err := http.NewRequest(r.method, s.url+r.path, bytes.NewReader(body))
	require.NoError(t, err)
	scope.Set(req.Header, token, scope.Scope{ProjectID: s.project})
	req.Header.Set("Content-Type", r.contentType)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return response{status: resp.StatusCode, header: resp.Header, body: b}
}

// requireAnswer fails on a 5xx, and on a body that is not JSON where the
// route answers JSON: an error body must be {"detail": ...}.
func requireAnswer(t *testing.T, r fuzzRoute, body []byte, res response) {
	t.Helper()
	if res.status >= 500 {
		t.Fatalf("%s %s answered %d to a client's body: %s\nbody: %.300q", r.method, r.path, res.status, res.body, body)
	}
	if res.status < 300 && r.contentType == "application/x-protobuf" {
		return
	}
	var m map[string]any
	if err := json.Unmarshal(res.body, &m); err != nil {
		t.Fatalf("%s %s answered %d with a body that is not a JSON object: %.300q", r.method, r.path, res.status, res.body)
	}
	if _, ok := m["detail"]; res.status >= 400 && !ok {
		t.Fatalf("%s %s answered %d without a detail: %s", r.method, r.path, res.status, res.body)
	}
}

var ingestRoutes = []fuzzRoute{
	{"POST", "/api/spans/ingest", "application/json"},
	{"POST", "/api/tracing/spans/ingest", "application/json"},
	{"POST", "/api/traces/ingest", "application/json"},
	{"POST", "/api/tracing/traces", "application/json"},
	{"POST", "/api/traces", "application/json"},
	{"PUT", "/api/traces/0af7651916cd43dd8448eb211c80319c", "application/json"},
	{"PUT", "/api/tracing/traces/0af7651916cd43dd8448eb211c80319c", "application/json"},
	{"POST", "/api/simple/traces", "application/json"},
	{"POST", "/api/annotations", "application/json"},
	{"POST", "/api/invocations", "application/json"},
	{"PATCH", "/api/simple/traces/0af7651916cd43dd8448eb211c80319c", "application/json"},
	{"POST", "/api/otlp/v1/traces", "application/json"},
	{"POST", "/api/otlp/v1/traces", "application/x-protobuf"},
}

// FuzzIngestHTTP sends fuzzed bodies to every write route of tracing over
// real HTTP, with spans published to a real embedded JetStream. It fails on
// a 5xx, a non-JSON answer, a 2xx to /spans/ingest whose "spans" is not a
// list or whose spans are neither counted nor rejected, a published message
// the writer or the reader could not decode, and allocation beyond
// httpBound. The writer is not running: the target drains the stream itself.
func FuzzIngestHTTP(f *testing.F) {
	const tid, sid = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"
	span := `{"trace_id":"` + tid + `","span_id":"` + sid + `","span_name":"root","start_time":1714979289,"end_time":1714979290,"attributes":{"ag":{"type":{"span":"chat"},"data":{"inputs":{"q":"hi"}}}}}`
	nested := `{"` + tid + `":{"spans":{"root":{"span_id":"` + sid + `","spans":{"child":[{"span_id":"0000000000000002"}]}}}}}`
	seeds := map[string][]string{
		"POST /api/spans/ingest": {
			`{"spans":[` + span + `,1,"x"]}`, `{"traces":` + nested + `}`, `{"traces":"str"}`, `{"spans":[{"links":"str"}]}`,
			`{"spans":[{"trace_id":"` + tid + `","span_id":"` + sid + `","span_name":"a\u0000b"}]}`,
			`{"spans":[{"trace_id":"` + tid + `","span_id":"` + sid + `","attributes":{"d":` + strings.Repeat("[", 40) + strings.Repeat("]", 40) + `}}]}`,
			`{"spans":[{"trace_id":"` + tid + `","span_id":"` + sid + `","attributes":` + wideAttrs(300) + `}]}`,
		},
		"POST /api/tracing/spans/ingest":                   {`{"spans":[` + span + `]}`},
		"POST /api/traces/ingest":                          {`{"traces":[{"trace_id":"` + tid + `","spans":{"root":{"span_id":"` + sid + `"}}}]}`, `{"traces":"str"}`, `{"traces":[1]}`, `{"spans":"str"}`},
		"POST /api/tracing/traces":                         {`{"traces":` + nested + `}`, `{"trace":{"spans":{"root":{}}}}`},
		"POST /api/traces":                                 {`{"trace":{"trace_id":"` + tid + `","spans":{"root":{"span_id":"` + sid + `"}}}}`},
		"PUT /api/traces/0af7651916cd43dd8448eb211c80319c": {`{"trace":{"spans":{"root":{"span_id":"` + sid + `"}}}}`},
		"POST /api/simple/traces": {
			`{"trace":{"origin":"human","kind":"adhoc","channel":"api","tags":{"team":"qa"},"meta":{"m":1},"data":{"outputs":{"score":1}},"links":{"invocation":{"trace_id":"` + tid + `","span_id":"` + sid + `"}}}}`,
			`{"trace":{"links":"str"}}`, `{"trace":"str"}`, `{"trace":{"data":{"outputs":"a\u0000"}}}`, `{"trace":{"data":{"outputs":"x"},"links":[]}}`,
		},
		"POST /api/annotations": {`{"annotation":{"data":{"outputs":{"score":0.5}},"references":{"evaluator":{"slug":"exact-match"}},"links":{"invocation":{"trace_id":"` + tid + `","span_id":"` + sid + `"}}}}`, `{"annotation":{"links":"str"}}`},
		"POST /api/invocations": {`{"invocation":{"data":{"inputs":{"q":"x"},"outputs":"y"},"references":{"application":{"slug":"app"}}}}`},
		"PATCH /api/simple/traces/0af7651916cd43dd8448eb211c80319c": {`{"trace":{"data":{"outputs":"better"}}}`},
		"POST /api/otlp/v1/traces": {
			`{"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"svc"}}]},"scopeSpans":[{"spans":[{"traceId":"` + tid + `","spanId":"` + sid + `","name":"chat","startTimeUnixNano":"1714979289000000000","endTimeUnixNano":"1714979290000000000","attributes":[{"key":"gen_ai.operation.name","value":{"stringValue":"chat"}},{"key":"gen_ai.usage.input_tokens","value":{"intValue":"12"}}]}]}]}]}`,
			`{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"zz"}]}]}]}`, `{}`, `[]`,
		},
	}
	for route, bodies := range seeds {
		for _, b := range bodies {
			f.Add(route, []byte(b))
		}
	}
	f.Add("POST /api/otlp/v1/traces#protobuf", []byte("\x0a\x00"))

	s := newStack(f, func(o *options) { o.noWriter = true; o.streamBytes = 256 << 20 })
	cons, err := s.conn.JS.CreateOrUpdateConsumer(f.Context(), spanstream.SpanStream, jetstream.ConsumerConfig{Durable: "fuzz", AckPolicy: jetstream.AckExplicitPolicy})
	require.NoError(f, err)
	f.Fuzz(func(t *testing.T, route string, body []byte) {
		r := pickRoute(ingestRoutes, route)
		if strings.HasSuffix(route, "#protobuf") {
			r = ingestRoutes[len(ingestRoutes)-1]
		}
		var res response
		httpBound.Check(t, len(body), func() { res = s.send(t, r, body) })
		requireAnswer(t, r, body, res)
		if res.status >= 300 {
			return
		}
		switch {
		case r.path == "/api/spans/ingest":
			requireCounted(t, body, res)
		case r.path == "/api/traces/ingest":
			requireTracesTyped(t, body, res)
		case strings.HasPrefix(r.path, "/api/simple/") || strings.HasPrefix(r.path, "/api/annotations") || strings.HasPrefix(r.path, "/api/invocations"):
			requireLinksTyped(t, r.path, body, res)
		}
		drainReadable(t, cons)
	})
}

// requireTracesTyped checks a 2xx of /traces/ingest: a trace whose "spans"
// is not an object was refused or listed as rejected, not silently skipped.
func requireTracesTyped(t *testing.T, body []byte, res response) {
	t.Helper()
	var in struct {
		Traces []any `json:"traces"`
	}
	if json.Unmarshal(body, &in) != nil {
		return
	}
	var out struct {
		Rejected []json.RawMessage `json:"rejected"`
	}
	_ = json.Unmarshal(res.body, &out)
	for i, tr := range in.Traces {
		m, _ := tr.(map[string]any)
		if sp, ok := m["spans"]; ok {
			if _, isObj := sp.(map[string]any); !isObj && len(out.Rejected) == 0 {
				t.Fatalf("answered %d although traces[%d].spans is %T, and rejected nothing: %s", res.status, i, sp, res.body)
			}
		}
	}
}

// requireLinksTyped checks a 2xx of a simple trace, annotation or
// invocation that stored something: links that are neither an object nor
// a list were refused, not stored as sent.
func requireLinksTyped(t *testing.T, path string, body []byte, res response) {
	t.Helper()
	item := map[string]string{"simple": "trace", "annotations": "annotation", "invocations": "invocation"}[strings.Split(path, "/")[2]]
	var in map[string]any
	var out struct {
		Count int `json:"count"`
	}
	if json.Unmarshal(body, &in) != nil || json.Unmarshal(res.body, &out) != nil || out.Count == 0 {
		return
	}
	m, _ := in[item].(map[string]any)
	switch l := m["links"].(type) {
	case string, float64, bool:
		t.Fatalf("answered %d although %s.links is %T: %s", res.status, item, l, res.body)
	}
}

// requireCounted checks a 2xx of /spans/ingest against the flat body: its
// "spans" was a list, and each item was counted or rejected with a reason.
func requireCounted(t *testing.T, body []byte, res response) {
	t.Helper()
	var in map[string]any
	if json.Unmarshal(body, &in) != nil {
		t.Fatalf("answered %d to a body that is not a JSON object: %.200q", res.status, body)
	}
	spans, hasSpans := in["spans"]
	list, isList := spans.([]any)
	if hasSpans && !isList {
		t.Fatalf(`answered %d although "spans" is %T, not a list: %s`, res.status, spans, res.body)
	}
	if _, nested := in["traces"]; nested || !hasSpans {
		return
	}
	var out struct {
		Count    int               `json:"count"`
		Rejected []json.RawMessage `json:"rejected"`
	}
	require.NoError(t, json.Unmarshal(res.body, &out))
	if out.Count+len(out.Rejected) != len(list) {
		t.Fatalf("%d spans sent, %d counted + %d rejected: %s", len(list), out.Count, len(out.Rejected), res.body)
	}
}

// drainReadable takes every message the request published and decodes it
// as the writer does, then each span's JSON as the query service does.
func drainReadable(t *testing.T, cons jetstream.Consumer) {
	t.Helper()
	batch, err := cons.FetchNoWait(100)
	require.NoError(t, err)
	for msg := range batch.Messages() {
		b, err := spanstream.DecodeBatch(msg.Data())
		if err != nil {
			t.Fatalf("acknowledged, then the writer cannot decode the message (dead letter): %v", err)
		}
		for _, sp := range b.Spans {
			var attrs map[string]any
			if len(sp.AttributesJson) > 0 {
				if err := json.Unmarshal([]byte(chspans.ExpandAttributes(string(sp.AttributesJson), sp.AttrValues)), &attrs); err != nil {
					t.Fatalf("span %s/%s stored with attributes the reader cannot decode: %v", sp.TraceId, sp.SpanId, err)
				}
			}
		}
		require.NoError(t, msg.Ack())
	}
	require.NoError(t, batch.Error())
}

func wideAttrs(n int) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = fmt.Sprintf(`"attr.%d":"v"`, i)
	}
	return "{" + strings.Join(parts, ",") + "}"
}

var queryRoutes = []fuzzRoute{
	{"POST", "/api/spans/query", "application/json"},
	{"POST", "/api/traces/query", "application/json"},
	{"POST", "/api/tracing/spans/query", "application/json"},
	{"POST", "/api/simple/traces/query", "application/json"},
	{"POST", "/api/annotations/query", "application/json"},
	{"POST", "/api/invocations/query", "application/json"},
	{"POST", "/api/spans/analytics/query", "application/json"},
	{"POST", "/api/tracing/analytics/query", "application/json"},
	{"POST", "/api/tracing/spans/analytics", "application/json"},
	{"POST", "/internal/analytics/groups", "application/json"},
	{"POST", "/api/tracing/sessions/query", "application/json"},
	{"POST", "/api/spans/users/query", "application/json"},
}

// FuzzQueryHTTP sends fuzzed bodies to every query route of tracing over
// real HTTP, against real ClickHouse holding a few spans and a real registry
// resolving saved queries. A filter, window or ref is the client's: it fails
// on a 5xx (a ClickHouse limit included: that is a 4xx naming the limit),
// a non-JSON answer, and allocation beyond httpBound.
func FuzzQueryHTTP(f *testing.F) {
	filters := []string{
		`{"conditions":[{"field":"attributes","key":"ag.data.inputs.country","value":"France"}]}`,
		`{"conditions":[{"field":"attributes","key":"ag.data.inputs","value":{"country":"France"}}]}`,
		`{"conditions":[{"field":"attributes","key":"ag.meta.tags","operator":"in","value":["y","` + strings.Repeat("v", 2048) + `"]}]}`,
		`{"operator":"or","conditions":[{"field":"status_code","value":"STATUS_CODE_ERROR"},{"operator":"not","conditions":[{"field":"span_name","operator":"startswith","value":"s"}]}]}`,
		`{"conditions":[{"field":"links","operator":"in","value":[{"trace_id":"` + tidA + `","span_id":"a000000000000001"}]}]}`,
		`{"conditions":[{"field":"references","operator":"in","value":[{"slug":"exact-match"}]}]}`,
		`{"conditions":[{"field":"content","operator":"contains","value":"france"}]}`,
		`{"conditions":[{"field":"start_time","operator":"gte","value":"2024-01-01T00:00:00Z"},{"field":"span_name","operator":"matches","value":"(a|b"}]}`,
		`{"conditions":[{"field":"attributes","key":"a\u0000","value":"\u0000"}]}`,
	}
	for _, fl := range filters {
		f.Add("POST /api/spans/query", []byte(`{"filtering":`+fl+`}`))
	}
	f.Add("POST /api/traces/query", []byte(`{"filtering":`+filters[0]+`,"windowing":{"limit":2}}`))
	f.Add("POST /api/traces/query", []byte(`{"filtering":`+filters[3]+`,"windowing":{"limit":2}}`))
	for _, s := range []struct{ route, body string }{
		{"POST /api/spans/query", `{"windowing":{"limit":0}}`},
		{"POST /api/spans/query", `{"windowing":{"next":"not-a-cursor","limit":1}}`},
		{"POST /api/spans/query", `{"windowing":{"oldest":"2024-01-01T00:00:00Z","newest":12345,"order":"ascending","interval":60}}`},
		{"POST /api/spans/query", `{"query_ref":{"slug":"saved"},"windowing":{"limit":1}}`},
		{"POST /api/traces/query", `{"query_ref":"str"}`},
		{"POST /api/traces/query", `{"query_ref":{"id":"0193e8a0-0000-7000-8000-000000000001"}}`},
		{"POST /api/tracing/spans/query", `{"focus":"span","filter":"{\"conditions\":[{\"field\":\"span_name\",\"value\":\"llm\"}]}"}`},
		{"POST /api/tracing/spans/query", `{"filtre":"{}"}`},
		{"POST /api/simple/traces/query", `{"trace":{"origin":"human","tags":{"team":"qa"},"links":{"invocation":{"trace_id":"` + tidA + `","span_id":"a000000000000001"}}}}`},
		{"POST /api/annotations/query", `{"annotation":{"links":"str"}}`},
		{"POST /api/invocations/query", `{}`},
		{"POST /api/spans/analytics/query", `{"specs":[{"type":"numeric/continuous","path":"attributes.ag.metrics.tokens.incremental.prompt"}],"windowing":{"interval":60}}`},
		{"POST /api/tracing/analytics/query", `{"specs":[{"type":"string/categorical","path":"attributes.env"}]}`},
		{"POST /api/tracing/spans/analytics", `{"focus":"trace","interval":3600}`},
		{"POST /api/tracing/sessions/query", `{"windowing":{"limit":1}}`},
		{"POST /internal/analytics/groups", `{"specs":[{"type":"numeric/discrete","path":"attributes.ag.metrics.costs.cumulative.total","bins":3}],"groups":{"a":["` + tidA + `"],"b":[]}}`},
		{"POST /api/spans/users/query", `{"realtime":true}`},
	} {
		f.Add(s.route, []byte(s.body))
	}

	s := newStack(f)
	reg := startRegistry(f, s)
	var once sync.Once
	f.Fuzz(func(t *testing.T, route string, body []byte) {
		once.Do(func() {
			seed(t, s)
			s.saveQuery(t, reg, "saved", map[string]any{"filtering": map[string]any{"conditions": []any{map[string]any{"field": "span_name", "value": "llm"}}}})
		})
		r := pickRoute(queryRoutes, route)
		var res response
		httpBound.Check(t, len(body), func() { res = s.send(t, r, body) })
		requireAnswer(t, r, body, res)
		if res.status < 300 && (r.path == "/api/spans/query" || r.path == "/api/traces/query") {
			requireWindowingTyped(t, body, res)
		}
	})
}

// requireWindowingTyped checks a 2xx of /spans/query or /traces/query: a
// negative limit or a next that is not a string is refused, not read as
// something else.
func requireWindowingTyped(t *testing.T, body []byte, res response) {
	t.Helper()
	var in struct {
		Windowing map[string]any `json:"windowing"`
	}
	if json.Unmarshal(body, &in) != nil || in.Windowing == nil {
		return
	}
	if l, ok := in.Windowing["limit"].(float64); ok && l < 0 {
		t.Fatalf("answered %d to windowing.limit %v: %.200s", res.status, l, res.body)
	}
	if n, ok := in.Windowing["next"]; ok && n != nil {
		if _, isStr := n.(string); !isStr {
			t.Fatalf("answered %d to windowing.next of type %T: %.200s", res.status, n, res.body)
		}
	}
}
