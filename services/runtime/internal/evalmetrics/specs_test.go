package evalmetrics_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/services/runtime/internal/evalmetrics"
)

func TestSpecs(t *testing.T) {
	const out = "attributes.ag.data.outputs"
	defaults := evalmetrics.DefaultSpecs()
	require.Len(t, defaults, 4)

	schema := `{"type":"object","properties":{
		"score":{"type":"number"},
		"count":{"type":"integer"},
		"success":{"type":"boolean"},
		"label":{"type":"string","enum":["good","bad"]},
		"note":{"type":"string"},
		"tags":{"type":"array","items":{"type":"string","enum":["a","b"]}},
		"raw":{"type":"array","items":{"type":"string"}},
		"extra":{"type":"object"},
		"nested":{"type":"object","properties":{"depth":{"type":["number","null"]},"x.y":{"type":"number"}}},
		"either":{"type":["string","number"]}}}`
	got := evalmetrics.Specs(evalmetrics.Step{Key: "evaluator-a", Type: "annotation", Outputs: json.RawMessage(schema)})
	assert.Equal(t, defaults, got[:4], "the defaults first")
	assert.Equal(t, []evalmetrics.Spec{
		{Type: "numeric/discrete", Path: out + ".count", OnError: 0.0},
		{Type: "json", Path: out + ".extra"},
		{Type: "categorical/single", Path: out + ".label"},
		{Type: "numeric/continuous", Path: out + ".nested.depth", OnError: 0.0},
		{Type: "string", Path: out + ".note"},
		{Type: "numeric/continuous", Path: out + ".score", OnError: 0.0},
		{Type: "binary", Path: out + ".success", OnError: false},
		{Type: "categorical/multiple", Path: out + ".tags"},
	}, got[4:], "one per leaf, by path; a non-enum array, a union and a dotted key add none")

	// An application step (or a human one) with the same schema: no on_error.
	got = evalmetrics.Specs(evalmetrics.Step{Key: "application-x", Type: "invocation", Outputs: json.RawMessage(`{"type":"number"}`)})
	assert.Equal(t, evalmetrics.Spec{Type: "numeric/continuous", Path: out}, got[4], "a scalar schema is the outputs themselves")

	for _, bad := range []string{``, `null`, `"x"`, `{"type":"object","properties":{"a":"not a schema"}}`, `{"type":7}`} {
		assert.Equal(t, defaults, evalmetrics.Specs(evalmetrics.Step{Key: "e", Type: "annotation", Outputs: json.RawMessage(bad)}), bad)
	}
}

func TestInferSchema(t *testing.T) {
	var values []any
	for _, v := range []string{
		`{"score":1,"success":true,"label":"good","tags":["a"],"meta":{"k":1}}`,
		`{"score":0.5,"success":false,"label":"bad","tags":[]}`,
		`null`, // a failed evaluator: no outputs
		`{"score":2,"success":true,"label":"good","tags":["b"],"extra":"x"}`,
	} {
		var x any
		require.NoError(t, json.Unmarshal([]byte(v), &x))
		values = append(values, x)
	}
	got := evalmetrics.InferSchema(values)
	want := map[string]any{"type": "object", "required": []string{"label", "score", "success", "tags"}, "properties": map[string]any{
		"score":   map[string]any{"type": "number"},
		"success": map[string]any{"type": "boolean"},
		"label":   map[string]any{"type": "string"},
		"tags":    map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
		"meta":    map[string]any{"type": "object", "required": []string{"k"}, "properties": map[string]any{"k": map[string]any{"type": "integer"}}},
		"extra":   map[string]any{"type": "string"},
	}}
	assert.Equal(t, want, got)

	assert.Nil(t, evalmetrics.InferSchema(nil))
	assert.Nil(t, evalmetrics.InferSchema([]any{nil}))
	assert.Equal(t, map[string]any{"type": []any{"boolean", "integer"}}, evalmetrics.InferSchema([]any{true, 3.0}))
	assert.Equal(t, map[string]any{"anyOf": []any{
		map[string]any{"type": "object", "properties": map[string]any{}},
		map[string]any{"type": "string"},
	}}, evalmetrics.InferSchema([]any{"x", map[string]any{}}))

	// A deep value stops at the bound instead of recursing without end.
	deep := any(1.0)
	for range 100 {
		deep = map[string]any{"d": deep}
	}
	assert.NotNil(t, evalmetrics.InferSchema([]any{deep}))
}
