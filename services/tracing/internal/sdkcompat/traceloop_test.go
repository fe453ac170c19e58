package sdkcompat

import (
	"strings"
	"testing"
)

// TestTraceloopWorkflow runs Traceloop's SDK with its OpenAI
// instrumentation, exporting to our OTLP endpoint with an ApiKey header
// (testdata/traceloop/workflow.mjs): a workflow root with its output, a
// task with its input and output, and the chat call with its prompt, the
// tool it was offered, its completion, tokens and cost; the root counts the call's tokens once.
func TestTraceloopWorkflow(t *testing.T) {
	p, e := platform(t)
	out := sdk{Dir: "traceloop"}.run(t, "workflow.mjs", e)
	id := out["trace_ids"].([]any)[0].(string)
	spans := trace(t, p, e.APIKey, id, 3)

	r := root(t, spans)
	if spanType(r) != "workflow" {
		t.Fatalf("root type %q, want workflow\n%s", spanType(r), dump(spans))
	}
	answer := out["answer"].(string)
	if got, _ := attr(r, "ag.data.outputs"); got != answer {
		t.Errorf("workflow output %v, want the answer %q", got, answer)
	}
	tasks := byType(spans, "task")
	if len(tasks) != 1 || field(tasks[0]["attributes"], "ag.data.outputs.temperature") != "18C" {
		t.Errorf("want one task span with its output\n%s", dump(tasks))
	}
	calls := byType(spans, "chat")
	if len(calls) != 1 {
		t.Fatalf("want one chat span\n%s", dump(spans))
	}
	c := calls[0]
	prompt := list(c, "ag.data.inputs.prompt")
	if len(prompt) != 2 || field(prompt[0], "role") != "system" || !strings.Contains(toJSON(field(prompt[1], "content")), "18C") {
		t.Errorf("chat prompt %v: want the system message and the question", prompt)
	}
	if tools, _ := attr(c, "ag.data.inputs.tools"); !strings.Contains(toJSON(tools), "get_weather") {
		t.Errorf("chat tools %v: want the get_weather definition (gen_ai.tool.definitions)", tools)
	}
	if cc := list(c, "ag.data.outputs.completion"); len(cc) != 1 || field(cc[0], "content") != answer {
		t.Errorf("chat completion %v, want %q", cc, answer)
	}
	u := out["usage"].(map[string]any)
	if metric(t, c, "ag.metrics.tokens.incremental.prompt") != u["prompt_tokens"] || metric(t, c, "ag.metrics.tokens.incremental.completion") != u["completion_tokens"] {
		t.Errorf("chat tokens: want the server's usage %v\n%s", u, dump(calls))
	}
	assertMiniCost(t, c)
	assertCountedOnce(t, spans, calls)
}
