package spanmodel

import (
	"encoding/json"
	"strings"
)

// aiSDK runs after the generic adapters and settles what the Vercel AI SDK's
// two span layouts need beyond them: the OpenTelemetry() integration of
// @ai-sdk/otel (GenAI conventions: invoke_agent, agent_step, chat,
// execute_tool, embeddings) and the ai.* spans of experimental_telemetry and
// LegacyOpenTelemetry(). Its rules only fill in what is missing, so a
// generic GenAI rule that already did the same leaves nothing for it to do.
func aiSDK(raw map[string]any, keys []string, ag map[string]any) {
	op, _ := raw["gen_ai.operation.name"].(string)
	switch op {
	case "invoke_agent", "agent_step":
		// An agent span's gen_ai.usage.* is the total of the model calls
		// below it (chat spans carrying their own usage), not usage of its
		// own: counted as its own, the roll-up showed every token twice at
		// the root while the costs, computed on the chat spans only, were
		// right, so tokens and costs disagreed. The raw gen_ai.usage.*
		// attributes are kept as sent.
		dropUnitTokens(ag)
	}
	if op != "" {
		semconvMessages(raw, ag, op)
	}
	if len(withPrefix(keys, "ai.")) > 0 {
		aiSDKOutputs(raw, ag)
		aiSDKContext(raw, ag)
		aiSDKTools(raw, ag)
	}
}

// dropUnitTokens removes a span's own (incremental) token counts.
func dropUnitTokens(ag map[string]any) {
	for k := range ag {
		if strings.HasPrefix(k, "metrics.unit.tokens.") {
			delete(ag, k)
		}
	}
}

// semconvMessages maps the GenAI message attributes of a chat or agent span
// (semantic-conventions parts format, as @ai-sdk/otel writes them): the
// input and output messages, gen_ai.system_instructions as a leading
// system message, and gen_ai.tool.definitions as the request's tools.
func semconvMessages(raw map[string]any, ag map[string]any, op string) {
	if op != "chat" && op != "invoke_agent" && op != "text_completion" && op != "generate_content" {
		return
	}
	if v, ok := raw["gen_ai.input.messages"]; ok {
		if list, ok := parseJSON(v).([]any); ok && hasParts(list) {
			ag["data.inputs.prompt"] = partsMessages(list)
		}
	}
	if v, ok := raw["gen_ai.output.messages"]; ok {
		if list, ok := parseJSON(v).([]any); ok && hasParts(list) {
			ag["data.outputs.completion"] = partsMessages(list)
		}
	}
}

// hasParts says whether the messages are in the parts format ({role,
// parts}); other shapes are left to the generic adapters.
func hasParts(list []any) bool {
	for _, e := range list {
		if m, ok := e.(map[string]any); ok {
			if _, ok := m["parts"].([]any); ok {
				return true
			}
		}
	}
	return false
}

// partsMessages turns parts-format messages into chat messages {role,
// content, tool_calls}, in the order the parts came: a tool_call_response
// part (its value under "response" in the conventions, "result" in
// PydanticAI's) becomes a tool message where it stands, so an agent's
// output message "call the tool, its result, the answer" reads as three
// messages in that order rather than losing the result.
func partsMessages(list []any) []any {
	out := make([]any, 0, len(list))
	for _, e := range list {
		m, ok := e.(map[string]any)
		parts, hasP := m["parts"].([]any)
		if !ok || !hasP {
			out = append(out, e)
			continue
		}
		var cur map[string]any
		var text []string
		flush := func() {
			if cur == nil {
				return
			}
			if len(text) > 0 {
				cur["content"] = strings.Join(text, "\n")
			}
			if len(cur) > 1 {
				out = append(out, cur)
			}
			cur, text = nil, nil
		}
		open := func() {
			if cur == nil {
				cur = map[string]any{"role": m["role"]}
			}
		}
		for _, p := range parts {
			pm, _ := p.(map[string]any)
			switch pm["type"] {
			case "text":
				open()
				if s, ok := pm["content"].(string); ok {
					text = append(text, s)
				}
			case "reasoning", "thinking":
				open()
				cur["thinking"] = pm["content"]
			case "tool_call":
				open()
				args := pm["arguments"]
				if _, isString := args.(string); !isString && args != nil {
					b, _ := json.Marshal(args)
					args = string(b)
				}
				calls, _ := cur["tool_calls"].([]any)
				cur["tool_calls"] = append(calls, map[string]any{"id": pm["id"], "type": "function",
					"function": map[string]any{"name": pm["name"], "arguments": args}})
			case "tool_call_response":
				flush()
				res, ok := pm["response"]
				if !ok {
					res = pm["result"]
				}
				out = append(out, map[string]any{"role": "tool", "tool_call_id": pm["id"], "content": res})
			default:
				// blob, uri, file and what a later version adds: kept as
				// the part it is.
				open()
				extra, _ := cur["parts"].([]any)
				cur["parts"] = append(extra, pm)
			}
		}
		if cur != nil {
			if fr, ok := m["finish_reason"]; ok {
				cur["finish_reason"] = fr
			}
		}
		flush()
	}
	return out
}

