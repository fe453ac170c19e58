package invoke

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/services/runtime/internal/codebox"
	"github.com/assayhq/assay/services/runtime/internal/evaluators"
	"github.com/assayhq/assay/services/runtime/internal/llm"
	"github.com/assayhq/assay/services/runtime/internal/prompt"
)

// handlerFunc runs one handler; stream marks those that can stream tokens.
type handlerFunc struct {
	run    func(ctx context.Context, r *run) (any, error)
	stream bool
}

// handlers are the runtime's handlers by key; the built-in evaluators of
// package evaluators are found there when a key is not here.
var handlers = map[string]handlerFunc{
	"completion":       {run: completion, stream: true},
	"chat":             {run: chat, stream: true},
	"llm":              {run: llmTurn, stream: true},
	"mock":             {run: mock},
	"hook":             {run: hook},
	"code":             {run: code},
	"feedback":         {run: feedback},
	"auto_ai_critique": {run: judge},
}

// Keys lists every handler key the runtime serves (its own and the
// built-in evaluators), for the routes.
func Keys() []string {
	keys := make([]string, 0, len(handlers))
	for k := range handlers {
		keys = append(keys, k)
	}
	return keys
}

// template reads the prompt of a completion or chat call; with no
// parameters at all the built-in default prompt runs, as on the compatible
// platform.
func (r *run) template(def func() prompt.Template) (prompt.Template, error) {
	if r.params == nil {
		return def(), nil
	}
	return prompt.Parse(r.params)
}

func completion(ctx context.Context, r *run) (any, error) {
	t, err := r.template(prompt.DefaultCompletion)
	if err != nil {
		return nil, err
	}
	res, err := r.model(ctx, "completion", t, nil)
	if err != nil {
		return nil, err
	}
	switch {
	case len(res.Message.ToolCalls) > 0:
		return res.Message.ToolCalls, nil
	case res.Refusal != "":
		return res.Refusal, nil
	}
	content, _ := res.Message.Content.(string)
	if isJSONFormat(t.LLMConfig.ResponseFormat) {
		var v any
		if json.Unmarshal([]byte(content), &v) == nil {
			return v, nil // the parsed value, as the compatible platform returns it
		}
	}
	return content, nil
}

func chat(ctx context.Context, r *run) (any, error) {
	t, err := r.template(prompt.DefaultChat)
	if err != nil {
		return nil, err
	}
	history, err := historyOf(r.inputs)
	if err != nil {
		return nil, err
	}
	res, err := r.model(ctx, "chat", t, history)
	if err != nil {
		return nil, err
	}
	out := map[string]any{"role": "assistant", "content": res.Message.Content}
	if len(res.Message.ToolCalls) > 0 {
		out["tool_calls"] = res.Message.ToolCalls
	}
	if res.Refusal != "" {
		out["refusal"] = res.Refusal
	}
	return out, nil
}

// historyOf reads a chat's inputs.messages.
func historyOf(inputs map[string]any) ([]prompt.Message, error) {
	raw, ok := inputs["messages"]
	if !ok || raw == nil {
		return nil, nil
	}
	list, ok := raw.([]any)
	if !ok {
		return nil, errs.Field("must be a list of {role, content} messages", nil, "body", "data", "inputs", "messages")
	}
	msgs := make([]prompt.Message, 0, len(list))
	for i, v := range list {
		m, err := prompt.ParseMessage(v, []any{"inputs", "messages", i})
		if err != nil {
			return nil, err
		}
		msgs = append(msgs, m)
	}
	return msgs, nil
}

func isJSONFormat(rf map[string]any) bool {
	t, _ := rf["type"].(string)
	return t == "json_object" || t == "json_schema"
}

// model renders t with the call's inputs and history, calls the provider
// (streaming when the caller streams) and records the model span.
func (r *run) model(ctx context.Context, kind string, t prompt.Template, history []prompt.Message) (llm.Response, error) {
	msgs, rf, err := t.Render(r.inputs, history)
	if err != nil {
		return llm.Response{}, err
	}
	return r.callModel(ctx, kind, t, msgs, rf)
}

