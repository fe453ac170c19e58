package httpapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestNativeBodiesRefuseWrongTypes: a field of the wrong type was ignored
// (202 with nothing stored and no reason); it is now a 422 naming the field,
// or, inside one span, that span's rejection.
func TestNativeBodiesRefuseWrongTypes(t *testing.T) {
	s := newStack(t, func(o *options) { o.noWriter = true })
	span := func(extra string) string {
		return `{"trace_id":"` + tidA + `","span_id":"a000000000000009","start_time":"2026-01-02T03:04:05Z"` + extra + `}`
	}
	for _, tt := range []struct {
		name, path, body string
		loc              string // the field a 422 names
	}{
		{"spans not a list", "/api/spans/ingest", `{"spans":"str"}`, `["body","spans"]`},
		{"spans not a list (legacy route)", "/api/tracing/spans/ingest", `{"spans":{"a":1}}`, `["body","spans"]`},
		{"traces not an object", "/api/spans/ingest", `{"traces":"str"}`, `["body","traces"]`},
		{"a trace not an object", "/api/spans/ingest", `{"traces":{"` + tidA + `":"str"}}`, `["body","traces","` + tidA + `"]`},
		{"a trace's spans not an object", "/api/spans/ingest", `{"traces":{"` + tidA + `":{"spans":"str"}}}`, `["body","traces","` + tidA + `","spans"]`},
		{"list traces not a list", "/api/traces/ingest", `{"traces":"str"}`, `["body","traces"]`},
		{"list trace spans not an object", "/api/traces/ingest", `{"traces":[{"trace_id":"` + tidA + `","spans":"str"}]}`, `["body","traces",0,"spans"]`},
		{"created trace spans not an object", "/api/traces/", `{"trace":{"trace_id":"` + tidA + `","spans":"str"}}`, `["body","trace","spans"]`},
		{"annotation links a string", "/api/annotations/", `{"annotation":{"data":{"x":1},"references":{"evaluator":{"slug":"e"}},"links":"str"}}`, `["body","annotation","links"]`},
		{"simple trace links a number", "/api/simple/traces/", `{"trace":{"data":{"x":1},"links":3}}`, `["body","trace","links"]`},
		{"simple trace link not an object", "/api/simple/traces/", `{"trace":{"data":{"x":1},"links":{"k":"str"}}}`, `["body","trace","links","k"]`},
		{"invocation links a string", "/api/invocations/", `{"invocation":{"data":{"x":1},"references":{"application":{"slug":"a"}},"links":"str"}}`, `["body","invocation","links"]`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := s.do(t, "POST", tt.path, []byte(tt.body), nil)
			require.Equal(t, http.StatusUnprocessableEntity, r.status, string(r.body))
			assert.Contains(t, string(r.body), `"loc":`+tt.loc, string(r.body))
		})
	}
	// Inside a span, the wrong type costs that span alone.
	for _, tt := range []struct{ name, extra, detail string }{
		{"events not a list", `,"events":"str"`, "events"},
		{"an event not an object", `,"events":["str"]`, "events[0]"},
		{"event attributes not an object", `,"events":[{"name":"e","attributes":"str"}]`, "events[0].attributes"},
		{"event name not a string", `,"events":[{"name":3}]`, "events[0].name"},
		{"references not a list", `,"references":"str"`, "references"},
		{"link attributes not an object", `,"links":[{"trace_id":"` + tidA + `","span_id":"a000000000000001","attributes":"str"}]`, "links[0].attributes"},
		{"a named link not an object", `,"links":{"k":"str"}`, "links.k"},
		{"children not an object", `,"spans":"str"`, "spans"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			body := `{"spans":[` + span(tt.extra) + `,` + strings.Replace(span(""), "a000000000000009", "a000000000000008", 1) + `]}`
			if tt.name == "children not an object" {
				body = `{"traces":{"` + tidA + `":{"spans":{"root":` + span(tt.extra) + `}}}}`
			}
			r := s.do(t, "POST", "/api/spans/ingest", []byte(body), nil)
			require.Equal(t, http.StatusAccepted, r.status, string(r.body))
			out := r.json(t)
			rejected, _ := out["rejected"].([]any)
			require.Len(t, rejected, 1, string(r.body))
			assert.Contains(t, rejected[0].(map[string]any)["detail"], tt.detail)
		})
	}
}
