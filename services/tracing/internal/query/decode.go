package query

import (
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/assayhq/assay/pkg/chspans"
)

// Readers tolerate whatever is stored. A span's JSON columns were written by
// an earlier release, or by a writer with other limits, and may not decode
// today: nested deeper than encoding/json takes (10,000 levels), or cut. Such
// a part never fails the read (one bad span would make every query of its
// project answer 500): it is left out of the span and described in a list
// under attributes.ag.unsupported.undecodable, one entry per part:
//
//	{"path": "attributes.deep", "reason": "...", "bytes": 794012, "raw": "[[[[..."}
//
// path is where the part was (attributes.<member path>, or events, links,
// references, hashes), bytes its stored size and raw its first rawHead
// bytes. The list's presence is the flag a reader checks.

// rawHead is how much of an undecodable part's stored text is returned.
const rawHead = 1024

// salvageDepth is how many object levels of the attributes are split to
// keep the decodable members around an undecodable one. Each level costs a
// pass over its text, so the work stays linear in the stored size.
const salvageDepth = 8

// Undecodable describes a stored part that could not be decoded.
type Undecodable struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
	Bytes  int    `json:"bytes"`
	Raw    string `json:"raw"`
}

func undecodable(path, text string, err error) Undecodable {
	n := min(len(text), rawHead)
	for n > 0 && n < len(text) && !utf8.RuneStart(text[n]) {
		n-- // do not cut a character in two
	}
	head := text[:n]
	return Undecodable{Path: path, Reason: err.Error(), Bytes: len(text), Raw: head}
}

// decodeAttributes decodes a stored attributes JSON object, its pointers
// resolved from values (the row's attr_values, where its long texts are:
// chspans.ExpandAttributes). What cannot be decoded is left out and
// returned as marks.
func decodeAttributes(stored string, values []string) (map[string]any, []Undecodable) {
	js := chspans.ExpandAttributes(stored, values)
	var attrs map[string]any
	err := json.Unmarshal([]byte(js), &attrs)
	if err == nil {
		if attrs == nil {
			attrs = map[string]any{} // stored "null"
		}
		return attrs, nil
	}
	var marks []Undecodable
	attrs, ok := salvage(js, "attributes", 0, &marks)
	if !ok {
		return map[string]any{}, []Undecodable{undecodable("attributes", js, err)}
	}
	return attrs, marks
}

// salvage decodes the JSON object text obj member by member: a member that
// does not decode is split again when it is an object (up to salvageDepth
// levels), else marked under its path. ok is false when obj is not an
// object whose members can be told apart.
func salvage(obj, path string, level int, marks *[]Undecodable) (map[string]any, bool) {
	keys, values, ok := members(obj)
	if !ok {
		return nil, false
	}
	out := make(map[string]any, len(keys))
	for i, rawKey := range keys {
		var key string
		if err := json.Unmarshal([]byte(rawKey), &key); err != nil {
			*marks = append(*marks, undecodable(path, obj, err))
			return out, true // the rest cannot be trusted to be split right
		}
		var v any
		err := json.Unmarshal([]byte(values[i]), &v)
		if err == nil {
			out[key] = v
			continue
		}
		sub := path + "." + key
		if level+1 < salvageDepth {
			if m, ok := salvage(values[i], sub, level+1, marks); ok {
				out[key] = m
				continue
			}
		}
		*marks = append(*marks, undecodable(sub, values[i], err))
	}
	return out, true
}

// members splits the JSON object text obj into its members' key tokens and
// value texts without decoding them, in one pass whatever the nesting (a
// depth counter, no recursion). The values are not validated: the caller
// decodes them. ok is false when obj is not shaped like an object.
func members(obj string) (keys, values []string, ok bool) {
	i := skipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return nil, nil, false
	}
	i = skipSpace(obj, i+1)
	if i < len(obj) && obj[i] == '}' {
		return nil, nil, skipSpace(obj, i+1) == len(obj)
	}
	for {
		if i >= len(obj) || obj[i] != '"' {
			return nil, nil, false
		}
		end := stringEnd(obj, i)
		if end < 0 {
			return nil, nil, false
		}
		key := obj[i:end]
		i = skipSpace(obj, end)
		if i >= len(obj) || obj[i] != ':' {
			return nil, nil, false
		}
		i = skipSpace(obj, i+1)
		from := i
		depth := 0
	value:
		for ; i < len(obj); i++ {
			switch obj[i] {
			case '"':
				end := stringEnd(obj, i)
				if end < 0 {
					return nil, nil, false
				}
				i = end - 1
			case '[', '{':
				depth++
			case ']', '}':
				if depth == 0 {
					break value
				}
				depth--
			case ',':
				if depth == 0 {
					break value
				}
			}
		}
		if i >= len(obj) || from == i {
			return nil, nil, false
		}
		keys, values = append(keys, key), append(values, strings.TrimRight(obj[from:i], " \t\r\n"))
		if obj[i] == '}' {
			return keys, values, skipSpace(obj, i+1) == len(obj)
		}
		if obj[i] != ',' {
			return nil, nil, false
		}
		i = skipSpace(obj, i+1)
	}
}

// stringEnd is the index after the JSON string token starting at s[i], or -1.
func stringEnd(s string, i int) int {
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return -1
}

func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r' || s[i] == '\n') {
		i++
	}
	return i
}

// decodeRow decodes r's JSON parts: attributes into a map, the others
// (rendered as they are stored) checked; an undecodable one is cleared and
// marked in the attributes.
func decodeRow(r Row) Parsed {
	p := Parsed{Row: r}
	attrs, marks := decodeAttributes(r.Attributes, r.AttrValues)
	p.AttrValues = nil // in attrs now
	for _, c := range []struct {
		name string
		text *string
	}{{"events", &p.Events}, {"links", &p.Links}, {"references", &p.Refs}, {"hashes", &p.Hashes}} {
		if *c.text == "" || json.Valid([]byte(*c.text)) {
			continue
		}
		var raw json.RawMessage
		err := json.Unmarshal([]byte(*c.text), &raw) // for the reason only: it fails as Valid did
		marks = append(marks, undecodable(c.name, *c.text, err))
		*c.text = ""
		if c.name == "links" {
			p.LinksSet = 0 // not rendered as an empty list either
		}
	}
	if len(marks) > 0 {
		markUndecodable(attrs, marks)
	}
	p.Attrs = attrs
	return p
}

// markUndecodable adds marks to attrs.ag.unsupported.undecodable.
func markUndecodable(attrs map[string]any, marks []Undecodable) {
	ag, ok := attrs["ag"].(map[string]any)
	if !ok {
		ag = map[string]any{}
		if old, found := attrs["ag"]; found {
			ag["unsupported"] = map[string]any{"_invalid": old}
		}
		attrs["ag"] = ag
	}
	un, ok := ag["unsupported"].(map[string]any)
	if !ok {
		un = map[string]any{}
		if old, found := ag["unsupported"]; found {
			un["_unsupported"] = old
		}
		ag["unsupported"] = un
	}
	list, _ := un["undecodable"].([]any)
	for _, m := range marks {
		list = append(list, map[string]any{"path": m.Path, "reason": m.Reason, "bytes": m.Bytes, "raw": m.Raw})
	}
	un["undecodable"] = list
}