func (r *run) callModel(ctx context.Context, kind string, t prompt.Template, msgs []prompt.Message, rf map[string]any) (llm.Response, error) {
	secrets, err := r.s.Secrets.Secrets(ctx, r.call.Scope)
	if err != nil {
		return llm.Response{}, err
	}
	req := llm.Request{Config: t.LLMConfig, Messages: msgs, ResponseFormat: rf, FallbackConfigs: t.FallbackConfigs,
		FallbackPolicy: t.FallbackPolicy, Retry: t.RetryConfig}
	if ev := r.call.Eval; ev != nil {
		req.RateLimitWait, req.OnWait = r.s.RateLimitWait, ev.OnWait
	}
	start := time.Now()
	key := r.cacheKey(secrets, req)
	if key == "" {
		return r.lookupOrCall(ctx, kind, t, msgs, secrets, req, start, "")
	}
	return r.coalesce(ctx, kind, t, msgs, start, key, func() (llm.Response, error) {
		return r.lookupOrCall(ctx, kind, t, msgs, secrets, req, start, key)
	})
}

// lookupOrCall answers the call from the model-call cache under key, else
// calls the provider and caches a successful answer under key (no cache
// for an empty key).
func (r *run) lookupOrCall(ctx context.Context, kind string, t prompt.Template, msgs []prompt.Message, secrets llm.Secrets, req llm.Request, start time.Time, key string) (llm.Response, error) {
	if key != "" {
		res, ok, err := r.s.Cache.Lookup(ctx, r.call.Scope, key)
		if err != nil && r.s.Log != nil {
			r.s.Log.Warn("model-call cache not read; calling the model", "err", err)
		}
		if ok {
			saved, _ := r.s.Prices.CallCost(res.Provider, res.Model, float64(res.Usage.PromptTokens), float64(res.Usage.CompletionTokens), start)
			r.calls.Cached++
			r.calls.CostSaved += saved
			r.children = append(r.children, cachedSpan(modelSpan(kind, t.LLMConfig, msgs, res, start, time.Now(), nil), key, saved))
			return res, nil
		}
	}
	r.calls.Made++
	var (
		res llm.Response
		err error
	)
	if r.call.Stream != nil {
		res, err = r.s.LLM.ChatStream(ctx, secrets, req, func(d llm.Delta) error {
			if d.Content == "" {
				return nil
			}
			return r.call.Stream(d.Content)
		})
	} else {
		res, err = r.s.LLM.Chat(ctx, secrets, req)
	}
	r.children = append(r.children, modelSpan(kind, t.LLMConfig, msgs, res, start, time.Now(), err))
	if err == nil {
		cost, _ := r.s.Prices.CallCost(res.Provider, res.Model, float64(res.Usage.PromptTokens), float64(res.Usage.CompletionTokens), start)
		r.calls.Cost += cost
	}
	if errs.KindOf(err) == errs.FailedDependency {
		r.s.Secrets.Forget(r.call.Scope.ProjectID)
	}
	if err == nil && key != "" {
		if serr := r.s.Cache.Store(ctx, r.call.Scope, key, res); serr != nil && r.s.Log != nil {
			r.s.Log.Warn("model-call answer not cached", "err", serr)
		}
	}
	return res, err
}

// cacheKey is the call's model-call cache key, or "" when the call is not
// to be answered from the cache: not an evaluation cell's, the run or the
// revision opted out (data.model_cache false), a streamed call, or a call
// that cannot be sent (it fails as it would have).
func (r *run) cacheKey(secrets llm.Secrets, req llm.Request) string {
	ev := r.call.Eval
	if r.s.Cache == nil || ev == nil || !ev.Cache || r.call.Stream != nil {
		return ""
	}
	if r.rev != nil && r.rev.Data.ModelCache != nil && !*r.rev.Data.ModelCache {
		return ""
	}
	key, err := r.s.LLM.CacheKey(secrets, req, "repeat="+strconv.Itoa(ev.Repeat))
	if err != nil {
		return ""
	}
	return key
}

// cachedSpan marks a model span answered from the cache: ag.meta.cache
// {hit, key, cost_saved}, and zero costs (the normaliser would price its
// tokens as a call paid for).
func cachedSpan(s Span, key string, saved float64) Span {
	meta, _ := s.Ag["meta"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
		s.Ag["meta"] = meta
	}
	meta["cache"] = map[string]any{"hit": true, "key": key, "cost_saved": saved}
	metrics, _ := s.Ag["metrics"].(map[string]any)
	if metrics == nil {
		metrics = map[string]any{}
		s.Ag["metrics"] = metrics
	}
	metrics["costs"] = map[string]any{"incremental": map[string]any{"prompt": 0.0, "completion": 0.0, "total": 0.0}}
	return s
}

