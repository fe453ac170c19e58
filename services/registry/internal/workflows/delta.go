package workflows

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/assayhq/assay/pkg/errs"
)

// Delta is a commit's change to the head's data: either the legacy
// set/remove pair or an ordered list of operations (never both).
type Delta struct {
	Set        map[string]any `json:"set,omitempty"`
	Remove     []string       `json:"remove,omitempty"`
	Operations []Operation    `json:"operations,omitempty"`
	ordered    bool
}

// Operation is one ordered delta step. Target is a path of object keys and
// list indexes.
type Operation struct {
	Operation string     `json:"operation"`
	Target    []any      `json:"target"`
	Value     any        `json:"value,omitempty"`
	Edits     []TextEdit `json:"edits,omitempty"`
	MatchMode string     `json:"match_mode,omitempty"`
}

// TextEdit replaces Old by New inside a string value.
type TextEdit struct {
	Old string `json:"old"`
	New string `json:"new"`
}

// Ordered reports whether the delta is the ordered-operations form.
func (d *Delta) Ordered() bool { return d.ordered }

// ParseDelta reads a delta; loc prefixes the 422 locations.
func ParseDelta(raw json.RawMessage, loc ...any) (*Delta, error) {
	at := func(k ...any) []any { return append(append([]any{}, loc...), k...) }
	m, err := Decode(raw)
	if err != nil {
		return nil, errs.Field("Input should be a valid dictionary", json.RawMessage(raw), loc...)
	}
	d := &Delta{}
	if ops, ok := m["operations"]; ok {
		for k, v := range m {
			if k != "operations" {
				return nil, errs.Field("Extra inputs are not permitted next to operations", v, at(k)...)
			}
		}
		list, isList := ops.([]any)
		if !isList {
			return nil, errs.Field("Input should be a valid list", ops, at("operations")...)
		}
		for i, o := range list {
			om, isObj := o.(map[string]any)
			if !isObj {
				return nil, errs.Field("Input should be a valid dictionary", o, at("operations", i)...)
			}
			var op Operation
			raw, _ := json.Marshal(om)
			if err := json.Unmarshal(raw, &op); err != nil {
				return nil, errs.Field("Invalid operation: "+err.Error(), o, at("operations", i)...)
			}
			switch op.Operation {
			case "set", "merge", "remove", "edit_text", "add_item", "replace_item", "remove_item":
			default:
				return nil, errs.Field("Unknown operation", op.Operation, at("operations", i, "operation")...)
			}
			op.Value = om["value"]
			d.Operations = append(d.Operations, op)
		}
		d.ordered = true
		return d, nil
	}
	for k, v := range m {
		switch k {
		case "set":
			s, isObj := v.(map[string]any)
			if v != nil && !isObj {
				return nil, errs.Field("Input should be a valid dictionary", v, at("set")...)
			}
			d.Set = s
		case "remove":
			if v == nil {
				continue
			}
			list, isList := v.([]any)
			if !isList {
				return nil, errs.Field("Input should be a list of dotted paths", v, at("remove")...)
			}
			for i, p := range list {
				ps, isStr := p.(string)
				if !isStr {
					return nil, errs.Field("Input should be a valid string", p, at("remove", i)...)
				}
				d.Remove = append(d.Remove, ps)
			}
		default:
			return nil, errs.Field("Extra inputs are not permitted", v, at(k)...)
		}
	}
	return d, nil
}

// Apply returns base changed by the delta; base is not modified.
func (d *Delta) Apply(base Data) (Data, error) {
	out, _ := deepCopy(map[string]any(base)).(map[string]any)
	if out == nil {
		out = map[string]any{}
	}
	if !d.ordered {
		merge(out, d.Set)
		for _, p := range d.Remove {
			removePath(out, strings.Split(p, "."))
		}
		return out, nil
	}
	for i, op := range d.Operations {
		var err error
		out, err = applyOp(out, op)
		if err != nil {
			return nil, errs.Message(errs.Unprocessable, "workflows.delta", fmt.Sprintf("operations[%d] (%s): %s", i, op.Operation, err.Error()),
				map[string]any{"code": "invalid_operation", "operation_index": i})
		}
	}
	return out, nil
}

// merge deep-merges src into dst: objects merge, scalars and lists replace.
func merge(dst, src map[string]any) {
	for k, v := range src {
		if sv, ok := v.(map[string]any); ok {
			if dv, ok := dst[k].(map[string]any); ok {
				merge(dv, sv)
				continue
			}
		}
		dst[k] = deepCopy(v)
	}
}

func removePath(m map[string]any, path []string) {
	for len(path) > 1 {
		next, ok := m[path[0]].(map[string]any)
		if !ok {
			return
		}
		m, path = next, path[1:]
	}
	delete(m, path[0])
}

func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = deepCopy(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = deepCopy(e)
		}
		return out
	}
	return v
}

// step reads one target path element as a key or an index.
func step(p any) (string, int, bool) {
	switch x := p.(type) {
	case string:
		return x, 0, false
	case json.Number:
		n, err := strconv.Atoi(x.String())
		return "", n, err == nil
	case float64:
		return "", int(x), true
	}
	return fmt.Sprint(p), 0, false
}

