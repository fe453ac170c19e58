package embeds

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/assayhq/assay/services/registry/internal/versioned"
)

const (
	embedOpen = "@ag.embed["
	refsOpen  = "@ag.references["
	selOpen   = "@ag.selector["
)

// span is one string token: s[start:end] is "@ag.embed[" inner "]".
type span struct{ start, end int }

// inner is the text between the token's brackets.
func (sp span) inner(s string) string { return s[sp.start+len(embedOpen) : sp.end-1] }

// scanTokens finds the string tokens of s. A token's brackets balance (the
// compatible form nests @ag.references[...] and @ag.selector[...] inside
// @ag.embed[...]); an "@ag.embed[" that is never closed is no token, its
// text is left as it is. One pass pairs the brackets, so a long string of
// unclosed openers costs linear time, not a scan to the end per opener;
// hence brackets inside a value must balance too (slugs, ids, versions and
// paths hold none).
func scanTokens(s string) []span {
	if !strings.Contains(s, embedOpen) {
		return nil
	}
	// closes maps the index of each token's "[" to the index past its "]".
	closes := map[int]int{}
	var open []int
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '[':
			open = append(open, i)
		case ']':
			if n := len(open); n > 0 {
				o := open[n-1]
				open = open[:n-1]
				if o+1 >= len(embedOpen) && s[o+1-len(embedOpen):o+1] == embedOpen {
					closes[o] = i + 1
				}
			}
		}
	}
	var out []span
	for from := 0; ; {
		i := strings.Index(s[from:], embedOpen)
		if i < 0 {
			return out
		}
		start := from + i
		end, ok := closes[start+len(embedOpen)-1]
		if !ok {
			from = start + len(embedOpen)
			continue
		}
		out = append(out, span{start, end})
		from = end
	}
}

// closing returns the index just past the "]" that closes the bracket
// opened right before s[i], or -1.
func closing(s string, i int) int {
	for depth := 1; i < len(s); i++ {
		switch s[i] {
		case '[':
			depth++
		case ']':
			depth--
			if depth == 0 {
				return i + 1
			}
		}
	}
	return -1
}

// splitTop splits s at the commas outside brackets, braces and JSON
// strings (a JSON part may hold commas).
func splitTop(s string) []string {
	var out []string
	depth, quoted, last := 0, false, 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quoted && c == '\\':
			i++
		case c == '"':
			quoted = !quoted
		case quoted:
		case c == '[' || c == '{':
			depth++
		case c == ']' || c == '}':
			depth--
		case c == ',' && depth == 0:
			out = append(out, s[last:i])
			last = i + 1
		}
	}
	return append(out, s[last:])
}

// parseText reads the inside of a string token, in either syntax:
//
//	@ag.references[workflow.slug=x, workflow_revision.version=2], @ag.selector[path:a.b]
//	workflow.slug=x,workflow_revision.version=2;key=k;path=a.b
//
// The first is the compatible platform's; the second is ours, kept as an
// alias. An empty path means the whole data.
func parseText(in string) (Target, string, *failure) {
	if strings.HasPrefix(strings.TrimSpace(in), refsOpen) {
		return parseCompatible(in)
	}
	return parseLegacy(in)
}

