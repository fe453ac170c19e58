package spanmodel_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/pkg/spanmodel"
)

func one(t *testing.T, r spanmodel.Raw) *spanmodel.Span {
	t.Helper()
	prices, err := spanmodel.LoadPrices("")
	require.NoError(t, err)
	n := &spanmodel.Normalizer{Prices: prices}
	if r.TraceID == "" {
		r.TraceID, r.SpanID = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"
	}
	spans, rejected := n.Batch([]spanmodel.Raw{r})
	require.Empty(t, rejected)
	return spans[0]
}

func ag(s *spanmodel.Span, path ...string) any {
	var cur any = s.Attributes["ag"]
	for _, p := range path {
		m, _ := cur.(map[string]any)
		cur = m[p]
	}
	return cur
}

// Attribute sets as the instrumentation libraries emit them, and where
// each must land.
func TestAdapters(t *testing.T) {
	tests := []struct {
		name  string
		attrs map[string]any
		typ   string
		want  map[string]any // dotted ag path → value
	}{
		{"OpenLLMetry", map[string]any{"traceloop.span.kind": "workflow", "llm.request.type": "chat", "gen_ai.prompt.0.role": "user",
			"gen_ai.prompt.0.content": "hi", "gen_ai.completion.0.content": "hello", "llm.usage.total_tokens": 12.0, "llm.is_streaming": false},
			"chat", map[string]any{"data.inputs.prompt": []any{map[string]any{"role": "user", "content": "hi"}},
				"metrics.tokens.incremental.total": 12.0, "meta.request.streaming": false}},
		{"OpenInference", map[string]any{"openinference.span.kind": "LLM", "llm.model_name": "gpt-4o", "llm.token_count.prompt": 7.0,
			"llm.token_count.completion": 3.0, "llm.input_messages.0.message.role": "user", "llm.input_messages.0.message.content": "q",
			"input.value": `{"q":"q"}`, "session.id": "s1"},
			"chat", map[string]any{"meta.response.model": "gpt-4o", "metrics.tokens.incremental.prompt": 7.0,
				"data.inputs.prompt": []any{map[string]any{"role": "user", "content": "q"}}, "session.id": "s1"}},
		{"OTel gen_ai (PydanticAI)", map[string]any{"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o-mini",
			"gen_ai.usage.input_tokens": 1000.0, "gen_ai.usage.output_tokens": 500.0, "gen_ai.conversation.id": "conv-9",
			"gen_ai.input.messages": `[{"role":"user","parts":[{"type":"text","content":"2+2?"}]}]`},
			"chat", map[string]any{"metrics.tokens.incremental.total": 1500.0, "session.id": "conv-9",
				"data.inputs.prompt":              []any{map[string]any{"role": "user", "content": "2+2?"}},
				"metrics.costs.incremental.total": 0.00045}},
		{"Vercel AI", map[string]any{"ai.operationId": "ai.toolCall", "ai.toolCall.name": "weather", "ai.toolCall.args": `{"city":"Paris"}`,
			"ai.usage.promptTokens": 4.0, "ai.telemetry.metadata.userId": "u1"},
			"tool", map[string]any{"data.inputs.args": map[string]any{"city": "Paris"}, "user.id": "u1", "metrics.tokens.incremental.prompt": 4.0}},
		{"own ag.* wins, explicit types kept", map[string]any{"gen_ai.operation.name": "chat", "ag.type.node": "agent",
			"ag.data.inputs": "@ag.type=json:{\"x\":1}", "ag.refs.variant.slug": "v1", "ag.metrics.unit.costs.total": 0.5},
			"agent", map[string]any{"data.inputs": map[string]any{"x": 1.0}, "references.application_variant.slug": "v1",
				"metrics.costs.incremental.total": 0.5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := one(t, spanmodel.Raw{OTLP: true, Attributes: tt.attrs})
			assert.Equal(t, tt.typ, s.SpanType)
			for path, want := range tt.want {
				got, ok := spanmodel.Unflatten(map[string]any{"x": s.Attributes["ag"]})["x"], true
				_ = ok
				v := lookup(got, path)
				if f, isF := want.(float64); isF {
					assert.InDelta(t, f, v, 1e-9, path)
					continue
				}
				assert.Equal(t, want, v, path)
			}
		})
	}
}

