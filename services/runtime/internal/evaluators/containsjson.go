package evaluators

import (
	"context"
	"encoding/json"
	"strings"
)

// containsJSON is auto_contains_json: success when the text from the
// output's first "{" to its last "}" parses as JSON, which is how the
// compatible platform extracts the candidate (str.index and str.rindex).
// An object output is its own JSON dump, so it always succeeds.
func containsJSON(_ context.Context, _ Env, req Request) (map[string]any, error) {
	s := text(req.Outputs)
	i := strings.IndexByte(s, '{')
	j := strings.LastIndexByte(s, '}')
	ok := false
	if i >= 0 && j > i {
		ok = json.Valid([]byte(s[i : j+1]))
	}
	return map[string]any{"success": ok}, nil
}