// parseCompatible reads "@ag.references[REFS] [, @ag.selector[SEL]]" (the
// parts in any order, each once). REFS is a JSON object as in the object
// form, or comma-separated <entity>.<id|slug|version>=<value> (":" may
// stand for "="); SEL is a JSON object as in the object form, or
// comma-separated path=<dotted path> / key=<environment key> (":" may
// stand for "="), or a bare dotted path.
func parseCompatible(in string) (Target, string, *failure) {
	var refsIn, selIn *string
	for _, part := range splitTop(in) {
		part = strings.TrimSpace(part)
		var dst **string
		var open string
		switch {
		case strings.HasPrefix(part, refsOpen):
			dst, open = &refsIn, refsOpen
		case strings.HasPrefix(part, selOpen):
			dst, open = &selIn, selOpen
		default:
			return Target{}, "", &failure{"invalid_token", fmt.Sprintf("part %q of @ag.embed[...] is neither @ag.references[...] nor @ag.selector[...]", part)}
		}
		if *dst != nil {
			return Target{}, "", &failure{"invalid_token", fmt.Sprintf("%s...] is given twice", open)}
		}
		if closing(part, len(open)) != len(part) {
			return Target{}, "", &failure{"invalid_token", fmt.Sprintf("%q has text after its closing ]", part)}
		}
		body := part[len(open) : len(part)-1]
		*dst = &body
	}
	if refsIn == nil {
		return Target{}, "", &failure{"invalid_token", "@ag.embed[...] needs @ag.references[...]"}
	}
	var t Target
	if body := strings.TrimSpace(*refsIn); strings.HasPrefix(body, "{") {
		var raw any
		if err := json.Unmarshal([]byte(body), &raw); err != nil {
			return Target{}, "", &failure{"invalid_token", "@ag.references[...] is not a JSON object: " + err.Error()}
		}
		m, ok := raw.(map[string]any)
		if !ok || len(m) == 0 {
			return Target{}, "", &failure{"invalid_token", "@ag.references[...] needs at least one reference"}
		}
		refs, f := objectRefs(m)
		if f != nil {
			return Target{}, "", f
		}
		t.Refs = refs
	} else {
		refs, f := textRefs(body, true)
		if f != nil {
			return Target{}, "", f
		}
		t.Refs = refs
	}
	sel := ""
	if selIn != nil {
		body := strings.TrimSpace(*selIn)
		if strings.HasPrefix(body, "{") {
			var raw any
			if err := json.Unmarshal([]byte(body), &raw); err != nil {
				return Target{}, "", &failure{"invalid_token", "@ag.selector[...] is not a JSON object: " + err.Error()}
			}
			p, key, f := objectSelector(raw)
			if f != nil {
				return Target{}, "", f
			}
			sel, t.Key = p, key
		} else {
			for _, item := range splitTop(body) {
				item = strings.TrimSpace(item)
				name, val, ok := cutAny(item)
				if !ok && item != "" && !strings.ContainsAny(item, "=:") {
					name, val = "path", item // a bare path
				}
				switch {
				case val == "" || (name != "path" && name != "key"):
					return Target{}, "", &failure{"invalid_token", fmt.Sprintf("@ag.selector item %q is not path=<dotted path>, key=<environment key> or a bare path", item)}
				case name == "path":
					sel = val
				default:
					k := val
					t.Key = &k
				}
			}
		}
	}
	return t, sel, nil
}

// cutAny cuts item at its first "=" or ":", whichever comes first.
func cutAny(item string) (string, string, bool) {
	i := strings.IndexAny(item, "=:")
	if i < 0 {
		return item, "", false
	}
	return strings.TrimSpace(item[:i]), strings.TrimSpace(item[i+1:]), true
}

// parseLegacy reads "workflow.slug=x,workflow_revision.version=2;key=k;path=a.b".
func parseLegacy(in string) (Target, string, *failure) {
	refPart, sel := in, ""
	var key *string
	if i := strings.Index(in, ";"); i >= 0 {
		refPart = in[:i]
		for _, part := range strings.Split(in[i+1:], ";") {
			name, val, _ := strings.Cut(strings.TrimSpace(part), "=")
			switch {
			case val == "" || (name != "path" && name != "key"):
				return Target{}, "", &failure{"invalid_token", "each part after ';' must be path=<dotted path> or key=<environment key>"}
			case name == "path":
				sel = val
			default:
				key = &val
			}
		}
	}
	refs, f := textRefs(refPart, false)
	if f != nil {
		return Target{}, "", f
	}
	return Target{Refs: refs, Key: key}, sel, nil
}

