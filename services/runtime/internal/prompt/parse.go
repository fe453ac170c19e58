package prompt

import (
	"encoding/json"
	"math"
	"strings"
)

// DefaultModel is the model of an llm_config that names none.
const DefaultModel = "gpt-4o-mini"

// FallbackPolicies are the values of prompt.fallback_policy (the compatible
// platform's).
var FallbackPolicies = []string{"off", "availability", "capacity", "access", "context", "any"}

// Roles a prompt message may have.
var roles = map[string]bool{"system": true, "developer": true, "user": true, "assistant": true, "tool": true, "function": true}

// Bounds of a parsed template: counts far above any real prompt, so a
// hostile revision cannot make every invocation walk a huge structure.
const (
	maxMessages   = 1024
	maxInputKeys  = 1024
	maxFallbacks  = 16
	maxRetries    = 10
	maxRetryDelay = 60.0 // seconds
)

// Parse reads parameters (the application revision's parameters: {prompt:
// {...}}, or the legacy system_prompt/user_prompt form) into a Template.
// A malformed value is errs.Unprocessable (errs.Field) naming its path under
// "parameters", e.g. parameters.prompt.messages[1].role.
//
// Legacy parameters (no "prompt", but system_prompt and/or user_prompt, or
// the older prompt_system/prompt_user, with a flat model, temperature,
// max_tokens, top_p, frequency_penalty, presence_penalty, response_format,
// tools, tool_choice) become a system and a user message. Their format is parameters.template_format when
// given, else fstring (the legacy apps' {name} placeholders) unless the
// prompts use {{ }}, which means curly.
func Parse(parameters map[string]any) (Template, error) {
	raw, ok := parameters["prompt"]
	if !ok || raw == nil {
		for _, k := range []string{"system_prompt", "user_prompt", "prompt_system", "prompt_user"} {
			if _, legacy := parameters[k]; legacy {
				return parseLegacy(parameters)
			}
		}
		return Template{}, fieldErr([]any{"parameters", "prompt"}, "is required", nil)
	}
	obj, ok := raw.(map[string]any)
	if !ok {
		return Template{}, fieldErr([]any{"parameters", "prompt"}, "must be an object", raw)
	}
	return parsePrompt(obj, []any{"parameters", "prompt"})
}

func parsePrompt(obj map[string]any, at []any) (Template, error) {
	var t Template
	var err error
	msgs, ok := obj["messages"]
	if !ok || msgs == nil {
		return t, fieldErr(path(at, "messages"), "is required", nil)
	}
	if t.Messages, err = parseMessages(msgs, path(at, "messages")); err != nil {
		return t, err
	}
	if t.TemplateFormat, err = parseFormat(obj["template_format"], path(at, "template_format")); err != nil {
		return t, err
	}
	if v, ok := obj["input_keys"]; ok && v != nil {
		if t.InputKeys, err = stringList(v, path(at, "input_keys"), maxInputKeys); err != nil {
			return t, err
		}
	}
	if v, ok := obj["llm_config"]; ok && v != nil {
		m, ok := v.(map[string]any)
		if !ok {
			return t, fieldErr(path(at, "llm_config"), "must be an object", v)
		}
		if t.LLMConfig, err = parseLLMConfig(m, path(at, "llm_config")); err != nil {
			return t, err
		}
	} else {
		t.LLMConfig.Model = DefaultModel
	}
	if v, ok := obj["fallback_configs"]; ok && v != nil {
		list, ok := v.([]any)
		if !ok {
			return t, fieldErr(path(at, "fallback_configs"), "must be a list", v)
		}
		if len(list) > maxFallbacks {
			return t, fieldErr(path(at, "fallback_configs"), "has too many entries (at most 16)", nil)
		}
		for i, e := range list {
			m, ok := e.(map[string]any)
			if !ok {
				return t, fieldErr(path(at, "fallback_configs", i), "must be an object", e)
			}
			c, err := parseLLMConfig(m, path(at, "fallback_configs", i))
			if err != nil {
				return t, err
			}
			t.FallbackConfigs = append(t.FallbackConfigs, c)
		}
	}
	if t.FallbackPolicy, err = optString(obj, "fallback_policy", at); err != nil {
		return t, err
	}
	if t.FallbackPolicy == "" {
		t.FallbackPolicy = "off"
	}
	if !contains(FallbackPolicies, t.FallbackPolicy) {
		return t, fieldErr(path(at, "fallback_policy"), "must be one of "+strings.Join(FallbackPolicies, ", "), t.FallbackPolicy)
	}
	if v, ok := obj["retry_config"]; ok && v != nil {
		m, ok := v.(map[string]any)
		if !ok {
			return t, fieldErr(path(at, "retry_config"), "must be an object", v)
		}
		rc := &RetryConfig{}
		if n, ok, err := optNumber(m, "max_retries", path(at, "retry_config")); err != nil {
			return t, err
		} else if ok {
			if n != math.Trunc(n) || n < 0 || n > maxRetries {
				return t, fieldErr(path(at, "retry_config", "max_retries"), "must be an integer from 0 to 10", n)
			}
			rc.MaxRetries = int(n)
		}
		if d, ok, err := optNumber(m, "delay", path(at, "retry_config")); err != nil {
			return t, err
		} else if ok {
			if d < 0 || d > maxRetryDelay {
				return t, fieldErr(path(at, "retry_config", "delay"), "must be from 0 to 60 seconds", d)
			}
			rc.Delay = d
		}
		t.RetryConfig = rc
	}
	if t.RetryPolicy, err = optString(obj, "retry_policy", at); err != nil {
		return t, err
	}
	return t, nil
}

