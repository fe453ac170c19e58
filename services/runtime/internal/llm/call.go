package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/shared"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/services/runtime/internal/prompt"
)

// Limits on what a request may ask, so hostile parameters cannot make the
// runtime wait or retry without bound.
const (
	maxRetries      = 10               // retry_config.max_retries is capped here
	maxRetryDelay   = 30 * time.Second // one backoff wait
	maxRetryBudget  = 60 * time.Second // all backoff waits of one configuration
	maxFallbacks    = 8                // fallback_configs beyond these are ignored
	maxEmbedInputs  = 2048             // OpenAI's own limit per embeddings request
	maxMessageCount = 4096
)

// failure classes, as fallback_policy names them.
type class int

const (
	classOther        class = iota // a bad request: never retried nor fallen back from
	classAvailability              // 5xx, time-outs, connection errors
	classCapacity                  // 429
	classAccess                    // 401, 403, no key
	classContext                   // the prompt exceeds the model's context
)

// callError is one failed attempt, classified; toErrs renders it.
type callError struct {
	class   class
	status  int // the provider's HTTP status; 0 without an answer
	label   string
	message string // the provider's message, scrubbed of the key; a summary for a custom provider
	timeout bool
	err     error       // the cause, scrubbed
	refused *errs.Error // the egress policy refused the URL (or a redirect's): never retried
	custom  bool
	// retryAfter is a 429's Retry-After: how long the provider asks to wait.
	retryAfter time.Duration
}

func (e *callError) Error() string { return e.message }

var contextLengthRE = regexp.MustCompile(`(?i)context[ _-]?(length|window)|maximum context|too many tokens|prompt is too long|reduce the length`)

// classify reads a client error. key is scrubbed from every message kept.
func classify(err error, t target, key string) *callError {
	scrub := func(s string) string {
		if key != "" {
			s = strings.ReplaceAll(s, key, "[redacted]")
		}
		return s
	}
	ce := &callError{label: t.Label, err: errors.New(scrub(err.Error())), custom: t.Custom}
	var apiErr *openai.Error
	var streamErr *ssestream.StreamError
	var policy *errs.Error
	switch {
	case errors.As(err, &policy) && policy.Code == "runtime.egress_refused":
		ce.class, ce.refused, ce.message = classOther, policy, policy.Msg
	case errors.As(err, &streamErr):
		// An error event in a stream that answered 200: its body is OpenAI's
		// error object, and its type or code tells what failed.
		var ev struct {
			Error struct {
				Message string `json:"message"`
				Type    string `json:"type"`
				Code    any    `json:"code"`
			} `json:"error"`
		}
		_ = json.Unmarshal(streamErr.Event.Data, &ev)
		kind := strings.ToLower(ev.Error.Type + " " + fmt.Sprint(ev.Error.Code))
		ce.message = scrub(ev.Error.Message)
		if ce.message == "" {
			ce.message = "the provider failed while streaming"
		}
		switch {
		case strings.Contains(kind, "rate_limit") || ev.Error.Type == "requests" || ev.Error.Type == "tokens":
			ce.class, ce.status = classCapacity, http.StatusTooManyRequests
		case strings.Contains(kind, "context_length") || contextLengthRE.MatchString(ev.Error.Message):
			ce.class, ce.status = classContext, http.StatusBadRequest
		case strings.Contains(kind, "invalid_request"):
			ce.class, ce.status = classOther, http.StatusBadRequest
		default:
			ce.class = classAvailability
		}
		if t.Custom {
			ce.message = "the model provider failed while streaming (" + streamClass(ce.class, ce.status) + ")"
		}
	case errors.As(err, &apiErr):
		ce.status = apiErr.StatusCode
		if apiErr.Response != nil {
			ce.retryAfter = retryAfter(apiErr.Response.Header)
		}
		ce.message = scrub(apiErr.Message)
		if ce.message == "" {
			ce.message = http.StatusText(apiErr.StatusCode)
		}
		switch s := apiErr.StatusCode; {
		case s == http.StatusTooManyRequests:
			ce.class = classCapacity
		case s == http.StatusUnauthorized || s == http.StatusForbidden:
			ce.class = classAccess
		case s == http.StatusRequestTimeout:
			ce.class, ce.timeout = classAvailability, true
		case s >= 500:
			ce.class = classAvailability
		case s == http.StatusBadRequest && (apiErr.Code == "context_length_exceeded" || contextLengthRE.MatchString(apiErr.Message)):
			ce.class = classContext
		default:
			ce.class = classOther
		}
		if t.Custom {
			ce.message = fmt.Sprintf("the model provider answered %d (%s)", apiErr.StatusCode, statusClass(apiErr.StatusCode))
		}
	case errors.Is(err, context.DeadlineExceeded):
		ce.class, ce.timeout = classAvailability, true
		ce.message = "the provider did not answer in time"
	case errors.Is(err, context.Canceled):
		ce.class = classAvailability // never retried: run sees the caller's ctx is done
		ce.message = "the call was cancelled"
	default:
		var netErr net.Error
		if errors.As(err, &netErr) && netErr.Timeout() {
			ce.timeout = true
		}
		ce.class = classAvailability
		ce.message = "the provider could not be reached"
	}
	return ce
}

