package evaluators

import (
	"context"
	"encoding/json"
	"maps"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/assayhq/assay/pkg/errs"
)

// hashEmbedder embeds any text: a 4-dimension vector of byte counts, so the
// fuzzer reaches semantic similarity's arithmetic without a provider.
type hashEmbedder struct{}

func (hashEmbedder) Embed(_ context.Context, _, _ string, in []string) ([][]float64, error) {
	out := make([][]float64, len(in))
	for i, s := range in {
		v := make([]float64, 4)
		for j := 0; j < len(s); j++ {
			v[s[j]%4]++
		}
		out[i] = v
	}
	return out, nil
}

// decodeOr is the JSON value s holds (numbers as json.Number when
// useNumber), or s itself as a string.
func decodeOr(s string, useNumber bool) any {
	d := json.NewDecoder(strings.NewReader(s))
	if useNumber {
		d.UseNumber()
	}
	var v any
	if d.Decode(&v) != nil || d.More() {
		return s
	}
	return v
}

// FuzzRun: for every evaluator, random parameters, inputs and outputs
// never panic; a refusal is a 422 (*errs.Error naming a field); a result is
// JSON-encodable (no NaN or infinity) and has the fields its outputs schema
// requires, with their types.
func FuzzRun(f *testing.F) {
	// The webhook and custom code evaluators reach the network and the
	// sandbox; their parsers have fuzz targets of their own (egress
	// FuzzCheck, codebox FuzzJavaScript, and webhook/customcode tests).
	keys := slices.DeleteFunc(slices.Sorted(maps.Keys(builtins)), func(k string) bool {
		return k == "auto_webhook_test" || k == "auto_custom_code_run"
	})
	seeds := []struct {
		key                     string
		params, inputs, outputs string
	}{
		{"auto_exact_match", `{}`, `{"correct_answer":"a"}`, `"a"`},
		{"auto_regex_test", `{"regex_pattern":"^(?=.*a)b+$"}`, `{}`, `"abbb"`},
		{"auto_regex_test", `{"regex_pattern":"(unclosed"}`, `{}`, `"x"`},
		{"field_match_test", `{"json_field":"a"}`, `{"correct_answer":1}`, `{"a":true}`},
		{"json_multi_field_match", `{"fields":["a.0","b","c.-1"]}`, `{"correct_answer":"{\"a\":[1]}"}`, `"{\"a\":[1],\"c\":[]}"`},
		{"auto_starts_with", `{"prefix":"A","case_sensitive":false}`, `{}`, `"abc"`},
		{"auto_ends_with", `{"suffix":"c"}`, `{}`, `{"x":"c"}`},
		{"auto_contains", `{"substring":"é"}`, `{}`, `"café"`},
		{"auto_contains_any", `{"substrings":"a,,b"}`, `{}`, `"zzz"`},
		{"auto_contains_all", `{"substrings":["a","b"]}`, `{}`, `"ab"`},
		{"auto_contains_json", `{}`, `{}`, `"x {\"a\": [1, {}]} y"`},
		{"auto_json_diff", `{"predict_keys":true,"case_insensitive_keys":true,"threshold":0.7}`, `{"correct_answer":{"A":[1,{"b":null}]}}`, `{"a":[1,{"B":2}],"c":1}`},
		{"auto_levenshtein_distance", `{"threshold":2}`, `{"correct_answer":"kitten"}`, `"sitting"`},
		{"auto_similarity_match", `{"similarity_threshold":0.5}`, `{"correct_answer":"hello world"}`, `"hello there"`},
		{"auto_semantic_similarity", `{"connection":"c"}`, `{"correct_answer":"abc"}`, `"abd"`},
		{"match", `{"matchers":[{"target":"$.outputs.a","match":"similarity","similarity":"jaccard","reference":"{{inputs.x}}"},{"target":"g","matchers":[{"target":"outputs","mode":"json","match":"diff","diff":"strict","references":["{\"a\":1}","$.inputs"]}]}]}`, `{"x":"a b"}`, `{"a":"b c"}`},
		{"echo", `{}`, `{"aloha":[1,"😀"]}`, `null`},
	}
	for _, s := range seeds {
		f.Add(uint8(slices.Index(keys, s.key)), s.params, s.inputs, s.outputs)
	}
	f.Fuzz(func(t *testing.T, k uint8, params, inputs, outputs string) {
		if len(params)+len(inputs)+len(outputs) > 4096 {
			t.Skip("the quadratic comparisons are bounded by maxPairCost; keep each input fast")
		}
		key := keys[int(k&0x7f)%len(keys)]
		num := k&0x80 != 0 // the invoke surface may decode with UseNumber
		p, _ := decodeOr(params, num).(map[string]any)
		in, _ := decodeOr(inputs, num).(map[string]any)
		out, err := Run(t.Context(), Env{Embedder: hashEmbedder{}}, Request{Key: key, Parameters: p, Inputs: in, Outputs: decodeOr(outputs, num)})
		if err != nil {
			e, ok := err.(*errs.Error)
			if !ok || e.Kind != errs.Unprocessable {
				t.Fatalf("%s: error %T %v, want a 422", key, err, err)
			}
			if d, ok := e.Detail.([]errs.FieldError); !ok || len(d) != 1 || len(d[0].Loc) == 0 {
				t.Fatalf("%s: a 422 that names no field: %+v", key, e.Detail)
			}
			return
		}
		if _, err := json.Marshal(out); err != nil {
			t.Fatalf("%s: outputs do not encode: %v (%v)", key, err, out)
		}
		checkShape(t, key, out)
	})
}

// checkShape asserts the required fields of the hydrated outputs schemas.
func checkShape(t *testing.T, key string, out map[string]any) {
	t.Helper()
	num := func(name string, lo, hi float64) {
		v, ok := out[name].(float64)
		if !ok || math.IsNaN(v) || v < lo || v > hi {
			t.Fatalf("%s: %s = %v, want a number in [%g, %g]", key, name, out[name], lo, hi)
		}
	}
	boolean := func(name string, required bool) {
		v, ok := out[name]
		if !ok && !required {
			return
		}
		if _, ok := v.(bool); !ok {
			t.Fatalf("%s: %s = %v, want a boolean", key, name, v)
		}
	}
	switch key {
	case "echo":
		if _, ok := out["got"].(string); !ok || len(out) != 1 {
			t.Fatalf("echo: %v", out)
		}
	case "json_multi_field_match":
		for name := range out {
			num(name, 0, 1)
		}
	case "auto_levenshtein_distance":
		num("score", 0, math.MaxFloat64)
		boolean("success", false)
	case "auto_json_diff", "auto_similarity_match", "match":
		num("score", 0, 1)
		boolean("success", true)
	case "auto_semantic_similarity":
		num("score", -1-1e-9, 1+1e-9)
		boolean("success", true)
	default:
		boolean("success", true)
		if len(out) != 1 {
			t.Fatalf("%s: %v has fields the schema forbids", key, out)
		}
	}
}
