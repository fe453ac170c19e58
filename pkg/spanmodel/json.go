package spanmodel

import (
	"github.com/assayhq/assay/pkg/internal/jsontext"
)

// should go, and the writing stops once limit bytes are out.
func jsonText(v any, limit int) string {
	type frame struct {
		m    map[string]any // nil for a list
		keys []string
		list []any
		i    int
	}
	var b []byte
	var stack []frame
	push := func(f frame) {
		// Doubling, not append's 1.25 for large slices: a stack 100,000
		// deep then costs two of itself, not five.
		if len(stack) == cap(stack) {
			grown := make([]frame, len(stack), 2*cap(stack)+8)
			copy(grown, stack)
			stack = grown
		}
		stack = append(stack, f)
	}
	open := func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if x == nil {
				b = append(b, "null"...)
				return
			}
			b = append(b, '{')
			push(frame{m: x, keys: sortedKeys(x)})
		case []any:
			if x == nil {
				b = append(b, "null"...)
				return
			}
			b = append(b, '[')
			push(frame{list: x})
		default:
			c, _ := canonical(v)
			out, err := jsontext.Append(b, c)
			if err != nil {
				out = append(b, "null"...)
			}
			b = out
		}
	}
	open(v)
	for len(stack) > 0 && len(b) <= limit {
		f := &stack[len(stack)-1]
		n := len(f.list)
		if f.m != nil {
			n = len(f.keys)
		}
		if f.i == n {
			if f.m != nil {
				b = append(b, '}')
			} else {
				b = append(b, ']')
			}
			stack = stack[:len(stack)-1]
			continue
		}
		if f.i > 0 {
			b = append(b, ',')
		}
		i := f.i
		f.i++
		if f.m != nil {
			k := f.keys[i]
			b, _ = jsontext.AppendString(b, k)
			b = append(b, ':')
			open(f.m[k]) // may grow stack: f is not used after
		} else {
			open(f.list[i])
		}
	}
	return truncate(string(b), limit)
}
