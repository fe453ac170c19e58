package evaluators

import (
	"context"
	"strings"
)

// The substring evaluators (auto_starts_with, auto_ends_with, auto_contains,
// auto_contains_any, auto_contains_all) look for their parameter in the
// output's text; case_sensitive (default true) false lowers both sides.

func startsWith(_ context.Context, _ Env, req Request) (map[string]any, error) {
	return affix(req, "prefix", strings.HasPrefix)
}

func endsWith(_ context.Context, _ Env, req Request) (map[string]any, error) {
	return affix(req, "suffix", strings.HasSuffix)
}

func contains(_ context.Context, _ Env, req Request) (map[string]any, error) {
	return affix(req, "substring", strings.Contains)
}

func affix(req Request, name string, test func(s, sub string) bool) (map[string]any, error) {
	sub, err := requiredString(req.Parameters, name)
	if err != nil {
		return nil, err
	}
	out, sub, err := folded(req, text(req.Outputs), sub)
	if err != nil {
		return nil, err
	}
	return map[string]any{"success": test(out, sub)}, nil
}

// containsAny is auto_contains_any: substrings is a comma-separated list
// (each item trimmed, as the compatible platform splits it; a list of
// strings is accepted too). An empty item matches everything, as "" in s
// does in Python.
func containsAny(_ context.Context, _ Env, req Request) (map[string]any, error) {
	return containsList(req, false)
}

// containsAll is auto_contains_all; see containsAny.
func containsAll(_ context.Context, _ Env, req Request) (map[string]any, error) {
	return containsList(req, true)
}

func containsList(req Request, all bool) (map[string]any, error) {
	subs, err := substrings(req.Parameters)
	if err != nil {
		return nil, err
	}
	cs, err := boolParam(req.Parameters, "case_sensitive", true)
	if err != nil {
		return nil, err
	}
	out := text(req.Outputs)
	if !cs {
		out = strings.ToLower(out)
	}
	hit := all
	for _, s := range subs {
		if !cs {
			s = strings.ToLower(s)
		}
		if strings.Contains(out, s) != all {
			hit = !all
			break
		}
	}
	return map[string]any{"success": hit}, nil
}

func substrings(p map[string]any) ([]string, error) {
	v, ok := p["substrings"]
	if !ok || v == nil {
		return nil, paramErr("substrings", "Field required", nil)
	}
	switch x := v.(type) {
	case string:
		parts := strings.Split(x, ",")
		for i := range parts {
			parts[i] = strings.TrimSpace(parts[i])
		}
		return parts, nil
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			s, ok := e.(string)
			if !ok {
				return nil, paramErr("substrings", "Input should be a comma-separated string or a list of strings", v)
			}
			parts[i] = s
		}
		return parts, nil
	}
	return nil, paramErr("substrings", "Input should be a comma-separated string or a list of strings", v)
}

// folded lowers s and sub when parameters.case_sensitive is false.
func folded(req Request, s, sub string) (string, string, error) {
	cs, err := boolParam(req.Parameters, "case_sensitive", true)
	if err != nil || cs {
		return s, sub, err
	}
	return strings.ToLower(s), strings.ToLower(sub), nil
}