func parseLegacy(p map[string]any) (Template, error) {
	at := []any{"parameters"}
	var t Template
	// Older apps named them prompt_system and prompt_user.
	sys, err := firstString(p, at, "system_prompt", "prompt_system")
	if err != nil {
		return t, err
	}
	user, err := firstString(p, at, "user_prompt", "prompt_user")
	if err != nil {
		return t, err
	}
	if sys != "" {
		t.Messages = append(t.Messages, Message{Role: "system", Content: sys})
	}
	if user != "" {
		t.Messages = append(t.Messages, Message{Role: "user", Content: user})
	}
	if t.TemplateFormat, err = parseFormat(p["template_format"], path(at, "template_format")); err != nil {
		return t, err
	}
	if _, given := p["template_format"]; !given || p["template_format"] == nil {
		t.TemplateFormat = FormatFString
		if strings.Contains(sys, "{{") || strings.Contains(user, "{{") {
			t.TemplateFormat = FormatCurly
		}
	}
	if v, ok := p["input_keys"]; ok && v != nil {
		if t.InputKeys, err = stringList(v, path(at, "input_keys"), maxInputKeys); err != nil {
			return t, err
		}
	}
	// The flat keys are llm_config's own; anything else (the prompts) is
	// not a model setting.
	flat := map[string]any{}
	for _, k := range llmKeys {
		if v, ok := p[k]; ok {
			flat[k] = v
		}
	}
	if t.LLMConfig, err = parseLLMConfig(flat, at); err != nil {
		return t, err
	}
	t.FallbackPolicy = "off"
	return t, nil
}

var llmKeys = []string{"model", "connection", "temperature", "max_tokens", "top_p", "frequency_penalty",
	"presence_penalty", "reasoning_effort", "chat_template_kwargs", "response_format", "stream", "tools", "tool_choice"}