func lookup(v any, dotted string) any {
	cur := v
	start := 0
	for i := 0; i <= len(dotted); i++ {
		if i == len(dotted) || dotted[i] == '.' {
			m, _ := cur.(map[string]any)
			cur = m[dotted[start:i]]
			start = i + 1
		}
	}
	return cur
}

func TestCleaningParksWhatDoesNotFit(t *testing.T) {
	s := one(t, spanmodel.Raw{Attributes: map[string]any{"ag": map[string]any{
		"type":       map[string]any{"span": "LLM", "node": "x", "trace": "nope"},
		"data":       map[string]any{"inputs": "not json", "parameters": `{"t":0.2}`, "extra": 1.0},
		"metrics":    map[string]any{"duration": map[string]any{"cumulative": "slow"}, "custom": 3.0},
		"references": map[string]any{"application": map[string]any{"slug": "bad slug!"}, "nope": map[string]any{"id": "x"}},
		"agent":      map[string]any{"id": "a1"},
		"meta":       map[string]any{"configuration": map[string]any{"model": "m"}},
	}}})
	assert.Equal(t, "llm", s.SpanType)
	assert.Equal(t, "a1", s.AgentID)
	assert.Equal(t, map[string]any{"t": 0.2}, ag(s, "data", "parameters"), "a JSON-string object is parsed; meta.configuration does not replace it")
	assert.Nil(t, ag(s, "meta", "configuration"), "meta.configuration is always removed")
	un := ag(s, "unsupported").(map[string]any)
	assert.Equal(t, "x", lookup(un, "type.node"))
	assert.Equal(t, "not json", lookup(un, "data.inputs"))
	assert.Equal(t, 1.0, lookup(un, "data.extra"))
	assert.Equal(t, "slow", lookup(un, "metrics.duration.cumulative"))
	assert.Equal(t, 3.0, lookup(un, "metrics.custom"))
	assert.Nil(t, ag(s, "references"), "a slug that is not URL-safe is dropped, unknown keys too")
}

func TestTimesAndIDs(t *testing.T) {
	want := time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)
	for _, in := range []any{"1714979289", "1714979289000", "1714979289000000", "1714979289000000000", "2024-05-06T07:08:09Z", "2024-05-06T07:08:09", 1714979289.0} {
		got, err := spanmodel.Time(in)
		require.NoError(t, err, in)
		assert.True(t, want.Equal(got), "%v → %v", in, got)
	}
	_, err := spanmodel.Time("12345")
	assert.ErrorContains(t, err, "5 digits")
	id, err := spanmodel.TraceID("0x0AF76519-16CD-43DD-8448-EB211C80319C")
	require.NoError(t, err)
	assert.Equal(t, "0af7651916cd43dd8448eb211c80319c", id)
	sid, err := spanmodel.SpanID("b7ad6b7169203331b7ad6b7169203331")
	require.NoError(t, err)
	assert.Equal(t, "b7ad6b7169203331", sid)
}

func TestRollUpAcrossTheTree(t *testing.T) {
	tid := "0af7651916cd43dd8448eb211c80319c"
	mk := func(id, parent string, prompt float64) spanmodel.Raw {
		return spanmodel.Raw{TraceID: tid, SpanID: id, ParentID: parent, Attributes: map[string]any{
			"ag.metrics.tokens.incremental.prompt": prompt, "ag.type.span": "task"}}
	}
	n := &spanmodel.Normalizer{}
	spans, _ := n.Batch([]spanmodel.Raw{mk("0000000000000001", "", 1), mk("0000000000000002", "0000000000000001", 2), mk("0000000000000003", "0000000000000002", 4)})
	assert.Equal(t, 7.0, lookup(spans[0].Attributes, "ag.metrics.tokens.cumulative.prompt"))
	assert.Equal(t, 6.0, lookup(spans[1].Attributes, "ag.metrics.tokens.cumulative.prompt"))
	assert.Equal(t, 4.0, lookup(spans[2].Attributes, "ag.metrics.tokens.cumulative.prompt"))
}
