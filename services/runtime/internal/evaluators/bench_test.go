package evaluators

import (
	"maps"
	"slices"
	"strings"
	"testing"
)

// benchRequests holds one typical call per evaluator: an LLM-sized answer
// (a few hundred characters) against its reference.
func benchRequests() map[string]Request {
	answer := strings.Repeat("The capital of France is Paris, on the Seine. ", 8) // 368 chars
	ref := strings.Repeat("Paris is the capital of France, on the Seine. ", 8)
	doc := obj(`{"name": "Ada", "age": 36, "tags": ["x", "y"], "address": {"city": "London", "zip": "N1"}}`)
	docStr := `{"name": "Ada", "age": 37, "tags": ["x", "z"], "address": {"city": "London", "zip": "N1"}}`
	in := map[string]any{"correct_answer": ref, "country": "France"}
	return map[string]Request{
		"auto_exact_match":          {Inputs: in, Outputs: answer},
		"auto_regex_test":           {Parameters: map[string]any{"regex_pattern": `capital of \w+ is (Paris|Lyon)`}, Outputs: answer},
		"field_match_test":          {Parameters: map[string]any{"json_field": "name"}, Inputs: map[string]any{"correct_answer": "Ada"}, Outputs: docStr},
		"json_multi_field_match":    {Parameters: map[string]any{"fields": []any{"name", "age", "address.city"}}, Inputs: map[string]any{"correct_answer": doc}, Outputs: docStr},
		"auto_starts_with":          {Parameters: map[string]any{"prefix": "the capital", "case_sensitive": false}, Outputs: answer},
		"auto_ends_with":            {Parameters: map[string]any{"suffix": "Seine. "}, Outputs: answer},
		"auto_contains":             {Parameters: map[string]any{"substring": "Paris"}, Outputs: answer},
		"auto_contains_any":         {Parameters: map[string]any{"substrings": "Lyon, Nice, Paris"}, Outputs: answer},
		"auto_contains_all":         {Parameters: map[string]any{"substrings": "Paris, France, Seine"}, Outputs: answer},
		"auto_contains_json":        {Outputs: "Here it is: " + docStr + " as asked."},
		"auto_json_diff":            {Inputs: map[string]any{"correct_answer": doc}, Outputs: docStr},
		"auto_levenshtein_distance": {Parameters: map[string]any{"threshold": 10.0}, Inputs: in, Outputs: answer},
		"auto_similarity_match":     {Parameters: map[string]any{"similarity_threshold": 0.5}, Inputs: in, Outputs: answer},
		"auto_semantic_similarity":  {Inputs: in, Outputs: answer},
		"match": {Parameters: map[string]any{"matchers": []any{
			map[string]any{"target": "outputs", "match": "contains", "reference": "{{inputs.country}}"},
			map[string]any{"target": "outputs", "match": "similarity", "reference": "$.inputs.correct_answer", "threshold": 0.2},
			map[string]any{"target": "outputs", "match": "regex", "reference": `(?=.*Paris)`},
		}}, Inputs: in, Outputs: answer},
		"echo": {Inputs: in, Outputs: doc},
	}
}

// BenchmarkEvaluators measures one call of each built-in evaluator, the
// evaluator's own cost (semantic similarity's embeddings come from a
// test double, so its figure excludes the provider's round trip). The
// webhook and custom code evaluators have benchmarks of their own
// (BenchmarkWebhook, BenchmarkCustomCode*): they need a server and a sandbox.
func BenchmarkEvaluators(b *testing.B) {
	reqs := benchRequests()
	env := Env{Embedder: hashEmbedder{}}
	for _, key := range slices.Sorted(maps.Keys(builtins)) {
		if key == "auto_webhook_test" || key == "auto_custom_code_run" {
			continue
		}
		req, ok := reqs[key]
		if !ok {
			b.Fatalf("no benchmark request for %s", key)
		}
		req.Key = key
		b.Run(key, func(b *testing.B) {
			if _, err := Run(b.Context(), env, req); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Run(b.Context(), env, req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
