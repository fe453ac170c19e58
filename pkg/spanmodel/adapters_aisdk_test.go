package spanmodel_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/assayhq/assay/pkg/spanmodel"
)

// The cases of adapters_aisdk.go the golden traces (real SDK output) do not
// reach.
func TestAISDKAdapterEdges(t *testing.T) {
	// An agent span's usage is the aggregate of its model calls: alone it
	// has no tokens of its own (its raw attributes keep them).
	s := one(t, spanmodel.Raw{OTLP: true, Attributes: map[string]any{
		"gen_ai.operation.name": "agent_step", "gen_ai.usage.input_tokens": 12.0, "gen_ai.usage.output_tokens": 3.0}})
	assert.Nil(t, ag(s, "metrics", "tokens"))
	assert.Equal(t, 12.0, s.Attributes["gen_ai"].(map[string]any)["usage"].(map[string]any)["input_tokens"])

	// Plain-text system instructions, and a prompt that already starts
	// with the system message: not added twice, and not left in meta.
	s = one(t, spanmodel.Raw{OTLP: true, Attributes: map[string]any{
		"gen_ai.operation.name": "chat", "gen_ai.system_instructions": "Be brief.",
		"gen_ai.input.messages":   `[{"role":"system","parts":[{"type":"text","content":"Be brief."}]},{"role":"user","parts":[{"type":"text","content":"Hi"}]}]`,
		"gen_ai.tool.definitions": `[{"type":"function","function":{"name":"already_openai"}}]`,
	}})
	assert.Equal(t, []any{map[string]any{"role": "system", "content": "Be brief."}, map[string]any{"role": "user", "content": "Hi"}},
		ag(s, "data", "inputs", "prompt"))
	assert.Nil(t, ag(s, "meta", "system_instructions"))
	assert.Equal(t, []any{map[string]any{"type": "function", "function": map[string]any{"name": "already_openai"}}},
		ag(s, "data", "inputs", "tools"), "a definition already in the OpenAI shape is kept")

	// Snake-case runtime-context keys name the user and session too; the
	// text and tool calls of one model call are both kept.
	s = one(t, spanmodel.Raw{OTLP: true, Attributes: map[string]any{
		"ai.operationId": "ai.generateText.doGenerate", "ai.settings.context.user_id": "u-1", "ai.settings.context.session_id": "s-1",
		"ai.response.text": "Let me check.", "ai.response.toolCalls": `[{"toolCallId":"c1","toolName":"weather","input":{"city":"Oslo"}}]`,
	}})
	assert.Equal(t, "u-1", s.UserID)
	assert.Equal(t, "s-1", s.SessionID)
	assert.Equal(t, map[string]any{"text": "Let me check.", "toolCalls": []any{map[string]any{
		"toolCallId": "c1", "toolName": "weather", "input": map[string]any{"city": "Oslo"}}}}, ag(s, "data", "outputs"))
}
