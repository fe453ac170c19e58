package evaluators

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/assayhq/assay/pkg/errs"
)

// paramError is the 422 naming a parameter of the evaluator.
func paramError(name, msg string, input any) error {
	return errs.Field(msg, input, "parameters", name)
}

// threshold reads parameters.threshold: absent is def; otherwise a number
// in (lo, 1] (lo excluded). wantFloat refuses integers where the compatible platform
// does (the webhook's threshold "must be a float"): a Go int or a
// json.Number without a fraction; a float64 decoded from JSON `1` cannot be
// told from `1.0` and is accepted.
func threshold(params map[string]any, def float64, wantFloat bool) (float64, error) {
	v, ok := params["threshold"]
	if !ok || v == nil {
		return def, nil
	}
	var f float64
	switch x := v.(type) {
	case float64:
		f = x
	case float32:
		f = float64(x)
	case int, int64, int32:
		if wantFloat {
			return 0, paramError("threshold", "must be a float in (0, 1], not an integer", v)
		}
		f, _ = strconv.ParseFloat(fmt.Sprint(x), 64)
	case json.Number:
		if wantFloat && !strings.ContainsAny(string(x), ".eE") {
			return 0, paramError("threshold", "must be a float in (0, 1], not an integer", v)
		}
		var err error
		if f, err = x.Float64(); err != nil {
			return 0, paramError("threshold", "must be a number", v)
		}
	default:
		return 0, paramError("threshold", "must be a number", v)
	}
	if math.IsNaN(f) || f <= 0 || f > 1 {
		return 0, paramError("threshold", "must be in (0, 1]", v)
	}
	return f, nil
}

// webhook is auto_webhook_test: POST
// {"inputs": <inputs>, "output": <output, a dict JSON-dumped>} to
// parameters.webhook_url through env.Egress (its SSRF rules, 10 s, 1 MiB)
// and read the answer:
//   - a number n → {score: n, success: n >= threshold};
//   - a boolean → {score: 1 or 0, success: b} (the compatible platform's
//     Python reads a JSON boolean as the number 1 or 0; score stays a
//     number here, as the outputs schema says);
//   - an object → returned as it is;
//   - a string holding a number or a boolean → read as that; any other
//     string, null, an array or non-JSON → 424 (the compatible platform
//     returns a string as is, which the outputs schema {score, success} has
//     no place for).
//
// A refused URL is a 422 naming parameters.webhook_url; a status other
// than 200, an answer over the cap, or a server out of reach is a 424
// naming it (the webhook is a dependency the caller configured); a
// time-out is a 504.
func webhook(ctx context.Context, env Env, req Request) (map[string]any, error) {
	if env.Egress == nil {
		return nil, errs.New(errs.Internal, "runtime.webhook_egress", "the webhook evaluator has no egress client")
	}
	raw, ok := req.Parameters["webhook_url"].(string)
	if !ok || strings.TrimSpace(raw) == "" {
		return nil, paramError("webhook_url", "is required: the URL the evaluator posts to", nil)
	}
	th, err := threshold(req.Parameters, 0.5, true)
	if err != nil {
		return nil, err
	}
	if err := env.Egress.Check(raw); err != nil {
		return nil, paramError("webhook_url", errs.From(err).Msg, nil)
	}
	inputs := req.Inputs
	if inputs == nil {
		inputs = map[string]any{}
	}
	output := req.Outputs
	if m, ok := output.(map[string]any); ok {
		output = pyDumps(m)
	}
	status, answer, err := env.Egress.PostJSON(ctx, raw, nil, map[string]any{"inputs": inputs, "output": output})
	if err != nil {
		e := errs.From(err)
		switch e.Kind {
		case errs.Unprocessable: // refused at dial time or on a redirect
			return nil, paramError("webhook_url", e.Msg, nil)
		case errs.TooLarge:
			return nil, errs.Message(errs.FailedDependency, "runtime.webhook_too_large", "webhook answer refused: "+e.Msg, nil)
		}
		return nil, err
	}
	if status != 200 {
		return nil, errs.Message(errs.FailedDependency, "runtime.webhook_status",
			fmt.Sprintf("the webhook answered HTTP %d; an evaluator webhook must answer 200", status),
			map[string]any{"status": status, "body": snippet(answer)})
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(answer))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil || dec.More() {
		return nil, errs.Message(errs.FailedDependency, "runtime.webhook_answer",
			"the webhook's answer is not JSON", map[string]any{"body": snippet(answer)})
	}
	if s, ok := v.(string); ok {
		t := strings.TrimSpace(s)
		if f, err := strconv.ParseFloat(t, 64); err == nil {
			v = json.Number(strconv.FormatFloat(f, 'g', -1, 64))
		} else if b, err := strconv.ParseBool(t); err == nil && (t == "true" || t == "false") {
			v = b
		}
	}
	switch x := v.(type) {
	case json.Number:
		n, err := x.Float64()
		if err != nil || math.IsInf(n, 0) {
			return nil, errs.Message(errs.FailedDependency, "runtime.webhook_answer", "the webhook's number is out of range", map[string]any{"body": snippet(answer)})
		}
		return map[string]any{"score": n, "success": n >= th}, nil
	case bool:
		score := 0.0
		if x {
			score = 1
		}
		return map[string]any{"score": score, "success": score >= th}, nil
	case map[string]any:
		return numbersToFloat(x).(map[string]any), nil
	}
	return nil, errs.Message(errs.FailedDependency, "runtime.webhook_answer",
		"the webhook answered "+jsonKind(v)+"; it must answer a number, a boolean or an object", map[string]any{"body": snippet(answer)})
}

// numbersToFloat turns the json.Numbers of a decoded value into float64,
// the type every other evaluator output has.
func numbersToFloat(v any) any {
	switch x := v.(type) {
	case json.Number:
		if f, err := x.Float64(); err == nil {
			return f
		}
		return x.String()
	case map[string]any:
		for k, e := range x {
			x[k] = numbersToFloat(e)
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = numbersToFloat(e)
		}
		return x
	}
	return v
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case []any:
		return "an array"
	}
	return fmt.Sprintf("%T", v)
}

// snippet is the start of an answer, quoted back in an error.
func snippet(b []byte) string {
	const n = 300
	if len(b) <= n {
		return strings.ToValidUTF8(string(b), "?")
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(b[cut]) {
		cut--
	}
	return strings.ToValidUTF8(string(b[:cut]), "?") + "…"
}
