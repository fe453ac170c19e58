package spanmodel

import "strings"

// conventions completes what the OpenInference and OTel GenAI adapters
// map, for every SDK that emits these conventions (Phoenix reads them all):
// messages on agent and chain spans, system instructions, tool
// definitions, retrieval documents and the detail token counts. It runs on
// the adapters' flat ag paths, after them and before the span's own ag.*
// keys, which still win.
func conventions(raw map[string]any, ag map[string]any) {
	_, oi := raw["openinference.span.kind"]
	if oi {
		oiConventions(raw, ag)
	}
	genAIConventions(raw, ag)
}

// oiTokenDetails are the OpenInference detail counts that are token
// metrics of their own: the price table prices cache reads and writes at
// their own rates and reports reasoning. Left where the llm.token_count
// prefix puts them (metrics.unit.tokens.prompt_details.cache_read), a
// nested object that is no metric, they were parked and the cached part of
// the prompt was priced at the full input rate.
var oiTokenDetails = [...]struct{ from, to string }{
	{"llm.token_count.prompt_details.cache_read", "cache_read"},
	{"llm.token_count.prompt_details.cache_write", "cache_creation"},
	{"llm.token_count.completion_details.reasoning", "reasoning"},
}

func oiConventions(raw map[string]any, ag map[string]any) {
	for _, d := range oiTokenDetails {
		if v, ok := raw[d.from]; ok {
			delete(ag, "metrics.unit.tokens"+strings.TrimPrefix(d.from, "llm.token_count"))
			ag["metrics.unit.tokens."+d.to] = v
		}
	}
	// output.value is the span's generic output, a string. When the span
	// also says it with structure (llm.output_messages on an agent or chain,
	// retrieval.documents on a retriever), both land on data.outputs and the
	// string, set first, used to win: the messages or documents were lost.
	// The structured form is kept; the text stays in the raw output.value.
	if v, ok := ag["data.outputs"]; ok {
		if _, isObj := v.(map[string]any); !isObj && hasUnder(ag, "data.outputs.") {
			delete(ag, "data.outputs")
		}
	}
}

// hasUnder says whether some flat path of ag starts with prefix.
func hasUnder(ag map[string]any, prefix string) bool {
	for k := range ag {
		if strings.HasPrefix(k, prefix) {
			return true
		}
	}
	return false
}

func genAIConventions(raw map[string]any, ag map[string]any) {
	op, _ := raw["gen_ai.operation.name"].(string)
	switch op {
	case "retrieval":
		ag["type.node"] = "query"
	case "invoke_workflow":
		ag["type.node"] = "workflow"
	}
	// The conversation of an agent (invoke_agent, create_agent) or any other
	// span that carries it: the GenAI adapter read the messages only on chat
	// and completion spans, so an agent root had no inputs or outputs.
	// A side already given as a value that is not an object (a tool's
	// result) is kept: the messages could not sit beside it.
	for _, side := range [...]struct{ attr, parent, to string }{
		{"gen_ai.input.messages", "data.inputs", "data.inputs.prompt"}, {"gen_ai.output.messages", "data.outputs", "data.outputs.completion"},
	} {
		v, ok := raw[side.attr]
		if !ok {
			continue
		}
		if p, set := ag[side.parent]; set {
			if _, isObj := p.(map[string]any); !isObj {
				continue
			}
		}
		if _, done := ag[side.to]; !done && !hasUnder(ag, side.to+".") {
			ag[side.to] = messages(parseJSON(v))
		}
	}
	if v, ok := raw["gen_ai.system_instructions"]; ok {
		systemInstructions(parseJSON(v), ag)
	}
	if v, ok := raw["gen_ai.tool.definitions"]; ok && !hasUnder(ag, "data.inputs.tools") {
		// The same place OpenInference llm.tools and OpenLLMetry
		// llm.request.tools go: next to the prompt, the tools the model was
		// offered.
		tools := parseJSON(v)
		if list, ok := tools.([]any); ok {
			tools = toolDefinitions(list)
		}
		ag["data.inputs.tools"] = tools
	}
	if v, ok := raw["gen_ai.usage.reasoning.output_tokens"]; ok {
		// Only beside the span's other usage: an adapter that drops a
		// span's usage (a wrapper repeating its children's) drops this too.
		_, p := ag["metrics.unit.tokens.prompt"]
		_, c := ag["metrics.unit.tokens.completion"]
		if p || c {
			ag["metrics.unit.tokens.reasoning"] = v
		}
	}
	if op == "retrieval" {
		if v, ok := raw["gen_ai.retrieval.query.text"]; ok {
			ag["data.inputs.query"] = v
		}
		if v, ok := raw["gen_ai.data_source.id"]; ok {
			ag["meta.data_source.id"] = v
		}
		if v, ok := raw["gen_ai.retrieval.documents"]; ok {
			ag["data.outputs.retrieval.documents"] = retrievalDocuments(parseJSON(v))
		}
	}
}

// systemInstructions puts gen_ai.system_instructions (a JSON list of parts,
// [{type: "text", content}], or plain text) at the head of the prompt as a
// system message, which is how the console and every reader of a chat span
// show them. It stays under meta when the prompt is one the adapters laid
// out key by key (OpenLLMetry's gen_ai.prompt.N.*), to which nothing can
// be prepended here.
func systemInstructions(v any, ag map[string]any) {
	content := v
	if parts, ok := v.([]any); ok {
		var text []string
		for _, p := range parts {
			pm, ok := p.(map[string]any)
			s, isText := pm["content"].(string)
			if !ok || !isText || (pm["type"] != "text" && pm["type"] != nil) {
				text = nil
				break
			}
			text = append(text, s)
		}
		if text != nil {
			content = strings.Join(text, "\n")
		}
	}
	if hasUnder(ag, "data.inputs.prompt.") {
		return
	}
	prompt, _ := ag["data.inputs.prompt"].([]any)
	if len(prompt) > 0 {
		text, isText := content.(string)
		if first, ok := prompt[0].(map[string]any); ok && isText && first["role"] == "system" && first["content"] == text {
			delete(ag, "meta.system_instructions")
			return // already there (a framework that sends both)
		}
	}
	ag["data.inputs.prompt"] = append([]any{map[string]any{"role": "system", "content": content}}, prompt...)
	delete(ag, "meta.system_instructions")
}

// retrievalDocuments gives the GenAI retrieval documents ([{id, score,
// ...}]) the OpenInference shape ([{document: {id, score, content,
// metadata}}]), so a retriever's outputs read the same whichever
// convention sent them.
func retrievalDocuments(v any) any {
	list, ok := v.([]any)
	if !ok {
		return v
	}
	out := make([]any, len(list))
	for i, d := range list {
		out[i] = map[string]any{"document": d}
	}
	return out
}
