package sdkcompat

import (
	"testing"

	"github.com/assayhq/assay/pkg/testutil/llmtest"
)

// TestOTelGenAIAgent runs an agent traced by hand with the OpenTelemetry JS
// SDK and the GenAI semantic conventions (testdata/otel-genai/agent.mjs):
// the agent root keeps its messages, its system instructions head its
// prompt, the tool definitions are its inputs' tools, the retrieval span
// keeps its documents, the chat spans are priced with the cached prompt
// tokens at the cache-read rate, and the root counts each call's tokens
// once.
func TestOTelGenAIAgent(t *testing.T) {
	p, e := platform(t)
	p.LLM.Script(
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "get_weather", Arguments: `{"city":"Paris"}`}},
			Usage: &llmtest.Usage{PromptTokens: 40, CompletionTokens: 7, TotalTokens: 47, PromptTokensDetails: &llmtest.PromptTokensDetails{CachedTokens: 16}}},
		llmtest.Reply{Content: "It is 18C and sunny in Paris."},
	)
	out := sdk{Dir: "otel-genai"}.run(t, "agent.mjs", e)
	id := out["trace_ids"].([]any)[0].(string)
	spans := trace(t, p, e.APIKey, id, 5)

	r := root(t, spans)
	if spanType(r) != "agent" {
		t.Fatalf("root type %q, want agent\n%s", spanType(r), dump(spans))
	}
	prompt := list(r, "ag.data.inputs.prompt")
	if len(prompt) != 2 || field(prompt[0], "role") != "system" || field(prompt[0], "content") != "You are a weather assistant." ||
		field(prompt[1], "content") != "What is the weather in Paris today?" {
		t.Errorf("agent prompt %v: want the system instructions, then the question", prompt)
	}
	if _, left := attr(r, "ag.meta.system_instructions"); left {
		t.Errorf("system instructions left in meta beside the prompt")
	}
	if tools := list(r, "ag.data.inputs.tools"); len(tools) != 1 || field(tools[0], "function.name") != "get_weather" {
		t.Errorf("agent tools %v: want the get_weather definition", tools)
	}
	completion := list(r, "ag.data.outputs.completion")
	if len(completion) != 1 || field(completion[0], "content") != "It is 18C and sunny in Paris." {
		t.Errorf("agent completion %v: want the answer", completion)
	}

	q := byType(spans, "query")
	if len(q) != 1 {
		t.Fatalf("want one query (retrieval) span\n%s", dump(spans))
	}
	if str(q[0], "ag.data.inputs.query") != "What is the weather in Paris today?" {
		t.Errorf("retrieval query %v", q[0]["attributes"])
	}
	if docs := list(q[0], "ag.data.outputs.retrieval.documents"); len(docs) != 2 || field(docs[0], "document.id") != "doc-paris" ||
		field(docs[0], "document.content") != "Paris is mild in spring." || field(docs[1], "document.score") != 0.41 {
		t.Errorf("retrieval documents %v", docs)
	}

	tools := byType(spans, "tool")
	if len(tools) != 1 || field(tools[0]["attributes"], "ag.data.inputs.name") != "get_weather" ||
		field(tools[0]["attributes"], "ag.data.outputs.temperature") != "18C" {
		t.Errorf("tool span: want its name, arguments and result\n%s", dump(tools))
	}

	calls := byType(spans, "chat")
	if len(calls) != 2 {
		t.Fatalf("want two chat spans\n%s", dump(spans))
	}
	usages := out["usages"].([]any)
	for i, c := range calls {
		u := usages[i].(map[string]any)
		if metric(t, c, "ag.metrics.tokens.incremental.prompt") != u["prompt"] || metric(t, c, "ag.metrics.tokens.incremental.completion") != u["completion"] {
			t.Errorf("chat %d tokens: want the server's usage %v\n%s", i, u, dump([]map[string]any{c}))
		}
		if p := list(c, "ag.data.inputs.prompt"); len(p) == 0 || field(p[0], "role") != "system" {
			t.Errorf("chat %d prompt %v: want the system message first", i, p)
		}
		assertMiniCost(t, c)
	}
	if got := metric(t, calls[0], "ag.metrics.tokens.incremental.cache_read"); got != 16 {
		t.Errorf("first call's cache-read tokens %v, want 16", got)
	}
	assertCountedOnce(t, spans, calls)
}
