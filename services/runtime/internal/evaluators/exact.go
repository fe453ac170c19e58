package evaluators

import "context"

// exactMatch is auto_exact_match: success when the output's text equals the
// correct answer's text (objects compared as their sorted-key JSON dumps,
// as the compatible platform compares two dicts).
func exactMatch(_ context.Context, _ Env, req Request) (map[string]any, error) {
	_, want, err := correctAnswer(req)
	if err != nil {
		return nil, err
	}
	return map[string]any{"success": text(req.Outputs) == text(want)}, nil
}
