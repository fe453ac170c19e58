package sdkcompat

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// gpt-4o-mini's price in US dollars per million tokens (input, output,
// cache read), the same in our embedded table and in every public price
// list: the tests check the cost the platform computed against the tokens
// it stored.
const (
	miniInput  = 0.15
	miniOutput = 0.60
	miniCached = 0.075
)

// miniCost is what a gpt-4o-mini call costs: the cached part of the prompt
// (included in prompt, as OpenAI counts) at the cache-read rate.
func miniCost(prompt, cached, completion float64) float64 {
	return ((prompt-cached)*miniInput + cached*miniCached + completion*miniOutput) / 1e6
}

// metric is a number under a span's attributes (e.g.
// "ag.metrics.tokens.cumulative.total"); a missing one is 0.
func metric(t *testing.T, span map[string]any, path string) float64 {
	t.Helper()
	v, ok := attr(span, path)
	if !ok {
		return 0
	}
	f, ok := v.(float64)
	if !ok {
		t.Fatalf("%s of span %v is %T %v, not a number", path, span["span_name"], v, v)
	}
	return f
}

// spanType is the span's ag type.
func spanType(span map[string]any) string {
	if s, ok := span["span_type"].(string); ok {
		return s
	}
	v, _ := attr(span, "ag.type.span")
	s, _ := v.(string)
	return s
}

// byType returns the spans of one ag span type.
func byType(spans []map[string]any, typ string) []map[string]any {
	var out []map[string]any
	for _, s := range spans {
		if spanType(s) == typ {
			out = append(out, s)
		}
	}
	return out
}

// root is the span without a parent among spans.
func root(t *testing.T, spans []map[string]any) map[string]any {
	t.Helper()
	ids := map[any]bool{}
	for _, s := range spans {
		ids[s["span_id"]] = true
	}
	var roots []map[string]any
	for _, s := range spans {
		if p, _ := s["parent_id"].(string); p == "" || !ids[p] {
			roots = append(roots, s)
		}
	}
	if len(roots) != 1 {
		t.Fatalf("want one root span, got %d:\n%s", len(roots), dump(spans))
	}
	return roots[0]
}

// assertCountedOnce checks that every span's cumulative tokens and costs
// are its own plus its children's, once: the root's cumulative tokens are
// the sum of the model calls' own (incremental) ones, and so are its costs.
func assertCountedOnce(t *testing.T, spans []map[string]any, calls []map[string]any) {
	t.Helper()
	r := root(t, spans)
	for _, k := range []string{"prompt", "completion", "total"} {
		var sum float64
		for _, c := range calls {
			sum += metric(t, c, "ag.metrics.tokens.incremental."+k)
		}
		if got := metric(t, r, "ag.metrics.tokens.cumulative."+k); got != sum {
			t.Errorf("root %v: cumulative %s tokens %v, want the model calls' sum %v (counted once)\n%s", r["span_name"], k, got, sum, dump(spans))
		}
	}
	var cost float64
	for _, c := range calls {
		cost += metric(t, c, "ag.metrics.costs.incremental.total")
	}
	if got := metric(t, r, "ag.metrics.costs.cumulative.total"); !near(got, cost) {
		t.Errorf("root %v: cumulative cost %v, want the model calls' sum %v", r["span_name"], got, cost)
	}
	var own float64
	for _, s := range spans {
		own += metric(t, s, "ag.metrics.tokens.incremental.total")
	}
	if got := metric(t, r, "ag.metrics.tokens.cumulative.total"); got != own {
		t.Errorf("root %v: cumulative tokens %v, but the spans' own tokens add up to %v: some span repeats a call's usage", r["span_name"], got, own)
	}
}

// assertMiniCost checks that a gpt-4o-mini call's stored cost agrees with
// its stored tokens (cache reads at their rate).
func assertMiniCost(t *testing.T, span map[string]any) {
	t.Helper()
	p := metric(t, span, "ag.metrics.tokens.incremental.prompt")
	c := metric(t, span, "ag.metrics.tokens.incremental.completion")
	cached := metric(t, span, "ag.metrics.tokens.incremental.cache_read")
	if p == 0 || c == 0 {
		t.Errorf("span %v has no prompt/completion tokens: %s", span["span_name"], dump([]map[string]any{span}))
		return
	}
	want := miniCost(p, cached, c)
	if got := metric(t, span, "ag.metrics.costs.incremental.total"); !near(got, want) {
		t.Errorf("span %v: cost %v, want %v for %v prompt (%v cached) + %v completion tokens of gpt-4o-mini", span["span_name"], got, want, p, cached, c)
	}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-12+1e-9*math.Abs(b) }

// str is a string under a span's attributes ("" when absent or not one).
func str(span map[string]any, path string) string {
	v, _ := attr(span, path)
	s, _ := v.(string)
	return s
}

// list is a list under a span's attributes.
func list(span map[string]any, path string) []any {
	v, _ := attr(span, path)
	l, _ := v.([]any)
	return l
}

// field reads a dotted path inside a decoded JSON value.
func field(v any, path string) any {
	for _, k := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// toJSON is v as JSON text, for substring checks.
func toJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
