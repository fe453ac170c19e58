package sdkcompat

import (
	"strings"
	"testing"

	"github.com/assayhq/assay/pkg/testutil/llmtest"
)

// TestLangChainOpenInference runs a LangChain chain (retriever, prompt
// template, ChatOpenAI, output parser) instrumented by OpenInference
// (testdata/langchain/chain.mjs): the chain root has its question and
// answer, the retriever its documents, the chat model its templated prompt,
// answer, tokens and cached tokens priced at the cache-read rate, and the
// root counts the call's tokens once.
func TestLangChainOpenInference(t *testing.T) {
	p, e := platform(t)
	p.LLM.Script(llmtest.Reply{Content: "It is mild in Paris today.",
		Usage: &llmtest.Usage{PromptTokens: 50, CompletionTokens: 6, TotalTokens: 56, PromptTokensDetails: &llmtest.PromptTokensDetails{CachedTokens: 20}}})
	out := sdk{Dir: "langchain"}.run(t, "chain.mjs", e)
	id := out["trace_ids"].([]any)[0].(string)
	// Every span the chain made, or a read between two exports shows the
	// ones whose parent is not stored yet as roots.
	spans := trace(t, p, e.APIKey, id, int(out["span_count"].(float64)))

	r := root(t, spans)
	if spanType(r) != "chain" {
		t.Fatalf("root type %q, want chain\n%s", spanType(r), dump(spans))
	}
	if got, _ := attr(r, "ag.data.outputs"); got != "It is mild in Paris today." {
		t.Errorf("chain output %v, want the answer", got)
	}
	if in, _ := attr(r, "ag.data.inputs"); !strings.Contains(toJSON(in), "What is the weather in Paris today?") {
		t.Errorf("chain input %v, want the question", in)
	}

	q := byType(spans, "query")
	if len(q) != 1 {
		t.Fatalf("want one query (retriever) span\n%s", dump(spans))
	}
	if docs := list(q[0], "ag.data.outputs.retrieval.documents"); len(docs) != 2 || field(docs[0], "document.content") != "Paris is mild in spring." {
		t.Errorf("retriever documents %v", field(q[0]["attributes"], "ag.data.outputs"))
	}

	calls := byType(spans, "chat")
	if len(calls) != 1 {
		t.Fatalf("want one chat (LLM) span\n%s", dump(spans))
	}
	c := calls[0]
	prompt := list(c, "ag.data.inputs.prompt")
	if len(prompt) != 2 || field(prompt[0], "role") != "system" || !strings.Contains(toJSON(field(prompt[0], "content")), "Paris is mild in spring.") ||
		field(prompt[1], "content") != "What is the weather in Paris today?" {
		t.Errorf("chat prompt %v: want the templated system message with the retrieved context, then the question", prompt)
	}
	if cc := list(c, "ag.data.outputs.completion"); len(cc) != 1 || field(cc[0], "content") != "It is mild in Paris today." {
		t.Errorf("chat completion %v", cc)
	}
	if metric(t, c, "ag.metrics.tokens.incremental.prompt") != 50 || metric(t, c, "ag.metrics.tokens.incremental.completion") != 6 {
		t.Errorf("chat tokens: want the server's 50/6\n%s", dump(calls))
	}
	if got := metric(t, c, "ag.metrics.tokens.incremental.cache_read"); got != 20 {
		t.Errorf("cache-read tokens %v, want 20\n%s", got, dump(calls))
	}
	assertMiniCost(t, c)
	assertCountedOnce(t, spans, calls)
}
