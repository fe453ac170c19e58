package prompt

import (
	"strconv"
	"strings"
)

// This file resolves the variable paths every format shares: JSONPath
// ($...), JSON Pointer (/...) and the dot/array notation (a.b[0].c). The
// JSONPath subset is small on purpose: $, .name, ['name'], ["name"], [n]
// (negative counts from the end), [*] and .* — no filters, slices or
// recursive descent, so a path costs at most (segments x nodes of the
// data) and never runs code.

// maxPathSegments bounds a path so a hostile template cannot make one
// lookup walk an unbounded list of segments.
const maxPathSegments = 256

// segment is one step of a path: a key, an index, or a wildcard.
type segment struct {
	key      string
	index    int
	isIndex  bool
	wildcard bool
}

// lookupJSONPath evaluates a JSONPath against root. A path without
// wildcards yields its single match; one with wildcards yields the list of
// matches. ok is false when nothing matches or the path is malformed.
func lookupJSONPath(root any, path string) (any, bool) {
	if !strings.HasPrefix(path, "$") {
		return nil, false
	}
	segs, ok := parseJSONPath(path[1:])
	if !ok {
		return nil, false
	}
	nodes := []any{root}
	wild := false
	for _, s := range segs {
		if s.wildcard {
			wild = true
		}
		var next []any
		for _, n := range nodes {
			next = step(next, n, s)
		}
		if len(next) == 0 {
			return nil, false
		}
		nodes = next
	}
	if wild {
		return nodes, true
	}
	return nodes[0], true
}

// step appends to out the children of n selected by s.
func step(out []any, n any, s segment) []any {
	switch v := n.(type) {
	case map[string]any:
		if s.wildcard {
			for _, k := range sortedKeys(v) {
				out = append(out, v[k])
			}
			return out
		}
		key := s.key
		if s.isIndex {
			key = strconv.Itoa(s.index)
		}
		if c, ok := v[key]; ok {
			out = append(out, c)
		}
	case []any:
		if s.wildcard {
			return append(out, v...)
		}
		if s.isIndex {
			i := s.index
			if i < 0 {
				i += len(v)
			}
			if i >= 0 && i < len(v) {
				out = append(out, v[i])
			}
		}
	}
	return out
}

// parseJSONPath reads the segments after "$".
func parseJSONPath(p string) ([]segment, bool) {
	var segs []segment
	for len(p) > 0 {
		if len(segs) >= maxPathSegments {
			return nil, false
		}
		switch p[0] {
		case '.':
			p = p[1:]
			if strings.HasPrefix(p, "*") {
				segs = append(segs, segment{wildcard: true})
				p = p[1:]
				continue
			}
			end := strings.IndexAny(p, ".[")
			if end < 0 {
				end = len(p)
			}
			if end == 0 {
				return nil, false
			}
			segs = append(segs, segment{key: p[:end]})
			p = p[end:]
		case '[':
			s, rest, ok := parseBracket(p)
			if !ok {
				return nil, false
			}
			segs = append(segs, s)
			p = rest
		default:
			return nil, false
		}
	}
	return segs, true
}

// parseBracket reads one [..] selector at the start of p.
func parseBracket(p string) (segment, string, bool) {
	if len(p) < 3 {
		return segment{}, "", false
	}
	if q := p[1]; q == '\'' || q == '"' {
		end := strings.IndexByte(p[2:], q)
		if end < 0 || len(p) < end+4 || p[end+3] != ']' {
			return segment{}, "", false
		}
		return segment{key: p[2 : end+2]}, p[end+4:], true
	}
	end := strings.IndexByte(p, ']')
	if end < 0 {
		return segment{}, "", false
	}
	inner := strings.TrimSpace(p[1:end])
	if inner == "*" {
		return segment{wildcard: true}, p[end+1:], true
	}
	n, err := strconv.Atoi(inner)
	if err != nil {
		return segment{}, "", false
	}
	return segment{index: n, isIndex: true}, p[end+1:], true
}

// lookupPointer evaluates an RFC 6901 JSON Pointer against root.
func lookupPointer(root any, ptr string) (any, bool) {
	if ptr == "" {
		return root, true
	}
	if ptr[0] != '/' {
		return nil, false
	}
	parts := strings.Split(ptr[1:], "/")
	if len(parts) > maxPathSegments {
		return nil, false
	}
	cur := root
	for _, raw := range parts {
		tok := strings.ReplaceAll(strings.ReplaceAll(raw, "~1", "/"), "~0", "~")
		switch v := cur.(type) {
		case map[string]any:
			c, ok := v[tok]
			if !ok {
				return nil, false
			}
			cur = c
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(v) || (len(tok) > 1 && tok[0] == '0') {
				return nil, false
			}
			cur = v[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

// lookupDotted evaluates the dot/array notation a.b[0].c (also a[0][1]
// and a.0 on lists) against root.
func lookupDotted(root any, path string) (any, bool) {
	if path == "" {
		return nil, false
	}
	segs, ok := parseJSONPath("." + path)
	if !ok {
		return nil, false
	}
	cur := root
	for _, s := range segs {
		if s.wildcard {
			return nil, false
		}
		if !s.isIndex {
			if l, isList := cur.([]any); isList {
				// a.0 on a list means a[0].
				n, err := strconv.Atoi(s.key)
				if err != nil {
					return nil, false
				}
				_ = l
				s = segment{index: n, isIndex: true}
			}
		}
		next := step(nil, cur, s)
		if len(next) != 1 {
			return nil, false
		}
		cur = next[0]
	}
	return cur, true
}

// resolve finds a variable the way curly does: a literal key first, then
// JSONPath ($...), JSON Pointer (/...), then the dot/array notation.
func resolve(ctx map[string]any, name string) (any, bool) {
	if v, ok := ctx[name]; ok {
		return v, true
	}
	switch {
	case strings.HasPrefix(name, "$"):
		return lookupJSONPath(ctx, name)
	case strings.HasPrefix(name, "/"):
		return lookupPointer(ctx, name)
	}
	return lookupDotted(ctx, name)
}
