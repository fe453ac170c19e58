package evaluators

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/assayhq/assay/pkg/errs"
)

// Limits of the match evaluator's parameters: a hostile matcher tree is
// refused, not walked.
const (
	maxMatchers   = 256 // in the whole tree
	maxMatchDepth = 8
	maxReferences = 256 // per matcher
)

// matchEval is match (agenta:builtin:match:v0): a tree of matchers, each
// checking one value, aggregated into {score, success} plus one result per
// matcher under its key: {score, success, error?} and, for a group, its
// children's results.
//
// A matcher's target is a path into {inputs, outputs, trace}: "outputs",
// "$.outputs.answer", "{{inputs.country}}", "items[0].name" (a path that does
// not start with inputs, outputs or trace is read from outputs; a string
// holding JSON is parsed to walk into it). reference (or the list
// references) is a literal, or a path of the same form when it starts with
// "$" or is wrapped in {{ }}.
//
// Leaf kinds (match; default exact with references, else valid):
//   - valid: json mode, the value is JSON; text mode, it has non-empty text;
//   - exact, starts_with, ends_with, contains, regex: against each
//     reference; contains "any" (default) succeeds on one hit and scores
//     1/0, "all" needs every one and scores the fraction that hit; json mode
//     compares exact values as parsed JSON (Python ==);
//   - similarity (jaccard over words, levenshtein as 1 - distance/length,
//     cosine over word counts): the best (any) or worst (all) reference's
//     similarity, success at threshold (default 0.5);
//   - diff (full: the correct keys' values, as auto_json_diff; schema: keys
//     and types only; strict: the output's extra keys count against it):
//     the score of auto_json_diff, success at threshold (default 1.0).
//
// case_sensitive (default true) false lowers both texts. A value that
// cannot be checked (target missing, not JSON in json mode, a regex read
// from a path that does not compile) gives that matcher {score 0, success
// false, error}; malformed parameters are a 422 naming the field.
//
// A matcher with matchers is a group: score weighted (mean by weight,
// default 1), min or max of its children; success all, any, or threshold
// (score >= threshold, default 1.0). The parameters' top level is such a
// group, with the schema's defaults weighted / threshold / 1.0.
func matchEval(_ context.Context, _ Env, req Request) (map[string]any, error) {
	p := req.Parameters
	if _, ok := p["matchers"]; !ok {
		return nil, paramErr("matchers", "Field required", nil)
	}
	count := 0
	root, err := parseGroup(p, []any{"parameters"}, 0, &count)
	if err != nil {
		return nil, err
	}
	ctx := &matchCtx{
		root:     map[string]any{"inputs": req.Inputs, "outputs": req.Outputs, "trace": req.Trace},
		deadline: time.Now().Add(regexBudget),
	}
	res := root.run(ctx)
	return res.render(), nil
}

// matchCtx is one call's data and its regex time budget.
type matchCtx struct {
	root     map[string]any
	deadline time.Time
}

type matcher struct {
	key, target   string
	json          bool   // mode json
	kind          string // match
	refs          []ref
	all           bool // contains all
	caseSensitive bool
	similarity    string
	diff          string
	threshold     float64
	weight        float64
	// groups
	children []*matcher
	score    string
	success  string
}

// ref is one reference: a literal, or a path read at run time. A literal
// regex is compiled once, when the parameters are read.
type ref struct {
	lit   any
	path  string
	isPth bool
	re    *pattern
}

var (
	matchKinds   = []string{"valid", "exact", "starts_with", "ends_with", "contains", "regex", "similarity", "diff"}
	similarities = []string{"jaccard", "levenshtein", "cosine"}
	diffs        = []string{"full", "schema", "strict"}
	scoreModes   = []string{"weighted", "min", "max"}
	successModes = []string{"all", "any", "threshold"}
)

