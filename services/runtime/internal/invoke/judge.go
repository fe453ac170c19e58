package invoke

import (
	"context"

	"github.com/assayhq/assay/services/runtime/internal/prompt"
)

// judge runs the LLM-as-a-judge evaluator (auto_ai_critique): its
// messages rendered with the testcase, the evaluated output and trace, one
// model call (recorded as the annotation's chat span), the answer read as
// outputs against the threshold.
func judge(ctx context.Context, r *run) (any, error) {
	j, err := prompt.ParseJudge(r.params)
	if err != nil {
		return nil, err
	}
	d := r.call.Req.Data
	msgs, rf, err := j.Render(r.inputs, d.Outputs, d.Trace)
	if err != nil {
		return nil, err
	}
	res, err := r.callModel(ctx, "chat", j.Template, msgs, rf)
	if err != nil {
		return nil, err
	}
	content, _ := res.Message.Content.(string)
	return j.Outputs(content)
}
