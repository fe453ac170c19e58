package invoke

import (
	"context"
	"encoding/json"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/services/runtime/internal/prompt"
)

// llmTurn runs the catalog's llm handler (builtin:llm:v0) as one model
// turn: parameters.messages rendered with the inputs in the first
// configuration's template_format, llms[0] called with llms[1:] as
// fallbacks, then inputs.messages, inputs.message and inputs.content
// appended as the conversation so far. The agent loop of that template
// (internal and external tools, files, permissions) is not run here: a
// configuration that asks for it is refused by name rather than run
// without what it asked for.
func llmTurn(ctx context.Context, r *run) (any, error) {
	p := r.params
	if tools, ok := p["tools"].(map[string]any); ok && (len(asList(tools["internal"])) > 0 || len(asList(tools["external"])) > 0) {
		return nil, errs.Field("tool loops are not run by this runtime; use chat with llm_config.tools", tools, "body", "data", "parameters", "tools")
	}
	if files, ok := p["files"].(map[string]any); ok && files["enabled"] == true {
		return nil, errs.Field("file access is not run by this runtime", files, "body", "data", "parameters", "files")
	}
	llms := asList(p["llms"])
	if len(llms) == 0 {
		return nil, errs.Field("needs at least one model configuration", p["llms"], "body", "data", "parameters", "llms")
	}
	configs := make([]any, len(llms))
	format := ""
	for i, c := range llms {
		m, ok := c.(map[string]any)
		if !ok {
			return nil, errs.Field("must be an object", c, "body", "data", "parameters", "llms", i)
		}
		cfg := map[string]any{}
		for k, v := range m {
			if k == "template_format" {
				if i == 0 {
					format, _ = v.(string)
				}
				continue
			}
			cfg[k] = v
		}
		configs[i] = cfg
	}
	if format == "" {
		format = "mustache" // the template's default
	}
	pr := map[string]any{"messages": p["messages"], "template_format": format, "llm_config": configs[0]}
	if len(configs) > 1 {
		pr["fallback_configs"], pr["fallback_policy"] = configs[1:], "any"
	}
	resp, _ := p["response"].(map[string]any)
	outFormat, _ := resp["format"].(string)
	if outFormat == "json" {
		rf := map[string]any{"type": "json_object"}
		if schema, ok := resp["schema"].(map[string]any); ok && len(schema) > 0 {
			rf = map[string]any{"type": "json_schema", "json_schema": map[string]any{"name": "response", "schema": schema}}
		}
		cfg := configs[0].(map[string]any)
		cfg["response_format"] = rf
	}
	t, err := prompt.Parse(map[string]any{"prompt": pr})
	if err != nil {
		return nil, err
	}
	history, err := historyOf(r.inputs)
	if err != nil {
		return nil, err
	}
	if m, ok := r.inputs["message"]; ok && m != nil {
		msg, err := prompt.ParseMessage(m, []any{"inputs", "message"})
		if err != nil {
			return nil, err
		}
		history = append(history, msg)
	}
	if c, ok := r.inputs["content"].(string); ok && c != "" {
		history = append(history, prompt.Message{Role: "user", Content: c})
	}
	res, err := r.model(ctx, "chat", t, history)
	if err != nil {
		return nil, err
	}
	msg := map[string]any{"role": "assistant", "content": res.Message.Content}
	if len(res.Message.ToolCalls) > 0 {
		msg["tool_calls"] = res.Message.ToolCalls
	}
	content, _ := res.Message.Content.(string)
	switch outFormat {
	case "text":
		return content, nil
	case "message":
		return msg, nil
	case "json":
		var v any
		if err := json.Unmarshal([]byte(content), &v); err != nil {
			return nil, errs.Message(errs.FailedDependency, "runtime.llm_not_json", "the model's answer is not JSON", map[string]any{"content": content})
		}
		return v, nil
	}
	return map[string]any{"messages": []any{msg}}, nil
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}
