package spanmodel

import (
	"encoding/json"
	"strings"
)

// Langfuse's SDKs (JS v4 and v5, Python v3 over OpenTelemetry) describe an
// observation in langfuse.* attributes: objects are JSON strings, strings
// are sent as they are, metadata objects are flattened one level
// (…metadata.<key>), and the trace-level langfuse.trace.* keys may sit on
// any span. langfuse maps them onto the ag namespace; the raw attributes
// are kept as sent, like every non-ag attribute.

// langfuseTypes maps langfuse.observation.type onto our span types; a
// generation is a chat span unless its input is plain text (completion).
var langfuseTypes = map[string]string{"span": "task", "event": "task", "agent": "agent", "tool": "tool", "chain": "chain",
	"retriever": "query", "evaluator": "task", "guardrail": "task", "embedding": "embedding", "generation": "chat"}

// langfuseMeta are attributes copied to an ag.meta path as they are
// (JSON strings parsed).
var langfuseMeta = map[string]string{
	"langfuse.observation.model.name":            "meta.request.model",
	"langfuse.observation.prompt.name":           "meta.prompt.name",
	"langfuse.observation.prompt.version":        "meta.prompt.version",
	"langfuse.version":                           "meta.version",
	"langfuse.release":                           "meta.release",
	"langfuse.environment":                       "meta.environment",
	"langfuse.trace.name":                        "meta.trace_name",
	"langfuse.trace.tags":                        "meta.tags",
	"langfuse.trace.public":                      "meta.public",
	"langfuse.observation.completion_start_time": "meta.completion_start_time",
}

// langfuseParams renames the camel-case model parameters the JS SDK's
// users pass (the names of the AI SDK and of the OpenAI client) to the
// gen_ai names the other adapters use under meta.request.
var langfuseParams = map[string]string{"maxTokens": "max_tokens", "maxOutputTokens": "max_tokens", "max_completion_tokens": "max_tokens",
	"topP": "top_p", "topK": "top_k", "frequencyPenalty": "frequency_penalty", "presencePenalty": "presence_penalty",
	"stopSequences": "stop_sequences", "stop": "stop_sequences"}

func langfuse(raw map[string]any, keys []string, ag map[string]any) {
	if len(withPrefix(keys, "langfuse.")) == 0 {
		return
	}
	for from, to := range langfuseMeta {
		if v, ok := raw[from]; ok {
			ag[to] = langfuseValue(v)
		}
	}
	// The compat names stand in for the OTel ones (session.id, user.id),
	// which the OpenInference table has mapped already.
	for _, k := range []string{"session.id", "user.id"} {
		if _, ok := raw[k]; !ok {
			if v, ok := raw["langfuse."+k]; ok {
				ag[k] = v
			}
		}
	}
	if params, ok := parseJSON(raw["langfuse.observation.model.parameters"]).(map[string]any); ok {
		for k, v := range params {
			if n, ok := langfuseParams[k]; ok {
				k = n
			}
			ag["meta.request."+k] = v
		}
	}
	// Trace metadata first, so that an observation's own key wins.
	for _, prefix := range []string{"langfuse.trace.metadata", "langfuse.observation.metadata"} {
		for _, k := range withPrefix(keys, prefix+".") {
			ag["meta.metadata."+k[len(prefix)+1:]] = langfuseValue(raw[k])
		}
	}
	for _, k := range withPrefix(keys, "langfuse.experiment.") {
		ag["meta.experiment."+k[len("langfuse.experiment."):]] = langfuseValue(raw[k])
	}

	obsType, _ := raw["langfuse.observation.type"].(string)
	in, hasIn := raw["langfuse.observation.input"]
	out, hasOut := raw["langfuse.observation.output"]
	if !hasIn {
		// The trace's input, set on the span that updated the trace (its
		// root, as the SDK's users do): the span's own when it has none.
		in, hasIn = raw["langfuse.trace.input"]
	}
	if !hasOut {
		out, hasOut = raw["langfuse.trace.output"]
	}
	var inV, outV any
	if hasIn {
		inV = langfuseValue(in)
	}
	if hasOut {
		outV = langfuseValue(out)
	}
	if t, ok := langfuseTypes[strings.ToLower(obsType)]; ok {
		if t == "chat" {
			if _, text := inV.(string); text {
				t = "completion"
			}
		}
		ag["type.node"] = t
	}
	generation := strings.EqualFold(obsType, "generation")
	switch {
	case !hasIn:
	case generation:
		langfusePrompt(inV, ag)
	default:
		ag["data.inputs"] = langfuseObject(inV)
	}
	switch {
	case !hasOut:
	case generation:
		langfuseCompletion(outV, ag)
	default:
		ag["data.outputs"] = outV
	}

	if u, ok := parseJSON(raw["langfuse.observation.usage_details"]).(map[string]any); ok {
		langfuseUsage(u, ag)
	}
	if c, ok := parseJSON(raw["langfuse.observation.cost_details"]).(map[string]any); ok {
		in, out, total, hasTotal := langfuseBuckets(c)
		if !hasTotal {
			total = in + out
		}
		// Set by the user: they win over the price table (Prices.cost
		// keeps costs a span already has).
		ag["metrics.unit.costs.prompt"], ag["metrics.unit.costs.completion"], ag["metrics.unit.costs.total"] = in, out, total
	}

	level, _ := raw["langfuse.observation.level"].(string)
	msg, hasMsg := raw["langfuse.observation.status_message"]
	switch {
	case strings.EqualFold(level, "ERROR"):
		// The span's status is set to error before the adapters run
		// (langfuseStatus), which counts it; the message is the exception's.
		if hasMsg {
			ag["exception.message"] = msg
		}
	default:
		if level != "" {
			ag["meta.level"] = level
		}
		if hasMsg {
			ag["meta.status_message"] = msg
		}
	}
}

