package evaluators

import (
	"context"

	"github.com/assayhq/assay/pkg/errs"
)

// maxFields bounds json_multi_field_match's field list.
const maxFields = 1000

// multiFieldMatch is json_multi_field_match: for each dot path of fields,
// 1.0 when the output and the correct answer both have it with equal values
// (Python ==), else 0.0; aggregate_score is the fraction that matched. The
// correct answer is an object or a string holding one; an output that is
// not JSON scores 0.0 everywhere, as on the compatible platform. A field
// missing on either side scores 0.0. A field named aggregate_score is
// shadowed by the aggregate, which the schema requires.
func multiFieldMatch(_ context.Context, _ Env, req Request) (map[string]any, error) {
	fields, err := fieldList(req.Parameters)
	if err != nil {
		return nil, err
	}
	key, ca, err := correctAnswer(req)
	if err != nil {
		return nil, err
	}
	want, ok := asJSON(ca)
	if !ok {
		return nil, errs.Field("the correct answer is not valid JSON", ca, "inputs", key)
	}
	got, gotOK := asJSON(req.Outputs)
	out := make(map[string]any, len(fields)+1)
	matches := 0
	for _, f := range fields {
		score := 0.0
		if gotOK {
			w, okW := lookupPath(want, f)
			g, okG := lookupPath(got, f)
			if okW && okG && pyEqual(w, g) {
				score = 1
				matches++
			}
		}
		out[f] = score
	}
	out["aggregate_score"] = float64(matches) / float64(len(fields))
	return out, nil
}

func fieldList(p map[string]any) ([]string, error) {
	v, ok := p["fields"]
	if !ok || v == nil {
		return nil, paramErr("fields", "Field required", nil)
	}
	list, ok := v.([]any)
	if !ok || len(list) == 0 {
		return nil, paramErr("fields", "Input should be a non-empty list of field paths", v)
	}
	if len(list) > maxFields {
		return nil, paramErr("fields", "List should have at most 1000 items", len(list))
	}
	fields := make([]string, len(list))
	for i, e := range list {
		s, ok := e.(string)
		if !ok || s == "" {
			return nil, errs.Field("Input should be a non-empty string", e, "parameters", "fields", i)
		}
		fields[i] = s
	}
	return fields, nil
}
