package spanmodel

import (
	"encoding/json"
	"regexp"
	"sort"
	"strings"
)

var (
	refKeys = func() map[string]bool {
		m := map[string]bool{"testcase": true}
		for _, k := range []string{"testset", "query", "workflow", "application", "evaluator", "environment", "snippet"} {
			m[k], m[k+"_variant"], m[k+"_revision"] = true, true, true
		}
		return m
	}()
	slugRe = regexp.MustCompile(`^[a-zA-Z0-9_\-][a-zA-Z0-9_.\-]*$`)
)

// clean keeps the parts of the ag subtree that fit the canonical schema (type,
// data, metrics, references, session, user, flags, tags, meta, exception and
// selector) and returns the rest to be parked under ag.unsupported.
//
// It works in place: v is the ag object the normaliser just built (every
// object in it is its own, un-flattened from the client's attributes), so
// the canonical object is v with what does not fit taken out, and no
// object is copied. The order in which keys are visited does not matter:
// each parks under its own path.
func clean(v any, a *Arena) (ag, unsupported map[string]any) {
	if v == nil {
		return map[string]any{}, map[string]any{}
	}
	in, ok := v.(map[string]any)
	if !ok {
		return map[string]any{}, map[string]any{"_invalid": v}
	}
	if u, ok := in["unsupported"]; ok {
		if m, ok := u.(map[string]any); ok {
			unsupported = m
		} else {
			unsupported = map[string]any{"_unsupported": u}
		}
	} else {
		unsupported = a.obj()
	}
	// Parked paths are ours plus keys already un-flattened: no padding.
	park := func(path string, v any) { setPath(unsupported, path, v, nil) }
	for k, v := range in {
		switch k {
		case "unsupported", "refs":
			delete(in, k)
		case "type":
			m, ok := v.(map[string]any)
			if !ok {
				park("type", v)
				delete(in, k)
				continue
			}
			for tk, tv := range m {
				switch tk {
				case "trace", "span":
					values := TraceTypes
					if tk == "span" {
						values = SpanTypes
					}
					s, ok := tv.(string)
					if !ok {
						delete(m, tk) // an invalid value is dropped, as the compatible platform does
						continue
					}
					if low := lower(s); contains(values, low) {
						if low != s {
							m[tk] = low
						}
					} else {
						delete(m, tk)
					}
				default:
					park("type."+tk, tv)
					delete(m, tk)
				}
			}
			if len(m) == 0 {
				delete(in, k)
			}
		case "data":
			m, ok := v.(map[string]any)
			if !ok {
				park("data", v)
				delete(in, k)
				continue
			}
			for dk, dv := range m {
				switch dk {
				case "parameters", "inputs", "internals":
					if dv == nil {
						// An explicit null (the SDK's "@ag.type=none:") is an
						// absent field, as in the compatible platform's dump.
						delete(m, dk)
						continue
					}
					if obj, ok := asObject(dv); ok {
						if _, was := dv.(map[string]any); !was {
							m[dk] = obj
						}
					} else {
						park("data."+dk, dv)
						delete(m, dk)
					}
				case "outputs":
				default:
					park("data."+dk, dv)
					delete(m, dk)
				}
			}
			if len(m) == 0 {
				delete(in, k)
			}
		case "metrics":
			m, ok := v.(map[string]any)
			if !ok {
				park("metrics", v)
				delete(in, k)
				continue
			}
			for mk, mv := range m {
				var keep bool
				switch mk {
				case "duration":
					keep = scalarMetric(mv, "metrics.duration", park)
				case "errors":
					keep = scalarMetric(mv, "metrics.errors", park)
				case "tokens":
					keep = dictMetric(mv, "metrics.tokens", park)
				case "costs":
					keep = dictMetric(mv, "metrics.costs", park)
				default:
					park("metrics."+mk, mv)
				}
				if !keep {
					delete(m, mk)
				}
			}
			if len(m) == 0 {
				delete(in, k)
			}
		case "references":
			m, ok := v.(map[string]any)
			if !ok {
				park("references", v)
				delete(in, k)
				continue
			}
			out := map[string]any{}
			for _, rk := range sortedKeys(m) {
				if !refKeys[rk] {
					continue // unknown reference keys are dropped, as the compatible platform does
				}
				ref, ok := m[rk].(map[string]any)
				if !ok {
					park("references."+rk, m[rk])
					continue
				}
				r := map[string]any{}
				for _, f := range []string{"id", "slug", "version"} {
					if fv, ok := ref[f]; ok && fv != nil {
						s := LeafText(fv)
						if f == "slug" && !slugRe.MatchString(s) {
							continue
						}
						r[f] = s
					}
				}
				if len(r) > 0 {
					out[rk] = r
				}
			}
			if len(out) > 0 {
				in[k] = out
			} else {
				delete(in, k)
			}
		case "session", "user":
			if m, ok := v.(map[string]any); ok {
				if id, ok := m["id"]; ok && id != nil {
					in[k] = map[string]any{"id": LeafText(id)}
				} else {
					delete(in, k)
				}
			} else {
				park(k, v)
				delete(in, k)
			}
		case "flags", "tags", "meta", "exception", "selector":
		default:
			park(k, v)
			delete(in, k)
		}
	}
	ag = in
	if meta, ok := ag["meta"].(map[string]any); ok {
		if conf, ok := meta["configuration"]; ok {
			delete(meta, "configuration")
			d := sub(a, ag, "data")
			if p, ok := d["parameters"].(map[string]any); !ok || len(p) == 0 {
				if obj, ok := asObject(conf); ok {
					d["parameters"] = obj
				}
			}
		}
	}
	return ag, unsupported
}