// textRefs reads comma-separated <entity>.<id|slug|version>=<value>; colon
// also allows ":" for "=".
func textRefs(in string, colon bool) (map[string]versioned.Ref, *failure) {
	refs := map[string]versioned.Ref{}
	for _, item := range splitTop(in) {
		item = strings.TrimSpace(item)
		lhs, val, ok := strings.Cut(item, "=")
		if colon {
			lhs, val, ok = cutAny(item)
		}
		ent, field, ok2 := strings.Cut(lhs, ".")
		ent, field, val = strings.TrimSpace(ent), strings.TrimSpace(field), strings.TrimSpace(val)
		if !ok || !ok2 || ent == "" || val == "" {
			return nil, &failure{"invalid_token", fmt.Sprintf("reference %q is not <entity>.<id|slug|version>=<value>", item)}
		}
		ref := refs[ent]
		switch field {
		case "id":
			id, err := uuid.Parse(val)
			if err != nil {
				return nil, &failure{"invalid_token", fmt.Sprintf("%s.id %q is not a UUID", ent, val)}
			}
			ref.ID = &id
		case "slug":
			ref.Slug = &val
		case "version":
			ref.Version = &val
		default:
			return nil, &failure{"invalid_token", fmt.Sprintf("unknown reference field %q", field)}
		}
		refs[ent] = ref
	}
	return refs, nil
}

// objectRefs reads an "@ag.references" object.
func objectRefs(raw map[string]any) (map[string]versioned.Ref, *failure) {
	refs := map[string]versioned.Ref{}
	for ent, rv := range raw {
		b, _ := json.Marshal(rv)
		var ref versioned.Ref
		if _, ok := rv.(map[string]any); !ok {
			return nil, &failure{"invalid_token", fmt.Sprintf("@ag.references.%s is not a reference object", ent)}
		}
		if err := json.Unmarshal(b, &ref); err != nil {
			return nil, &failure{"invalid_token", fmt.Sprintf("@ag.references.%s is not a reference: %v", ent, err)}
		}
		refs[ent] = ref
	}
	return refs, nil
}

const selectorShape = `@ag.selector must be {"path": "<dotted path>", "key": "<environment key>"}, either part optional but not empty`

// objectSelector reads an "@ag.selector" object: the path ("" when absent:
// the whole data) and the key.
func objectSelector(s any) (string, *string, *failure) {
	sm, _ := s.(map[string]any)
	if len(sm) == 0 {
		return "", nil, &failure{"invalid_token", selectorShape}
	}
	sel := ""
	var key *string
	for k, v := range sm {
		str, _ := v.(string)
		if str == "" || (k != "path" && k != "key") {
			return "", nil, &failure{"invalid_token", selectorShape}
		}
		if k == "path" {
			sel = str
		} else {
			key = &str
		}
	}
	return sel, key, nil
}

// parseObject reads the value of an "@ag.embed" key.
func parseObject(spec any) (Target, string, *failure) {
	m, ok := spec.(map[string]any)
	if !ok {
		return Target{}, "", &failure{"invalid_token", "@ag.embed must be an object"}
	}
	rawRefs, ok := m["@ag.references"].(map[string]any)
	if !ok || len(rawRefs) == 0 {
		return Target{}, "", &failure{"invalid_token", "@ag.embed needs a non-empty @ag.references object"}
	}
	for k := range m {
		if k != "@ag.references" && k != "@ag.selector" {
			return Target{}, "", &failure{"invalid_token", fmt.Sprintf("unknown @ag.embed key %q", k)}
		}
	}
	refs, f := objectRefs(rawRefs)
	if f != nil {
		return Target{}, "", f
	}
	t := Target{Refs: refs}
	sel := ""
	if s, ok := m["@ag.selector"]; ok {
		p, key, f := objectSelector(s)
		if f != nil {
			return Target{}, "", f
		}
		sel, t.Key = p, key
	}
	return t, sel, nil
}
