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

// clean keeps the parts of the ag subtree that fit the canonical schema
// (reference §2.4) and returns the rest to be parked under ag.unsupported.
func clean(v any) (ag, unsupported map[string]any) {
	ag, unsupported = map[string]any{}, map[string]any{}
	if v == nil {
		return ag, unsupported
	}
	in, ok := v.(map[string]any)
	if !ok {
		unsupported["_invalid"] = v
		return ag, unsupported
	}
	if u, ok := in["unsupported"]; ok {
		if m, ok := u.(map[string]any); ok {
			merge(unsupported, m)
		} else {
			unsupported["_unsupported"] = u
		}
	}
	// Parked paths are ours plus keys already un-flattened: no padding.
	park := func(path string, v any) { setPath(unsupported, path, v, nil) }
	for _, k := range sortedKeys(in) {
		v := in[k]
		switch k {
		case "unsupported":
		case "type":
			m, ok := v.(map[string]any)
			if !ok {
				park("type", v)
				continue
			}
			t := map[string]any{}
			for _, tk := range sortedKeys(m) {
				switch tk {
				case "trace", "span":
					values := TraceTypes
					if tk == "span" {
						values = SpanTypes
					}
					if s, ok := m[tk].(string); ok && contains(values, strings.ToLower(s)) {
						t[tk] = strings.ToLower(s)
					} // an invalid value is dropped, as the reference does
				default:
					park("type."+tk, m[tk])
				}
			}
			if len(t) > 0 {
				ag["type"] = t
			}
		case "data":
			m, ok := v.(map[string]any)
			if !ok {
				park("data", v)
				continue
			}
			d := map[string]any{}
			for _, dk := range sortedKeys(m) {
				dv := m[dk]
				switch dk {
				case "parameters", "inputs", "internals":
					if dv == nil {
						// An explicit null (the SDK's "@ag.type=none:") is an
						// absent field, as in the reference's dump.
						continue
					}
					if obj, ok := asObject(dv); ok {
						d[dk] = obj
					} else {
						park("data."+dk, dv)
					}
				case "outputs":
					d[dk] = dv
				default:
					park("data."+dk, dv)
				}
			}
			if len(d) > 0 {
				ag["data"] = d
			}
		case "metrics":
			m, ok := v.(map[string]any)
			if !ok {
				park("metrics", v)
				continue
			}
			out := map[string]any{}
			for _, mk := range sortedKeys(m) {
				mv := m[mk]
				switch mk {
				case "duration", "errors":
					if r := scalarMetric(mv, "metrics."+mk, park); len(r) > 0 {
						out[mk] = r
					}
				case "tokens", "costs":
					if r := dictMetric(mv, "metrics."+mk, park); len(r) > 0 {
						out[mk] = r
					}
				default:
					park("metrics."+mk, mv)
				}
			}
			if len(out) > 0 {
				ag["metrics"] = out
			}
		case "references":
			m, ok := v.(map[string]any)
			if !ok {
				park("references", v)
				continue
			}
			out := map[string]any{}
			for _, rk := range sortedKeys(m) {
				if !refKeys[rk] {
					continue // unknown reference keys are dropped, as the reference does
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
				ag["references"] = out
			}
		case "session", "user":
			if m, ok := v.(map[string]any); ok {
				if id, ok := m["id"]; ok && id != nil {
					ag[k] = map[string]any{"id": LeafText(id)}
				}
			} else {
				park(k, v)
			}
		case "flags", "tags", "meta", "exception", "selector":
			ag[k] = v
		case "refs":
		default:
			park(k, v)
		}
	}
	if meta, ok := ag["meta"].(map[string]any); ok {
		if conf, ok := meta["configuration"]; ok {
			delete(meta, "configuration")
			d := sub(ag, "data")
			if p, ok := d["parameters"].(map[string]any); !ok || len(p) == 0 {
				if obj, ok := asObject(conf); ok {
					d["parameters"] = obj
				}
			}
		}
	}
	return ag, unsupported
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

func scalarMetric(v any, path string, park func(string, any)) map[string]any {
	m, ok := v.(map[string]any)
	if !ok {
		park(path, v)
		return nil
	}
	out := map[string]any{}
	for _, k := range sortedKeys(m) {
		if k != "cumulative" && k != "incremental" {
			park(path+"."+k, m[k])
			continue
		}
		x := m[k]
		if d, ok := x.(map[string]any); ok {
			for _, c := range []string{"total", "count", "value"} {
				if y, ok := d[c]; ok {
					x = y
					break
				}
			}
		}
		if f, ok := num(x); ok {
			out[k] = f
		} else {
			park(path+"."+k, m[k])
		}
	}
	return out
}

func dictMetric(v any, path string, park func(string, any)) map[string]any {
	m, ok := v.(map[string]any)
	if !ok {
		park(path, v)
		return nil
	}
	out := map[string]any{}
	for _, k := range sortedKeys(m) {
		d, ok := m[k].(map[string]any)
		if (k != "cumulative" && k != "incremental") || !ok {
			park(path+"."+k, m[k])
			continue
		}
		clean := map[string]any{}
		for _, dk := range sortedKeys(d) {
			if f, ok := num(d[dk]); ok {
				clean[dk] = f
			} else {
				park(path+"."+k+"."+dk, d[dk])
			}
		}
		out[k] = clean
	}
	return out
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
