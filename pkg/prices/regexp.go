package prices

import (
	"fmt"
	"regexp"
	"strings"
)

// jsRegexp is a JavaScript regular expression of the price data in Go's
// RE2 syntax. RE2 has no lookahead, but the data uses it only as a guard
// right after the start anchor, "^(?!X)Y", which is "^Y matches and ^X does
// not"; any other use is refused at load, so a refresh that brings one
// fails the package's tests instead of mispricing.
type jsRegexp struct {
	re  *regexp.Regexp
	not []*regexp.Regexp
}

func compileJS(src string) (*jsRegexp, error) {
	r := &jsRegexp{}
	rest := src
	if strings.HasPrefix(rest, "^") {
		for strings.HasPrefix(rest[1:], "(?!") {
			end := closingParen(rest, 1)
			if end < 0 {
				return nil, fmt.Errorf("regex %q: unbalanced lookahead", src)
			}
			not, err := regexp.Compile("^(?:" + rest[4:end] + ")")
			if err != nil {
				return nil, fmt.Errorf("regex %q: %w", src, err)
			}
			r.not = append(r.not, not)
			rest = "^" + rest[end+1:]
		}
	}
	re, err := regexp.Compile(rest)
	if err != nil {
		return nil, fmt.Errorf("regex %q: %w", src, err)
	}
	r.re = re
	return r, nil
}

// closingParen is the index of the parenthesis closing the group that
// opens at s[open], skipping escapes and character classes.
func closingParen(s string, open int) int {
	depth, class := 0, false
	for i := open; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\':
			i++
		case class:
			if c == ']' {
				class = false
			}
		case c == '[':
			class = true
		case c == '(':
			depth++
		case c == ')':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

func (r *jsRegexp) MatchString(s string) bool {
	for _, n := range r.not {
		if n.MatchString(s) {
			return false
		}
	}
	return r.re.MatchString(s)
}
