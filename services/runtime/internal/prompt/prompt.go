// Package prompt reads a completion or chat application's parameters (the
// compatible platform's PromptTemplate) and renders its messages from inputs in
// the template's format: curly (default), mustache, fstring or jinja2.
//
// It also reads the LLM-as-a-judge evaluator's parameters (auto_ai_critique),
// whose judge messages are a prompt like any other (judge.go).
//
// Values render the same way in curly, mustache and fstring: strings as
// they are, numbers without a trailing ".0" when integral, everything else
// as compact JSON. jinja2 renders as Jinja does (a dict prints Python-like;
// use |tojson for JSON), with integral numbers as ints.
//
// Cost is bounded for every format: rendered text is capped at MaxOutput
// bytes per string; mustache refuses templates whose section nesting over
// the inputs' lists could exceed a fixed work budget; jinja2 runs in a
// sandbox (no loader, include, import, extends, macros or recursion;
// range, repetition, concatenation and padding capped) under a deadline
// of JinjaTimeout.
package prompt

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/assayhq/assay/pkg/errs"
)

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

	messagesPath string // where Messages came from, for errors; default parameters.prompt.messages
}

// Template formats.
const (
	FormatCurly    = "curly"
	FormatMustache = "mustache"
	FormatFString  = "fstring"
	FormatJinja2   = "jinja2"
)

// MaxOutput caps one rendered string (a message's content or a text part):
// a template that renders more is refused, so a small template cannot
// make the runtime build an unbounded prompt.
const MaxOutput = 4 << 20

// Render renders the template's messages (and its response_format) with
// inputs, which are visible flat and under "inputs", then appends history
// (a chat's inputs.messages). An unresolved variable or a missing input key
// is errs.Invalid naming it.
//
// A {"inputs": {...}} wrapper (the only key) is unwrapped first. History
// messages are appended as they are, never rendered.
func (t Template) Render(inputs map[string]any, history []Message) (messages []Message, responseFormat map[string]any, err error) {
	if w, ok := inputs["inputs"].(map[string]any); ok && len(inputs) == 1 {
		inputs = w
	}
	if inputs == nil {
		inputs = map[string]any{}
	}
	for _, k := range t.InputKeys {
		if _, ok := inputs[k]; !ok {
			return nil, nil, errs.Message(errs.Invalid, "runtime.prompt_missing_input",
				fmt.Sprintf("missing input key %q (required by parameters.prompt.input_keys)", k),
				map[string]any{"key": k})
		}
	}
	ctx := make(map[string]any, len(inputs)+1)
	for k, v := range inputs {
		ctx[k] = v
	}
	if _, ok := ctx["inputs"]; !ok {
		ctx["inputs"] = inputs
	}
	return t.renderWith(ctx, history)
}

// renderWith renders with ctx as the whole variable scope.
func (t Template) renderWith(ctx map[string]any, history []Message) ([]Message, map[string]any, error) {
	format := t.TemplateFormat
	if format == "" {
		format = FormatCurly
	}
	r, err := newRenderer(format)
	if err != nil {
		return nil, nil, err
	}
	at := t.messagesPath
	if at == "" {
		at = "parameters.prompt.messages"
	}
	out := make([]Message, 0, len(t.Messages)+len(history))
	for i, m := range t.Messages {
		where := fmt.Sprintf("%s[%d].content", at, i)
		c, err := renderContent(r, m.Content, ctx, where)
		if err != nil {
			return nil, nil, err
		}
		m.Content = c
		out = append(out, m)
	}
	out = append(out, history...)
	var rf map[string]any
	if t.LLMConfig.ResponseFormat != nil {
		v, err := renderDeep(r, t.LLMConfig.ResponseFormat, ctx, "parameters.prompt.llm_config.response_format", 0)
		if err != nil {
			return nil, nil, err
		}
		rf, _ = v.(map[string]any)
	}
	return out, rf, nil
}

// renderer renders one string of a template format with ctx. lenient is
// set for strings inside response_format, where an fstring must leave JSON
// Schema braces (regex quantifiers like [0-9]{3}) alone.
type renderer func(src string, ctx map[string]any, lenient bool) (string, error)

func newRenderer(format string) (renderer, error) {
	switch format {
	case FormatCurly:
		return renderCurly, nil
	case FormatMustache:
		return renderMustache, nil
	case FormatFString:
		return renderFString, nil
	case FormatJinja2:
		return renderJinja, nil
	}
	return nil, fieldErr([]any{"parameters", "prompt", "template_format"}, "must be one of curly, mustache, fstring, jinja2", format)
}