// parseGroup reads the group fields (matchers, score, success, threshold)
// of m at loc; the root is the parameters object itself.
func parseGroup(m map[string]any, loc []any, depth int, count *int) (*matcher, error) {
	g := &matcher{weight: 1}
	var err error
	if g.score, err = enumField(m, "score", scoreModes, "weighted", loc); err != nil {
		return nil, err
	}
	if g.success, err = enumField(m, "success", successModes, "threshold", loc); err != nil {
		return nil, err
	}
	if g.threshold, err = numField(m, "threshold", 1, -math.MaxFloat64, math.MaxFloat64, loc); err != nil {
		return nil, err
	}
	list, ok := m["matchers"].([]any)
	if !ok || len(list) == 0 {
		return nil, errs.Field("Input should be a non-empty list of matchers", m["matchers"], at(loc, "matchers")...)
	}
	if depth >= maxMatchDepth {
		return nil, errs.Field(fmt.Sprintf("matchers nest at most %d levels deep", maxMatchDepth), nil, at(loc, "matchers")...)
	}
	used := map[string]bool{"score": true, "success": true, "error": true}
	for i, item := range list {
		*count++
		if *count > maxMatchers {
			return nil, errs.Field(fmt.Sprintf("at most %d matchers in all", maxMatchers), nil, at(loc, "matchers")...)
		}
		iloc := at(loc, "matchers", i)
		obj, ok := item.(map[string]any)
		if !ok {
			return nil, errs.Field("Input should be a valid dictionary", item, iloc...)
		}
		c, err := parseMatcher(obj, iloc, depth+1, count)
		if err != nil {
			return nil, err
		}
		if used[c.key] {
			if _, explicit := obj["key"]; explicit {
				return nil, errs.Field("matcher keys must be unique and not score, success or error", c.key, at(iloc, "key")...)
			}
			base := c.key
			for n := i; used[c.key]; n++ {
				c.key = base + "#" + strconv.Itoa(n)
			}
		}
		used[c.key] = true
		g.children = append(g.children, c)
	}
	return g, nil
}

func parseMatcher(m map[string]any, loc []any, depth int, count *int) (*matcher, error) {
	target, ok := m["target"].(string)
	if !ok {
		return nil, errs.Field("Field required: target should be a string", m["target"], at(loc, "target")...)
	}
	key := target
	if v, ok := m["key"]; ok && v != nil {
		s, ok := v.(string)
		if !ok || s == "" {
			return nil, errs.Field("Input should be a non-empty string", v, at(loc, "key")...)
		}
		key = s
	}
	weight, err := numField(m, "weight", 1, 0, math.MaxFloat64, loc)
	if err != nil {
		return nil, err
	}
	if _, ok := m["matchers"]; ok {
		g, err := parseGroup(m, loc, depth, count)
		if err != nil {
			return nil, err
		}
		g.key, g.target, g.weight = key, target, weight
		return g, nil
	}
	c := &matcher{key: key, target: target, weight: weight}
	mode, err := enumField(m, "mode", []string{"text", "json"}, "text", loc)
	if err != nil {
		return nil, err
	}
	c.json = mode == "json"
	if c.refs, err = parseRefs(m, loc); err != nil {
		return nil, err
	}
	def := "valid"
	if len(c.refs) > 0 {
		def = "exact"
	}
	if c.kind, err = enumField(m, "match", matchKinds, def, loc); err != nil {
		return nil, err
	}
	if c.kind != "valid" && len(c.refs) == 0 {
		return nil, errs.Field("match "+c.kind+" needs a reference or references", nil, at(loc, "reference")...)
	}
	contains, err := enumField(m, "contains", []string{"all", "any"}, "any", loc)
	if err != nil {
		return nil, err
	}
	c.all = contains == "all"
	if c.caseSensitive, err = boolField(m, "case_sensitive", true, loc); err != nil {
		return nil, err
	}
	if c.similarity, err = enumField(m, "similarity", similarities, "levenshtein", loc); err != nil {
		return nil, err
	}
	if c.diff, err = enumField(m, "diff", diffs, "full", loc); err != nil {
		return nil, err
	}
	defThreshold := 1.0
	if c.kind == "similarity" {
		defThreshold = 0.5
	}
	if c.threshold, err = numField(m, "threshold", defThreshold, -math.MaxFloat64, math.MaxFloat64, loc); err != nil {
		return nil, err
	}
	if c.kind == "regex" {
		for i := range c.refs {
			r := &c.refs[i]
			if r.isPth {
				continue
			}
			s, ok := r.lit.(string)
			if !ok {
				return nil, errs.Field("a regex reference should be a string", r.lit, refLoc(loc, m, i)...)
			}
			re, err := compilePattern(s, !c.caseSensitive)
			if err != nil {
				return nil, errs.Field("Invalid regular expression: "+err.Error(), s, refLoc(loc, m, i)...)
			}
			r.re = &re
		}
	}
	return c, nil
}

