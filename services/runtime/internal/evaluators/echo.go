package evaluators

import "context"

// echo is the wiring check evaluator: {"got": <text>}, the one field its
// outputs schema allows. The compatible platform's handler takes one
// argument, aloha, bound by name from the inputs, and returns it; so got is
// the text of inputs.aloha when the testcase has it. Otherwise got is the
// text of what an evaluator receives to judge, the evaluated outputs, and
// when there are none, the inputs as JSON.
func echo(_ context.Context, _ Env, req Request) (map[string]any, error) {
	if v, ok := req.Inputs["aloha"]; ok {
		return map[string]any{"got": text(v)}, nil
	}
	if req.Outputs != nil {
		return map[string]any{"got": text(req.Outputs)}, nil
	}
	in := req.Inputs
	if in == nil {
		in = map[string]any{}
	}
	return map[string]any{"got": pyDumps(in)}, nil
}