// renderContent renders a message content: a string, or the text parts of
// a list of content parts (other parts pass through unchanged).
func renderContent(r renderer, content any, ctx map[string]any, where string) (any, error) {
	switch c := content.(type) {
	case string:
		return renderString(r, c, ctx, where, false)
	case []any:
		parts := make([]any, len(c))
		for i, p := range c {
			pm, ok := p.(map[string]any)
			if !ok {
				parts[i] = p
				continue
			}
			text, isText := pm["text"].(string)
			if pm["type"] != "text" || !isText {
				parts[i] = p
				continue
			}
			s, err := renderString(r, text, ctx, fmt.Sprintf("%s[%d].text", where, i), false)
			if err != nil {
				return nil, err
			}
			np := make(map[string]any, len(pm))
			for k, v := range pm {
				np[k] = v
			}
			np["text"] = s
			parts[i] = np
		}
		return parts, nil
	}
	return content, nil
}

// renderDeep renders every string inside v (response_format).
func renderDeep(r renderer, v any, ctx map[string]any, where string, depth int) (any, error) {
	if depth > 64 {
		return nil, errs.New(errs.Invalid, "runtime.prompt_too_deep", where+" is nested too deeply")
	}
	switch x := v.(type) {
	case string:
		return renderString(r, x, ctx, where, true)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			rv, err := renderDeep(r, e, ctx, where+"."+k, depth+1)
			if err != nil {
				return nil, err
			}
			out[k] = rv
		}
		return out, nil
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			rv, err := renderDeep(r, e, ctx, fmt.Sprintf("%s[%d]", where, i), depth+1)
			if err != nil {
				return nil, err
			}
			out[i] = rv
		}
		return out, nil
	}
	return v, nil
}

// renderString renders one string and names where it failed.
func renderString(r renderer, src string, ctx map[string]any, where string, lenient bool) (string, error) {
	out, err := r(src, ctx, lenient)
	if err != nil {
		if e, ok := err.(*errs.Error); ok {
			if d, ok := e.Detail.(map[string]any); ok {
				d["path"] = where
				e.Msg = e.Msg + " in " + where
				d["message"] = e.Msg
			}
			return "", e
		}
		return "", errs.Message(errs.Invalid, "runtime.prompt_template", fmt.Sprintf("%s: %v", where, err), map[string]any{"path": where})
	}
	if len(out) > MaxOutput {
		return "", tooLarge(where)
	}
	return out, nil
}

func tooLarge(where string) *errs.Error {
	return errs.Message(errs.Invalid, "runtime.prompt_too_large",
		fmt.Sprintf("the rendered template is larger than %d bytes", MaxOutput), map[string]any{"path": where})
}

// unresolved is the error of a variable no input provides.
func unresolved(name string) *errs.Error {
	return errs.Message(errs.Invalid, "runtime.prompt_unresolved",
		fmt.Sprintf("unresolved variable %q", name), map[string]any{"variable": name})
}

// templateErr is a template that cannot be parsed or run.
func templateErr(format string, err error) *errs.Error {
	return errs.Message(errs.Invalid, "runtime.prompt_template",
		fmt.Sprintf("invalid %s template: %s", format, truncate(err.Error(), 300)), map[string]any{"format": format})
}

// stringify renders a resolved value into text: strings as they are,
// everything else as compact JSON (integral numbers without a fraction).
func stringify(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case nil:
		return "null"
	case bool:
		return strconv.FormatBool(x)
	case float64:
		return formatFloat(x)
	case json.Number:
		return x.String()
	case int:
		return strconv.Itoa(x)
	case int64:
		return strconv.FormatInt(x, 10)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

func formatFloat(f float64) string {
	if f == math.Trunc(f) && math.Abs(f) < 1e15 {
		return strconv.FormatInt(int64(f), 10)
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// truncate shortens s to n bytes (on a rune boundary) for error messages.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }

// fieldErr is the 422 naming a parameter's path, e.g.
// parameters.prompt.messages[1].role.
func fieldErr(loc []any, msg string, input any) *errs.Error {
	e := errs.Field(msg, input, loc...)
	e.Msg = pathString(loc) + ": " + msg
	return e
}

func pathString(loc []any) string {
	var b strings.Builder
	for i, p := range loc {
		switch x := p.(type) {
		case int:
			fmt.Fprintf(&b, "[%d]", x)
		default:
			if i > 0 {
				b.WriteByte('.')
			}
			fmt.Fprint(&b, x)
		}
	}
	return b.String()
}
