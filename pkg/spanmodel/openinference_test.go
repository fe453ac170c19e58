package spanmodel_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/assayhq/assay/pkg/spanmodel"
)

// An OpenInference chain's plain-text input.value is its
// input (a string stored as {"__default__": text}, the shape the
// compatible platform's SDK gives a value that is not an object), never parked; and
// an explicit session.id wins over gen_ai.conversation.id.
func TestOpenInferencePlainTextInputAndSession(t *testing.T) {
	s := one(t, spanmodel.Raw{OTLP: true, Attributes: map[string]any{
		"openinference.span.kind": "CHAIN", "input.value": "What is the capital of France?", "input.mime_type": "text/plain",
		"output.value": "Paris", "output.mime_type": "text/plain",
		"session.id": "sess-42", "gen_ai.conversation.id": "conv-7",
	}})
	assert.Equal(t, "chain", s.SpanType)
	assert.Equal(t, map[string]any{"__default__": "What is the capital of France?"}, ag(s, "data", "inputs"))
	assert.Equal(t, "Paris", ag(s, "data", "outputs"))
	assert.Nil(t, ag(s, "unsupported"), "nothing parked")
	assert.Equal(t, "sess-42", ag(s, "session", "id"))
	assert.Equal(t, "sess-42", s.SessionID)

	// Text that looks like JSON is still text when the mime type says so.
	s = one(t, spanmodel.Raw{OTLP: true, Attributes: map[string]any{
		"openinference.span.kind": "CHAIN", "input.value": `{"not": "parsed"}`, "input.mime_type": "text/plain"}})
	assert.Equal(t, map[string]any{"__default__": `{"not": "parsed"}`}, ag(s, "data", "inputs"))
	// JSON input stays an object; a JSON list is wrapped too.
	s = one(t, spanmodel.Raw{OTLP: true, Attributes: map[string]any{
		"openinference.span.kind": "CHAIN", "input.value": `{"q": "x"}`, "input.mime_type": "application/json"}})
	assert.Equal(t, map[string]any{"q": "x"}, ag(s, "data", "inputs"))
	s = one(t, spanmodel.Raw{OTLP: true, Attributes: map[string]any{"input.value": `[1, 2]`, "input.mime_type": "application/json"}})
	assert.Equal(t, map[string]any{"__default__": []any{1.0, 2.0}}, ag(s, "data", "inputs"))
	assert.Nil(t, ag(s, "unsupported"), "nothing parked")

	// gen_ai.conversation.id alone still names the session.
	s = one(t, spanmodel.Raw{OTLP: true, Attributes: map[string]any{"gen_ai.operation.name": "chat", "gen_ai.conversation.id": "conv-7"}})
	assert.Equal(t, "conv-7", s.SessionID)
}
