package evaluators

import (
	"context"
	"os/exec"
	"reflect"
	"testing"
	"time"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/services/runtime/internal/codebox"
)

// The catalog's exact-match presets, in each runtime, as users write them.
const (
	exactMatchPython = `
def evaluate(inputs, outputs, trace):
    if outputs == inputs.get("correct_answer"):
        return 1.0
    return 0.0
`
	exactMatchJS = `function evaluate(inputs, outputs, trace) {
  return outputs === inputs.correct_answer ? 1.0 : 0.0
}`
	exactMatchTS = `function evaluate(inputs: Record<string, any>, outputs: any, trace: Record<string, any> | null): number {
  return outputs === inputs.correct_answer ? 1.0 : 0.0
}`
)

func TestCustomCode(t *testing.T) {
	_, pyErr := exec.LookPath("python3")
	inputs := map[string]any{"country": "France", "correct_answer": "Paris", "answer_key": "Lyon"}
	cases := []struct {
		name    string
		params  map[string]any
		outputs any
		trace   map[string]any
		want    map[string]any
		kind    errs.Kind
		code    string
		python  bool
	}{
		{name: "python exact match", python: true, params: map[string]any{"code": exactMatchPython}, outputs: "Paris", want: map[string]any{"score": 1.0, "success": true}},
		{name: "python miss", python: true, params: map[string]any{"code": exactMatchPython, "runtime": "python"}, outputs: "Rome", want: map[string]any{"score": 0.0, "success": false}},
		{name: "javascript exact match", params: map[string]any{"code": exactMatchJS, "runtime": "javascript"}, outputs: "Paris", want: map[string]any{"score": 1.0, "success": true}},
		{name: "typescript exact match", params: map[string]any{"code": exactMatchTS, "runtime": "typescript", "version": "3"}, outputs: "Paris", want: map[string]any{"score": 1.0, "success": true}},
		{name: "threshold", params: map[string]any{"code": "function evaluate() { return 0.6 }", "runtime": "javascript", "threshold": 0.7}, want: map[string]any{"score": 0.6, "success": false}},
		{name: "boolean", params: map[string]any{"code": "function evaluate() { return true }", "runtime": "javascript"}, want: map[string]any{"success": true}},
		{name: "object passes through", params: map[string]any{"code": "function evaluate(i, o) { return {score: 0.4, success: true, note: o.length} }", "runtime": "javascript"}, outputs: "abc",
			want: map[string]any{"score": 0.4, "success": true, "note": 3.0}},
		{name: "version 2 gets the trace", params: map[string]any{"code": "function evaluate(inputs, outputs, trace) { return trace.spans.length }", "runtime": "javascript", "version": "2"},
			trace: map[string]any{"spans": []any{1.0, 2.0}}, want: map[string]any{"score": 2.0, "success": true}},
		{name: "no trace is null", params: map[string]any{"code": "function evaluate(inputs, outputs, trace) { return trace === null }", "runtime": "javascript"}, want: map[string]any{"success": true}},
		{name: "version 1", params: map[string]any{"code": `function evaluate(app_params, inputs, output, correct_answer) {
  return {score: output === correct_answer ? 1 : 0, params: app_params, country: inputs.country} }`, "runtime": "javascript", "version": "1"}, outputs: "Paris",
			want: map[string]any{"score": 1.0, "params": map[string]any{}, "country": "France"}},
		{name: "version 1 correct_answer_key", params: map[string]any{"code": "function evaluate(p, i, output, correct) { return output === correct }", "runtime": "javascript", "version": 1.0, "correct_answer_key": "answer_key"},
			outputs: "Lyon", want: map[string]any{"success": true}},
		{name: "python version 1", python: true, params: map[string]any{"code": "def evaluate(app_params, inputs, output, correct_answer):\n    return {'ok': output == correct_answer, 'p': app_params}\n", "version": "1"},
			outputs: "Paris", want: map[string]any{"ok": true, "p": map[string]any{}}},
		{name: "string result refused", params: map[string]any{"code": "function evaluate() { return 'good' }", "runtime": "javascript"}, kind: errs.Unprocessable, code: "runtime.code_result"},
		{name: "null result refused", params: map[string]any{"code": "function evaluate() {}", "runtime": "javascript"}, kind: errs.Unprocessable, code: "runtime.code_result"},
		{name: "array result refused", params: map[string]any{"code": "function evaluate() { return [1] }", "runtime": "javascript"}, kind: errs.Unprocessable, code: "runtime.code_result"},
		{name: "throw", params: map[string]any{"code": "function evaluate() { throw new Error('nope') }", "runtime": "javascript"}, kind: errs.Unprocessable, code: "runtime.code_error"},
		{name: "time limit", params: map[string]any{"code": "function evaluate() { for (;;) {} }", "runtime": "javascript"}, kind: errs.Unprocessable, code: "runtime.code_time_limit"},
		{name: "no code", params: map[string]any{"runtime": "javascript"}, kind: errs.Unprocessable, code: "request.invalid_field"},
		{name: "bad runtime", params: map[string]any{"code": "x", "runtime": "ruby"}, kind: errs.Unprocessable, code: "request.invalid_field"},
		{name: "bad version", params: map[string]any{"code": "x", "runtime": "javascript", "version": "4"}, kind: errs.Unprocessable, code: "request.invalid_field"},
		{name: "bad threshold", params: map[string]any{"code": "x", "runtime": "javascript", "threshold": "high"}, kind: errs.Unprocessable, code: "request.invalid_field"},
		{name: "bad key", params: map[string]any{"code": "x", "runtime": "javascript", "correct_answer_key": 3.0}, kind: errs.Unprocessable, code: "request.invalid_field"},
	}
	env := Env{Code: codebox.Limits{Timeout: 2 * time.Second}} // python3 starts in ~150 ms; more on a loaded machine
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.python && pyErr != nil {
				t.Skip("python3 is not on PATH: Python custom code answers 422 on this machine")
			}
			got, err := customCode(context.Background(), env, Request{Key: "auto_custom_code_run", Parameters: c.params, Inputs: inputs, Outputs: c.outputs, Trace: c.trace})
			if c.want == nil {
				if err == nil {
					t.Fatalf("no error; got %#v", got)
				}
				if e := errs.From(err); e.Kind != c.kind || e.Code != c.code {
					t.Fatalf("error %v (kind %d); want kind %d code %s", err, e.Kind, c.kind, c.code)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("got %#v; want %#v", got, c.want)
			}
		})
	}
}

func BenchmarkCustomCodeJavaScript(b *testing.B) {
	req := Request{Parameters: map[string]any{"code": exactMatchJS, "runtime": "javascript"},
		Inputs: map[string]any{"country": "France", "correct_answer": "Paris"}, Outputs: "Paris"}
	for b.Loop() {
		if _, err := customCode(context.Background(), Env{}, req); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCustomCodeTypeScript(b *testing.B) {
	req := Request{Parameters: map[string]any{"code": exactMatchTS, "runtime": "typescript"},
		Inputs: map[string]any{"country": "France", "correct_answer": "Paris"}, Outputs: "Paris"}
	for b.Loop() {
		if _, err := customCode(context.Background(), Env{}, req); err != nil {
			b.Fatal(err)
		}
	}
}
