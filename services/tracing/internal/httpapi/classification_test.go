package httpapi_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Origin, kind and channel are stored as sent, read back
// as sent and filterable, on simple traces and on annotations.
func TestSimpleTraceClassificationRoundTrips(t *testing.T) {
	s := newStack(t)
	link := map[string]any{"trace_id": tidA, "span_id": "a000000000000001"}
	type class struct{ origin, kind, channel string }
	classes := []class{
		{"human", "eval", "sdk"}, {"custom", "play", "web"}, {"auto", "adhoc", "otlp"}, {"human", "adhoc", "api"},
		{"auto", "eval", "api"}, {"custom", "adhoc", "sdk"},
	}
	ids := map[class]string{}
	for i, c := range classes {
		r := s.doJSON(t, "POST", "/api/simple/traces/", map[string]any{"trace": map[string]any{
			"origin": c.origin, "kind": c.kind, "channel": c.channel,
			"data": map[string]any{"outputs": map[string]any{"n": i}}, "links": map[string]any{"invocation": link}}})
		require.Equal(t, http.StatusAccepted, r.status, string(r.body))
		ids[c] = r.json(t)["trace"].(map[string]any)["trace_id"].(string)
	}
	for _, c := range classes {
		var got map[string]any
		eventually(t, "simple trace stored", func() bool {
			got = s.do(t, "GET", "/api/simple/traces/"+ids[c], nil, nil).json(t)
			return got["count"] == 1.0
		})
		tr := got["trace"].(map[string]any)
		assert.Equal(t, []any{c.origin, c.kind, c.channel}, []any{tr["origin"], tr["kind"], tr["channel"]}, "trace %v", c)
	}
	for _, field := range []string{"origin", "kind", "channel"} {
		for _, v := range map[string][]string{"origin": {"human", "custom", "auto"}, "kind": {"adhoc", "eval", "play"},
			"channel": {"api", "sdk", "web", "otlp"}}[field] {
			want := map[string]bool{}
			for _, c := range classes {
				if map[string]string{"origin": c.origin, "kind": c.kind, "channel": c.channel}[field] == v {
					want[ids[c]] = true
				}
			}
			r := s.doJSON(t, "POST", "/api/simple/traces/query", map[string]any{"trace": map[string]any{field: v}})
			require.Equal(t, 200, r.status, string(r.body))
			got := map[string]bool{}
			for _, tr := range r.json(t)["traces"].([]any) {
				got[tr.(map[string]any)["trace_id"].(string)] = true
			}
			assert.Equal(t, want, got, "query %s=%s", field, v)
		}
	}
	// A bad value is refused naming the field, on create and on query.
	r := s.doJSON(t, "POST", "/api/simple/traces/query", map[string]any{"trace": map[string]any{"kind": "evaluation"}})
	require.Equal(t, http.StatusUnprocessableEntity, r.status, string(r.body))
	assert.Contains(t, string(r.body), `"kind"`)
}

// Annotations keep their origin, kind and channel too, and
// /annotations/query filters on them.
func TestAnnotationClassificationRoundTrips(t *testing.T) {
	s := newStack(t)
	startRegistry(t, s)
	link := map[string]any{"trace_id": tidA, "span_id": "a000000000000001"}
	type class struct{ origin, kind, channel string }
	classes := []class{{"human", "eval", "web"}, {"auto", "adhoc", "sdk"}, {"custom", "play", "otlp"}}
	ids := map[class]string{}
	for i, c := range classes {
		r := s.doJSON(t, "POST", "/api/annotations/", map[string]any{"annotation": map[string]any{
			"origin": c.origin, "kind": c.kind, "channel": c.channel,
			"data":       map[string]any{"outputs": map[string]any{"score": i}},
			"references": map[string]any{"evaluator": map[string]any{"slug": "judge"}}, "links": map[string]any{"invocation": link}}})
		require.Equal(t, 200, r.status, string(r.body))
		ids[c] = r.json(t)["annotation"].(map[string]any)["trace_id"].(string)
	}
	for _, c := range classes {
		var got map[string]any
		eventually(t, "annotation stored", func() bool {
			got = s.do(t, "GET", "/api/annotations/"+ids[c], nil, nil).json(t)
			return got["count"] == 1.0
		})
		a := got["annotation"].(map[string]any)
		assert.Equal(t, []any{c.origin, c.kind, c.channel}, []any{a["origin"], a["kind"], a["channel"]}, "annotation %v", c)
	}
	for _, c := range classes {
		for field, v := range map[string]string{"origin": c.origin, "kind": c.kind, "channel": c.channel} {
			r := s.doJSON(t, "POST", "/api/annotations/query", map[string]any{"annotation": map[string]any{field: v}})
			require.Equal(t, 200, r.status, string(r.body))
			var got []string
			for _, a := range r.json(t)["annotations"].([]any) {
				got = append(got, a.(map[string]any)["trace_id"].(string))
			}
			assert.Equal(t, []string{ids[c]}, got, fmt.Sprintf("query %s=%s", field, v))
		}
	}
}
