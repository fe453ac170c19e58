package evaluators

import (
	"context"
	"regexp"
	"time"

	"github.com/dlclark/regexp2"

	"github.com/assayhq/assay/pkg/errs"
)

// regexTimeout bounds one match of a pattern that needs backtracking, and
// regexBudget all of one call's (the match evaluator may hold many).
const (
	regexTimeout = 250 * time.Millisecond
	regexBudget  = time.Second
)

// regexTest is auto_regex_test: success when searching the output's text
// for regex_pattern finds a match and regex_should_match (default true) is
// true, or finds none and it is false. case_sensitive (default true), which
// the compatible platform reads though its schema does not list it, makes
// the search ignore case when false.
func regexTest(_ context.Context, _ Env, req Request) (map[string]any, error) {
	pat, err := requiredString(req.Parameters, "regex_pattern")
	if err != nil {
		return nil, err
	}
	should, err := boolParam(req.Parameters, "regex_should_match", true)
	if err != nil {
		return nil, err
	}
	cs, err := boolParam(req.Parameters, "case_sensitive", true)
	if err != nil {
		return nil, err
	}
	re, err := compilePattern(pat, !cs)
	if err != nil {
		return nil, paramErr("regex_pattern", "Invalid regular expression: "+err.Error(), pat)
	}
	found, err := re.search(text(req.Outputs), time.Now().Add(regexTimeout))
	if err != nil {
		return nil, err
	}
	return map[string]any{"success": found == should}, nil
}

// pattern is a compiled regular expression. Patterns are Python's re
// syntax; Go's RE2 accepts most of them and matches in linear time, so it
// is tried first. Lookarounds and backreferences (the catalog's own "first
// and second" preset uses lookaheads) need a backtracking engine: those
// patterns fall back to regexp2, whose syntax is close to Python's, with a
// time limit per match so a catastrophic pattern costs regexTimeout, not
// the CPU.
type pattern struct {
	re2 *regexp.Regexp
	bt  *regexp2.Regexp
}

func compilePattern(p string, ignoreCase bool) (pattern, error) {
	src := p
	if ignoreCase {
		src = "(?i)" + p
	}
	if re, err := regexp.Compile(src); err == nil {
		return pattern{re2: re}, nil
	}
	opts := regexp2.None
	if ignoreCase {
		opts = regexp2.IgnoreCase
	}
	bt, err := regexp2.Compile(p, opts)
	if err != nil {
		return pattern{}, err
	}
	bt.MatchTimeout = regexTimeout
	return pattern{bt: bt}, nil
}

// search reports whether the pattern matches anywhere in s, as re.search.
// A backtracking match stops at regexTimeout or at deadline, the call's
// budget, whichever comes first.
func (p pattern) search(s string, deadline time.Time) (bool, error) {
	if p.re2 != nil {
		return p.re2.MatchString(s), nil
	}
	left := min(regexTimeout, time.Until(deadline))
	if left <= 0 {
		return false, errs.Field("the regular expressions of this call took longer than "+regexBudget.String()+": simplify them", p.bt.String(), "parameters", "regex_pattern")
	}
	p.bt.MatchTimeout = left
	ok, err := p.bt.MatchString(s)
	if err != nil {
		return false, errs.Field("the regular expression took longer than "+regexTimeout.String()+" on this output: simplify it", p.bt.String(), "parameters", "regex_pattern")
	}
	return ok, nil
}
