// Package evaluators runs the catalog's built-in evaluators (every
// auto_* key but auto_ai_critique, which lives with the prompts, plus
// field_match_test, json_multi_field_match, match and echo) on one
// evaluated output, and returns the outputs their hydrated schemas describe.
//
// The scores are the compatible platform's, whose evaluators are Python: an
// output that is not a string is judged as its json.dumps text, values are
// compared with Python's ==, and the similarity ratio is difflib's
// (pyjson.go). Each evaluator's file documents where it departs from that.
//
// Request values are decoded JSON: nil, bool, float64 or json.Number,
// string, []any and map[string]any (Outputs may also be a json.RawMessage).
// Every comparison whose cost grows faster than its input is bounded: the
// quadratic text comparisons by the product of the lengths, backtracking
// regular expressions by a time limit, the match evaluator's tree by size.
package evaluators

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/services/runtime/internal/codebox"
	"github.com/assayhq/assay/services/runtime/internal/egress"
)

// Request is one evaluator call, the invoke envelope's data
// (invoke.Request) already bound.
type Request struct {
	Key        string         // catalog key without prefix, e.g. "auto_exact_match"
	Parameters map[string]any // the revision's (or inline) parameters
	Inputs     map[string]any // the testcase's data, correct answer included
	Outputs    any            // what the evaluated application returned
	Trace      map[string]any // the evaluated trace, when given
}

// Embedder is what semantic similarity needs from a model provider; the
// runtime's provider layer implements it.
type Embedder interface {
	Embed(ctx context.Context, model, connection string, input []string) ([][]float64, error)
}

// Env is what an evaluator may reach outside its inputs.
type Env struct {
	Embedder Embedder
	// Egress posts to webhook URLs under the SSRF rules (its Config says
	// whether private addresses are allowed).
	Egress *egress.Client
	// Code bounds custom code runs.
	Code codebox.Limits
}

// Func is one built-in evaluator. The dispatch table maps catalog keys to
// them; auto_webhook_test is webhook (webhook.go) and auto_custom_code_run
// is customCode (customcode.go).
type Func func(ctx context.Context, env Env, req Request) (map[string]any, error)

// builtins is the dispatch table, catalog key to evaluator. Each entry's
// outputs follow the catalog's hydrated outputs schema for its key.
var builtins = map[string]Func{
	"auto_exact_match":          exactMatch,
	"auto_regex_test":           regexTest,
	"field_match_test":          fieldMatch,
	"json_multi_field_match":    multiFieldMatch,
	"auto_starts_with":          startsWith,
	"auto_ends_with":            endsWith,
	"auto_contains":             contains,
	"auto_contains_any":         containsAny,
	"auto_contains_all":         containsAll,
	"auto_contains_json":        containsJSON,
	"auto_json_diff":            jsonDiff,
	"auto_levenshtein_distance": levenshteinDistance,
	"auto_similarity_match":     similarityMatch,
	"auto_semantic_similarity":  semanticSimilarity,
	"match":                     matchEval,
	"echo":                      echo,
	"auto_webhook_test":         webhook,
	"auto_custom_code_run":      customCode,
}

// Has reports whether key is a built-in evaluator this package runs.
func Has(key string) bool {
	_, ok := builtins[key]
	return ok
}

// Run executes req. Bad parameters or inputs are errs.Invalid or
// errs.Unprocessable naming the field (loc "parameters", <name> or
// "inputs", <key> or "outputs"); a provider's failure is returned
// unchanged for the caller to map. A key Has does not report is
// errs.NotImplemented. Nil Parameters or Inputs are read as empty.
func Run(ctx context.Context, env Env, req Request) (map[string]any, error) {
	f, ok := builtins[req.Key]
	if !ok {
		return nil, errs.New(errs.NotImplemented, "runtime.evaluator_unknown", "no built-in evaluator "+req.Key)
	}
	if raw, ok := req.Outputs.(json.RawMessage); ok {
		req.Outputs = decodeRaw(raw)
	}
	return f(ctx, env, req)
}

// decodeRaw is an output the caller left as raw JSON, decoded (numbers as
// json.Number), or its text when it is not JSON.
func decodeRaw(raw json.RawMessage) any {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if d.Decode(&v) != nil || d.More() {
		return string(raw)
	}
	return v
}
