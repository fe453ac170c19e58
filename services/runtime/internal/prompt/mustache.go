package prompt

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/cbroglie/mustache"
)

// Mustache is rendered by github.com/cbroglie/mustache with no HTML
// escaping. Partials are refused (no loader is reachable), as are empty
// tags and JSON Pointer tags ({{/a/b}} would read as a closing tag);
// {{$...}} JSONPath tags are resolved by this package. A variable tag no
// input resolves is an error, as with the other formats; a section over a
// missing key is simply false, as Mustache means it.

func init() {
	// The library's switch is package-wide; this package is its only user
	// in the runtime, and an unresolved variable must be an error.
	mustache.AllowMissingVariables = false
}

// mustacheBudget bounds the element renders a template may cost: nested
// sections multiply by the length of the lists they iterate, so
// {{#a}}{{#a}}{{#a}}...{{/a}}{{/a}}{{/a}} over a long list is refused
// before it runs.
const mustacheBudget = 1 << 18

var mustachePath = regexp.MustCompile(`\{\{\{?\s*(\$[^{}]*?)\s*\}?\}\}`)

type noPartials struct{}

func (noPartials) Get(name string) (string, error) {
	return "", fmt.Errorf("partials are not supported: {{>%s}}", name)
}

func renderMustache(src string, ctx map[string]any, _ bool) (string, error) {
	if !strings.Contains(src, "{{") {
		return src, nil
	}
	data := mustacheData(ctx).(mObject)
	// {{$...}} becomes a generated variable holding the resolved value, so
	// the value itself is never parsed as a template.
	var perr error
	n := 0
	src = mustachePath.ReplaceAllStringFunc(src, func(tag string) string {
		expr := mustachePath.FindStringSubmatch(tag)[1]
		v, ok := lookupJSONPath(ctx, expr)
		if !ok {
			if perr == nil {
				perr = unresolved(expr)
			}
			return ""
		}
		name := "__assay_path_" + strconv.Itoa(n)
		n++
		data[name] = mString(stringify(v))
		return "{{{" + name + "}}}"
	})
	if perr != nil {
		return "", perr
	}
	tmpl, err := mustache.ParseStringPartialsRaw(src, noPartials{}, true)
	if err != nil {
		return "", templateErr(FormatMustache, err)
	}
	if err := checkMustacheTags(tmpl.Tags()); err != nil {
		return "", err
	}
	// Top-level variables resolve against the inputs alone: check them
	// here to name the whole tag (user.zip), where the library would name
	// only its last part.
	for _, tag := range tmpl.Tags() {
		if tag.Type() == mustache.Variable && tag.Name() != "." {
			if _, ok := data[tag.Name()]; ok {
				continue
			}
			if _, ok := lookupDotted(ctx, tag.Name()); !ok {
				return "", unresolved(tag.Name())
			}
		}
	}
	if cost := mustacheCost(tmpl.Tags(), 1, longestList(ctx, 0)); cost > mustacheBudget {
		return "", templateErr(FormatMustache, errors.New("nested sections over these inputs would cost too much to render"))
	}
	w := &capWriter{max: MaxOutput}
	err = tmpl.FRender(w, data)
	if w.over {
		return "", tooLarge("")
	}
	if err != nil {
		var name string
		if _, e := fmt.Sscanf(err.Error(), "missing variable %q", &name); e == nil {
			return "", unresolved(name)
		}
		return "", templateErr(FormatMustache, err)
	}
	return w.b.String(), nil
}

// checkMustacheTags refuses partials and pointer-like names anywhere.
func checkMustacheTags(tags []mustache.Tag) error {
	for _, t := range tags {
		switch t.Type() {
		case mustache.Partial:
			return templateErr(FormatMustache, fmt.Errorf("partials are not supported: {{>%s}}", t.Name()))
		case mustache.Section, mustache.InvertedSection:
			if err := checkMustacheTags(t.Tags()); err != nil {
				return err
			}
		}
		if strings.HasPrefix(t.Name(), "/") {
			return templateErr(FormatMustache, fmt.Errorf("JSON Pointer tags are not supported: {{%s}}", t.Name()))
		}
	}
	return nil
}

// mustacheCost is an upper bound of the element renders of tags when each
// section iterates at most longest times.
func mustacheCost(tags []mustache.Tag, mult, longest int) int {
	cost := 0
	for _, t := range tags {
		cost += mult
		if t.Type() == mustache.Section || t.Type() == mustache.InvertedSection {
			inner := mult * longest
			if inner > mustacheBudget {
				return mustacheBudget + 1
			}
			cost += mustacheCost(t.Tags(), inner, longest)
		}
		if cost > mustacheBudget {
			return cost
		}
	}
	return cost
}

// longestList is the length of the longest list anywhere in v (at least 1).
func longestList(v any, depth int) int {
	best := 1
	if depth > 64 {
		return best
	}
	switch x := v.(type) {
	case map[string]any:
		for _, e := range x {
			if n := longestList(e, depth+1); n > best {
				best = n
			}
		}
	case []any:
		if len(x) > best {
			best = len(x)
		}
		for _, e := range x {
			if n := longestList(e, depth+1); n > best {
				best = n
			}
		}
	}
	return best
}

// The mustache library prints values with fmt; these types make every
// value print as this package's other formats do (strings raw, the rest as
// compact JSON, null as nothing) while keeping Mustache's truthiness
// (false, 0, "", null and [] are false).
type (
	mObject map[string]any
	mList   []any
	mString string
	mNumber float64
	mNull   struct{}
)

func (o mObject) String() string { return stringify(plain(o)) }
func (l mList) String() string   { return stringify(plain(l)) }
func (n mNumber) String() string { return formatFloat(float64(n)) }
func (mNull) String() string     { return "" }

func mustacheData(v any) any {
	switch x := v.(type) {
	case map[string]any:
		o := make(mObject, len(x))
		for k, e := range x {
			o[k] = mustacheData(e)
		}
		return o
	case []any:
		l := make(mList, len(x))
		for i, e := range x {
			l[i] = mustacheData(e)
		}
		return l
	case string:
		return mString(x)
	case nil:
		return mNull{}
	case bool:
		return x
	}
	if f, ok := toFloat(v); ok {
		return mNumber(f)
	}
	return v
}

// plain undoes mustacheData for JSON rendering.
func plain(v any) any {
	switch x := v.(type) {
	case mObject:
		o := make(map[string]any, len(x))
		for k, e := range x {
			o[k] = plain(e)
		}
		return o
	case mList:
		l := make([]any, len(x))
		for i, e := range x {
			l[i] = plain(e)
		}
		return l
	case mString:
		return string(x)
	case mNumber:
		return float64(x)
	case mNull:
		return nil
	}
	return v
}

// capWriter collects output and refuses to grow past max.
type capWriter struct {
	b    strings.Builder
	max  int
	over bool
}

func (w *capWriter) Write(p []byte) (int, error) {
	if w.over || w.b.Len()+len(p) > w.max {
		w.over = true
		return 0, errors.New("output too large")
	}
	return w.b.Write(p)
}

func (w *capWriter) WriteString(s string) (int, error) {
	return w.Write([]byte(s))
}
