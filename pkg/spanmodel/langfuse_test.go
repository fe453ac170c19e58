package spanmodel_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/assayhq/assay/pkg/spanmodel"
)

// TestLangfuseObservationTypes: every langfuse.observation.type maps onto
// a span type (testdata/golden/langfuse_*.json hold whole spans).
func TestLangfuseObservationTypes(t *testing.T) {
	for typ, want := range map[string]string{"span": "task", "event": "task", "agent": "agent", "tool": "tool", "chain": "chain",
		"retriever": "query", "evaluator": "task", "guardrail": "task", "embedding": "embedding", "generation": "chat"} {
		s := one(t, spanmodel.Raw{OTLP: true, Attributes: map[string]any{"langfuse.observation.type": typ}})
		assert.Equal(t, want, s.SpanType, typ)
	}
	s := one(t, spanmodel.Raw{OTLP: true, Attributes: map[string]any{"langfuse.observation.type": "generation", "langfuse.observation.input": "Say hi"}})
	assert.Equal(t, "completion", s.SpanType, "a generation whose input is text")
}

// TestLangfuseUsageBuckets: usage_details by Langfuse's bucket convention.
func TestLangfuseUsageBuckets(t *testing.T) {
	for name, c := range map[string]struct {
		usage string
		want  map[string]float64 // metrics.tokens.incremental.<k>
	}{
		"input excludes cache reads": {`{"input": 10, "cache_read_input_tokens": 30, "input_cache_creation": 5, "output": 4}`,
			map[string]float64{"prompt": 45, "completion": 4, "total": 49, "cache_read": 30, "cache_creation": 5}},
		"a given total is kept":  {`{"input": 10, "output": 4, "total": 20}`, map[string]float64{"prompt": 10, "completion": 4, "total": 20}},
		"OpenAI style, snake":    {`{"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10}`, map[string]float64{"prompt": 7, "completion": 3, "total": 10}},
		"other keys are ignored": {`{"input": 1, "output": 2, "requests": 9}`, map[string]float64{"prompt": 1, "completion": 2, "total": 3}},
	} {
		s := one(t, spanmodel.Raw{OTLP: true, Attributes: map[string]any{"langfuse.observation.type": "generation",
			"langfuse.observation.usage_details": c.usage}})
		for k, v := range c.want {
			assert.Equal(t, v, lookup(s.Attributes, "ag.metrics.tokens.incremental."+k), "%s: %s", name, k)
		}
	}
}

// TestLangfuseLeavesOthersAlone: a span without langfuse.* keys (the AI
// SDK's, exported through Langfuse's span processor) keeps its own
// mapping, and a plain OTel error status stays without an exception.
func TestLangfuseLeavesOthersAlone(t *testing.T) {
	s := one(t, spanmodel.Raw{OTLP: true, StatusCode: "STATUS_CODE_ERROR", StatusMessage: "boom",
		Attributes: map[string]any{"gen_ai.operation.name": "chat", "gen_ai.usage.input_tokens": 3.0}})
	assert.Equal(t, "chat", s.SpanType)
	assert.Nil(t, lookup(s.Attributes, "ag.exception"))
	assert.Equal(t, 3.0, lookup(s.Attributes, "ag.metrics.tokens.incremental.prompt"))
}
