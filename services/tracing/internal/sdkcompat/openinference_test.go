package sdkcompat

import (
	"testing"

	"github.com/assayhq/assay/pkg/testutil/llmtest"
)

// TestOpenInferenceOpenAI runs the openai client instrumented by
// OpenInference under hand-made AGENT and RETRIEVER spans
// (testdata/openinference/run.mjs): the agent keeps its messages beside its
// input and output values, the retriever its documents, the chat call its
// tools, and its cached prompt tokens (llm.token_count.prompt_details.
// cache_read) are priced at the cache-read rate; the root counts each
// call's tokens once.
func TestOpenInferenceOpenAI(t *testing.T) {
	p, e := platform(t)
	p.LLM.Script(llmtest.Reply{Content: "It is 18C in Paris.",
		Usage: &llmtest.Usage{PromptTokens: 30, CompletionTokens: 6, TotalTokens: 36, PromptTokensDetails: &llmtest.PromptTokensDetails{CachedTokens: 12}}})
	out := sdk{Dir: "openinference"}.run(t, "run.mjs", e)
	id := out["trace_ids"].([]any)[0].(string)
	spans := trace(t, p, e.APIKey, id, 5)

	r := root(t, spans)
	if spanType(r) != "agent" {
		t.Fatalf("root type %q, want agent\n%s", spanType(r), dump(spans))
	}
	if prompt := list(r, "ag.data.inputs.prompt"); len(prompt) != 2 || field(prompt[0], "role") != "system" {
		t.Errorf("agent prompt %v: want its llm.input_messages", prompt)
	}
	if str(r, "ag.data.inputs.question") != "What is the weather in Paris today?" {
		t.Errorf("agent input.value lost: %v", field(r["attributes"], "ag.data.inputs"))
	}
	if c := list(r, "ag.data.outputs.completion"); len(c) != 1 || field(c[0], "content") != "It is 18C in Paris." {
		t.Errorf("agent completion %v: want its llm.output_messages", field(r["attributes"], "ag.data.outputs"))
	}

	q := byType(spans, "query")
	if len(q) != 1 {
		t.Fatalf("want one query (RETRIEVER) span\n%s", dump(spans))
	}
	if docs := list(q[0], "ag.data.outputs.retrieval.documents"); len(docs) != 2 || field(docs[0], "document.content") != "Paris is mild in spring." ||
		field(docs[1], "document.score") != 0.41 {
		t.Errorf("retriever documents %v", field(q[0]["attributes"], "ag.data.outputs"))
	}

	calls := byType(spans, "chat")
	if len(calls) != 2 {
		t.Fatalf("want two chat (LLM) spans, the call and the streamed call\n%s", dump(spans))
	}
	var priced []map[string]any
	for _, c := range calls {
		if metric(t, c, "ag.metrics.tokens.incremental.prompt") > 0 {
			priced = append(priced, c)
		}
	}
	if len(priced) != 1 {
		// The instrumentation records no usage on a streamed call.
		t.Fatalf("want usage on the one non-streamed call\n%s", dump(calls))
	}
	c := priced[0]
	if tools := list(c, "ag.data.inputs.tools"); len(tools) != 1 || field(tools[0], "function.name") != "get_weather" {
		t.Errorf("chat tools %v: want the get_weather definition from llm.tools", tools)
	}
	if p := list(c, "ag.data.inputs.prompt"); len(p) != 2 {
		t.Errorf("chat prompt %v", p)
	}
	if got := metric(t, c, "ag.metrics.tokens.incremental.cache_read"); got != 12 {
		t.Errorf("cache-read tokens %v, want 12 (llm.token_count.prompt_details.cache_read)\n%s", got, dump([]map[string]any{c}))
	}
	if metric(t, c, "ag.metrics.tokens.incremental.prompt") != 30 || metric(t, c, "ag.metrics.tokens.incremental.completion") != 6 {
		t.Errorf("chat tokens: want the server's 30/6\n%s", dump([]map[string]any{c}))
	}
	assertMiniCost(t, c)
	for _, s := range calls {
		if s["span_id"] != c["span_id"] {
			if cc := list(s, "ag.data.outputs.completion"); len(cc) != 1 || field(cc[0], "content") != out["streamed"] {
				t.Errorf("streamed completion %v, want %q", cc, out["streamed"])
			}
		}
	}

	emb := byType(spans, "embedding")
	if len(emb) != 1 || str(emb[0], "ag.meta.request.model") != "text-embedding-3-small" {
		t.Errorf("want one embedding span with its model\n%s", dump(emb))
	}
	assertCountedOnce(t, spans, calls)
}