// statusClass is what a custom provider's error status says, in our own
// words: its status text and body could be any service's.
func statusClass(status int) string {
	switch {
	case status == http.StatusBadRequest:
		return "bad request"
	case status == http.StatusUnauthorized, status == http.StatusForbidden:
		return "credentials refused"
	case status == http.StatusNotFound:
		return "not found: check the URL and the model"
	case status == http.StatusRequestTimeout:
		return "timed out"
	case status == http.StatusRequestEntityTooLarge:
		return "request too large"
	case status == http.StatusUnprocessableEntity:
		return "request refused"
	case status == http.StatusTooManyRequests:
		return "rate limited"
	case status >= 500:
		return "server error"
	}
	return "error"
}

func streamClass(c class, status int) string {
	switch c {
	case classCapacity:
		return "rate limited"
	case classContext:
		return "context length exceeded"
	}
	if status == http.StatusBadRequest {
		return "bad request"
	}
	return "error"
}

// toErrs renders the final failure as the errs kind the invoke surface maps
// to a status (422, 424, 400, 504, 503), naming the provider.
func (e *callError) toErrs() error {
	if e.refused != nil {
		return refusal(e.label, e.custom, e.refused)
	}
	extra := map[string]any{"provider": e.label}
	if e.status != 0 {
		extra["status"] = e.status
	}
	msg := fmt.Sprintf("%s: %s", e.label, e.message)
	var out *errs.Error
	switch {
	case e.status == http.StatusUnauthorized || e.status == http.StatusForbidden || e.status == http.StatusTooManyRequests:
		out = errs.Message(errs.FailedDependency, "runtime.llm_refused", msg, extra)
	case e.status == http.StatusBadRequest || e.status == http.StatusNotFound || e.status == http.StatusUnprocessableEntity || e.class == classContext:
		out = errs.Message(errs.Invalid, "runtime.llm_invalid", msg, extra)
	case e.timeout:
		out = errs.Message(errs.Timeout, "runtime.llm_timeout", msg, extra)
	default:
		out = errs.Message(errs.Unavailable, "runtime.llm_unavailable", msg, extra)
	}
	out.Err = e.err
	return out
}

// refusal renders the egress policy's refusal of a provider's URL: the
// caller's 422 naming the custom provider and the URL (its project chose
// it), or, for an operator's base URL, a 503 the operator must fix.
func refusal(label string, custom bool, policy *errs.Error) error {
	if !custom {
		return &errs.Error{Kind: errs.Unavailable, Code: "runtime.llm_egress_refused",
			Msg: fmt.Sprintf("%s: the runtime's egress policy refuses this provider's base URL; the operator must admit it in RUNTIME_EGRESS_ALLOW", label),
			Err: policy}
	}
	extra := map[string]any{"provider": label, "field": "secret.data.provider.url"}
	if d, ok := policy.Detail.(map[string]any); ok {
		for _, k := range []string{"url", "host", "address"} {
			if v, ok := d[k]; ok {
				extra[k] = v
			}
		}
	}
	return errs.Message(errs.Unprocessable, "runtime.llm_url_refused",
		fmt.Sprintf("custom provider %q: %s", label, policy.Msg), extra)
}