// langfuseValue is an attribute's value: JSON objects, arrays and quoted
// strings (completion_start_time is a JSON-encoded ISO string) parsed,
// other text kept as it is (a string input "42" stays text).
func langfuseValue(v any) any {
	s, ok := v.(string)
	if !ok {
		return v
	}
	switch firstByte(s) {
	case '{', '[', '"':
		var out any
		if json.Unmarshal([]byte(s), &out) == nil {
			return out
		}
	}
	return v
}

// langfuseObject is a value as the span's inputs, which are stored only as
// an object: anything else is wrapped as {"__default__": v}, as oiInput
// does.
func langfuseObject(v any) any {
	if _, ok := v.(map[string]any); ok {
		return v
	}
	return map[string]any{"__default__": v}
}

// langfusePrompt: a generation's input is its prompt: a message list, the
// text of a completion, or an object of the call's arguments whose
// messages are the prompt.
func langfusePrompt(v any, ag map[string]any) {
	switch t := v.(type) {
	case []any, string:
		ag["data.inputs.prompt"] = t
	case map[string]any:
		if msgs, ok := t["messages"].([]any); ok {
			for k, x := range t {
				if k != "messages" {
					ag["data.inputs."+k] = x
				}
			}
			ag["data.inputs.prompt"] = msgs
			return
		}
		ag["data.inputs"] = t
	default:
		ag["data.inputs"] = langfuseObject(v)
	}
}

// langfuseCompletion: a generation's output is its completion, a message
// list: an assistant message, a list of them, a text, or an OpenAI answer
// (its choices' messages).
func langfuseCompletion(v any, ag map[string]any) {
	switch t := v.(type) {
	case []any:
		ag["data.outputs.completion"] = t
	case string:
		ag["data.outputs.completion"] = []any{map[string]any{"role": "assistant", "content": t}}
	case map[string]any:
		if _, ok := t["role"]; ok {
			ag["data.outputs.completion"] = []any{t}
			return
		}
		if choices, ok := t["choices"].([]any); ok {
			var msgs []any
			for _, c := range choices {
				if m, ok := c.(map[string]any)["message"]; ok {
					msgs = append(msgs, m)
				}
			}
			if len(msgs) > 0 {
				ag["data.outputs.completion"] = msgs
				return
			}
		}
		ag["data.outputs"] = t
	default:
		ag["data.outputs"] = v
	}
}

