package evalmetrics_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/assayhq/assay/services/runtime/internal/evalmetrics"
)

// FuzzSchemas: a stored outputs schema and traced outputs are clients'
// data. Specs and InferSchema must not panic on any of them, stay within
// the tracing service's bounds (every spec path under the outputs, a
// known type), and an inferred schema must give specs of its own.
func FuzzSchemas(f *testing.F) {
	for _, s := range []string{
		`{"type":"object","properties":{"score":{"type":"number"},"ok":{"type":"boolean"},"l":{"type":"string","enum":["a"]}}}`,
		`{"type":["number","null"]}`,
		`{"properties":{"a":{"properties":{"b":{"type":"array","items":{"type":"string","enum":["x","y"]}}}}}}`,
		`[1, {"a": true}, "x", null]`,
		`{"type":"object","properties":{"":{"type":"number"},"a.b":{"type":"integer"}}}`,
		strings.Repeat(`{"properties":{"d":`, 40) + `{"type":"number"}` + strings.Repeat(`}}`, 40),
	} {
		f.Add([]byte(s))
	}
	types := map[string]bool{"numeric/continuous": true, "numeric/discrete": true, "binary": true,
		"categorical/single": true, "categorical/multiple": true, "string": true, "json": true}
	f.Fuzz(func(t *testing.T, raw []byte) {
		check := func(specs []evalmetrics.Spec) {
			for _, s := range specs[4:] {
				if !types[s.Type] || !strings.HasPrefix(s.Path, "attributes.ag.data.outputs") {
					t.Fatalf("spec %+v", s)
				}
				if strings.Count(s.Path, ".") > 4+17 {
					t.Fatalf("path deeper than the bound: %s", s.Path)
				}
			}
		}
		check(evalmetrics.Specs(evalmetrics.Step{Key: "e", Type: "annotation", Outputs: raw}))
		var v any
		if json.Unmarshal(raw, &v) != nil {
			return
		}
		values, ok := v.([]any)
		if !ok {
			values = []any{v}
		}
		schema := evalmetrics.InferSchema(values)
		if schema == nil {
			return
		}
		b, err := json.Marshal(schema)
		if err != nil {
			t.Fatal(err)
		}
		check(evalmetrics.Specs(evalmetrics.Step{Key: "e", Type: "annotation", Outputs: b}))
	})
}
