package evaluators

import (
	"context"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/assayhq/assay/pkg/errs"
)

// jsonDiff is auto_json_diff: the compatible platform's compare_jsons score
// of the output against the correct answer (both objects or arrays, or
// strings holding them), with success when score >= threshold (default 0.5,
// in (0, 1]).
//
// The score is the fraction of the correct answer's flattened leaf paths
// ("a.b.0.c") whose value the output has too (Python ==); with
// compare_schema_only, only the key and the value's Python type must agree;
// with predict_keys, the output's extra paths count in the denominator, so
// invented keys lower the score. case_insensitive_keys lowers every path on
// both sides before comparing. (The compatible platform takes the key set
// before lowering, so a correct-answer key with an upper-case letter never
// matches there; here it matches, which is what the option says.)
func jsonDiff(_ context.Context, _ Env, req Request) (map[string]any, error) {
	p := req.Parameters
	var o diffOpts
	var err error
	if o.schemaOnly, err = boolParam(p, "compare_schema_only", false); err != nil {
		return nil, err
	}
	if o.predictKeys, err = boolParam(p, "predict_keys", false); err != nil {
		return nil, err
	}
	if o.foldKeys, err = boolParam(p, "case_insensitive_keys", false); err != nil {
		return nil, err
	}
	threshold, ok, err := numberParam(p, "threshold", 0, 1)
	if err != nil {
		return nil, err
	}
	if !ok || threshold == 0 { // Python: parameters.get("threshold") or 0.5
		threshold = 0.5
	}
	key, ca, err := correctAnswer(req)
	if err != nil {
		return nil, err
	}
	want, ok := asJSON(ca)
	if !ok {
		return nil, errs.Field("the correct answer is not valid JSON", ca, "inputs", key)
	}
	got, ok := asJSON(req.Outputs)
	if !ok {
		return nil, errs.Field("the output is not valid JSON", nil, "outputs")
	}
	score := compareJSONs(want, got, o)
	return map[string]any{"score": score, "success": score >= threshold}, nil
}

type diffOpts struct {
	schemaOnly, predictKeys, foldKeys bool
}

// compareJSONs is the compatible platform's compare_jsons(ground_truth,
// app_output): 0.0 when there is no key to compare (scalars, empty
// containers).
func compareJSONs(want, got any, o diffOpts) float64 {
	fw := flatten(want, o.foldKeys)
	fg := flatten(got, o.foldKeys)
	n := len(fw)
	if o.predictKeys {
		for k := range fg {
			if _, ok := fw[k]; !ok {
				n++
			}
		}
	}
	if n == 0 {
		return 0
	}
	sum := 0.0
	for k, w := range fw {
		g, ok := fg[k]
		if !ok || w == nil || g == nil { // Python: both values must not be None
			continue
		}
		if o.schemaOnly {
			if pyType(w) == pyType(g) {
				sum++
			}
		} else if pyEqual(w, g) {
			sum++
		}
	}
	// The output's extra keys (predict_keys) are missing from the
	// correct answer, so they only add to the denominator.
	return sum / float64(n)
}

// flatten is compare_jsons' flatten_json: leaf values by dot path, list
// items by index; empty objects and lists contribute no path.
func flatten(v any, fold bool) map[string]any {
	out := map[string]any{}
	var walk func(v any, path string)
	join := func(path, k string) string {
		if fold {
			k = strings.ToLower(k)
		}
		if path == "" {
			return k
		}
		return path + "." + k
	}
	walk = func(v any, path string) {
		switch x := v.(type) {
		case map[string]any:
			if fold {
				// Keys differing only in case collapse into one path:
				// visit them in a fixed order so the same one wins on
				// every run.
				for _, k := range slices.Sorted(maps.Keys(x)) {
					walk(x[k], join(path, k))
				}
				return
			}
			for k, e := range x {
				walk(e, join(path, k))
			}
		case []any:
			for i, e := range x {
				walk(e, join(path, strconv.Itoa(i)))
			}
		default:
			if path != "" {
				out[path] = v
			}
		}
	}
	walk(v, "")
	return out
}