// langfuseUsage maps usage_details by Langfuse's own convention: every key
// is a separate bucket, the input side is the sum of the keys that contain
// "input", the output side of those that contain "output", the total is
// "total" when given, else the sum; OpenAI-style keys (promptTokens,
// prompt_tokens, …) count as input, output and total. So "input" may
// exclude cached tokens, which come as their own input bucket
// (input_cached_tokens, cache_read_input_tokens): the sum adds them back,
// which is what our price table expects of the prompt count, and they are
// also the cache_read tokens, priced at the cached rate.
func langfuseUsage(u map[string]any, ag map[string]any) {
	in, out, total, hasTotal := langfuseBuckets(u)
	var cacheRead, cacheWrite, reasoning float64
	for k, v := range u {
		n, ok := num(v)
		if !ok {
			continue
		}
		lk := strings.ToLower(k)
		switch {
		case !strings.Contains(lk, "input"):
			if strings.Contains(lk, "output") && strings.Contains(lk, "reasoning") {
				reasoning += n
			}
		case strings.Contains(lk, "creation") || strings.Contains(lk, "write"):
			cacheWrite += n
		case strings.Contains(lk, "cache"):
			cacheRead += n
		}
	}
	if !hasTotal {
		total = in + out
	}
	ag["metrics.unit.tokens.prompt"], ag["metrics.unit.tokens.completion"], ag["metrics.unit.tokens.total"] = in, out, total
	if cacheRead > 0 {
		ag["metrics.unit.tokens.cache_read"] = cacheRead
	}
	if cacheWrite > 0 {
		ag["metrics.unit.tokens.cache_creation"] = cacheWrite
	}
	if reasoning > 0 {
		ag["metrics.unit.tokens.reasoning"] = reasoning
	}
}

// langfuseBuckets sums a usage or cost object by Langfuse's convention
// (langfuseUsage).
func langfuseBuckets(m map[string]any) (in, out, total float64, hasTotal bool) {
	for k, v := range m {
		n, ok := num(v)
		if !ok {
			continue
		}
		switch lk := strings.ToLower(k); {
		case lk == "total" || lk == "totaltokens" || lk == "total_tokens":
			total, hasTotal = total+n, true
		case lk == "prompttokens" || lk == "prompt_tokens" || strings.Contains(lk, "input"):
			in += n
		case lk == "completiontokens" || lk == "completion_tokens" || strings.Contains(lk, "output"):
			out += n
		}
	}
	return in, out, total, hasTotal
}

// langfuseStatus applies langfuse.observation.level ERROR to the span's
// status before it is read: Langfuse shows such an observation as failed,
// and so do we (counted in the errors metric). Its status_message is the
// status message when the span has none.
func langfuseStatus(r *Raw) {
	if !r.OTLP {
		return
	}
	level, _ := r.Attributes["langfuse.observation.level"].(string)
	if !strings.EqualFold(level, "ERROR") {
		return
	}
	r.StatusCode = "STATUS_CODE_ERROR"
	if msg, ok := r.Attributes["langfuse.observation.status_message"].(string); ok && r.StatusMessage == "" {
		r.StatusMessage = msg
	}
}

// langfuseException: an error thrown inside the SDK's observe() or
// startActiveObservation() sets the OTel status to ERROR with the error's
// message and adds no exception event; the message is the span's
// exception, as an exception event's would be.
func langfuseException(s *Span, r Raw, ag map[string]any) {
	if !r.OTLP || s.StatusCode != "STATUS_CODE_ERROR" || s.StatusMessage == "" {
		return
	}
	if _, typed := r.Attributes["langfuse.observation.type"]; !typed && r.ScopeName != "langfuse-sdk" {
		return
	}
	if _, ok := ag["exception"]; !ok {
		ag["exception"] = map[string]any{"message": s.StatusMessage}
	}
}
