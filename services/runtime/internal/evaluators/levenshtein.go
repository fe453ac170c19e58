package evaluators

import (
	"context"
	"math"
	"strings"

	"github.com/agnivade/levenshtein"
)

// levenshteinDistance is auto_levenshtein_distance: score is the edit
// distance, in characters, between the output's text and the correct
// answer's; when threshold is given, success is distance <= threshold.
// case_sensitive (default true) false lowers both texts first.
func levenshteinDistance(_ context.Context, _ Env, req Request) (map[string]any, error) {
	threshold, hasThreshold, err := numberParam(req.Parameters, "threshold", 0, math.MaxFloat64)
	if err != nil {
		return nil, err
	}
	key, want, err := correctAnswer(req)
	if err != nil {
		return nil, err
	}
	a, b, err := folded(req, text(req.Outputs), text(want))
	if err != nil {
		return nil, err
	}
	if err := pairCost([]rune(a), []rune(b), key); err != nil {
		return nil, err
	}
	d := float64(levenshtein.ComputeDistance(a, b))
	out := map[string]any{"score": d}
	if hasThreshold {
		out["success"] = d <= threshold
	}
	return out, nil
}

// levenshteinSimilarity is 1 - distance/longer length, 1 for two empty
// texts: the match evaluator's "levenshtein" similarity.
func levenshteinSimilarity(a, b string) float64 {
	la, lb := len([]rune(a)), len([]rune(b))
	n := max(la, lb)
	if n == 0 {
		return 1
	}
	return 1 - float64(levenshtein.ComputeDistance(a, b))/float64(n)
}

// lower is strings.ToLower when fold is set.
func lower(s string, fold bool) string {
	if fold {
		return strings.ToLower(s)
	}
	return s
}
