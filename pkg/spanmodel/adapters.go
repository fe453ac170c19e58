package spanmodel

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
)

// adapt maps the flat attributes of an OTLP span into the ag namespace with
// the semantic-convention adapters, in the compatible platform's order (OpenLLMetry,
// OpenInference, OTel gen_ai, Vercel AI, then the span's own ag.* keys,
// which win). Every non-ag attribute is kept as it is, un-flattened.
func adapt(raw map[string]any, pad *padding) map[string]any {
	ag := pad.obj()
	// The raw keys sorted once: the adapters look keys and prefixes up in
	// them rather than scanning raw per table or prefix, and the non-ag
	// attributes are un-flattened in this order.
	var buf [32]string
	keys := buf[:0]
	for k := range raw {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	openLLMetry(raw, keys, ag)
	openInference(raw, keys, ag, pad)
	genAI(raw, keys, ag)
	vercelAI(raw, keys, ag)
	aiSDK(raw, keys, ag)    // adapters_aisdk.go
	conventions(raw, ag)    // adapters_conventions.go
	langfuse(raw, keys, ag) // adapters_langfuse.go
	var explicit map[string]any
	for _, k := range withPrefix(keys, "ag") {
		switch {
		case k == "ag":
			explicit, _ = raw[k].(map[string]any)
		case strings.HasPrefix(k, "ag."):
			ag[k[3:]] = decodeAgValue(raw[k])
		}
	}
	// The ag paths translated, then un-flattened in path order (as
	// unflatten would, without a map of them in between).
	var tbuf [16]entry
	translated := tbuf[:0]
	for p, v := range ag {
		if tp := translatePath(p); tp != "" {
			if tp == "type.span" {
				if s, ok := v.(string); ok {
					if low := lower(s); low != s {
						v = low
					}
				}
			}
			translated = append(translated, entry{tp, v})
		}
	}
	sortEntries(translated)
	out := unflattenKeys(raw, keys, pad, true)
	agTree := pad.obj()
	for i, e := range translated {
		if i+1 < len(translated) && translated[i+1].path == e.path {
			continue // two paths translated to one: one value is kept, as a map of them kept one
		}
		v := e.v
		if m, ok := v.(map[string]any); ok {
			v = unflatten(m, pad)
		}
		setPath(agTree, e.path, v, pad)
	}
	if explicit != nil {
		merge(agTree, unflatten(explicit, pad))
	}
	if len(agTree) > 0 || len(raw) > 0 {
		out["ag"] = agTree
	}
	return out
}

// decodeAgValue reads the SDK's typed string encoding.
func decodeAgValue(v any) any {
	s, ok := v.(string)
	if !ok {
		return v
	}
	switch {
	case s == "@ag.type=none:":
		return nil
	case strings.HasPrefix(s, "@ag.type=json:"):
		var out any
		if json.Unmarshal([]byte(s[len("@ag.type=json:"):]), &out) == nil {
			return out
		}
	}
	return s
}

var legacyRefs = map[string]string{
	"variant.id": "application_variant.id", "variant.slug": "application_variant.slug",
	"variant.version": "application_revision.version", "environment.version": "environment_revision.version",
}

var metricRenames = []struct{ from, to string }{
	{"metrics.acc.costs.", "metrics.costs.cumulative."}, {"metrics.unit.costs.", "metrics.costs.incremental."},
	{"metrics.acc.tokens.", "metrics.tokens.cumulative."}, {"metrics.unit.tokens.", "metrics.tokens.incremental."},
}

// translatePath is the canonical path of an adapter's (legacy) ag path;
// "" drops it.
func translatePath(p string) string {
	if t, ok := translatedTargets[p]; ok {
		return t // the adapters' own targets: no string built per span
	}
	return translateNew(p)
}

func translateNew(p string) string {
	switch {
	case p == "type.node":
		return "type.span"
	case p == "node.name", p == "metrics.acc.duration.total":
		return ""
	case strings.HasPrefix(p, "refs."):
		r := p[len("refs."):]
		if n, ok := legacyRefs[r]; ok {
			r = n
		}
		return "references." + r
	}
	for _, r := range metricRenames {
		if strings.HasPrefix(p, r.from) {
			return r.to + p[len(r.from):]
		}
	}
	return p
}

// translatedTargets are the translations of every path the exact tables
// map to.
var translatedTargets = func() map[string]string {
	m := map[string]string{}
	for _, t := range []*exactTable{openLLMetryExact, openInferenceExact, genAIExact, vercelAIExact} {
		for _, to := range t.to {
			m[to] = translateNew(to)
		}
	}
	return m
}()

// exactTable is a mapExact table with its keys sorted once.
type exactTable struct {
	keys []string
	to   map[string]string
}

func newExactTable(m map[string]string) *exactTable {
	return &exactTable{keys: sortedKeys(m), to: m}
}

// mapExact copies raw[k] to ag[table[k]] for every key present. keys are
// raw's keys, sorted.
func mapExact(raw map[string]any, keys []string, ag map[string]any, table *exactTable) bool {
	hit := false
	// In key order, so that two raw keys mapping to one path resolve the
	// same way every time (the later key wins).
	for _, from := range keys {
		if to, ok := table.to[from]; ok {
			ag[to] = raw[from]
			hit = true
		}
	}
	return hit
}

var openLLMetryExact = newExactTable(map[string]string{
	"llm.headers": "meta.request.headers", "llm.request.type": "type.node",
	"llm.top_k": "meta.request.top_k", "db.vector.query.top_k": "meta.request.top_k", "pinecone.query.top_k": "meta.request.top_k",
	"llm.is_streaming": "meta.request.streaming", "llm.usage.total_tokens": "metrics.unit.tokens.total",
	"gen_ai.openai.api_base": "meta.request.base_url", "db.system": "meta.system",
})
var openInferenceExact = newExactTable(map[string]string{
	"input.value": "data.inputs", "output.value": "data.outputs",
	"input.mime_type": "meta.input.mime_type", "output.mime_type": "meta.output.mime_type",
	"llm.model_name": "meta.response.model", "llm.invocation_parameters": "meta.request",
	"llm.provider": "meta.provider", "llm.system": "meta.system", "llm.function_call": "data.outputs.function_call",
	"embedding.model_name": "meta.request.model", "embedding.text": "data.inputs.embedding.text",
	"embedding.vector": "data.outputs.embedding.vector",
	"session.id":       "session.id", "user.id": "user.id", "tag.tags": "meta.tags", "metadata": "meta.metadata",
	"image.url": "data.multimedia.image.url", "audio.url": "data.multimedia.audio.url",
	"audio.transcript": "data.multimedia.audio.transcript", "audio.mime_type": "meta.multimedia.audio.mime_type",
	"tool_call.function.arguments": "data.inputs.tool_call.function.arguments",
})
var genAIExact = newExactTable(map[string]string{
	"gen_ai.request.model": "meta.request.model", "gen_ai.response.model": "meta.response.model",
	"gen_ai.system": "meta.system", "gen_ai.provider.name": "meta.provider.name",
	"gen_ai.conversation.id": "session.id", "gen_ai.output.type": "meta.output.type",
	"gen_ai.request.max_tokens": "meta.request.max_tokens", "gen_ai.request.temperature": "meta.request.temperature",
	"gen_ai.request.presence_penalty": "meta.request.presence_penalty", "gen_ai.request.stop_sequences": "meta.request.stop_sequences",
	"gen_ai.request.top_p": "meta.request.top_p", "gen_ai.request.top_k": "meta.request.top_k",
	"gen_ai.request.base_url": "meta.request.base_url", "gen_ai.request.endpoint": "meta.request.endpoint",
	"gen_ai.request.headers": "meta.request.headers", "gen_ai.request.streaming": "meta.request.streaming",
	"gen_ai.request.type": "type.node", "gen_ai.response.finish_reasons": "meta.response.finish_reasons",
	"gen_ai.usage.input_tokens": "metrics.unit.tokens.prompt", "gen_ai.usage.prompt_tokens": "metrics.unit.tokens.prompt",
	"gen_ai.usage.output_tokens": "metrics.unit.tokens.completion", "gen_ai.usage.completion_tokens": "metrics.unit.tokens.completion",
	"gen_ai.usage.total_tokens": "metrics.unit.tokens.total", "gen_ai.usage.cache_read.input_tokens": "metrics.unit.tokens.cache_read",
	"gen_ai.usage.cache_creation.input_tokens": "metrics.unit.tokens.cache_creation",
	"gen_ai.tool.name":                         "meta.tool.name", "gen_ai.tool.call.id": "meta.tool.call.id",
	"gen_ai.tool.call.arguments": "meta.tool.call.arguments", "gen_ai.tool.call.result": "meta.tool.call.result",
	"tool_arguments": "meta.tool_arguments", "tool_response": "meta.tool_response", "agent_name": "meta.agent_name",
	"model_name": "meta.model_name", "final_result": "meta.final_result",
	"gen_ai.system_instructions": "meta.system_instructions",
	"gen_ai.agent.id":            "agent.id", "gen_ai.agent.description": "meta.agent.description",
})
var vercelAIExact = newExactTable(map[string]string{
	"ai.model.id": "meta.request.model", "ai.model.provider": "meta.system",
	"ai.response.model": "meta.response.model", "ai.response.id": "meta.response.id", "ai.response.timestamp": "meta.response.timestamp",
	"ai.settings.temperature": "meta.request.temperature", "ai.settings.topP": "meta.request.top_p", "ai.settings.topK": "meta.request.top_k",
	"ai.settings.maxOutputTokens": "meta.request.max_tokens", "ai.settings.frequencyPenalty": "meta.request.frequency_penalty",
	"ai.settings.presencePenalty": "meta.request.presence_penalty", "ai.settings.stopSequences": "meta.request.stop_sequences",
	"ai.settings.seed": "meta.request.seed", "ai.settings.maxRetries": "meta.request.max_retries",
	"ai.usage.promptTokens": "metrics.unit.tokens.prompt", "ai.usage.inputTokens": "metrics.unit.tokens.prompt",
	"ai.usage.completionTokens": "metrics.unit.tokens.completion", "ai.usage.outputTokens": "metrics.unit.tokens.completion",
	"ai.usage.totalTokens": "metrics.unit.tokens.total", "ai.usage.reasoningTokens": "metrics.unit.tokens.reasoning",
	"ai.usage.cachedInputTokens": "metrics.unit.tokens.cached",
	"ai.response.text":           "data.outputs", "ai.response.reasoning": "data.outputs.reasoning",
	"ai.telemetry.metadata.userId": "user.id", "ai.telemetry.metadata.sessionId": "session.id",
})

// withPrefix is the run of keys (sorted) that start with prefix.
func withPrefix(keys []string, prefix string) []string {
	i, _ := slices.BinarySearch(keys, prefix)
	j := i
	for j < len(keys) && strings.HasPrefix(keys[j], prefix) {
		j++
	}
	return keys[i:j]
}

// mapPrefix copies raw keys under a prefix to the target path, keeping the rest
// of the key (so gen_ai.prompt.0.role becomes data.inputs.prompt.0.role).
// keys are raw's keys, sorted: the keys under the prefix are a run of them
// (in key order, so a rewrite that maps two keys to one path is
// deterministic).
func mapPrefix(raw map[string]any, keys []string, ag map[string]any, prefix, to string, rewrite func(string) string) bool {
	hit := false
	i, _ := slices.BinarySearch(keys, prefix)
	for ; i < len(keys) && strings.HasPrefix(keys[i], prefix); i++ {
		k, v := keys[i], raw[keys[i]]
		// k == prefix or k starts with prefix + "." (without building it).
		if len(k) == len(prefix) || k[len(prefix)] == '.' {
			rest := k[len(prefix):]
			if rewrite != nil {
				rest = rewrite(rest)
			}
			ag[to+rest] = v
			hit = true
		}
	}
	return hit
}

func parseJSON(v any) any {
	if s, ok := v.(string); ok {
		// Only these first bytes start a JSON value: skip the parser for
		// plain text.
		if c := firstByte(s); c == 0 || !strings.ContainsRune(`{["-0123456789tfn`, rune(c)) {
			return v
		}
		var out any
		if json.Unmarshal([]byte(s), &out) == nil {
			return out
		}
	}
	return v
}

func openLLMetry(raw map[string]any, keys []string, ag map[string]any) {
	mapExact(raw, keys, ag, openLLMetryExact)
	if _, ok := raw["llm.request.type"]; !ok {
		// The span kind (workflow, task, agent, tool) is the type only when
		// the span is not an LLM request, which says more.
		if v, ok := raw["traceloop.span.kind"]; ok {
			ag["type.node"] = v
		}
	}
	mapPrefix(raw, keys, ag, "gen_ai.prompt", "data.inputs.prompt", nil)
	mapPrefix(raw, keys, ag, "gen_ai.completion", "data.outputs.completion", nil)
	mapPrefix(raw, keys, ag, "llm.request.functions", "data.inputs.functions", nil)
	mapPrefix(raw, keys, ag, "llm.request.tools", "data.inputs.tools", nil)
	for _, e := range [...]struct{ k, to string }{{"traceloop.entity.input", "inputs"}, {"traceloop.entity.output", "outputs"}} {
		k, to := e.k, e.to
		if v, ok := raw[k]; ok {
			p := parseJSON(v)
			if m, ok := p.(map[string]any); ok {
				if inner, ok := m[to]; ok {
					p = inner
				}
			}
			ag["data."+to] = p
		}
	}
}

var (
	oiKinds = map[string]string{"CHAIN": "chain", "RETRIEVER": "query", "RERANKER": "rerank", "LLM": "chat",
		"EMBEDDING": "embedding", "AGENT": "agent", "TOOL": "tool", "GUARDRAIL": "task", "EVALUATOR": "task"}
	oiMessage  = regexp.MustCompile(`\.(\d+)\.message\.`)
	oiToolCall = regexp.MustCompile(`\.tool_calls\.(\d+)\.tool_call\.`)
	oiToolJSON = regexp.MustCompile(`^llm\.tools\.(\d+)\.tool\.json_schema$`)
)

func openInference(raw map[string]any, keys []string, ag map[string]any, pad *padding) {
	mapExact(raw, keys, ag, openInferenceExact)
	if v, ok := raw["input.value"]; ok {
		ag["data.inputs"] = oiInput(v, raw["input.mime_type"], pad)
	}
	if v, ok := raw["llm.invocation_parameters"]; ok {
		ag["meta.request"] = parseJSON(v)
	}
	for _, p := range []struct{ from, to string }{
		{"exception", "exception"}, {"llm.prompt_template", "meta.prompt_template"}, {"reranker.model_name", "meta.reranker.model_name"},
		{"reranker.query", "meta.reranker.query"}, {"reranker.top_k", "meta.reranker.top_k"}, {"tool", "meta.tool"},
		{"document", "data.internals.document"}, {"llm.token_count", "metrics.unit.tokens"},
		{"embedding.embeddings", "data.inputs.embeddings"}, {"reranker.input_documents", "data.inputs.reranker.input_documents"},
		{"reranker.output_documents", "data.outputs.reranker.output_documents"}, {"retrieval.documents", "data.outputs.retrieval.documents"},
		{"message.contents", "data.inputs.message_contents"},
	} {
		mapPrefix(raw, keys, ag, p.from, p.to, nil)
	}
	for _, k := range withPrefix(keys, "tool_call.") {
		if k != "tool_call.function.arguments" {
			ag["meta."+k] = raw[k]
		}
	}
	for _, k := range withPrefix(keys, "llm.tools.") {
		v := raw[k]
		if m := oiToolJSON.FindStringSubmatch(k); m != nil {
			if obj, ok := parseJSON(v).(map[string]any); ok {
				ag["data.inputs.tools."+m[1]] = obj
			} else {
				ag["data.inputs.tools."+m[1]+".tool.json_schema"] = v
			}
		}
	}
	rewrite := func(s string) string {
		s = oiMessage.ReplaceAllString(s, ".$1.")
		return oiToolCall.ReplaceAllString(s, ".tool_calls.$1.")
	}
	in := mapPrefix(raw, keys, ag, "llm.input_messages", "data.inputs.prompt", rewrite)
	out := mapPrefix(raw, keys, ag, "llm.output_messages", "data.outputs.completion", rewrite)
	// The OpenInference span kind is upper-case by convention; be lenient.
	if v, ok := raw["openinference.span.kind"].(string); ok {
		if t, ok := oiKinds[strings.ToUpper(v)]; ok {
			ag["type.node"] = t
			if (t == "chat" || t == "completion") && (in || out) {
				// The messages say it better than the generic values.
				if in {
					delete(ag, "data.inputs")
				}
				if out {
					delete(ag, "data.outputs")
				}
			}
		}
	}
}

// oiInput is input.value as the span's inputs, which are stored only as an
// object (as the compatible platform stores them): JSON that is an object stays
// one; plain text (input.mime_type text/plain, or text that is not JSON), or
// JSON that is not an object, is wrapped as {"__default__": v}, the shape the
// compatible platform's SDK gives a value that is not an object. Before, a
// chain root's text input was parked in ag.unsupported.
func oiInput(v, mime any, pad *padding) any {
	wrap := func(v any) any {
		m := pad.obj()
		m["__default__"] = v
		return m
	}
	s, ok := v.(string)
	if !ok {
		if _, isObj := v.(map[string]any); isObj {
			return v
		}
		return wrap(v)
	}
	if m, _ := mime.(string); !strings.EqualFold(strings.TrimSpace(m), "text/plain") {
		p := parseJSON(s)
		if _, isObj := p.(map[string]any); isObj {
			return p
		}
		if _, isText := p.(string); !isText {
			return wrap(p)
		}
	}
	return wrap(v)
}

var genAIOps = map[string]string{"chat": "chat", "create_agent": "agent", "invoke_agent": "agent", "embeddings": "embedding",
	"execute_tool": "tool", "generate_content": "completion", "text_completion": "completion"}

func genAI(raw map[string]any, keys []string, ag map[string]any) {
	hit := mapExact(raw, keys, ag, genAIExact)
	if v, ok := raw["session.id"]; ok {
		// An explicit session.id (OpenInference) names the session the
		// caller chose; gen_ai.conversation.id only stands in for it.
		ag["session.id"] = v
	}
	op, _ := raw["gen_ai.operation.name"].(string)
	if op != "" {
		hit = true
		t, ok := genAIOps[op]
		if !ok {
			t = "task"
		}
		ag["type.node"] = t
	}
	if !hit {
		return
	}
	_, hasTotal := ag["metrics.unit.tokens.total"]
	p, okp := num(ag["metrics.unit.tokens.prompt"])
	c, okc := num(ag["metrics.unit.tokens.completion"])
	if okp && okc && !hasTotal {
		ag["metrics.unit.tokens.total"] = p + c
	}
	_, final := raw["final_result"]
	switch {
	case ag["type.node"] == "chat" || ag["type.node"] == "completion":
		in, hasIn := raw["gen_ai.input.messages"]
		out, hasOut := raw["gen_ai.output.messages"]
		if hasIn {
			ag["data.inputs.prompt"] = messages(parseJSON(in))
		}
		if hasOut {
			ag["data.outputs.completion"] = messages(parseJSON(out))
		}
		if ev, ok := raw["events"]; ok && !hasIn && !hasOut {
			// Semantic conventions v1 (PydanticAI before 1.0, Logfire):
			// the messages are the span's "events" attribute, a JSON list.
			prompt, completion := v1Events(parseJSON(ev))
			if len(prompt) > 0 {
				ag["data.inputs.prompt"] = prompt
			}
			if len(completion) > 0 {
				ag["data.outputs.completion"] = completion
			}
		}
	case op == "invoke_agent" || final:
		// A PydanticAI agent run carries the whole conversation: what led
		// up to the last user message is the prompt, the rest the answer.
		// The split is on the stored roles, as the compatible platform does: a tool
		// result is a "user" message in PydanticAI's format, so the prompt
		// runs up to the last tool result and the completion is the answer.
		if list, ok := parseJSON(raw["pydantic_ai.all_messages"]).([]any); ok {
			last := -1
			for i, m := range list {
				if mm, ok := m.(map[string]any); ok && mm["role"] == "user" {
					last = i
				}
			}
			if in := messages(list[:last+1]).([]any); len(in) > 0 {
				ag["data.inputs.prompt"] = in
			}
			if out := messages(list[last+1:]).([]any); len(out) > 0 {
				ag["data.outputs.completion"] = out
			}
		}
	case ag["type.node"] == "tool":
		if _, ok := ag["data.inputs"]; !ok {
			in := map[string]any{}
			if v, ok := raw["gen_ai.tool.name"]; ok {
				in["name"] = v
			}
			if v, ok := raw["gen_ai.tool.call.arguments"]; ok {
				in["arguments"] = parseJSON(v)
			}
			if len(in) > 0 {
				ag["data.inputs"] = in
			}
			if v, ok := raw["gen_ai.tool.call.result"]; ok {
				ag["data.outputs"] = parseJSON(v)
			}
		}
	}
}

// v1Events splits the v1 gen_ai events: gen_ai.choice events are the
// completion (their message), the others the prompt, each without its
// event.name (the role comes from it when missing: gen_ai.user.message).
func v1Events(v any) (prompt, completion []any) {
	list, _ := v.([]any)
	for _, e := range list {
		m, ok := e.(map[string]any)
		if !ok {
			continue
		}
		name, _ := m["event.name"].(string)
		if name == "gen_ai.choice" {
			if msg, ok := m["message"].(map[string]any); ok {
				msg = copyMap(msg)
				if fr, ok := m["finish_reason"]; ok {
					msg["finish_reason"] = fr
				}
				completion = append(completion, msg)
			}
			continue
		}
		msg := copyMap(m)
		delete(msg, "event.name")
		delete(msg, "gen_ai.system")
		if _, ok := msg["role"]; !ok && strings.HasPrefix(name, "gen_ai.") && strings.HasSuffix(name, ".message") {
			msg["role"] = strings.TrimSuffix(strings.TrimPrefix(name, "gen_ai."), ".message")
		}
		prompt = append(prompt, msg)
	}
	return prompt, completion
}

func copyMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// messages turns PydanticAI {role, parts} messages into {role, content,
// tool_calls}; other message shapes pass through.
func messages(v any) any {
	list, ok := v.([]any)
	if !ok {
		return v
	}
	out := make([]any, 0, len(list))
	for _, e := range list {
		m, ok := e.(map[string]any)
		parts, hasParts := m["parts"].([]any)
		if !ok || !hasParts {
			out = append(out, e)
			continue
		}
		msg := map[string]any{"role": m["role"]}
		var text []string
		var calls []any
		for _, p := range parts {
			pm, _ := p.(map[string]any)
			switch pm["type"] {
			case "text":
				if s, ok := pm["content"].(string); ok {
					text = append(text, s)
				}
			case "tool_call":
				args := pm["arguments"]
				if _, isString := args.(string); !isString && args != nil {
					b, _ := json.Marshal(args)
					args = string(b)
				}
				calls = append(calls, map[string]any{"id": pm["id"], "type": "function",
					"function": map[string]any{"name": pm["name"], "arguments": args}})
			case "tool_call_response":
				// The GenAI conventions name the result "response";
				// PydanticAI wrote "result".
				res, ok := pm["response"]
				if !ok {
					res = pm["result"]
				}
				out = append(out, map[string]any{"role": "tool", "tool_call_id": pm["id"], "content": res})
			case "thinking", "reasoning":
				msg["thinking"] = pm["content"]
			}
		}
		if len(text) > 0 {
			msg["content"] = strings.Join(text, "\n")
		}
		if len(calls) > 0 {
			msg["tool_calls"] = calls
		}
		if fr, ok := m["finish_reason"]; ok {
			msg["finish_reason"] = fr
		}
		if len(msg) > 1 {
			out = append(out, msg)
		}
	}
	return out
}

func vercelAI(raw map[string]any, keys []string, ag map[string]any) {
	if len(withPrefix(keys, "ai.")) == 0 {
		return
	}
	mapExact(raw, keys, ag, vercelAIExact)
	for k, to := range map[string]string{"ai.prompt": "data.inputs", "ai.prompt.messages": "data.inputs.prompt",
		"ai.response.object": "data.outputs", "ai.response.toolCalls": "data.outputs.toolCalls",
		"ai.toolCall.name": "data.inputs.name", "ai.toolCall.args": "data.inputs.args", "ai.toolCall.result": "data.outputs"} {
		if v, ok := raw[k]; ok {
			ag[to] = parseJSON(v)
		}
	}
	if v, ok := raw["ai.response.finishReason"]; ok {
		ag["meta.response.finish_reasons"] = []any{v}
	}
	op, _ := raw["ai.operationId"].(string)
	if v, ok := raw["ai.usage.tokens"]; ok && strings.HasSuffix(op, ".doEmbed") {
		// An embedding model call's usage is its input tokens.
		ag["metrics.unit.tokens.prompt"] = v
	}
	if vercelWrappers[op] {
		// ai.generateText, ai.streamText, ai.embed, … wrap the model calls
		// (doGenerate, doStream, doEmbed) that are their children in the
		// same trace, and their ai.usage.* is those calls' usage again (the
		// sum, or in ai@5 the last step's). Recorded as the wrapper's own,
		// the roll-up counted every token twice (150/28/178 for a true
		// 75/14/89), so the wrapper has no incremental usage: its
		// cumulative tokens and costs are its model calls'. The raw
		// ai.usage.* attributes are kept as sent.
		for _, k := range []string{"prompt", "completion", "total", "reasoning", "cached"} {
			delete(ag, "metrics.unit.tokens."+k)
		}
	}
	switch {
	case op == "":
	case op == "ai.toolCall":
		ag["type.node"] = "tool"
	case strings.HasPrefix(op, "ai.embed"):
		ag["type.node"] = "embedding"
	case strings.HasSuffix(op, ".doGenerate"), strings.HasSuffix(op, ".doStream"):
		// The model call of generateText, streamText, generateObject and
		// streamObject: a chat model's request (ai.prompt.messages) and
		// answer, so it is priced like any other chat span.
		ag["type.node"] = "chat"
	default:
		ag["type.node"] = "task"
	}
}

// vercelWrappers are the AI SDK operations whose spans wrap model-call
// spans and repeat their usage.
var vercelWrappers = map[string]bool{"ai.generateText": true, "ai.streamText": true, "ai.generateObject": true,
	"ai.streamObject": true, "ai.embed": true, "ai.embedMany": true}
