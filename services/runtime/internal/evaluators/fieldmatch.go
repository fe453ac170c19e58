package evaluators

import (
	"context"
	"strconv"
	"strings"
)

// fieldMatch is field_match_test: the output, an object or a string holding
// a JSON object, has json_field equal (Python ==) to the correct answer. An
// output that is not such an object, or lacks the field, is a plain
// {"success": false}, as the compatible platform answers.
func fieldMatch(_ context.Context, _ Env, req Request) (map[string]any, error) {
	field, err := requiredString(req.Parameters, "json_field")
	if err != nil {
		return nil, err
	}
	_, want, err := correctAnswer(req)
	if err != nil {
		return nil, err
	}
	obj, ok := asObject(req.Outputs)
	if !ok {
		return map[string]any{"success": false}, nil
	}
	got, ok := obj[field]
	return map[string]any{"success": ok && pyEqual(got, want)}, nil
}

// asObject is v when it is an object, or the object a JSON string holds.
func asObject(v any) (map[string]any, bool) {
	if s, ok := v.(string); ok {
		if v, ok = parseJSON(s); !ok {
			return nil, false
		}
	}
	m, ok := v.(map[string]any)
	return m, ok
}

// asJSON is v decoded when it is a string holding JSON, v itself when it is
// already structured; ok is false for a string that is not JSON.
func asJSON(v any) (any, bool) {
	if s, ok := v.(string); ok {
		return parseJSON(s)
	}
	return v, true
}

// lookupPath walks a dot path ("user.address.city", "items.0.name") through
// objects and arrays; an array index may be negative, counting from the end
// as Python's. found is false when any step is missing.
func lookupPath(v any, path string) (any, bool) {
	for seg := range strings.SplitSeq(path, ".") {
		switch x := v.(type) {
		case map[string]any:
			next, ok := x[seg]
			if !ok {
				return nil, false
			}
			v = next
		case []any:
			i, err := strconv.Atoi(seg)
			if err != nil {
				return nil, false
			}
			if i < 0 {
				i += len(x)
			}
			if i < 0 || i >= len(x) {
				return nil, false
			}
			v = x[i]
		default:
			return nil, false
		}
	}
	return v, true
}