// checkTarget applies the egress rules that need no lookup to t's base
// URL, before any request; the dialer applies the rest.
func (c *Client) checkTarget(t target) error {
	if err := c.out.Check(t.BaseURL); err != nil {
		return refusal(t.Label, t.Custom, errs.From(err))
	}
	return nil
}

// retryable failures are retried with backoff: 429, 5xx, time-outs,
// connection errors.
func (e *callError) retryable() bool {
	return e.class == classAvailability || e.class == classCapacity
}

// allows reports whether fallback_policy lets a failure of class c move on
// to the next configuration.
func allows(policy string, c class) bool {
	switch policy {
	case "any":
		return c != classOther
	case "availability":
		return c == classAvailability
	case "capacity":
		return c == classCapacity
	case "access":
		return c == classAccess
	case "context":
		return c == classContext
	}
	return false
}

func validPolicy(p string) bool {
	switch p {
	case "", "off", "any", "availability", "capacity", "access", "context":
		return true
	}
	return false
}

// backoff is the retry schedule of retry_config: delay seconds before the
// first retry, doubling, each wait capped, the sum capped.
type backoff struct {
	retries int
	next    time.Duration
	budget  time.Duration
}

func newBackoff(rc *prompt.RetryConfig) backoff {
	if rc == nil {
		return backoff{}
	}
	b := backoff{retries: min(max(rc.MaxRetries, 0), maxRetries), budget: maxRetryBudget}
	if rc.Delay > 0 {
		b.next = time.Duration(min(rc.Delay, maxRetryDelay.Seconds()) * float64(time.Second))
	}
	return b
}

