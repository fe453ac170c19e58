package evaluators

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/services/runtime/internal/codebox"
)

// customCode is auto_custom_code_run. Parameters:
//   - code (required): defines evaluate;
//   - runtime: python (the catalog's default), javascript or typescript;
//   - version: "1" calls evaluate(app_params, inputs, output,
//     correct_answer); "2" and "3" (the default) call evaluate(inputs,
//     outputs, trace). app_params is {} (the evaluator is not given the
//     application's parameters); correct_answer is
//     inputs[correct_answer_key], null when absent;
//   - threshold: default 0.5, a number;
//   - correct_answer_key: default "correct_answer".
//
// What evaluate returns: a number n → {score: n, success: n >= threshold};
// a boolean → {success}; an object → as it is. Anything else (null, a
// string, an array) is a 422 saying what evaluate must return: the
// outputs are an object, and guessing a score from a string would hide
// the mistake. The code's own faults (compile error, throw, a limit) are
// codebox's 422s.
func customCode(ctx context.Context, env Env, req Request) (map[string]any, error) {
	p := req.Parameters
	code, _ := p["code"].(string)
	if strings.TrimSpace(code) == "" {
		return nil, paramError("code", "is required: the code defining evaluate", nil)
	}
	runtime := codebox.Python
	if v, ok := p["runtime"]; ok && v != nil {
		s, _ := v.(string)
		switch s {
		case codebox.Python, codebox.JavaScript, codebox.TypeScript:
			runtime = s
		default:
			return nil, paramError("runtime", "must be one of python, javascript, typescript", v)
		}
	}
	version, err := codeVersion(p["version"])
	if err != nil {
		return nil, err
	}
	th := 0.5
	if v, ok := p["threshold"]; ok && v != nil {
		switch x := v.(type) {
		case float64:
			th = x
		case int:
			th = float64(x)
		case int64:
			th = float64(x)
		case json.Number:
			f, err := x.Float64()
			if err != nil {
				return nil, paramError("threshold", "must be a number", v)
			}
			th = f
		default:
			return nil, paramError("threshold", "must be a number", v)
		}
		if math.IsNaN(th) || math.IsInf(th, 0) {
			return nil, paramError("threshold", "must be a finite number", v)
		}
	}
	key := "correct_answer"
	if v, ok := p["correct_answer_key"]; ok && v != nil {
		s, ok := v.(string)
		if !ok || s == "" {
			return nil, paramError("correct_answer_key", "must be a non-empty string", v)
		}
		key = s
	}

	inputs := req.Inputs
	if inputs == nil {
		inputs = map[string]any{}
	}
	var args []any
	if version == 1 {
		args = []any{map[string]any{}, inputs, req.Outputs, inputs[key]}
	} else {
		var trace any
		if req.Trace != nil {
			trace = req.Trace
		}
		args = []any{inputs, req.Outputs, trace}
	}
	v, err := codebox.Run(ctx, env.Code, codebox.Call{Runtime: runtime, Code: code, Function: "evaluate", Args: args})
	if err != nil {
		return nil, err
	}
	switch x := v.(type) {
	case float64:
		return map[string]any{"score": x, "success": x >= th}, nil
	case bool:
		return map[string]any{"success": x}, nil
	case map[string]any:
		return x, nil
	}
	return nil, errs.Message(errs.Unprocessable, "runtime.code_result",
		fmt.Sprintf("evaluate returned %s; it must return a number (the score), a boolean (success) or an object", jsonKind(v)), nil)
}

// codeVersion reads parameters.version: "1", "2" or "3" (or the number);
// absent is 3.
func codeVersion(v any) (int, error) {
	switch x := v.(type) {
	case nil:
		return 3, nil
	case string:
		switch strings.TrimSpace(x) {
		case "1":
			return 1, nil
		case "2":
			return 2, nil
		case "3", "":
			return 3, nil
		}
	case float64:
		if x == 1 || x == 2 || x == 3 {
			return int(x), nil
		}
	case int:
		if x >= 1 && x <= 3 {
			return x, nil
		}
	case json.Number:
		return codeVersion(x.String())
	}
	return 0, paramError("version", `must be "1", "2" or "3"`, v)
}
