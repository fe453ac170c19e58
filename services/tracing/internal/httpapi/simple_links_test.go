package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSimpleTracesDropLinksWithoutIDs: the compatible web app's older
// annotation drawers send {"invocation": {}} (no ids) as the links of an
// annotation trace. The compatible platform drops a link that lacks an id
// and stores the annotation; so do we, in both the dict and the list
// form. A link whose ids are there but malformed is still refused.
func TestSimpleTracesDropLinksWithoutIDs(t *testing.T) {
	s := newStack(t)
	full := map[string]any{"trace_id": tidA, "span_id": "a000000000000001"}
	for name, tc := range map[string]struct {
		path, item string
		links      any
		want       any
	}{
		"empty link":             {"/api/simple/traces/", "trace", map[string]any{"invocation": map[string]any{}}, map[string]any{}},
		"span id only":           {"/api/simple/traces/", "trace", map[string]any{"invocation": map[string]any{"span_id": "a000000000000001"}}, map[string]any{}},
		"null ids, and one kept": {"/api/simple/traces/", "trace", map[string]any{"invocation": map[string]any{"trace_id": nil, "span_id": nil}, "app": full}, map[string]any{"app": full}},
		"list form":              {"/api/simple/traces/", "trace", []any{map[string]any{"trace_id": ""}, full}, []any{full}},
		"annotation":             {"/api/annotations/", "annotation", map[string]any{"invocation": map[string]any{}}, map[string]any{}},
	} {
		t.Run(name, func(t *testing.T) {
			body := map[string]any{"origin": "human", "kind": "adhoc", "channel": "web",
				"data": map[string]any{"outputs": map[string]any{"score": 1}}, "links": tc.links,
				"references": map[string]any{"evaluator": map[string]any{"slug": "rubric"}}}
			r := s.doJSON(t, "POST", tc.path, map[string]any{tc.item: body})
			require.Less(t, r.status, 300, string(r.body))
			created := r.json(t)[tc.item].(map[string]any)
			assert.Equal(t, tc.want, created["links"], "the answer shows what was stored")
		})
	}
	bad := map[string]any{"invocation": map[string]any{"trace_id": "xyz", "span_id": "a000000000000001"}}
	r := s.doJSON(t, "POST", "/api/simple/traces/", map[string]any{"trace": map[string]any{"data": map[string]any{"outputs": 1}, "links": bad}})
	assert.True(t, r.status == http.StatusBadRequest || r.status == http.StatusUnprocessableEntity, "%d %s", r.status, r.body)
	assert.Contains(t, string(r.body), "xyz")
	bad = map[string]any{"invocation": map[string]any{"trace_id": 7, "span_id": "a000000000000001"}}
	r = s.doJSON(t, "POST", "/api/simple/traces/", map[string]any{"trace": map[string]any{"data": map[string]any{"outputs": 1}, "links": bad}})
	assert.True(t, r.status == http.StatusBadRequest || r.status == http.StatusUnprocessableEntity, "an id of the wrong type: %d %s", r.status, r.body)
}