// modelSpan is the chat or completion span of one provider call.
func modelSpan(kind string, cfg prompt.LLMConfig, msgs []prompt.Message, res llm.Response, start, end time.Time, err error) Span {
	ag := map[string]any{
		"data": map[string]any{
			"inputs":     map[string]any{"prompt": msgs},
			"parameters": cfg,
		},
		"meta": map[string]any{"request": map[string]any{"model": cfg.Model}},
	}
	if err == nil {
		ag["data"].(map[string]any)["outputs"] = map[string]any{"completion": []any{res.Message}}
		ag["meta"].(map[string]any)["response"] = map[string]any{"model": res.Model, "provider": res.Provider, "finish_reason": res.FinishReason}
		ag["metrics"] = map[string]any{"tokens": map[string]any{"incremental": map[string]any{
			"prompt": res.Usage.PromptTokens, "completion": res.Usage.CompletionTokens, "total": res.Usage.TotalTokens}}}
	}
	return Span{Name: kind, Type: "chat", Start: start, End: end, Err: err, Ag: ag}
}

// mock runs the compatible platform's flow-test behaviours (echo, static,
// …, chosen by parameters.key) without a model.
func mock(ctx context.Context, r *run) (any, error) {
	key, _ := r.params["key"].(string)
	kwargs, _ := r.params["kwargs"].(map[string]any)
	return mockRun(ctx, r, key, kwargs, 0)
}

func mockRun(ctx context.Context, r *run, key string, kwargs map[string]any, depth int) (any, error) {
	switch key {
	case "", "echo":
		return r.inputs, nil
	case "static":
		return kwargs["output"], nil
	case "pass":
		return map[string]any{"score": 1.0, "success": true}, nil
	case "fail":
		return map[string]any{"score": 0.0, "success": false}, nil
	case "score":
		score, ok := kwargs["score"].(float64)
		if !ok {
			return nil, errs.Field("must be a number", kwargs["score"], "body", "data", "parameters", "kwargs", "score")
		}
		return map[string]any{"score": score, "success": score >= numberOr(kwargs["threshold"], 0.5)}, nil
	case "reflect":
		out, _ := r.call.Req.Data.Outputs.(map[string]any)
		_, hasScore := out["score"]
		_, hasSuccess := out["success"]
		ok := len(out) > 0 && !hasScore && !hasSuccess
		score := 0.0
		if ok {
			score = 1.0
		}
		return map[string]any{"score": score, "success": ok}, nil
	case "error":
		msg, _ := kwargs["message"].(string)
		if msg == "" {
			msg = "the mock was asked to fail"
		}
		return nil, errs.Message(errs.Unprocessable, "runtime.mock_error", msg, nil)
	case "delay":
		d := numberOr(kwargs["delay"], 1)
		if d < 0 || d > 30 {
			return nil, errs.Field("must be between 0 and 30 seconds", kwargs["delay"], "body", "data", "parameters", "kwargs", "delay")
		}
		select {
		case <-ctx.Done():
			return nil, errs.New(errs.Timeout, "runtime.cancelled", "the call ended before the delay")
		case <-time.After(time.Duration(d * float64(time.Second))):
		}
		then, _ := kwargs["then"].(string)
		if then == "delay" || depth > 0 {
			then = "echo"
		}
		return mockRun(ctx, r, then, kwargs, depth+1)
	case "messages":
		return map[string]any{"messages": []any{map[string]any{"role": "assistant", "content": contentOf(kwargs, r.inputs)}}}, nil
	case "events":
		return map[string]any{"events": []any{
			map[string]any{"type": "message", "role": "assistant", "content": contentOf(kwargs, r.inputs)},
			map[string]any{"type": "done"},
		}}, nil
	}
	return nil, errs.Field("is not a mock behaviour (echo, static, pass, fail, score, reflect, error, delay, messages, events)",
		key, "body", "data", "parameters", "key")
}

