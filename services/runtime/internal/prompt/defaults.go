package prompt

// DefaultCompletion is the prompt a completion runs when it is invoked with
// no revision and no parameters: a system message, and a user message that
// is the inputs as compact JSON (so any inputs work, and none are
// required).
func DefaultCompletion() Template {
	return Template{
		Messages: []Message{
			{Role: "system", Content: "You are a helpful assistant. Answer the request in the user's message accurately and concisely."},
			{Role: "user", Content: "{{inputs}}"},
		},
		TemplateFormat: FormatCurly,
		LLMConfig:      LLMConfig{Model: DefaultModel},
		FallbackPolicy: "off",
	}
}

// DefaultChat is the prompt a chat runs when it is invoked with no revision
// and no parameters: one system message; the conversation (inputs.messages)
// is appended after it by Render.
func DefaultChat() Template {
	return Template{
		Messages: []Message{
			{Role: "system", Content: "You are a helpful assistant. Reply to the conversation accurately and concisely."},
		},
		TemplateFormat: FormatCurly,
		LLMConfig:      LLMConfig{Model: DefaultModel},
		FallbackPolicy: "off",
	}
}