// lower is strings.ToLower without its allocation when s is already
// lower case ASCII (the common case).
func lower(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' || c >= 0x80 {
			return strings.ToLower(s)
		}
	}
	return s
}

// asObject accepts an object, or a JSON string that parses to one.
func asObject(v any) (map[string]any, bool) {
	switch t := v.(type) {
	case map[string]any:
		return t, true
	case string:
		// Only a string starting with '{' can parse to an object: skip the
		// parser (and its error) for every other string.
		if firstByte(t) != '{' {
			return nil, false
		}
		var m map[string]any
		if json.Unmarshal([]byte(t), &m) == nil && m != nil {
			return m, true
		}
	}
	return nil, false
}

// scalarMetric cleans a duration or errors metric in place: its
// cumulative and incremental numbers ({total|count|value: n} read as n);
// the rest is parked. It says whether anything is left.
func scalarMetric(v any, path string, park func(string, any)) bool {
	m, ok := v.(map[string]any)
	if !ok {
		park(path, v)
		return false
	}
	for k, orig := range m {
		if k != "cumulative" && k != "incremental" {
			park(path+"."+k, orig)
			delete(m, k)
			continue
		}
		x := orig
		if d, ok := x.(map[string]any); ok {
			for _, c := range []string{"total", "count", "value"} {
				if y, ok := d[c]; ok {
					x = y
					break
				}
			}
		}
		if f, ok := num(x); ok {
			if _, same := orig.(float64); !same {
				m[k] = f
			}
		} else {
			park(path+"."+k, orig)
			delete(m, k)
		}
	}
	return len(m) > 0
}

// dictMetric cleans a tokens or costs metric in place: cumulative and
// incremental objects of numbers; the rest is parked. It says whether
// anything is left.
func dictMetric(v any, path string, park func(string, any)) bool {
	m, ok := v.(map[string]any)
	if !ok {
		park(path, v)
		return false
	}
	for k, kv := range m {
		d, ok := kv.(map[string]any)
		if (k != "cumulative" && k != "incremental") || !ok {
			park(path+"."+k, kv)
			delete(m, k)
			continue
		}
		for dk, dv := range d {
			if f, ok := num(dv); ok {
				if _, same := dv.(float64); !same {
					d[dk] = f
				}
			} else {
				park(path+"."+k+"."+dk, dv)
				delete(d, dk)
			}
		}
	}
	return len(m) > 0
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// firstByte is s's first byte after JSON whitespace (0 if none).
func firstByte(s string) byte {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case ' ', '\t', '\n', '\r':
		default:
			return c
		}
	}
	return 0
}
