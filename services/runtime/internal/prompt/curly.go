package prompt

import (
	"regexp"
	"strings"
)

// curlyVar is reference §5's curly placeholder.
var curlyVar = regexp.MustCompile(`\{\{\s*(.*?)\s*\}\}`)

// renderCurly substitutes every {{ name }} in one pass: a substituted value
// is never scanned again, so an input cannot inject placeholders.
func renderCurly(src string, ctx map[string]any, _ bool) (string, error) {
	if !strings.Contains(src, "{{") {
		return src, nil
	}
	var b strings.Builder
	last := 0
	for _, m := range curlyVar.FindAllStringSubmatchIndex(src, -1) {
		name := src[m[2]:m[3]]
		v, ok := resolve(ctx, name)
		if !ok {
			return "", unresolved(name)
		}
		b.WriteString(src[last:m[0]])
		b.WriteString(stringify(v))
		if b.Len() > MaxOutput {
			return "", tooLarge("")
		}
		last = m[1]
	}
	b.WriteString(src[last:])
	return b.String(), nil
}