func parseRefs(m map[string]any, loc []any) ([]ref, error) {
	var raw []any
	if v, ok := m["references"]; ok && v != nil {
		list, ok := v.([]any)
		if !ok {
			return nil, errs.Field("Input should be a valid list", v, at(loc, "references")...)
		}
		if len(list) > maxReferences {
			return nil, errs.Field(fmt.Sprintf("List should have at most %d items", maxReferences), len(list), at(loc, "references")...)
		}
		raw = list
	}
	if v, ok := m["reference"]; ok && v != nil {
		raw = append([]any{v}, raw...)
	}
	refs := make([]ref, len(raw))
	for i, v := range raw {
		if s, ok := v.(string); ok {
			if path, ok := pathExpr(s); ok {
				refs[i] = ref{path: path, isPth: true}
				continue
			}
		}
		refs[i] = ref{lit: v}
	}
	return refs, nil
}

// refLoc names reference i: "reference" when it is the single one, else
// references.<n>.
func refLoc(loc []any, m map[string]any, i int) []any {
	if _, ok := m["reference"]; ok && m["reference"] != nil {
		if i == 0 {
			return at(loc, "reference")
		}
		i--
	}
	return at(loc, "references", i)
}

// pathExpr reports whether s is a path expression ("$..." or "{{ ... }}")
// and returns the path without its markers.
func pathExpr(s string) (string, bool) {
	t := strings.TrimSpace(s)
	if strings.HasPrefix(t, "{{") && strings.HasSuffix(t, "}}") && len(t) >= 4 {
		return strings.TrimSpace(t[2 : len(t)-2]), true
	}
	if strings.HasPrefix(t, "$") {
		return t, true
	}
	return "", false
}

// resolve reads path from the context {inputs, outputs, trace}.
func resolve(ctx map[string]any, path string) (any, bool) {
	path = strings.TrimPrefix(strings.TrimSpace(path), "$")
	path = strings.ReplaceAll(path, "[", ".")
	path = strings.ReplaceAll(path, "]", "")
	path = strings.Trim(path, ".")
	if path == "" {
		return ctx, true
	}
	segs := strings.Split(path, ".")
	var v any
	switch segs[0] {
	case "inputs", "outputs", "trace":
		v, segs = ctx[segs[0]], segs[1:]
	default:
		v = ctx["outputs"]
	}
	for _, seg := range segs {
		if s, ok := v.(string); ok {
			if v, ok = parseJSON(s); !ok {
				return nil, false
			}
		}
		var ok bool
		if v, ok = lookupPath(v, seg); !ok {
			return nil, false
		}
	}
	return v, true
}

// result is one matcher's outcome.
type result struct {
	key      string
	score    float64
	success  bool
	err      string
	children []result
}

func (r result) render() map[string]any {
	out := make(map[string]any, 3+len(r.children))
	for _, c := range r.children {
		out[c.key] = c.render()
	}
	out["score"], out["success"] = r.score, r.success
	if r.err != "" {
		out["error"] = r.err
	}
	return out
}

