package prompt

import (
	"strings"
)

// renderCurly substitutes every {{ name }} in one pass: a substituted value
// is never scanned again, so an input cannot inject placeholders.
//
// Placeholders are those of the compatible platform's regular expression
// \{\{\s*(.*?)\s*\}\}, found by nextCurly (a hand-written scanner with the
// same matches, about five times faster; curly_internal_test.go checks it
// against the expression).
func renderCurly(src string, ctx map[string]any, _ bool) (string, error) {
	if !strings.Contains(src, "{{") {
		return src, nil
	}
	var b strings.Builder
	last := 0
	for pos := 0; ; {
		start, end, name, ok := nextCurly(src, pos)
		if !ok {
			break
		}
		v, found := resolve(ctx, name)
		if !found {
			return "", unresolved(name)
		}
		b.WriteString(src[last:start])
		b.WriteString(stringify(v))
		if b.Len() > MaxOutput {
			return "", tooLarge("")
		}
		last, pos = end, end
	}
	b.WriteString(src[last:])
	return b.String(), nil
}

// nextCurly finds the first placeholder at or after pos: src[start:end] is
// the whole {{ ... }}, name its trimmed content. As in the expression, the
// content may not hold a newline except in its surrounding whitespace, and
// ends at the first "}}".
func nextCurly(src string, pos int) (start, end int, name string, ok bool) {
	for {
		i := strings.Index(src[pos:], "{{")
		if i < 0 {
			return 0, 0, "", false
		}
		start = pos + i
		j := strings.Index(src[start+2:], "}}")
		if j < 0 {
			return 0, 0, "", false
		}
		name = strings.Trim(src[start+2:start+2+j], " \t\n\f\r")
		if !strings.Contains(name, "\n") {
			return start, start + 2 + j + 2, name, true
		}
		pos = start + 1
	}
}
