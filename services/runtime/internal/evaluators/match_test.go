package evaluators

import (
	"strings"
	"testing"
	"time"
)

func TestMatch(t *testing.T) {
	res := func(score float64, success bool) map[string]any {
		return map[string]any{"score": score, "success": success}
	}
	with := func(m map[string]any, kv ...any) map[string]any {
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	ms := func(ms ...any) map[string]any { return map[string]any{"matchers": ms} }
	in := map[string]any{"correct_answer": "Paris", "country": "France", "expected": `{"city": "Paris", "pop": 2}`}
	out := obj(`{"answer": "The capital of France is Paris.", "json": "{\"city\": \"Paris\", \"pop\": 3}", "n": 2}`)

	runTable(t, "match", []tc{
		{name: "exact against an input path", params: ms(map[string]any{"key": "m", "target": "$.outputs.answer", "match": "contains", "reference": "$.inputs.correct_answer"}),
			inputs: in, outputs: out, want: with(res(1, true), "m", res(1, true))},
		{name: "default key is the target, default match exact", params: ms(map[string]any{"target": "outputs.n", "reference": "2"}),
			inputs: in, outputs: out, want: with(res(1, true), "outputs.n", res(1, true))},
		{name: "bare path reads outputs, mustache reference", params: ms(map[string]any{"target": "answer", "match": "ends_with", "reference": "{{ inputs.correct_answer }}."}),
			inputs: in, outputs: out, want: with(res(0, false), "answer", res(0, false))},
		{name: "mustache reference path", params: ms(map[string]any{"target": "answer", "match": "contains", "reference": "{{ inputs.country }}"}),
			inputs: in, outputs: out, want: with(res(1, true), "answer", res(1, true))},
		{name: "starts_with case insensitive", params: ms(map[string]any{"target": "answer", "match": "starts_with", "reference": "the capital", "case_sensitive": false}),
			inputs: in, outputs: out, want: with(res(1, true), "answer", res(1, true))},
		{name: "contains all scores the fraction", params: ms(map[string]any{"target": "answer", "match": "contains", "references": []any{"Paris", "Berlin"}, "contains": "all"}),
			inputs: in, outputs: out, want: with(res(0.5, false), "answer", res(0.5, false))},
		{name: "contains any", params: ms(map[string]any{"target": "answer", "match": "contains", "references": []any{"Rome", "Paris"}}),
			inputs: in, outputs: out, want: with(res(1, true), "answer", res(1, true))},
		{name: "regex with lookahead", params: ms(map[string]any{"target": "answer", "match": "regex", "reference": `^(?=.*France)(?=.*Paris)`}),
			inputs: in, outputs: out, want: with(res(1, true), "answer", res(1, true))},
		{name: "valid json inside a JSON string", params: ms(map[string]any{"target": "json", "mode": "json", "match": "valid"}, map[string]any{"target": "answer", "mode": "json", "match": "valid"}),
			inputs: in, outputs: out, want: with(res(0.5, false), "json", res(1, true), "answer", res(0, false))},
		{name: "walk into a JSON string", params: ms(map[string]any{"target": "json.city", "reference": "Paris"}),
			inputs: in, outputs: out, want: with(res(1, true), "json.city", res(1, true))},
		{name: "json exact", params: ms(map[string]any{"target": "json", "mode": "json", "reference": `{"pop": 3, "city": "Paris"}`}),
			inputs: in, outputs: out, want: with(res(1, true), "json", res(1, true))},
		{name: "diff full, as auto_json_diff", params: ms(map[string]any{"target": "json", "mode": "json", "match": "diff", "reference": "$.inputs.expected", "threshold": 0.5}),
			inputs: in, outputs: out, want: with(res(0.5, false), "json", res(0.5, true))}, // the top threshold is 1.0
		{name: "diff schema", params: ms(map[string]any{"target": "json", "match": "diff", "diff": "schema", "reference": "$.inputs.expected"}),
			inputs: in, outputs: out, want: with(res(1, true), "json", res(1, true))},
		{name: "diff strict counts extra keys", params: ms(map[string]any{"target": "json", "match": "diff", "diff": "strict", "reference": `{"city": "Paris"}`}),
			inputs: in, outputs: out, want: with(res(0.5, false), "json", res(0.5, false))},
		{name: "similarity levenshtein", params: ms(map[string]any{"target": "inputs.correct_answer", "match": "similarity", "reference": "Pariss"}),
			inputs: in, outputs: out, want: with(res(5.0/6, false), "inputs.correct_answer", res(5.0/6, true))},
		{name: "similarity jaccard", params: ms(map[string]any{"target": "answer", "match": "similarity", "similarity": "jaccard", "reference": "capital of Italy", "threshold": 0.3}),
			inputs: in, outputs: out, want: with(res(2.0/7, false), "answer", res(2.0/7, false))},
		{name: "similarity cosine", params: ms(map[string]any{"target": "inputs.country", "match": "similarity", "similarity": "cosine", "reference": "France France"}),
			inputs: in, outputs: out, want: with(res(1, true), "inputs.country", res(1, true))},
		{name: "missing target is an inline error", params: ms(map[string]any{"target": "outputs.nope", "reference": "x"}),
			inputs: in, outputs: out, want: with(res(0, false), "outputs.nope", with(res(0, false), "error", "target outputs.nope not found"))},
		{name: "weighted, min, max, any, all",
			params: map[string]any{"score": "weighted", "success": "any", "matchers": []any{
				map[string]any{"key": "a", "target": "answer", "match": "contains", "reference": "Paris", "weight": 3.0},
				map[string]any{"key": "b", "target": "answer", "match": "contains", "reference": "Rome"},
			}},
			inputs: in, outputs: out, want: with(res(0.75, true), "a", res(1, true), "b", res(0, false))},
		{name: "min score, all success", params: map[string]any{"score": "min", "success": "all", "matchers": []any{
			map[string]any{"key": "a", "target": "answer", "match": "contains", "reference": "Paris"},
			map[string]any{"key": "b", "target": "answer", "match": "contains", "reference": "Rome"},
		}}, inputs: in, outputs: out, want: with(res(0, false), "a", res(1, true), "b", res(0, false))},
		{name: "nested group", params: map[string]any{"score": "max", "threshold": 0.5, "matchers": []any{
			map[string]any{"key": "g", "target": "answer", "success": "all", "matchers": []any{
				map[string]any{"target": "answer", "match": "contains", "reference": "Paris"},
				map[string]any{"target": "answer", "match": "contains", "reference": "France"},
			}},
		}}, inputs: in, outputs: out, want: with(res(1, true), "g", with(res(1, true), "answer", res(1, true), "answer#1", res(1, true)))},
		{name: "matchers missing", params: map[string]any{}, errLoc: []any{"parameters", "matchers"}},
		{name: "matchers empty", params: ms(), errLoc: []any{"parameters", "matchers"}},
		{name: "target missing", params: ms(map[string]any{"match": "valid"}), errLoc: []any{"parameters", "matchers", 0, "target"}},
		{name: "unknown match", params: ms(map[string]any{"target": "x", "match": "fuzzy"}), errLoc: []any{"parameters", "matchers", 0, "match"}},
		{name: "exact without reference", params: ms(map[string]any{"target": "x", "match": "exact"}), errLoc: []any{"parameters", "matchers", 0, "reference"}},
		{name: "bad regex", params: ms(map[string]any{"target": "x", "match": "regex", "references": []any{"ok", "(bad"}}), errLoc: []any{"parameters", "matchers", 0, "references", 1}},
		{name: "duplicate explicit key", params: ms(map[string]any{"key": "k", "target": "x"}, map[string]any{"key": "k", "target": "y"}), errLoc: []any{"parameters", "matchers", 1, "key"}},
		{name: "reserved key", params: ms(map[string]any{"key": "score", "target": "x"}), errLoc: []any{"parameters", "matchers", 0, "key"}},
		{name: "bad score mode", params: map[string]any{"score": "avg", "matchers": []any{map[string]any{"target": "x"}}}, errLoc: []any{"parameters", "score"}},
		{name: "nested bad field", params: ms(map[string]any{"target": "g", "matchers": []any{map[string]any{"target": "x", "weight": -1.0}}}), errLoc: []any{"parameters", "matchers", 0, "matchers", 0, "weight"}},
	})
}

func TestMatchDepthAndCount(t *testing.T) {
	leaf := map[string]any{"target": "x"}
	deep := leaf
	for range maxMatchDepth + 1 {
		deep = map[string]any{"target": "g", "matchers": []any{deep}}
	}
	_, err := Run(t.Context(), Env{}, Request{Key: "match", Parameters: map[string]any{"matchers": []any{deep}}})
	if err == nil {
		t.Fatal("a tree deeper than the limit was walked")
	}
	many := make([]any, maxMatchers+1)
	for i := range many {
		many[i] = leaf
	}
	_, err = Run(t.Context(), Env{}, Request{Key: "match", Parameters: map[string]any{"matchers": many}})
	checkLoc(t, err, []any{"parameters", "matchers"})
}

func TestMatchRegexBudget(t *testing.T) {
	// Twenty catastrophic patterns cost the call's budget, not 20 time-outs.
	refs := make([]any, 20)
	for i := range refs {
		refs[i] = `^(?=a)(a+)+$`
	}
	start := time.Now()
	out, err := Run(t.Context(), Env{}, Request{Key: "match",
		Parameters: map[string]any{"matchers": []any{map[string]any{"key": "r", "target": "outputs", "match": "regex", "references": refs, "contains": "all"}}},
		Outputs:    strings.Repeat("a", 64) + "!"})
	if err != nil {
		t.Fatal(err)
	}
	if r := out["r"].(map[string]any); r["error"] != "regular expression timed out" || r["success"] != false {
		t.Fatalf("got %v", out)
	}
	if d := time.Since(start); d > regexBudget+10*regexTimeout {
		t.Fatalf("the call ran %v", d)
	}
}