func (m *matcher) run(ctx *matchCtx) result {
	if m.children != nil {
		return m.runGroup(ctx)
	}
	r := result{key: m.key}
	fail := func(msg string) result {
		r.err = msg
		return r
	}
	path, _ := pathExpr(m.target)
	if path == "" {
		path = m.target
	}
	v, found := resolve(ctx.root, path)
	if !found {
		return fail("target " + m.target + " not found")
	}
	if m.kind == "valid" {
		if m.json {
			_, r.success = asJSON(v)
		} else {
			r.success = v != nil && text(v) != ""
		}
		if r.success {
			r.score = 1
		}
		return r
	}
	refs := make([]any, len(m.refs))
	for i, rf := range m.refs {
		if !rf.isPth {
			refs[i] = rf.lit
			continue
		}
		rv, ok := resolve(ctx.root, rf.path)
		if !ok {
			return fail("reference " + rf.path + " not found")
		}
		refs[i] = rv
	}
	switch m.kind {
	case "similarity", "diff":
		best := math.Inf(-1)
		if m.all {
			best = math.Inf(1)
		}
		for _, rv := range refs {
			s, msg := m.graded(v, rv)
			if msg != "" {
				return fail(msg)
			}
			if m.all {
				best = min(best, s)
			} else {
				best = max(best, s)
			}
		}
		r.score, r.success = best, best >= m.threshold
		return r
	}
	hits := 0
	for i, rv := range refs {
		ok, msg := m.binary(v, rv, m.refs[i].re, ctx.deadline)
		if msg != "" {
			return fail(msg)
		}
		if ok {
			hits++
		}
	}
	if m.all {
		r.score, r.success = float64(hits)/float64(len(refs)), hits == len(refs)
	} else if hits > 0 {
		r.score, r.success = 1, true
	}
	return r
}

// binary runs a yes/no leaf check of v against one reference.
func (m *matcher) binary(v, rv any, re *pattern, deadline time.Time) (bool, string) {
	fold := !m.caseSensitive
	if m.json && m.kind == "exact" {
		got, ok := asJSON(v)
		if !ok {
			return false, "target " + m.target + " is not JSON"
		}
		want, ok := asJSON(rv)
		if !ok { // a reference that is not JSON is a JSON string
			want = rv
		}
		if fold {
			got, want = lowerStrings(got), lowerStrings(want)
		}
		return pyEqual(got, want), ""
	}
	s, ref := lower(text(v), fold), lower(text(rv), fold)
	switch m.kind {
	case "exact":
		return s == ref, ""
	case "starts_with":
		return strings.HasPrefix(s, ref), ""
	case "ends_with":
		return strings.HasSuffix(s, ref), ""
	case "contains":
		return strings.Contains(s, ref), ""
	case "regex":
		if re == nil {
			p, err := compilePattern(text(rv), fold)
			if err != nil {
				return false, "invalid regular expression: " + err.Error()
			}
			re = &p
		}
		ok, err := re.search(text(v), deadline)
		if err != nil {
			return false, "regular expression timed out"
		}
		return ok, ""
	}
	return false, "unknown match " + m.kind
}

// graded runs a similarity or diff leaf of v against one reference.
func (m *matcher) graded(v, rv any) (float64, string) {
	fold := !m.caseSensitive
	if m.kind == "similarity" {
		a, b := lower(text(v), fold), lower(text(rv), fold)
		if m.similarity == "levenshtein" {
			if int64(len(a))*int64(len(b)) > maxPairCost {
				return 0, "texts too long to compare"
			}
			return levenshteinSimilarity(a, b), ""
		}
		ta, tb := strings.Fields(a), strings.Fields(b)
		if m.similarity == "jaccard" {
			return jaccard(ta, tb), ""
		}
		return wordCosine(ta, tb), ""
	}
	got, ok := asJSON(v)
	if !ok {
		return 0, "target " + m.target + " is not JSON"
	}
	want, ok := asJSON(rv)
	if !ok {
		return 0, "reference is not JSON"
	}
	if fold {
		got, want = lowerStrings(got), lowerStrings(want)
	}
	o := diffOpts{schemaOnly: m.diff == "schema", predictKeys: m.diff == "strict"}
	switch want.(type) {
	case map[string]any, []any:
		return compareJSONs(want, got, o), ""
	}
	// A scalar reference has no keys: compare it whole.
	if (o.schemaOnly && pyType(want) == pyType(got)) || (!o.schemaOnly && pyEqual(want, got)) {
		return 1, ""
	}
	return 0, ""
}

