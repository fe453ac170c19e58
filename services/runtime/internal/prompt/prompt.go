// Package prompt reads a completion or chat application's parameters (the
// PromptTemplate of reference §5) and renders its messages from inputs in
// the template's format: curly (default), mustache, fstring or jinja2.
//
// This file is the contract between the invoke surface and the prompt work;
// the bodies are filled in by the prompt work.
package prompt

import "github.com/assayhq/assay/pkg/errs"

// Message is one chat message, as the OpenAI chat API takes it.
type Message struct {
	Role       string `json:"role"`
	Content    any    `json:"content"` // a string, or a list of content parts
	Name       string `json:"name,omitempty"`
	ToolCalls  []any  `json:"tool_calls,omitempty"`
	ToolCallID string `json:"tool_call_id,omitempty"`
}

// LLMConfig is prompt.llm_config (and each of fallback_configs).
type LLMConfig struct {
	Model              string         `json:"model"` // default gpt-4o-mini
	Connection         string         `json:"connection,omitempty"`
	Temperature        *float64       `json:"temperature,omitempty"`
	MaxTokens          *int           `json:"max_tokens,omitempty"`
	TopP               *float64       `json:"top_p,omitempty"`
	FrequencyPenalty   *float64       `json:"frequency_penalty,omitempty"`
	PresencePenalty    *float64       `json:"presence_penalty,omitempty"`
	ReasoningEffort    string         `json:"reasoning_effort,omitempty"`
	ChatTemplateKwargs map[string]any `json:"chat_template_kwargs,omitempty"`
	ResponseFormat     map[string]any `json:"response_format,omitempty"`
	Stream             *bool          `json:"stream,omitempty"`
	Tools              []any          `json:"tools,omitempty"`
	ToolChoice         any            `json:"tool_choice,omitempty"`
}

// RetryConfig is prompt.retry_config.
type RetryConfig struct {
	MaxRetries int     `json:"max_retries"`
	Delay      float64 `json:"delay"` // seconds before the first retry; doubles each time
}

// Template is parameters.prompt, validated.
type Template struct {
	Messages        []Message
	TemplateFormat  string // curly, mustache, fstring or jinja2
	InputKeys       []string
	LLMConfig       LLMConfig
	FallbackConfigs []LLMConfig
	FallbackPolicy  string // off, availability, capacity, access, context, any
	RetryConfig     *RetryConfig
	RetryPolicy     string
}

// Parse reads parameters (the application revision's parameters: {prompt:
// {...}}, or the legacy system_prompt/user_prompt form) into a Template.
// A malformed value is errs.Invalid naming its path under "parameters".
func Parse(parameters map[string]any) (Template, error) {
	return Template{}, errs.New(errs.NotImplemented, "runtime.prompt", "prompts are not built yet")
}

// Render renders the template's messages (and its response_format) with
// inputs, which are visible flat and under "inputs", then appends history
// (a chat's inputs.messages). An unresolved variable or a missing input key
// is errs.Invalid naming it.
func (t Template) Render(inputs map[string]any, history []Message) (messages []Message, responseFormat map[string]any, err error) {
	return nil, nil, errs.New(errs.NotImplemented, "runtime.prompt", "prompts are not built yet")
}
