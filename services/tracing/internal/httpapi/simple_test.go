package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSimpleTracesAnnotationsInvocations(t *testing.T) {
	s := newStack(t)
	link := map[string]any{"trace_id": tidA, "span_id": "a000000000000001"}
	r := s.doJSON(t, "POST", "/api/simple/traces/", map[string]any{"trace": map[string]any{
		"origin": "human", "data": map[string]any{"outputs": map[string]any{"score": 0.9}},
		"tags": map[string]any{"team": "qa"}, "links": map[string]any{"invocation": link}}})
	require.Equal(t, http.StatusAccepted, r.status, string(r.body))
	created := r.json(t)["trace"].(map[string]any)
	tid := created["trace_id"].(string)
	assert.Len(t, tid, 32)
	assert.Len(t, created["span_id"], 16)

	var got map[string]any
	eventually(t, "simple trace stored", func() bool {
		got = s.do(t, "GET", "/api/simple/traces/"+tid, nil, nil).json(t)
		return got["count"] == 1.0
	})
	tr := got["trace"].(map[string]any)
	assert.Equal(t, "human", tr["origin"])
	assert.Equal(t, map[string]any{"invocation": link}, tr["links"])
	assert.Equal(t, map[string]any{"outputs": map[string]any{"score": 0.9}}, tr["data"])

	r = s.doJSON(t, "POST", "/api/simple/traces/query", map[string]any{"trace": map[string]any{"origin": "human", "tags": map[string]any{"team": "qa"}, "links": map[string]any{"invocation": link}}})
	require.Equal(t, 200, r.status, string(r.body))
	assert.Equal(t, 1.0, r.json(t)["count"])
	r = s.doJSON(t, "POST", "/api/simple/traces/query", map[string]any{"trace": map[string]any{"origin": "auto"}})
	assert.Equal(t, 0.0, r.json(t)["count"])

	r = s.doJSON(t, "PATCH", "/api/simple/traces/"+tid, map[string]any{"trace": map[string]any{"data": map[string]any{"outputs": "better"}, "links": map[string]any{"invocation": link}}})
	require.Equal(t, 200, r.status, string(r.body))
	eventually(t, "patch visible", func() bool {
		got = s.do(t, "GET", "/api/simple/traces/"+tid, nil, nil).json(t)
		return got["trace"].(map[string]any)["data"].(map[string]any)["outputs"] == "better"
	})

	// Annotations need an evaluator reference and data.
	r = s.doJSON(t, "POST", "/api/annotations/", map[string]any{"annotation": map[string]any{"data": map[string]any{}, "links": map[string]any{"x": link}}})
	require.Equal(t, http.StatusUnprocessableEntity, r.status)
	assert.Contains(t, string(r.body), `"evaluator"`)
	r = s.doJSON(t, "POST", "/api/annotations/", map[string]any{"annotation": map[string]any{
		"data": map[string]any{"outputs": map[string]any{"ok": true}}, "references": map[string]any{"evaluator": map[string]any{"slug": "judge"}},
		"links": map[string]any{"invocation": link}}})
	require.Equal(t, 200, r.status, string(r.body))
	// Invocations without links are invocations, not annotations.
	r = s.doJSON(t, "POST", "/api/invocations/", map[string]any{"invocation": map[string]any{
		"data": map[string]any{"outputs": "hi"}, "references": map[string]any{"application": map[string]any{"slug": "app"}}}})
	require.Equal(t, 200, r.status, string(r.body))
	eventually(t, "one annotation, one invocation", func() bool {
		a := s.doJSON(t, "POST", "/api/annotations/query", map[string]any{}).json(t)
		i := s.doJSON(t, "POST", "/api/invocations/query", map[string]any{}).json(t)
		return a["count"] == 2.0 && i["count"] == 1.0
	})

	r = s.do(t, "DELETE", "/api/simple/traces/"+tid, nil, nil)
	require.Equal(t, 200, r.status)
	assert.Equal(t, 1.0, r.json(t)["count"])
	eventually(t, "deleted", func() bool { return s.do(t, "GET", "/api/simple/traces/"+tid, nil, nil).json(t)["count"] == 0.0 })
}