// wait sleeps before the next retry; false when no retry is left or ctx ends.
func (b *backoff) wait(ctx context.Context) bool {
	if b.retries <= 0 {
		return false
	}
	b.retries--
	d := min(b.next, b.budget, maxRetryDelay)
	b.budget -= d
	b.next *= 2
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// options are the client options of one call to t: our own base URL, key
// and headers, no client retries (we retry, by retry_config), the per-call
// time-out, and our HTTP client so no OPENAI_* variable of the process
// leaks into another provider's calls.
func (c *Client) options(t target) []option.RequestOption {
	opts := []option.RequestOption{
		option.WithHTTPClient(c.http),
		option.WithBaseURL(t.BaseURL),
		option.WithMaxRetries(0),
	}
	if c.cfg.Timeout > 0 {
		opts = append(opts, option.WithRequestTimeout(c.cfg.Timeout))
	}
	if t.Key != "" {
		opts = append(opts, option.WithAPIKey(t.Key))
	}
	for k, v := range t.Headers {
		opts = append(opts, option.WithHeader(k, v))
	}
	for k, v := range t.Query {
		opts = append(opts, option.WithQuery(k, v))
	}
	return opts
}

// secretOf is what must never appear in an error: the bearer key or the
// api-key header.
func secretOf(t target) string {
	if t.Key != "" {
		return t.Key
	}
	return t.Headers["api-key"]
}

var validRoles = map[string]bool{"system": true, "developer": true, "user": true, "assistant": true, "tool": true, "function": true}

// params builds the chat-completions body of one configuration. Messages,
// tools, tool_choice and response_format are sent as given (they are
// OpenAI's shapes already); scalars go through the client's typed fields.
func params(cfg prompt.LLMConfig, t target, msgs []prompt.Message, responseFormat map[string]any) (openai.ChatCompletionNewParams, error) {
	var p openai.ChatCompletionNewParams
	if len(msgs) == 0 {
		return p, errs.New(errs.Invalid, "runtime.llm_invalid", "messages: at least one message is required")
	}
	if len(msgs) > maxMessageCount {
		return p, errs.New(errs.Invalid, "runtime.llm_invalid", fmt.Sprintf("messages: at most %d messages", maxMessageCount))
	}
	p.Messages = make([]openai.ChatCompletionMessageParamUnion, len(msgs))
	for i, m := range msgs {
		if !validRoles[m.Role] {
			return p, errs.New(errs.Invalid, "runtime.llm_invalid", fmt.Sprintf("messages[%d].role: %q is not one of system, developer, user, assistant, tool", i, m.Role))
		}
		b, err := json.Marshal(m)
		if err != nil {
			return p, errs.New(errs.Invalid, "runtime.llm_invalid", fmt.Sprintf("messages[%d]: %v", i, err))
		}
		// Any Go shape of the content is fine as long as it is JSON's null,
		// string or list (of content parts), which is what OpenAI takes.
		if c, _ := json.Marshal(m.Content); len(c) == 0 || (c[0] != '"' && c[0] != '[' && c[0] != 'n') {
			return p, errs.New(errs.Invalid, "runtime.llm_invalid", fmt.Sprintf("messages[%d].content: a string or a list of content parts", i))
		}
		p.Messages[i] = param.Override[openai.ChatCompletionMessageParamUnion](json.RawMessage(b))
	}
	p.Model = t.Model
	if cfg.Temperature != nil {
		p.Temperature = openai.Float(*cfg.Temperature)
	}
	if cfg.MaxTokens != nil {
		if reasoningModel(t.Family, t.Model) {
			p.MaxCompletionTokens = openai.Int(int64(*cfg.MaxTokens))
		} else {
			p.MaxTokens = openai.Int(int64(*cfg.MaxTokens))
		}
	}
	if cfg.TopP != nil {
		p.TopP = openai.Float(*cfg.TopP)
	}
	if cfg.FrequencyPenalty != nil {
		p.FrequencyPenalty = openai.Float(*cfg.FrequencyPenalty)
	}
	if cfg.PresencePenalty != nil {
		p.PresencePenalty = openai.Float(*cfg.PresencePenalty)
	}
	if cfg.ReasoningEffort != "" {
		p.ReasoningEffort = shared.ReasoningEffort(cfg.ReasoningEffort)
	}
	rf := responseFormat
	if rf == nil {
		rf = cfg.ResponseFormat
	}
	if rf != nil {
		switch rf["type"] {
		case "text":
		case "json_object", "json_schema":
			b, err := json.Marshal(rf)
			if err != nil {
				return p, errs.New(errs.Invalid, "runtime.llm_invalid", "llm_config.response_format: "+err.Error())
			}
			p.ResponseFormat = param.Override[openai.ChatCompletionNewParamsResponseFormatUnion](json.RawMessage(b))
		default:
			return p, errs.New(errs.Invalid, "runtime.llm_invalid", fmt.Sprintf("llm_config.response_format.type: %v is not one of text, json_object, json_schema", rf["type"]))
		}
	}
	for i, tool := range cfg.Tools {
		b, err := json.Marshal(tool)
		if err != nil {
			return p, errs.New(errs.Invalid, "runtime.llm_invalid", fmt.Sprintf("llm_config.tools[%d]: %v", i, err))
		}
		p.Tools = append(p.Tools, param.Override[openai.ChatCompletionToolUnionParam](json.RawMessage(b)))
	}
	if cfg.ToolChoice != nil {
		b, err := json.Marshal(cfg.ToolChoice)
		if err != nil {
			return p, errs.New(errs.Invalid, "runtime.llm_invalid", "llm_config.tool_choice: "+err.Error())
		}
		p.ToolChoice = param.Override[openai.ChatCompletionToolChoiceOptionUnionParam](json.RawMessage(b))
	}
	if len(cfg.ChatTemplateKwargs) > 0 {
		p.SetExtraFields(map[string]any{"chat_template_kwargs": cfg.ChatTemplateKwargs})
	}
	return p, nil
}

// attempt is one configuration's call; it returns whether any delta reached
// the caller, since a failure after that cannot be retried.
type attempt func(ctx context.Context, t target, p openai.ChatCompletionNewParams) (Response, bool, error)

// run resolves each configuration in turn (the primary, then the fallbacks
// the policy allows), calls it with retries, and renders the last failure.
func (c *Client) run(ctx context.Context, s Secrets, req Request, call attempt) (Response, error) {
	if !validPolicy(req.FallbackPolicy) {
		return Response{}, errs.New(errs.Invalid, "runtime.llm_invalid",
			fmt.Sprintf("fallback_policy: %q is not one of off, availability, capacity, access, context, any", req.FallbackPolicy))
	}
	configs := append([]prompt.LLMConfig{req.Config}, req.FallbackConfigs[:min(len(req.FallbackConfigs), maxFallbacks)]...)
	r := resolver{secrets: s, env: c.env, baseURLs: c.cfg.BaseURLs}
	var last error
	for i, cfg := range configs {
		if i > 0 {
			var ce *callError
			cls := classOther
			if errors.As(last, &ce) {
				cls = ce.class
			} else if errs.KindOf(last) == errs.FailedDependency {
				cls = classAccess // no key for the family: another may have one
			}
			if !allows(req.FallbackPolicy, cls) || ctx.Err() != nil {
				break
			}
		}
		t, err := r.resolve(cfg.Model, cfg.Connection)
		if err != nil {
			last = err
			continue
		}
		if err := c.checkTarget(t); err != nil {
			return Response{}, err
		}
		p, err := params(cfg, t, req.Messages, req.ResponseFormat)
		if err != nil {
			return Response{}, err
		}
		b := newBackoff(req.Retry)
		delivered := false
		// Only calls that queue on a 429 (evaluation cells) take a slot:
		// a direct invocation is its caller's own traffic, answered at
		// once as it always was.
		var lim *limiter
		if req.RateLimitWait > 0 {
			lim = c.limits.of(t)
		}
		var onWait func(time.Time)
		if req.OnWait != nil {
			onWait = func(until time.Time) { req.OnWait(t.Label, until) }
		}
		// A 429 queues the call (RateLimitWait) unless the request falls
		// back on capacity failures to a configuration left to try.
		queue := req.RateLimitWait > 0 && !(i+1 < len(configs) && allows(req.FallbackPolicy, classCapacity))
		var limitedSince time.Time
		for {
			started, err := lim.acquire(ctx, onWait)
			if err != nil {
				last = &callError{class: classAvailability, label: t.Label, message: "the call ended while waiting for the provider's rate limit", err: err,
					timeout: errors.Is(err, context.DeadlineExceeded)}
				break
			}
			resp, d, err := call(ctx, t, p)
			var ce *callError
			limited := errors.As(err, &ce) && ce.class == classCapacity
			lim.release(started, limited, err == nil, retryAfterOf(ce))
			if err == nil {
				resp.Provider = t.Family
				return resp, nil
			}
			last, delivered = err, d
			if limited && queue && !delivered && ctx.Err() == nil {
				if limitedSince.IsZero() {
					limitedSince = time.Now()
				}
				if time.Since(limitedSince) < req.RateLimitWait {
					continue // acquire waits out the provider's pause
				}
			}
			if delivered || ce == nil || ce.refused != nil || !ce.retryable() || ctx.Err() != nil || !b.wait(ctx) {
				break
			}
		}
		var ce *callError
		if !errors.As(last, &ce) {
			return Response{}, last // the caller's onDelta refused: not the provider's failure
		}
		if delivered {
			break // the caller has part of this answer: another would garble it
		}
	}
	var ce *callError
	if errors.As(last, &ce) {
		if ctx.Err() != nil && !ce.timeout && errors.Is(ctx.Err(), context.DeadlineExceeded) {
			ce.timeout = true
		}
		return Response{}, ce.toErrs()
	}
	return Response{}, last
}

// chatOnce is one non-streamed call.
func (c *Client) chatOnce(ctx context.Context, t target, p openai.ChatCompletionNewParams) (Response, bool, error) {
	svc := openai.NewChatCompletionService(c.options(t)...)
	res, err := svc.New(ctx, p)
	if err != nil {
		return Response{}, false, classify(err, t, secretOf(t))
	}
	if len(res.Choices) == 0 {
		return Response{}, false, &callError{class: classAvailability, label: t.Label, message: "the provider answered no choices", err: errors.New("no choices")}
	}
	ch := res.Choices[0]
	msg := prompt.Message{Role: "assistant", Content: ch.Message.Content}
	for _, tc := range ch.Message.ToolCalls {
		var v map[string]any
		if json.Unmarshal([]byte(tc.RawJSON()), &v) == nil {
			msg.ToolCalls = append(msg.ToolCalls, v)
		}
	}
	return Response{
		Message:      msg,
		Refusal:      ch.Message.Refusal,
		FinishReason: ch.FinishReason,
		Model:        res.Model,
		Usage: Usage{PromptTokens: res.Usage.PromptTokens, CompletionTokens: res.Usage.CompletionTokens,
			TotalTokens: res.Usage.TotalTokens},
	}, false, nil
}

// errDelta wraps the caller's onDelta error so run returns it unchanged.
type errDelta struct{ err error }

func (e errDelta) Error() string { return e.err.Error() }
func (e errDelta) Unwrap() error { return e.err }

// streamOnce is one streamed call: deltas go to onDelta as they arrive;
// content and tool calls are accumulated for the Response.
func (c *Client) streamOnce(onDelta func(Delta) error) attempt {
	return func(ctx context.Context, t target, p openai.ChatCompletionNewParams) (Response, bool, error) {
		p.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
		svc := openai.NewChatCompletionService(c.options(t)...)
		stream := svc.NewStreaming(ctx, p)
		defer stream.Close()

		var (
			content, refusal strings.Builder
			calls            []*toolCall
			resp             Response
			delivered        bool
		)
		for stream.Next() {
			chunk := stream.Current()
			if chunk.Model != "" {
				resp.Model = chunk.Model
			}
			if chunk.Usage.TotalTokens > 0 || chunk.Usage.PromptTokens > 0 {
				resp.Usage = Usage{PromptTokens: chunk.Usage.PromptTokens, CompletionTokens: chunk.Usage.CompletionTokens,
					TotalTokens: chunk.Usage.TotalTokens}
			}
			for _, ch := range chunk.Choices {
				if ch.Index != 0 {
					continue
				}
				if ch.FinishReason != "" {
					resp.FinishReason = ch.FinishReason
				}
				d := Delta{Content: ch.Delta.Content}
				content.WriteString(ch.Delta.Content)
				refusal.WriteString(ch.Delta.Refusal)
				for _, tc := range ch.Delta.ToolCalls {
					var raw map[string]any
					if json.Unmarshal([]byte(tc.RawJSON()), &raw) == nil {
						d.ToolCalls = append(d.ToolCalls, raw)
					}
					calls = accumulate(calls, tc)
				}
				if d.Content == "" && len(d.ToolCalls) == 0 {
					continue
				}
				delivered = true
				if err := onDelta(d); err != nil {
					return Response{}, true, errDelta{err}
				}
			}
		}
		if err := stream.Err(); err != nil {
			return Response{}, delivered, classify(err, t, secretOf(t))
		}
		resp.Message = prompt.Message{Role: "assistant", Content: content.String()}
		for _, tc := range calls {
			resp.Message.ToolCalls = append(resp.Message.ToolCalls, map[string]any{
				"id": tc.id, "type": "function",
				"function": map[string]any{"name": tc.name, "arguments": tc.args.String()},
			})
		}
		resp.Refusal = refusal.String()
		return resp, delivered, nil
	}
}

// toolCall is a streamed tool call being put together from its pieces.
type toolCall struct {
	index    int64
	id, name string
	args     strings.Builder
}

func accumulate(calls []*toolCall, d openai.ChatCompletionChunkChoiceDeltaToolCall) []*toolCall {
	var tc *toolCall
	for _, c := range calls {
		if c.index == d.Index {
			tc = c
		}
	}
	if tc == nil {
		if len(calls) >= 128 {
			return calls
		}
		tc = &toolCall{index: d.Index}
		calls = append(calls, tc)
	}
	if d.ID != "" {
		tc.id = d.ID
	}
	if d.Function.Name != "" {
		tc.name += d.Function.Name
	}
	tc.args.WriteString(d.Function.Arguments)
	return calls
}

func retryAfterOf(ce *callError) time.Duration {
	if ce == nil {
		return 0
	}
	return ce.retryAfter
}