func (m *matcher) runGroup(ctx *matchCtx) result {
	r := result{key: m.key, children: make([]result, len(m.children))}
	var wsum, sum float64
	r.success = m.success == "all"
	for i, c := range m.children {
		cr := c.run(ctx)
		r.children[i] = cr
		switch m.score {
		case "weighted":
			wsum += c.weight
			sum += c.weight * cr.score
		case "min":
			if i == 0 || cr.score < r.score {
				r.score = cr.score
			}
		case "max":
			if i == 0 || cr.score > r.score {
				r.score = cr.score
			}
		}
		switch m.success {
		case "all":
			r.success = r.success && cr.success
		case "any":
			r.success = r.success || cr.success
		}
	}
	if m.score == "weighted" && wsum > 0 {
		r.score = sum / wsum
	}
	if m.success == "threshold" {
		r.success = r.score >= m.threshold
	}
	return r
}

func jaccard(a, b []string) float64 {
	if len(a) == 0 && len(b) == 0 {
		return 1
	}
	sa := make(map[string]bool, len(a))
	for _, w := range a {
		sa[w] = true
	}
	sb := make(map[string]bool, len(b))
	inter := 0
	for _, w := range b {
		if !sb[w] {
			sb[w] = true
			if sa[w] {
				inter++
			}
		}
	}
	return float64(inter) / float64(len(sa)+len(sb)-inter)
}

// wordCosine is the cosine of the two texts' word-count vectors.
func wordCosine(a, b []string) float64 {
	if len(a) == 0 && len(b) == 0 {
		return 1
	}
	ca := map[string]float64{}
	for _, w := range a {
		ca[w]++
	}
	cb := map[string]float64{}
	for _, w := range b {
		cb[w]++
	}
	var dot, na, nb float64
	for w, x := range ca {
		dot += x * cb[w]
		na += x * x
	}
	for _, y := range cb {
		nb += y * y
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / (math.Sqrt(na) * math.Sqrt(nb))
}

// lowerStrings lowers every string of a decoded JSON value, keys included.
func lowerStrings(v any) any {
	switch x := v.(type) {
	case string:
		return strings.ToLower(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = lowerStrings(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[strings.ToLower(k)] = lowerStrings(e)
		}
		return out
	}
	return v
}

// at appends path elements to a copy of loc.
func at(loc []any, more ...any) []any {
	return append(slices.Clip(loc), more...)
}

func enumField(m map[string]any, name string, allowed []string, def string, loc []any) (string, error) {
	v, ok := m[name]
	if !ok || v == nil {
		return def, nil
	}
	s, ok := v.(string)
	if !ok || !slices.Contains(allowed, s) {
		return "", errs.Field("Input should be one of "+strings.Join(allowed, ", "), v, at(loc, name)...)
	}
	return s, nil
}

func boolField(m map[string]any, name string, def bool, loc []any) (bool, error) {
	v, ok := m[name]
	if !ok || v == nil {
		return def, nil
	}
	b, ok := v.(bool)
	if !ok {
		return false, errs.Field("Input should be a valid boolean", v, at(loc, name)...)
	}
	return b, nil
}

func numField(m map[string]any, name string, def, lo, hi float64, loc []any) (float64, error) {
	v, ok := m[name]
	if !ok || v == nil {
		return def, nil
	}
	f, ok := toFloat(v)
	if !ok || math.IsNaN(f) || math.IsInf(f, 0) || f < lo || f > hi {
		return 0, errs.Field("Input should be a finite number", v, at(loc, name)...)
	}
	return f, nil
}