// get returns the value at path inside root.
func get(root any, path []any) (any, error) {
	cur := root
	for _, p := range path {
		key, idx, isIdx := step(p)
		switch c := cur.(type) {
		case map[string]any:
			if isIdx {
				return nil, fmt.Errorf("target %v: an index into an object", path)
			}
			v, ok := c[key]
			if !ok {
				return nil, fmt.Errorf("target %v does not exist", path)
			}
			cur = v
		case []any:
			if !isIdx || idx < 0 || idx >= len(c) {
				return nil, fmt.Errorf("target %v: no such list item", path)
			}
			cur = c[idx]
		default:
			return nil, fmt.Errorf("target %v does not exist", path)
		}
	}
	return cur, nil
}

// put stores v at path inside root, creating objects along the way, and
// returns the new root.
func put(root any, path []any, v any) (any, error) {
	if len(path) == 0 {
		return v, nil
	}
	key, idx, isIdx := step(path[0])
	switch c := root.(type) {
	case map[string]any:
		if isIdx {
			return nil, fmt.Errorf("an index into an object")
		}
		child, err := put(c[key], path[1:], v)
		if err != nil {
			return nil, err
		}
		c[key] = child
		return c, nil
	case []any:
		if !isIdx || idx < 0 || idx >= len(c) {
			return nil, fmt.Errorf("no such list item %v", path[0])
		}
		child, err := put(c[idx], path[1:], v)
		if err != nil {
			return nil, err
		}
		c[idx] = child
		return c, nil
	case nil:
		if isIdx {
			return nil, fmt.Errorf("no such list item %v", path[0])
		}
		child, err := put(nil, path[1:], v)
		if err != nil {
			return nil, err
		}
		return map[string]any{key: child}, nil
	}
	return nil, fmt.Errorf("cannot descend into a %T", root)
}

func applyOp(root map[string]any, op Operation) (map[string]any, error) {
	if len(op.Target) == 0 && op.Operation != "merge" {
		return nil, fmt.Errorf("target is required")
	}
	var out any = root
	var err error
	switch op.Operation {
	case "set":
		out, err = put(root, op.Target, deepCopy(op.Value))
	case "merge":
		src, ok := op.Value.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("value must be an object")
		}
		cur, _ := get(root, op.Target)
		dst, isObj := cur.(map[string]any)
		if !isObj {
			dst = map[string]any{}
		}
		merge(dst, src)
		out, err = put(root, op.Target, dst)
	case "remove":
		parent, perr := get(root, op.Target[:len(op.Target)-1])
		if perr != nil {
			return nil, perr
		}
		key, idx, isIdx := step(op.Target[len(op.Target)-1])
		switch p := parent.(type) {
		case map[string]any:
			if _, ok := p[key]; !ok {
				return nil, fmt.Errorf("target %v does not exist", op.Target)
			}
			delete(p, key)
		case []any:
			if !isIdx || idx < 0 || idx >= len(p) {
				return nil, fmt.Errorf("no such list item")
			}
			out, err = put(root, op.Target[:len(op.Target)-1], append(p[:idx:idx], p[idx+1:]...))
		default:
			return nil, fmt.Errorf("target %v does not exist", op.Target)
		}
	case "edit_text":
		cur, gerr := get(root, op.Target)
		if gerr != nil {
			return nil, gerr
		}
		s, ok := cur.(string)
		if !ok {
			return nil, fmt.Errorf("target is not a string")
		}
		for _, e := range op.Edits {
			if !strings.Contains(s, e.Old) {
				return nil, fmt.Errorf("text %q not found", e.Old)
			}
			s = strings.Replace(s, e.Old, e.New, 1)
		}
		out, err = put(root, op.Target, s)
	case "add_item", "replace_item", "remove_item":
		cur, gerr := get(root, op.Target)
		if gerr != nil && op.Operation != "add_item" {
			return nil, gerr
		}
		list, ok := cur.([]any)
		if cur != nil && !ok {
			return nil, fmt.Errorf("target is not a list")
		}
		switch op.Operation {
		case "add_item":
			list = append(list, deepCopy(op.Value))
		case "replace_item", "remove_item":
			// The value names the item: by equality, or for objects with a
			// matching "id"/"key"/"name" when match_mode asks for it.
			at := -1
			probe := op.Value
			if op.Operation == "replace_item" {
				if m, ok := op.Value.(map[string]any); ok {
					if match, ok := m["match"]; ok {
						probe = match
					}
				}
			}
			for i, it := range list {
				if matches(it, probe, op.MatchMode) {
					at = i
					break
				}
			}
			if at < 0 {
				return nil, fmt.Errorf("no list item matches")
			}
			if op.Operation == "remove_item" {
				list = append(list[:at:at], list[at+1:]...)
			} else {
				repl := op.Value
				if m, ok := op.Value.(map[string]any); ok {
					if v, ok := m["value"]; ok {
						repl = v
					}
				}
				list[at] = deepCopy(repl)
			}
		}
		out, err = put(root, op.Target, list)
	}
	if err != nil {
		return nil, err
	}
	m, _ := out.(map[string]any)
	return m, nil
}

func matches(item, probe any, mode string) bool {
	if mode == "" || mode == "exact" {
		return reflect.DeepEqual(item, probe)
	}
	im, ok1 := item.(map[string]any)
	pm, ok2 := probe.(map[string]any)
	if !ok1 || !ok2 {
		return reflect.DeepEqual(item, probe)
	}
	v, ok := pm[mode]
	return ok && reflect.DeepEqual(im[mode], v)
}