func parseMessages(v any, at []any) ([]Message, error) {
	list, ok := v.([]any)
	if !ok {
		return nil, fieldErr(at, "must be a list of messages", v)
	}
	if len(list) > maxMessages {
		return nil, fieldErr(at, "has too many messages (at most 1024)", nil)
	}
	out := make([]Message, 0, len(list))
	for i, e := range list {
		m, err := ParseMessage(e, path(at, i))
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// ParseMessage reads one chat message ({role, content, name?, tool_calls?,
// tool_call_id?}) found at loc, e.g. a chat's history entry
// ("inputs", "messages", 0). content is a string, a list of content parts
// (objects with a string "type"), or null.
func ParseMessage(v any, loc []any) (Message, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return Message{}, fieldErr(loc, "must be an object", v)
	}
	var msg Message
	role, ok := m["role"].(string)
	if !ok || !roles[role] {
		return msg, fieldErr(path(loc, "role"), "must be one of system, developer, user, assistant, tool, function", m["role"])
	}
	msg.Role = role
	switch c := m["content"].(type) {
	case nil, string:
		msg.Content = c
	case []any:
		for j, p := range c {
			pm, ok := p.(map[string]any)
			if !ok {
				return msg, fieldErr(path(loc, "content", j), "must be a content part object", p)
			}
			if _, ok := pm["type"].(string); !ok {
				return msg, fieldErr(path(loc, "content", j, "type"), "must be a string", pm["type"])
			}
			if pm["type"] == "text" {
				if _, ok := pm["text"].(string); !ok {
					return msg, fieldErr(path(loc, "content", j, "text"), "must be a string", pm["text"])
				}
			}
		}
		msg.Content = c
	default:
		return msg, fieldErr(path(loc, "content"), "must be a string or a list of content parts", c)
	}
	var err error
	if msg.Name, err = optString(m, "name", loc); err != nil {
		return msg, err
	}
	if msg.ToolCallID, err = optString(m, "tool_call_id", loc); err != nil {
		return msg, err
	}
	if tc, ok := m["tool_calls"]; ok && tc != nil {
		list, ok := tc.([]any)
		if !ok {
			return msg, fieldErr(path(loc, "tool_calls"), "must be a list", tc)
		}
		msg.ToolCalls = list
	}
	return msg, nil
}

func parseFormat(v any, at []any) (string, error) {
	if v == nil {
		return FormatCurly, nil
	}
	s, ok := v.(string)
	if !ok {
		return "", fieldErr(at, "must be a string", v)
	}
	switch s {
	case "":
		return FormatCurly, nil
	case FormatCurly, FormatMustache, FormatFString, FormatJinja2:
		return s, nil
	}
	return "", fieldErr(at, "must be one of curly, mustache, fstring, jinja2", s)
}

func parseLLMConfig(m map[string]any, at []any) (LLMConfig, error) {
	var c LLMConfig
	var err error
	if c.Model, err = optString(m, "model", at); err != nil {
		return c, err
	}
	if c.Model == "" {
		c.Model = DefaultModel
	}
	if c.Connection, err = optString(m, "connection", at); err != nil {
		return c, err
	}
	if c.ReasoningEffort, err = optString(m, "reasoning_effort", at); err != nil {
		return c, err
	}
	if c.ReasoningEffort != "" && !contains([]string{"none", "minimal", "low", "medium", "high"}, c.ReasoningEffort) {
		return c, fieldErr(path(at, "reasoning_effort"), "must be one of none, minimal, low, medium, high", c.ReasoningEffort)
	}
	floats := []struct {
		key      string
		dst      **float64
		min, max float64
	}{
		{"temperature", &c.Temperature, 0, 2},
		{"top_p", &c.TopP, 0, 1},
		{"frequency_penalty", &c.FrequencyPenalty, -2, 2},
		{"presence_penalty", &c.PresencePenalty, -2, 2},
	}
	for _, f := range floats {
		n, ok, err := optNumber(m, f.key, at)
		if err != nil {
			return c, err
		}
		if !ok {
			continue
		}
		if n < f.min || n > f.max {
			return c, fieldErr(path(at, f.key), "is out of range", n)
		}
		*f.dst = &n
	}
	if n, ok, err := optNumber(m, "max_tokens", at); err != nil {
		return c, err
	} else if ok {
		if n != math.Trunc(n) || n < 1 || n > 1<<30 {
			return c, fieldErr(path(at, "max_tokens"), "must be a positive integer", n)
		}
		i := int(n)
		c.MaxTokens = &i
	}
	if v, ok := m["stream"]; ok && v != nil {
		b, ok := v.(bool)
		if !ok {
			return c, fieldErr(path(at, "stream"), "must be a boolean", v)
		}
		c.Stream = &b
	}
	if v, ok := m["chat_template_kwargs"]; ok && v != nil {
		if c.ChatTemplateKwargs, ok = v.(map[string]any); !ok {
			return c, fieldErr(path(at, "chat_template_kwargs"), "must be an object", v)
		}
	}
	if v, ok := m["response_format"]; ok && v != nil {
		rf, ok := v.(map[string]any)
		if !ok {
			return c, fieldErr(path(at, "response_format"), "must be an object", v)
		}
		typ, _ := rf["type"].(string)
		switch typ {
		case "text", "json_object":
		case "json_schema":
			js, ok := rf["json_schema"].(map[string]any)
			if !ok {
				return c, fieldErr(path(at, "response_format", "json_schema"), "must be an object", rf["json_schema"])
			}
			if s, ok := js["schema"]; ok && s != nil {
				if _, ok := s.(map[string]any); !ok {
					return c, fieldErr(path(at, "response_format", "json_schema", "schema"), "must be an object", s)
				}
			}
		default:
			return c, fieldErr(path(at, "response_format", "type"), "must be one of text, json_object, json_schema", rf["type"])
		}
		c.ResponseFormat = rf
	}
	if v, ok := m["tools"]; ok && v != nil {
		list, ok := v.([]any)
		if !ok {
			return c, fieldErr(path(at, "tools"), "must be a list", v)
		}
		for i, e := range list {
			if _, ok := e.(map[string]any); !ok {
				return c, fieldErr(path(at, "tools", i), "must be an object", e)
			}
		}
		c.Tools = list
	}
	if v, ok := m["tool_choice"]; ok && v != nil {
		switch x := v.(type) {
		case string:
			if !contains([]string{"none", "auto", "required"}, x) {
				return c, fieldErr(path(at, "tool_choice"), "must be none, auto, required or an object", x)
			}
		case map[string]any:
		default:
			return c, fieldErr(path(at, "tool_choice"), "must be none, auto, required or an object", v)
		}
		c.ToolChoice = v
	}
	return c, nil
}

// optString reads an optional string (null and absent are "").
func optString(m map[string]any, key string, at []any) (string, error) {
	v, ok := m[key]
	if !ok || v == nil {
		return "", nil
	}
	s, ok := v.(string)
	if !ok {
		return "", fieldErr(path(at, key), "must be a string", v)
	}
	return s, nil
}

// firstString reads the first of keys that holds a non-empty string.
func firstString(m map[string]any, at []any, keys ...string) (string, error) {
	for _, k := range keys {
		s, err := optString(m, k, at)
		if err != nil || s != "" {
			return s, err
		}
	}
	return "", nil
}

// optNumber reads an optional finite number (JSON-decoded float64, or a
// json.Number or Go integer from callers that decode differently).
func optNumber(m map[string]any, key string, at []any) (float64, bool, error) {
	v, ok := m[key]
	if !ok || v == nil {
		return 0, false, nil
	}
	n, ok := toFloat(v)
	if !ok || math.IsNaN(n) || math.IsInf(n, 0) {
		return 0, false, fieldErr(path(at, key), "must be a number", v)
	}
	return n, true, nil
}

func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case float32:
		return float64(x), true
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	}
	return 0, false
}

func stringList(v any, at []any, max int) ([]string, error) {
	list, ok := v.([]any)
	if !ok {
		if ss, ok := v.([]string); ok {
			list = make([]any, len(ss))
			for i, s := range ss {
				list[i] = s
			}
		} else {
			return nil, fieldErr(at, "must be a list of strings", v)
		}
	}
	if len(list) > max {
		return nil, fieldErr(at, "has too many entries", nil)
	}
	out := make([]string, 0, len(list))
	for i, e := range list {
		s, ok := e.(string)
		if !ok {
			return nil, fieldErr(path(at, i), "must be a string", e)
		}
		out = append(out, s)
	}
	return out, nil
}

// path returns at extended with more, never sharing at's backing array.
func path(at []any, more ...any) []any {
	out := make([]any, 0, len(at)+len(more))
	return append(append(out, at...), more...)
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}
