package httpapi

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/services/runtime/internal/invoke"
)

func TestNegotiate(t *testing.T) {
	for accept, want := range map[string]format{
		"": batch, "application/json": batch, "*/*": batch, "text/html, application/json;q=0.9": batch,
		"application/x-ndjson": ndjson, "application/jsonl": ndjson, "text/event-stream": sse,
	} {
		got, err := negotiate(accept)
		require.NoError(t, err, accept)
		assert.Equal(t, want, got, accept)
	}
	_, err := negotiate("text/html")
	assert.Equal(t, errs.NotAcceptable, errs.KindOf(err))
}

func TestTraceParent(t *testing.T) {
	h := http.Header{}
	h.Set("Traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	assert.Equal(t, invoke.Link{TraceID: "4bf92f3577b34da6a3ce929d0e0e4736", SpanID: "00f067aa0ba902b7"}, traceParent(h))
	h.Set("Traceparent", "00-00000000000000000000000000000000-00f067aa0ba902b7-01")
	assert.Equal(t, invoke.Link{}, traceParent(h), "an all-zero trace id is invalid")
	h.Del("Traceparent")
	h.Set("X-Ag-Trace-Id", "4BF92F3577B34DA6A3CE929D0E0E4736")
	assert.Equal(t, invoke.Link{TraceID: "4bf92f3577b34da6a3ce929d0e0e4736"}, traceParent(h))
}

func TestParseURI(t *testing.T) {
	h, err := invoke.ParseURI("agenta:builtin:auto_exact_match:v0")
	require.NoError(t, err)
	assert.Equal(t, "svc:builtin:auto_exact_match:v0", h.URI("svc"))
	for _, bad := range []string{"", "svc:builtin:completion", "http:builtin:x:v0", "svc:other:x:v0", "svc:builtin::v0"} {
		_, err := invoke.ParseURI(bad)
		assert.Equal(t, errs.Unprocessable, errs.KindOf(err), bad)
	}
}

// FuzzEnvelope reads arbitrary bodies as the invoke envelope: never a
// panic, and a body that is refused is refused as the client's fault.
func FuzzEnvelope(f *testing.F) {
	for _, s := range []string{``, `{}`, `{"data":{"inputs":{"a":1}}}`, `{"references":{"application":{"slug":"x"}}}`,
		`{"flags":{"stream":true,"resolve":false},"links":{"invocation":{"trace_id":"a","span_id":"b"}}}`,
		`{"data":{"revision":{"data":{"uri":"svc:builtin:chat:v0"}}}}`, `{"data":[]}`, `{"data":{"inputs":"x"}}`,
		`{"session_id":1}`, `{"a":"\u0000"}`, `[`, `"\ud800"`} {
		f.Add([]byte(s))
	}
	e := echo.New()
	f.Fuzz(func(t *testing.T, body []byte) {
		c := e.NewContext(httptest.NewRequest("POST", "/services/invoke", strings.NewReader(string(body))), httptest.NewRecorder())
		_, err := bind(c)
		if err != nil {
			k := errs.KindOf(err)
			if k != errs.Invalid && k != errs.Unprocessable {
				t.Fatalf("body %q: %v (kind %v), want a 400 or 422", body, err, k)
			}
		}
	})
}
