package httpapi_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Annotations and invocations resolve their evaluator or application in the
// real registry, creating it when missing, and annotation data must fit the
// evaluator's outputs schema.
func TestAnnotationsResolveEvaluatorsInTheRegistry(t *testing.T) {
	s := newStack(t)
	reg := startRegistry(t, s)
	link := map[string]any{"trace_id": tidA, "span_id": "a000000000000001"}
	annotate := func(data map[string]any, ref map[string]any) response {
		return s.doJSON(t, "POST", "/api/annotations/", map[string]any{"annotation": map[string]any{
			"data": data, "references": map[string]any{"evaluator": ref}, "links": map[string]any{"invocation": link}}})
	}
	retrieve := func(kind, slug string) map[string]any {
		return s.registryPost(t, reg, "/"+kind+"s/revisions/retrieve", map[string]any{kind + "_ref": map[string]any{"slug": slug}})
	}

	r := annotate(map[string]any{"score": 4, "comment": "fine", "tags": []any{"a"}}, map[string]any{"slug": "quality"})
	require.Equal(t, 200, r.status, string(r.body))
	refs := r.json(t)["annotation"].(map[string]any)["references"].(map[string]any)
	ev := retrieve("evaluator", "quality")
	require.Equal(t, 1.0, ev["count"], "the evaluator was auto-created")
	rev := ev["evaluator_revision"].(map[string]any)
	assert.Equal(t, "svc:custom:feedback:v0", rev["data"].(map[string]any)["uri"])
	outputs := rev["data"].(map[string]any)["schemas"].(map[string]any)["outputs"].(map[string]any)
	assert.Equal(t, []any{"comment", "score", "tags"}, outputs["required"])
	info := ev["retrieval_info"].(map[string]any)["references"].(map[string]any)
	assert.Equal(t, info["evaluator"].(map[string]any)["id"], refs["evaluator"].(map[string]any)["id"], "references rewritten to the resolved ids")
	assert.Equal(t, info["evaluator_revision"].(map[string]any)["version"], refs["evaluator_revision"].(map[string]any)["version"])
	assert.NotEmpty(t, refs["evaluator_variant"].(map[string]any)["id"])

	t.Run("data that does not fit the outputs schema is 422", func(t *testing.T) {
		r := annotate(map[string]any{"score": "high", "comment": "x", "tags": []any{}}, map[string]any{"slug": "quality"})
		require.Equal(t, http.StatusUnprocessableEntity, r.status, string(r.body))
		var body struct {
			Detail []struct {
				Loc  []any  `json:"loc"`
				Type string `json:"type"`
			} `json:"detail"`
		}
		require.NoError(t, jsonUnmarshal(r.body, &body))
		require.Len(t, body.Detail, 1, string(r.body))
		assert.Equal(t, []any{"body", "annotation", "data", "score"}, body.Detail[0].Loc)
		assert.Equal(t, "value_error.json_schema", body.Detail[0].Type)

		r = annotate(map[string]any{"score": 1}, map[string]any{"id": refs["evaluator"].(map[string]any)["id"]})
		assert.Equal(t, http.StatusUnprocessableEntity, r.status, "missing required keys; found by id: %s", r.body)
	})
	t.Run("an unknown evaluator id without a slug is 422", func(t *testing.T) {
		r := annotate(map[string]any{"x": 1}, map[string]any{"id": "0193e8a0-0000-7000-8000-00000000beef"})
		require.Equal(t, http.StatusUnprocessableEntity, r.status, string(r.body))
		assert.Contains(t, string(r.body), `"evaluator"`)
	})
	t.Run("invocations auto-create their application", func(t *testing.T) {
		r := s.doJSON(t, "POST", "/api/invocations/", map[string]any{"invocation": map[string]any{
			"data": map[string]any{"outputs": "hi"}, "references": map[string]any{"application": map[string]any{"slug": "my-app"}}}})
		require.Equal(t, 200, r.status, string(r.body))
		app := retrieve("application", "my-app")
		require.Equal(t, 1.0, app["count"])
		got := r.json(t)["invocation"].(map[string]any)["references"].(map[string]any)
		assert.NotEmpty(t, got["application_revision"].(map[string]any)["id"])
	})
	t.Run("a simple trace with empty links creates no evaluator", func(t *testing.T) {
		r := s.doJSON(t, "POST", "/api/simple/traces/", map[string]any{"trace": map[string]any{
			"data": map[string]any{"outputs": 1}, "references": map[string]any{"evaluator": map[string]any{"slug": "unlinked"}}, "links": map[string]any{}}})
		require.Equal(t, http.StatusAccepted, r.status, string(r.body))
		assert.Equal(t, 0.0, retrieve("evaluator", "unlinked")["count"])
		r = s.doJSON(t, "POST", "/api/simple/traces/", map[string]any{"trace": map[string]any{
			"data": map[string]any{"outputs": 1}, "references": map[string]any{"evaluator": map[string]any{"slug": "linked"}}, "links": map[string]any{"invocation": link}}})
		require.Equal(t, http.StatusAccepted, r.status, string(r.body))
		assert.Equal(t, 1.0, retrieve("evaluator", "linked")["count"])
	})
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }
