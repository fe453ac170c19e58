package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An annotation against a catalog evaluator (exact match,
// a feedback preset) is read back whether its data is the outputs
// themselves or the compatible {"outputs": {...}}; the outputs are checked
// against the evaluator's outputs schema, and nothing answered 200 is
// unreadable.
func TestAnnotationsAgainstCatalogEvaluators(t *testing.T) {
	s := newStack(t)
	reg := startRegistry(t, s)
	s.registryPost(t, reg, "/simple/evaluators/", map[string]any{"evaluator": map[string]any{"slug": "exact-match", "name": "exact match",
		"data": map[string]any{"uri": "agenta:builtin:auto_exact_match:v0", "parameters": map[string]any{"correct_answer_key": "answer"}}}})
	s.registryPost(t, reg, "/simple/evaluators/", map[string]any{"evaluator": map[string]any{"slug": "approval", "name": "approval",
		"data": map[string]any{"uri": "agenta:custom:feedback:v0", "schemas": map[string]any{"outputs": map[string]any{
			"type": "object", "properties": map[string]any{"approved": map[string]any{"type": "boolean"}},
			"required": []any{"approved"}, "additionalProperties": false}}}}})
	link := map[string]any{"trace_id": tidA, "span_id": "a000000000000001"}
	annotate := func(slug string, data any) response {
		return s.doJSON(t, "POST", "/api/annotations/", map[string]any{"annotation": map[string]any{
			"data": data, "references": map[string]any{"evaluator": map[string]any{"slug": slug}}, "links": map[string]any{"invocation": link}}})
	}
	readBack := func(t *testing.T, r response, outputs map[string]any) {
		t.Helper()
		require.Equal(t, 200, r.status, string(r.body))
		created := r.json(t)["annotation"].(map[string]any)
		assert.Equal(t, map[string]any{"outputs": outputs}, created["data"], "the answer shows the data as stored")
		tid := created["trace_id"].(string)
		var got map[string]any
		eventually(t, "annotation readable", func() bool {
			got = s.do(t, "GET", "/api/annotations/"+tid, nil, nil).json(t)
			return got["count"] == 1.0
		})
		assert.Equal(t, map[string]any{"outputs": outputs}, got["annotation"].(map[string]any)["data"])
		q := s.doJSON(t, "POST", "/api/annotations/query", map[string]any{"annotation_links": []any{map[string]any{"trace_id": tid}}})
		require.Equal(t, 200, q.status, string(q.body))
		assert.Equal(t, 1.0, q.json(t)["count"], "found by a query")
	}
	for _, c := range []struct {
		slug    string
		outputs map[string]any
	}{{"exact-match", map[string]any{"success": true}}, {"approval", map[string]any{"approved": false}}} {
		t.Run(c.slug+" flat", func(t *testing.T) { readBack(t, annotate(c.slug, c.outputs), c.outputs) })
		t.Run(c.slug+" compatible", func(t *testing.T) {
			readBack(t, annotate(c.slug, map[string]any{"outputs": c.outputs}), c.outputs)
		})
	}
	detail := func(t *testing.T, r response) []any {
		t.Helper()
		require.Equal(t, http.StatusUnprocessableEntity, r.status, string(r.body))
		var locs []any
		for _, d := range r.json(t)["detail"].([]any) {
			locs = append(locs, d.(map[string]any)["loc"])
		}
		return locs
	}
	t.Run("outputs that do not fit are 422 where they were sent", func(t *testing.T) {
		assert.Equal(t, []any{[]any{"body", "annotation", "data", "outputs", "success"}},
			detail(t, annotate("exact-match", map[string]any{"outputs": map[string]any{"success": "yes"}})))
		assert.Equal(t, []any{[]any{"body", "annotation", "data", "success"}},
			detail(t, annotate("exact-match", map[string]any{"success": "yes"})))
		assert.NotEmpty(t, detail(t, annotate("approval", map[string]any{"outputs": map[string]any{"approved": true, "extra": 1}})))
		assert.NotEmpty(t, detail(t, annotate("exact-match", map[string]any{"outputs": map[string]any{}})))
	})
	t.Run("data that could not be read back is 422", func(t *testing.T) {
		// outputs beside a key the span has no place for: stored, it
		// would be parked and lost.
		assert.Equal(t, []any{[]any{"body", "annotation", "data", "success"}},
			detail(t, annotate("exact-match", map[string]any{"outputs": map[string]any{"success": true}, "success": true})))
		assert.Equal(t, []any{[]any{"body", "annotation", "data", "inputs"}},
			detail(t, annotate("exact-match", map[string]any{"outputs": map[string]any{"success": true}, "inputs": "not an object"})))
	})
}
