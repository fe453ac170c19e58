package evaluators

import (
	"context"

	"github.com/pmezard/go-difflib/difflib"
)

// similarityMatch is auto_similarity_match: score is Python's
// difflib.SequenceMatcher(None, output, correct_answer).ratio() over
// characters, autojunk included (in a text of 200 characters or more, a
// character of the correct answer occurring in over 1% of it is treated as
// junk, exactly as Python does); success is score >= similarity_threshold
// (default 0.5, in [0, 1] as the schema says; a threshold of 0 is honoured,
// where Python's "or 0.5" would turn it into 0.5). case_sensitive (default
// true) false lowers both texts first.
func similarityMatch(_ context.Context, _ Env, req Request) (map[string]any, error) {
	threshold, ok, err := numberParam(req.Parameters, "similarity_threshold", 0, 1)
	if err != nil {
		return nil, err
	}
	if !ok {
		threshold = 0.5
	}
	key, want, err := correctAnswer(req)
	if err != nil {
		return nil, err
	}
	a, b, err := folded(req, text(req.Outputs), text(want))
	if err != nil {
		return nil, err
	}
	ra, rb := []rune(a), []rune(b)
	if err := pairCost(ra, rb, key); err != nil {
		return nil, err
	}
	score := ratio(ra, rb)
	return map[string]any{"score": score, "success": score >= threshold}, nil
}

// ratio is SequenceMatcher(None, a, b).ratio() on code points: go-difflib
// is a line-for-line port of Python's matcher over []string, so each
// character becomes one element.
func ratio(a, b []rune) float64 {
	return difflib.NewMatcher(runeStrings(a), runeStrings(b)).Ratio()
}

// runeStrings splits into one-character strings. Strings of one rune below
// utf8.RuneSelf share Go's static single-byte strings, so ASCII text costs
// one slice allocation.
func runeStrings(rs []rune) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = string(r)
	}
	return out
}