func contentOf(kwargs, inputs map[string]any) string {
	if s, ok := kwargs["content"].(string); ok {
		return s
	}
	b, _ := json.Marshal(inputs)
	return string(b)
}

func numberOr(v any, def float64) float64 {
	if f, ok := v.(float64); ok {
		return f
	}
	return def
}

// hook forwards the call to the revision's URL, as the compatible platform's
// services dispatcher does: POST <url>/invoke with inputs, parameters and what
// else was given, under the egress rules; the JSON reply (or its data.outputs
// when it is an envelope), else the raw text, is the outputs.
func hook(ctx context.Context, r *run) (any, error) {
	if r.rev == nil || r.rev.Data.URL == "" {
		return nil, errs.Field("a hook needs the revision's data.url", nil, "body", "data", "revision", "data", "url")
	}
	body := map[string]any{"inputs": r.inputs, "parameters": r.params}
	d := r.call.Req.Data
	if d.Outputs != nil {
		body["outputs"] = d.Outputs
	}
	if d.Trace != nil {
		body["trace"] = d.Trace
	}
	if d.Testcase != nil {
		body["testcase"] = d.Testcase
	}
	h := http.Header{}
	for k, v := range r.rev.Data.Headers {
		h.Set(k, v)
	}
	url := strings.TrimRight(r.rev.Data.URL, "/") + "/invoke"
	status, answer, err := r.s.Hooks.PostJSON(ctx, url, h, body)
	if err != nil {
		return nil, err
	}
	if status != http.StatusOK {
		return nil, errs.Message(errs.FailedDependency, "runtime.hook_failed",
			fmt.Sprintf("the hook answered %d", status), map[string]any{"url": r.rev.Data.URL, "status": status})
	}
	var v any
	if json.Unmarshal(answer, &v) != nil {
		return string(answer), nil
	}
	if m, ok := v.(map[string]any); ok {
		if data, ok := m["data"].(map[string]any); ok {
			if out, ok := data["outputs"]; ok {
				if _, isEnvelope := m["status"]; isEnvelope {
					return out, nil
				}
			}
		}
	}
	return v, nil
}

// code runs a custom code application or evaluator: parameters {code,
// runtime}; an application's code defines main(inputs, parameters), an
// evaluator's (a call that carries outputs) evaluate(inputs, outputs, trace).
func code(ctx context.Context, r *run) (any, error) {
	src, _ := r.params["code"].(string)
	if src == "" {
		return nil, errs.Field("is required", nil, "body", "data", "parameters", "code")
	}
	lang, _ := r.params["runtime"].(string)
	call := codebox.Call{Runtime: lang, Code: src, Function: "main", Args: []any{r.inputs, r.params}}
	if d := r.call.Req.Data; d.Outputs != nil {
		call.Function, call.Args = "evaluate", []any{r.inputs, d.Outputs, d.Trace}
	}
	if f, ok := r.params["function"].(string); ok && f != "" {
		call.Function = f
	}
	return codebox.Run(ctx, r.s.Code, call)
}

// feedback is a human evaluator: running it records the judgment the
// caller gives as outputs (an annotation), it computes nothing.
func feedback(_ context.Context, r *run) (any, error) {
	if r.call.Req.Data.Outputs == nil {
		return nil, errs.Field("a feedback evaluator records the outputs it is given; send them", nil, "body", "data", "outputs")
	}
	return r.call.Req.Data.Outputs, nil
}

// builtinEvaluator runs a catalog evaluator of package evaluators.
func builtinEvaluator(ctx context.Context, r *run) (any, error) {
	d := r.call.Req.Data
	ctx = scope.With(ctx, r.call.Scope) // for Embed
	return evaluators.Run(ctx, r.s.Eval, evaluators.Request{Key: r.handler.Key, Parameters: r.params,
		Inputs: r.inputs, Outputs: d.Outputs, Trace: d.Trace})
}

// Embed implements evaluators.Embedder for semantic similarity: the
// project (from ctx) picks the provider keys.
func (s *Service) Embed(ctx context.Context, model, connection string, input []string) ([][]float64, error) {
	sc, _ := scope.From(ctx)
	secrets, err := s.Secrets.Secrets(ctx, sc)
	if err != nil {
		return nil, err
	}
	return s.LLM.Embed(ctx, secrets, model, connection, input)
}
