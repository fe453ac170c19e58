package evaluators

import (
	"fmt"
	"math"

	"github.com/assayhq/assay/pkg/errs"
)

// The correct answer key every evaluator that compares with the testcase
// falls back to, as the catalog's parameter schemas default it.
const defaultCorrectAnswerKey = "correct_answer"

// maxPairCost bounds the quadratic comparisons (Levenshtein, difflib's
// ratio): the product of the two texts' lengths in characters. 1<<26 cells
// is a few tenths of a second at worst; an LLM answer and its reference are
// far below it, and a hostile 1 MB pair is refused instead of costing hours.
const maxPairCost = 1 << 26

// paramErr is the 422 naming parameters.<name>.
func paramErr(name, msg string, got any) error {
	return errs.Field(msg, got, "parameters", name)
}

// stringParam returns parameters[name] when it is a string, def when it is
// absent or null, and a 422 naming it otherwise.
func stringParam(p map[string]any, name, def string) (string, error) {
	v, ok := p[name]
	if !ok || v == nil {
		return def, nil
	}
	s, ok := v.(string)
	if !ok {
		return "", paramErr(name, "Input should be a valid string", v)
	}
	return s, nil
}

// requiredString is stringParam for a parameter the schema requires.
func requiredString(p map[string]any, name string) (string, error) {
	v, ok := p[name]
	if !ok || v == nil {
		return "", paramErr(name, "Field required", nil)
	}
	s, ok := v.(string)
	if !ok {
		return "", paramErr(name, "Input should be a valid string", v)
	}
	return s, nil
}

// boolParam returns parameters[name] when it is a boolean, def when it is
// absent or null, and a 422 naming it otherwise.
func boolParam(p map[string]any, name string, def bool) (bool, error) {
	v, ok := p[name]
	if !ok || v == nil {
		return def, nil
	}
	b, ok := v.(bool)
	if !ok {
		return false, paramErr(name, "Input should be a valid boolean", v)
	}
	return b, nil
}

// numberParam returns parameters[name] as a float64 (JSON numbers decode as
// float64, or json.Number with UseNumber), ok=false when absent or null, and
// a 422 naming it when it is not a finite number or lies outside [lo, hi].
func numberParam(p map[string]any, name string, lo, hi float64) (float64, bool, error) {
	v, ok := p[name]
	if !ok || v == nil {
		return 0, false, nil
	}
	f, isNum := toFloat(v)
	if !isNum || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false, paramErr(name, "Input should be a valid number", v)
	}
	if f < lo || f > hi {
		return 0, false, paramErr(name, fmt.Sprintf("Input should be between %g and %g", lo, hi), v)
	}
	return f, true, nil
}

// correctAnswer reads the correct_answer_key parameter and the testcase
// value under it; a missing key is a 422 naming inputs.<key>.
func correctAnswer(req Request) (key string, v any, err error) {
	key, err = stringParam(req.Parameters, "correct_answer_key", defaultCorrectAnswerKey)
	if err != nil {
		return "", nil, err
	}
	v, ok := req.Inputs[key]
	if !ok {
		return key, nil, errs.Field("Field required: the testcase has no "+key+" (parameters.correct_answer_key)", nil, "inputs", key)
	}
	return key, v, nil
}

// pairCost refuses a pair of texts whose quadratic comparison would exceed
// maxPairCost, naming the longer side.
func pairCost(out, ref []rune, refKey string) error {
	if int64(len(out))*int64(len(ref)) <= maxPairCost {
		return nil
	}
	msg := fmt.Sprintf("the output (%d characters) and the correct answer (%d characters) are too long to compare: the product of their lengths must stay under %d", len(out), len(ref), maxPairCost)
	if len(out) >= len(ref) {
		return errs.Field(msg, nil, "outputs")
	}
	return errs.Field(msg, nil, "inputs", refKey)
}
