package spanmodel_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/assayhq/assay/pkg/spanmodel"
)

// The edges of gen_ai.system_instructions the golden files do not show:
// a framework that also sends the system message gets it once; plain-text
// instructions are the message's content; a prompt laid out key by key
// (OpenLLMetry's gen_ai.prompt.N.*) keeps the instructions under meta
// rather than a second, clashing prompt.
func TestSystemInstructionsEdges(t *testing.T) {
	s := one(t, spanmodel.Raw{OTLP: true, Attributes: map[string]any{
		"gen_ai.operation.name":      "chat",
		"gen_ai.system_instructions": `[{"type": "text", "content": "Be brief."}]`,
		"gen_ai.input.messages":      `[{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]`,
	}})
	assert.Equal(t, []any{map[string]any{"role": "system", "content": "Be brief."}, map[string]any{"role": "user", "content": "Hi"}},
		ag(s, "data", "inputs", "prompt"))
	assert.Nil(t, ag(s, "meta", "system_instructions"))

	s = one(t, spanmodel.Raw{OTLP: true, Attributes: map[string]any{
		"gen_ai.operation.name": "chat", "gen_ai.system_instructions": "Be brief.",
	}})
	assert.Equal(t, []any{map[string]any{"role": "system", "content": "Be brief."}}, ag(s, "data", "inputs", "prompt"))

	// Parts that are not all text stay parts.
	s = one(t, spanmodel.Raw{OTLP: true, Attributes: map[string]any{
		"gen_ai.operation.name": "chat", "gen_ai.system_instructions": `[{"type": "text", "content": "Look:"}, {"type": "uri", "uri": "https://x/y.png"}]`,
		"gen_ai.input.messages": `[{"role": "system", "content": "Look:"}]`,
	}})
	prompt, _ := ag(s, "data", "inputs", "prompt").([]any)
	assert.Len(t, prompt, 2, "parts are compared as parts, never as text: %v", prompt)

	s = one(t, spanmodel.Raw{OTLP: true, Attributes: map[string]any{
		"llm.request.type": "chat", "gen_ai.prompt.0.role": "user", "gen_ai.prompt.0.content": "Hi",
		"gen_ai.system_instructions": "Be brief.",
	}})
	assert.Equal(t, []any{map[string]any{"role": "user", "content": "Hi"}}, ag(s, "data", "inputs", "prompt"))
	assert.Equal(t, "Be brief.", ag(s, "meta", "system_instructions"))
}

// A tool span's result stays its output when the span also carries output
// messages: they cannot sit beside a value that is not an object.
func TestOutputMessagesBesideAToolResult(t *testing.T) {
	s := one(t, spanmodel.Raw{OTLP: true, Attributes: map[string]any{
		"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_weather", "gen_ai.tool.call.result": "18C",
		"gen_ai.output.messages": `[{"role": "tool", "parts": [{"type": "text", "content": "18C"}]}]`,
	}})
	assert.Equal(t, "18C", ag(s, "data", "outputs"))
	// An agent with no output of its own gets the messages.
	s = one(t, spanmodel.Raw{OTLP: true, Attributes: map[string]any{
		"gen_ai.operation.name": "invoke_agent", "gen_ai.output.messages": `[{"role": "assistant", "content": "Hi"}]`,
	}})
	assert.Equal(t, []any{map[string]any{"role": "assistant", "content": "Hi"}}, ag(s, "data", "outputs", "completion"))
}