// toolDefinitions turns the conventions' tool definitions ({type, name,
// description, parameters | inputSchema}, flat) into the OpenAI request
// shape the other adapters store ({type: "function", function: {name,
// description, parameters}}); a definition in another shape is kept as is.
func toolDefinitions(list []any) []any {
	out := make([]any, 0, len(list))
	for _, e := range list {
		m, ok := e.(map[string]any)
		name, named := m["name"].(string)
		if !ok || !named || m["function"] != nil {
			out = append(out, e)
			continue
		}
		fn := map[string]any{"name": name}
		if d, ok := m["description"]; ok {
			fn["description"] = d
		}
		if p, ok := m["parameters"]; ok {
			fn["parameters"] = p
		} else if p, ok := m["inputSchema"]; ok {
			fn["parameters"] = p
		}
		typ := m["type"]
		if typ == nil {
			typ = "function"
		}
		out = append(out, map[string]any{"type": typ, "function": fn})
	}
	return out
}

// aiSDKOutputs settles a model call's outputs when it has both
// ai.response.text and ai.response.toolCalls: a step that only called
// tools has text "" (ai@6 and later), which used to win over the tool
// calls, so the step was stored with outputs "" and the calls were lost.
// Empty text leaves the tool calls; text and tool calls are both kept.
func aiSDKOutputs(raw map[string]any, ag map[string]any) {
	calls, ok := raw["ai.response.toolCalls"]
	if !ok {
		return
	}
	text, _ := raw["ai.response.text"].(string)
	if _, isText := ag["data.outputs"].(string); !isText {
		return
	}
	if strings.TrimSpace(text) == "" {
		delete(ag, "data.outputs")
		return
	}
	delete(ag, "data.outputs.toolCalls")
	ag["data.outputs"] = map[string]any{"text": text, "toolCalls": parseJSON(calls)}
}

// aiSDKContext reads the user and session from the runtime context: ai@7
// has no telemetry metadata any more, and the values an app opts in with
// includeRuntimeContext arrive as ai.settings.context.<key>. The keys
// userId/user_id and sessionId/session_id name them, as the metadata keys
// userId/sessionId did before.
func aiSDKContext(raw map[string]any, ag map[string]any) {
	for _, e := range [...]struct{ key, to string }{
		{"ai.settings.context.userId", "user.id"}, {"ai.settings.context.user_id", "user.id"},
		{"ai.settings.context.sessionId", "session.id"}, {"ai.settings.context.session_id", "session.id"},
	} {
		if _, set := ag[e.to]; set {
			continue
		}
		if v, ok := raw[e.key]; ok {
			ag[e.to] = v
		}
	}
}

// aiSDKTools maps a model call's ai.prompt.tools (a list of JSON strings,
// one tool definition each) to the request's tools, in the shape
// gen_ai.tool.definitions gets, so both integrations show them alike.
func aiSDKTools(raw map[string]any, ag map[string]any) {
	list, ok := raw["ai.prompt.tools"].([]any)
	if _, set := ag["data.inputs.tools"]; !ok || set {
		return
	}
	defs := make([]any, 0, len(list))
	for _, e := range list {
		defs = append(defs, parseJSON(e))
	}
	ag["data.inputs.tools"] = toolDefinitions(defs)
}
