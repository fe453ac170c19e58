package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/testutil/llmtest"
	"github.com/assayhq/assay/services/runtime/internal/egress"
	"github.com/assayhq/assay/services/runtime/internal/prompt"
)

// newClient points every preset family at srv, with env as the process
// environment.
func newClient(srv *llmtest.Server, env map[string]string) *Client {
	urls := map[string]string{}
	for fam := range presets {
		urls[fam] = srv.URL
	}
	urls["azure"] = srv.Root
	return New(Config{Timeout: 10 * time.Second, BaseURLs: urls}, func(k string) string { return env[k] }, admitting(srv.Addr()))
}

// admitting is the egress policy with the allow-list entries given: the
// local model server is on loopback, which the policy otherwise refuses.
func admitting(entries ...string) *egress.Client {
	allow, err := egress.ParseAllowList(strings.Join(entries, ","))
	if err != nil {
		panic(err)
	}
	return egress.New(egress.Config{Allow: allow})
}

var openaiEnv = map[string]string{"OPENAI_API_KEY": "sk-env"}

func user(text string) []prompt.Message { return []prompt.Message{{Role: "user", Content: text}} }

func ptr[T any](v T) *T { return &v }

func lastReq(t *testing.T, srv *llmtest.Server) llmtest.Request {
	t.Helper()
	r, ok := srv.LastRequest()
	if !ok {
		t.Fatal("no request reached the server")
	}
	return r
}

func wantKind(t *testing.T, err error, k errs.Kind) *errs.Error {
	t.Helper()
	if err == nil {
		t.Fatalf("want an error of kind %v, got none", k)
	}
	e := errs.From(err)
	if e.Kind != k {
		t.Fatalf("kind = %v, want %v (%v)", e.Kind, k, err)
	}
	return e
}

func TestChatSendsTheWholeConfig(t *testing.T) {
	srv := llmtest.New(t)
	c := newClient(srv, openaiEnv)
	msgs := []prompt.Message{
		{Role: "system", Content: "be brief"},
		{Role: "user", Content: []any{map[string]any{"type": "text", "text": "look at"}, map[string]any{"type": "image_url", "image_url": map[string]any{"url": "data:image/png;base64,AA=="}}}, Name: "ann"},
		{Role: "assistant", Content: nil, ToolCalls: []any{map[string]any{"id": "call_9", "type": "function", "function": map[string]any{"name": "f", "arguments": "{}"}}}},
		{Role: "tool", Content: "42", ToolCallID: "call_9"},
		{Role: "user", Content: "what is the answer?"},
	}
	resp, err := c.Chat(context.Background(), Secrets{}, Request{
		Config: prompt.LLMConfig{Model: "openai/gpt-4o-mini", Temperature: ptr(0.2), MaxTokens: ptr(50), TopP: ptr(0.9),
			FrequencyPenalty: ptr(0.1), PresencePenalty: ptr(0.3), ReasoningEffort: "low",
			ChatTemplateKwargs: map[string]any{"enable_thinking": false}},
		Messages: msgs,
	})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Role != "assistant" || resp.Message.Content != "echo: what is the answer?" || resp.FinishReason != "stop" ||
		resp.Model != "gpt-4o-mini" || resp.Provider != "openai" {
		t.Fatalf("response = %+v", resp)
	}
	if resp.Usage.PromptTokens == 0 || resp.Usage.CompletionTokens != 5 || resp.Usage.TotalTokens != resp.Usage.PromptTokens+5 || resp.Usage.Cost != 0 {
		t.Fatalf("usage = %+v", resp.Usage)
	}
	r := lastReq(t, srv)
	if r.Header.Get("Authorization") != "Bearer sk-env" || r.Path != "/v1/chat/completions" {
		t.Fatalf("auth %q path %q", r.Header.Get("Authorization"), r.Path)
	}
	b := r.Body
	want := map[string]any{"model": "gpt-4o-mini", "temperature": 0.2, "max_tokens": 50.0, "top_p": 0.9,
		"frequency_penalty": 0.1, "presence_penalty": 0.3, "reasoning_effort": "low"}
	for k, v := range want {
		if b[k] != v {
			t.Errorf("body[%s] = %v, want %v", k, b[k], v)
		}
	}
	if kw, _ := b["chat_template_kwargs"].(map[string]any); kw["enable_thinking"] != false {
		t.Errorf("chat_template_kwargs = %v", b["chat_template_kwargs"])
	}
	if _, ok := b["stream"]; ok {
		t.Errorf("a plain chat asked for a stream: %v", b["stream"])
	}
	sent, _ := json.Marshal(b["messages"])
	wantMsgs, _ := json.Marshal(msgs)
	var a, w any
	_ = json.Unmarshal(sent, &a)
	_ = json.Unmarshal(wantMsgs, &w)
	if fmt.Sprint(a) != fmt.Sprint(w) {
		t.Fatalf("messages sent\n%s\nwant\n%s", sent, wantMsgs)
	}
}

func TestCompletionSingleTurn(t *testing.T) {
	srv := llmtest.New(t)
	resp, err := newClient(srv, openaiEnv).Chat(context.Background(), Secrets{}, Request{
		Config: prompt.LLMConfig{Model: "gpt-4o"}, Messages: user("Capital of France?")})
	if err != nil || resp.Message.Content != "echo: Capital of France?" {
		t.Fatalf("resp %+v err %v", resp, err)
	}
}

func TestDefaultModel(t *testing.T) {
	srv := llmtest.New(t)
	if _, err := newClient(srv, openaiEnv).Chat(context.Background(), Secrets{}, Request{Messages: user("x")}); err != nil {
		t.Fatal(err)
	}
	if m := lastReq(t, srv).Model(); m != DefaultModel {
		t.Fatalf("model %q", m)
	}
}

func TestReasoningModelTakesMaxCompletionTokens(t *testing.T) {
	srv := llmtest.New(t)
	_, err := newClient(srv, openaiEnv).Chat(context.Background(), Secrets{}, Request{
		Config: prompt.LLMConfig{Model: "o3-mini", MaxTokens: ptr(100)}, Messages: user("x")})
	if err != nil {
		t.Fatal(err)
	}
	b := lastReq(t, srv).Body
	if b["max_completion_tokens"] != 100.0 || b["max_tokens"] != nil {
		t.Fatalf("body = %v", b)
	}
}

func TestStreamDeliversDeltasAsTheyArrive(t *testing.T) {
	srv := llmtest.New(t)
	firstSeen := make(chan struct{})
	var waited atomic.Bool
	// The server holds its last chunk until the client has seen a delta: the
	// call only completes if deltas are handed over while the answer streams.
	srv.OnChunk(func(i int, last bool) {
		if last {
			select {
			case <-firstSeen:
				waited.Store(true)
			case <-time.After(10 * time.Second):
			}
		}
	})
	var got []string
	resp, err := newClient(srv, openaiEnv).ChatStream(context.Background(), Secrets{}, Request{
		Config: prompt.LLMConfig{Model: "gpt-4o-mini"}, Messages: user("one two three")},
		func(d Delta) error {
			if len(got) == 0 {
				close(firstSeen)
			}
			got = append(got, d.Content)
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	if !waited.Load() {
		t.Fatal("the first delta did not reach the caller before the server sent its last chunk")
	}
	if len(got) != 4 || strings.Join(got, "") != "echo: one two three" || resp.Message.Content != "echo: one two three" {
		t.Fatalf("deltas %q, content %q", got, resp.Message.Content)
	}
	if resp.Usage.CompletionTokens != 4 || resp.Usage.TotalTokens == 0 || resp.FinishReason != "stop" || resp.Provider != "openai" {
		t.Fatalf("resp = %+v", resp)
	}
	b := lastReq(t, srv).Body
	if b["stream"] != true || b["stream_options"].(map[string]any)["include_usage"] != true {
		t.Fatalf("body = %v", b)
	}
}

func TestStreamToolCallsAndRetryBeforeFirstDelta(t *testing.T) {
	srv := llmtest.New(t)
	srv.FailNext(http.StatusBadGateway, 1)
	srv.Script(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "c1", Name: "lookup", Arguments: `{"city":"Paris"}`}, {Name: "time", Arguments: `{}`}}})
	var deltas int
	resp, err := newClient(srv, openaiEnv).ChatStream(context.Background(), Secrets{}, Request{
		Config: prompt.LLMConfig{Model: "gpt-4o-mini"}, Messages: user("x"), Retry: &prompt.RetryConfig{MaxRetries: 2}},
		func(d Delta) error { deltas += len(d.ToolCalls); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if len(srv.Requests()) != 2 || deltas != 6 || resp.FinishReason != "tool_calls" {
		t.Fatalf("requests %d deltas %d resp %+v", len(srv.Requests()), deltas, resp)
	}
	want := `[{"function":{"arguments":"{\"city\":\"Paris\"}","name":"lookup"},"id":"c1","type":"function"},{"function":{"arguments":"{}","name":"time"},"id":"call_2","type":"function"}]`
	if got, _ := json.Marshal(resp.Message.ToolCalls); string(got) != want {
		t.Fatalf("tool calls %s", got)
	}
}

func TestStreamIsNotRetriedAfterTheFirstDelta(t *testing.T) {
	srv := llmtest.New(t)
	srv.OnChunk(func(i int, last bool) {
		if i == 2 {
			panic(http.ErrAbortHandler) // the connection drops mid-answer
		}
	})
	var got string
	_, err := newClient(srv, openaiEnv).ChatStream(context.Background(), Secrets{}, Request{
		Config: prompt.LLMConfig{Model: "gpt-4o-mini"}, Messages: user("a b c"), Retry: &prompt.RetryConfig{MaxRetries: 3},
		FallbackConfigs: []prompt.LLMConfig{{Model: "gpt-4o"}}, FallbackPolicy: "any"},
		func(d Delta) error { got += d.Content; return nil })
	wantKind(t, err, errs.Unavailable)
	if len(srv.Requests()) != 1 || got != "echo: " {
		t.Fatalf("requests %d, deltas %q", len(srv.Requests()), got)
	}
}

func TestStreamCallerErrorEndsTheCall(t *testing.T) {
	srv := llmtest.New(t)
	stop := errors.New("client went away")
	_, err := newClient(srv, openaiEnv).ChatStream(context.Background(), Secrets{}, Request{
		Config: prompt.LLMConfig{Model: "gpt-4o-mini"}, Messages: user("a b c"), Retry: &prompt.RetryConfig{MaxRetries: 3}},
		func(d Delta) error { return stop })
	if err != stop || len(srv.Requests()) != 1 {
		t.Fatalf("err %v, requests %d", err, len(srv.Requests()))
	}
}

func TestToolCalls(t *testing.T) {
	srv := llmtest.New(t)
	srv.Script(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "call_a", Name: "weather", Arguments: `{"city":"Oslo"}`}}})
	tools := []any{map[string]any{"type": "function", "function": map[string]any{"name": "weather",
		"parameters": map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}}}}}
	choice := map[string]any{"type": "function", "function": map[string]any{"name": "weather"}}
	resp, err := newClient(srv, openaiEnv).Chat(context.Background(), Secrets{}, Request{
		Config: prompt.LLMConfig{Model: "gpt-4o", Tools: tools, ToolChoice: choice}, Messages: user("weather in Oslo?")})
	if err != nil {
		t.Fatal(err)
	}
	tc, _ := resp.Message.ToolCalls[0].(map[string]any)
	if len(resp.Message.ToolCalls) != 1 || tc["id"] != "call_a" || tc["function"].(map[string]any)["arguments"] != `{"city":"Oslo"}` || resp.FinishReason != "tool_calls" {
		t.Fatalf("resp = %+v", resp)
	}
	b := lastReq(t, srv).Body
	if fmt.Sprint(b["tools"]) != fmt.Sprint(tools) || fmt.Sprint(b["tool_choice"]) != fmt.Sprint(choice) {
		t.Fatalf("tools %v choice %v", b["tools"], b["tool_choice"])
	}
	// A string tool_choice goes as a string.
	if _, err := newClient(srv, openaiEnv).Chat(context.Background(), Secrets{}, Request{
		Config: prompt.LLMConfig{Model: "gpt-4o", Tools: tools, ToolChoice: "required"}, Messages: user("x")}); err != nil {
		t.Fatal(err)
	}
	if c := lastReq(t, srv).Body["tool_choice"]; c != "required" {
		t.Fatalf("tool_choice %v", c)
	}
}

func TestRefusal(t *testing.T) {
	srv := llmtest.New(t)
	srv.Script(llmtest.Reply{Refusal: "I can't help with that."})
	resp, err := newClient(srv, openaiEnv).Chat(context.Background(), Secrets{}, Request{Config: prompt.LLMConfig{Model: "gpt-4o"}, Messages: user("x")})
	if err != nil || resp.Refusal != "I can't help with that." || resp.Message.Content != "" {
		t.Fatalf("resp %+v err %v", resp, err)
	}
}

func TestJSONSchemaOutput(t *testing.T) {
	srv := llmtest.New(t)
	rf := map[string]any{"type": "json_schema", "json_schema": map[string]any{"name": "grade", "strict": true, "schema": map[string]any{
		"type": "object", "required": []any{"score", "comment"}, "additionalProperties": false,
		"properties": map[string]any{"score": map[string]any{"type": "number", "minimum": 0, "maximum": 1}, "comment": map[string]any{"type": "string"}}}}}
	resp, err := newClient(srv, openaiEnv).Chat(context.Background(), Secrets{}, Request{
		Config: prompt.LLMConfig{Model: "gpt-4o", ResponseFormat: map[string]any{"type": "text"}}, Messages: user("grade it"), ResponseFormat: rf})
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal([]byte(resp.Message.Content.(string)), &out); err != nil || out["score"] != 0.5 || out["comment"] != "grade it" {
		t.Fatalf("content %v (%v)", resp.Message.Content, err)
	}
	if got := lastReq(t, srv).Body["response_format"]; fmt.Sprint(got) != fmt.Sprint(rf) {
		t.Fatalf("response_format sent %v", got)
	}
	_, err = newClient(srv, openaiEnv).Chat(context.Background(), Secrets{}, Request{
		Config: prompt.LLMConfig{Model: "gpt-4o", ResponseFormat: map[string]any{"type": "yaml"}}, Messages: user("x")})
	if e := wantKind(t, err, errs.Invalid); !strings.Contains(e.Msg, "response_format") {
		t.Fatalf("msg %q", e.Msg)
	}
}

func TestEmbed(t *testing.T) {
	srv := llmtest.New(t)
	c := newClient(srv, openaiEnv)
	in := []string{"the cat sat on the mat", "a cat sat on a mat", "stock prices fell"}
	vecs, err := c.Embed(context.Background(), Secrets{}, "text-embedding-3-small", "", in)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range vecs {
		want := llmtest.Embedding(in[i], llmtest.DefaultDimensions)
		for j := range want {
			if math.Abs(v[j]-want[j]) > 1e-9 {
				t.Fatalf("vector %d differs at %d", i, j)
			}
		}
	}
	r := lastReq(t, srv)
	if r.Path != "/v1/embeddings" || r.Model() != "text-embedding-3-small" || r.Header.Get("Authorization") != "Bearer sk-env" {
		t.Fatalf("request %s %s %s", r.Path, r.Model(), r.Header.Get("Authorization"))
	}
	srv.FailNext(http.StatusUnauthorized, 1)
	_, err = c.Embed(context.Background(), Secrets{}, "openai/text-embedding-3-small", "", in)
	wantKind(t, err, errs.FailedDependency)
	srv.FailNext(http.StatusInternalServerError, 1)
	if _, err := c.Embed(context.Background(), Secrets{}, "text-embedding-3-small", "", in); err != nil {
		t.Fatalf("a 500 is retried once: %v", err)
	}
}

func TestProviderRefusalsAre424(t *testing.T) {
	for _, status := range []int{http.StatusUnauthorized, http.StatusForbidden, http.StatusTooManyRequests} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			srv := llmtest.New(t)
			srv.FailNextWith(llmtest.Error{Status: status, Message: "Incorrect API key provided: sk-vault. Go away."}, 10)
			_, err := newClient(srv, nil).Chat(context.Background(),
				Secrets{Keys: []ProviderKey{{Slug: "k", Kind: "anthropic", Key: "sk-vault"}}},
				Request{Config: prompt.LLMConfig{Model: "claude-3-5-sonnet"}, Messages: user("x"), Retry: &prompt.RetryConfig{MaxRetries: 1}})
			e := wantKind(t, err, errs.FailedDependency)
			d := e.Detail.(map[string]any)
			if !strings.Contains(e.Msg, "anthropic") || !strings.Contains(e.Msg, "Go away.") || d["provider"] != "anthropic" || d["status"] != status {
				t.Fatalf("error %q detail %v", e.Msg, d)
			}
			if strings.Contains(err.Error(), "sk-vault") || strings.Contains(fmt.Sprint(e.Detail), "sk-vault") || strings.Contains(fmt.Sprint(e.Err), "sk-vault") {
				t.Fatalf("the key leaked: %v", err)
			}
			wantReqs := 1
			if status == http.StatusTooManyRequests {
				wantReqs = 2 // 429 is retried, 401/403 are not
			}
			if n := len(srv.Requests()); n != wantReqs {
				t.Fatalf("requests = %d, want %d", n, wantReqs)
			}
			if m := lastReq(t, srv).Model(); m != "claude-3-5-sonnet" {
				t.Fatalf("model %q", m)
			}
		})
	}
}

func TestBadRequestIsInvalidAndNotRetried(t *testing.T) {
	for _, status := range []int{http.StatusBadRequest, http.StatusNotFound, http.StatusUnprocessableEntity} {
		srv := llmtest.New(t)
		srv.FailNextWith(llmtest.Error{Status: status, Message: "Unsupported parameter: 'top_k'"}, 1)
		_, err := newClient(srv, openaiEnv).Chat(context.Background(), Secrets{}, Request{
			Config: prompt.LLMConfig{Model: "gpt-4o"}, Messages: user("x"), Retry: &prompt.RetryConfig{MaxRetries: 3}})
		if e := wantKind(t, err, errs.Invalid); !strings.Contains(e.Msg, "top_k") || len(srv.Requests()) != 1 {
			t.Fatalf("%d: %q after %d requests", status, e.Msg, len(srv.Requests()))
		}
	}
}

func TestServerErrorsAreRetriedThenSucceed(t *testing.T) {
	srv := llmtest.New(t)
	srv.FailNext(http.StatusInternalServerError, 2)
	resp, err := newClient(srv, openaiEnv).Chat(context.Background(), Secrets{}, Request{
		Config: prompt.LLMConfig{Model: "gpt-4o"}, Messages: user("hi"), Retry: &prompt.RetryConfig{MaxRetries: 3, Delay: 0.01}})
	if err != nil || resp.Message.Content != "echo: hi" || len(srv.Requests()) != 3 {
		t.Fatalf("resp %+v err %v requests %d", resp, err, len(srv.Requests()))
	}
	srv.FailNext(http.StatusServiceUnavailable, 3)
	_, err = newClient(srv, openaiEnv).Chat(context.Background(), Secrets{}, Request{
		Config: prompt.LLMConfig{Model: "gpt-4o"}, Messages: user("hi"), Retry: &prompt.RetryConfig{MaxRetries: 1}})
	wantKind(t, err, errs.Unavailable)
	// Without retry_config a failure is final.
	srv.ClearFailures()
	srv.FailNext(http.StatusServiceUnavailable, 1)
	_, err = newClient(srv, openaiEnv).Chat(context.Background(), Secrets{}, Request{Config: prompt.LLMConfig{Model: "gpt-4o"}, Messages: user("hi")})
	wantKind(t, err, errs.Unavailable)
}

func TestBackoffDoublesAndIsCapped(t *testing.T) {
	b := newBackoff(&prompt.RetryConfig{MaxRetries: 1000, Delay: 1e9})
	if b.retries != maxRetries || b.next != maxRetryDelay {
		t.Fatalf("backoff %+v", b)
	}
	b = newBackoff(&prompt.RetryConfig{MaxRetries: 3, Delay: 0.5})
	var waits []time.Duration
	for b.retries > 0 {
		waits = append(waits, min(b.next, b.budget, maxRetryDelay))
		b.retries--
		b.budget -= waits[len(waits)-1]
		b.next *= 2
	}
	if fmt.Sprint(waits) != "[500ms 1s 2s]" {
		t.Fatalf("waits %v", waits)
	}
	if b := newBackoff(&prompt.RetryConfig{MaxRetries: -4, Delay: -1}); b.retries != 0 || b.next != 0 {
		t.Fatalf("negative config %+v", b)
	}
}

func TestFallbackPolicy(t *testing.T) {
	failures := map[string]llmtest.Error{
		"availability": {Status: http.StatusInternalServerError},
		"capacity":     {Status: http.StatusTooManyRequests},
		"access":       {Status: http.StatusUnauthorized},
		"context":      {Status: http.StatusBadRequest, Code: "context_length_exceeded", Message: "This model's maximum context length is 8192 tokens."},
		"bad request":  {Status: http.StatusBadRequest, Message: "Invalid value for 'temperature'."},
	}
	finalKind := map[string]errs.Kind{"availability": errs.Unavailable, "capacity": errs.FailedDependency,
		"access": errs.FailedDependency, "context": errs.Invalid, "bad request": errs.Invalid}
	for _, policy := range []string{"", "off", "availability", "capacity", "access", "context", "any"} {
		for class, failure := range failures {
			used := policy == class || (policy == "any" && class != "bad request")
			t.Run(policy+"/"+class, func(t *testing.T) {
				srv := llmtest.New(t)
				srv.FailModel("gpt-4o", failure)
				resp, err := newClient(srv, openaiEnv).Chat(context.Background(), Secrets{}, Request{
					Config: prompt.LLMConfig{Model: "gpt-4o"}, Messages: user("x"), FallbackPolicy: policy,
					FallbackConfigs: []prompt.LLMConfig{{Model: "gpt-4o-mini", Temperature: ptr(0.0)}}})
				if used {
					if err != nil || resp.Model != "gpt-4o-mini" || len(srv.Requests()) != 2 {
						t.Fatalf("fallback not used: resp %+v err %v requests %d", resp, err, len(srv.Requests()))
					}
					if lastReq(t, srv).Body["temperature"] != 0.0 {
						t.Fatalf("the fallback's own config was not sent: %v", lastReq(t, srv).Body)
					}
					return
				}
				wantKind(t, err, finalKind[class])
				if len(srv.Requests()) != 1 {
					t.Fatalf("fallback used: %d requests", len(srv.Requests()))
				}
			})
		}
	}
}

func TestFallbackToAnotherProviderWhenTheKeyIsMissing(t *testing.T) {
	srv := llmtest.New(t)
	resp, err := newClient(srv, openaiEnv).Chat(context.Background(), Secrets{}, Request{
		Config: prompt.LLMConfig{Model: "claude-3-5-haiku"}, Messages: user("x"), FallbackPolicy: "access",
		FallbackConfigs: []prompt.LLMConfig{{Model: "gpt-4o-mini"}}})
	if err != nil || resp.Provider != "openai" {
		t.Fatalf("resp %+v err %v", resp, err)
	}
	_, err = newClient(srv, openaiEnv).Chat(context.Background(), Secrets{}, Request{
		Config: prompt.LLMConfig{Model: "gpt-4o"}, Messages: user("x"), FallbackPolicy: "sometimes"})
	if e := wantKind(t, err, errs.Invalid); !strings.Contains(e.Msg, "fallback_policy") {
		t.Fatalf("msg %q", e.Msg)
	}
}

func TestSlowAnswersTimeOut(t *testing.T) {
	srv := llmtest.New(t)
	srv.SetDelay(5 * time.Second)
	c := New(Config{Timeout: 50 * time.Millisecond, BaseURLs: map[string]string{"openai": srv.URL}}, func(k string) string { return openaiEnv[k] }, admitting(srv.Addr()))
	_, err := c.Chat(context.Background(), Secrets{}, Request{Config: prompt.LLMConfig{Model: "gpt-4o"}, Messages: user("x"),
		Retry: &prompt.RetryConfig{MaxRetries: 1}})
	wantKind(t, err, errs.Timeout)
	if len(srv.Requests()) != 2 {
		t.Fatalf("a time-out is retried: %d requests", len(srv.Requests()))
	}
	// The caller's own deadline is a time-out too, and ends the retries.
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err = newClient(srv, openaiEnv).Chat(ctx, Secrets{}, Request{Config: prompt.LLMConfig{Model: "gpt-4o"}, Messages: user("x"),
		Retry: &prompt.RetryConfig{MaxRetries: 5}})
	wantKind(t, err, errs.Timeout)
	// A stream whose chunks stall times out as well.
	srv.SetDelay(0)
	srv.SetChunkDelay(5 * time.Second)
	_, err = c.ChatStream(context.Background(), Secrets{}, Request{Config: prompt.LLMConfig{Model: "gpt-4o"}, Messages: user("x")},
		func(Delta) error { return nil })
	wantKind(t, err, errs.Timeout)
}

func TestUnreachableProviderIsUnavailable(t *testing.T) {
	srv := llmtest.New(t)
	url := srv.URL
	srv.Close()
	c := New(Config{Timeout: 5 * time.Second, BaseURLs: map[string]string{"openai": url}}, func(k string) string { return openaiEnv[k] }, admitting(srv.Addr()))
	_, err := c.Chat(context.Background(), Secrets{}, Request{Config: prompt.LLMConfig{Model: "gpt-4o"}, Messages: user("x")})
	if e := wantKind(t, err, errs.Unavailable); strings.Contains(e.Msg, "sk-env") {
		t.Fatalf("msg %q", e.Msg)
	}
}

func TestCustomProvider(t *testing.T) {
	srv := llmtest.New(t)
	c := newClient(srv, nil)
	local := CustomProvider{Slug: "local", Kind: "custom", URL: srv.URL, Key: "ck-1", Headers: map[string]string{"X-Proxy-Team": "evals"}, Models: []string{"llama3.1"}}
	noKey := CustomProvider{Slug: "ollama", Kind: "custom", URL: srv.URL, Models: []string{"qwen2.5"}}
	s := Secrets{Custom: []CustomProvider{local, noKey}}
	for _, tc := range []struct{ model, connection, label, sent, auth string }{
		{"local/llama3.1", "", "local", "llama3.1", "Bearer ck-1"},
		{"llama3.1", "local", "local", "llama3.1", "Bearer ck-1"},
		{"local/llama3.1", "local", "local", "llama3.1", "Bearer ck-1"},
		{"llama3.1", "", "local", "llama3.1", "Bearer ck-1"}, // listed in the provider's models
		{"ollama/qwen2.5", "", "ollama", "qwen2.5", ""},
	} {
		resp, err := c.Chat(context.Background(), s, Request{Config: prompt.LLMConfig{Model: tc.model, Connection: tc.connection}, Messages: user("x")})
		if err != nil {
			t.Fatalf("%+v: %v", tc, err)
		}
		r := lastReq(t, srv)
		if resp.Provider != "custom" || r.Model() != tc.sent || r.Header.Get("Authorization") != tc.auth || r.Path != "/v1/chat/completions" {
			t.Fatalf("%+v: provider %q model %q auth %q path %q", tc, resp.Provider, r.Model(), r.Header.Get("Authorization"), r.Path)
		}
		if tc.label == "local" && r.Header.Get("X-Proxy-Team") != "evals" {
			t.Fatalf("%+v: custom header missing", tc)
		}
	}
	_, err := c.Chat(context.Background(), s, Request{Config: prompt.LLMConfig{Model: "mystery-7b"}, Messages: user("x")})
	if e := wantKind(t, err, errs.Invalid); !strings.Contains(e.Msg, "mystery-7b") {
		t.Fatalf("msg %q", e.Msg)
	}
}

// TestCustomProviderOfAFamilyBorrowsNoKey: a custom provider of a family
// kind without a key of its own is called without one. The project's
// stored key of the family and the runtime's environment key were given
// for the family's endpoint, not for a URL any editor can set.
func TestCustomProviderOfAFamilyBorrowsNoKey(t *testing.T) {
	srv := llmtest.New(t)
	s := Secrets{Keys: []ProviderKey{{Slug: "openai", Kind: "openai", Key: "sk-project"}},
		Custom: []CustomProvider{{Slug: "proxy", Kind: "openai", URL: srv.URL}, {Slug: "az", Kind: "azure", URL: srv.Root}}}
	env := map[string]string{"OPENAI_API_KEY": "sk-env", "AZURE_API_KEY": "az-env"}
	for _, model := range []string{"proxy/gpt-4o", "az/dep"} {
		if _, err := newClient(srv, env).Chat(context.Background(), s, Request{Config: prompt.LLMConfig{Model: model}, Messages: user("x")}); err != nil {
			t.Fatal(err)
		}
		r := lastReq(t, srv)
		if a, k := r.Header.Get("Authorization"), r.Header.Get("api-key"); a != "" || k != "" {
			t.Fatalf("%s: authorization %q api-key %q", model, a, k)
		}
	}
	// Its own key, as before.
	s.Custom[0].Key = "ck-own"
	if _, err := newClient(srv, env).Chat(context.Background(), s, Request{Config: prompt.LLMConfig{Model: "proxy/gpt-4o"}, Messages: user("x")}); err != nil {
		t.Fatal(err)
	}
	if a := lastReq(t, srv).Header.Get("Authorization"); a != "Bearer ck-own" {
		t.Fatalf("auth %q", a)
	}
}

// TestCustomBaseURLInsideRefused: a custom provider at a loopback, private
// or link-local address, literal or behind a name, is the caller's 422
// naming the provider and the URL or host, and nothing is sent; the
// allow-list admits the model server and nothing else.
func TestCustomBaseURLInsideRefused(t *testing.T) {
	srv := llmtest.New(t)
	_, port, _ := strings.Cut(srv.Addr(), ":")
	allow, _ := egress.ParseAllowList(srv.Addr())
	out := egress.New(egress.Config{Allow: allow, Resolver: fakeDNS{"inside.example.com": "127.0.0.1", "meta.example.com": "169.254.169.254"}})
	c := New(Config{Timeout: 5 * time.Second}, nil, out)
	for _, tc := range []struct{ url, names string }{
		{"http://127.0.0.2:" + port + "/v1", "127.0.0.2"},
		{"https://127.0.0.1:1/v1", "127.0.0.1"},
		{"http://[::1]:" + port + "/v1", "::1"},
		{"http://[::ffff:127.0.0.1]:1/v1", "127.0.0.1"},
		{"http://[64:ff9b::7f00:1]:" + port + "/v1", "64:ff9b::7f00:1"},
		{"http://169.254.169.254/latest", "169.254.169.254"},
		{"https://10.1.2.3/v1", "10.1.2.3"},
		{"https://[fd00::1]/v1", "fd00::1"},
		{"https://inside.example.com:8443/v1", "inside.example.com"},
		{"https://meta.example.com/v1", "meta.example.com"},
		{"http://localhost:" + port + "/v1", "localhost"},
	} {
		s := Secrets{Custom: []CustomProvider{{Slug: "evil", Kind: "custom", URL: tc.url, Key: "ck", Headers: map[string]string{"X-T": "t"}}}}
		for _, stream := range []bool{false, true} {
			var err error
			req := Request{Config: prompt.LLMConfig{Model: "evil/m"}, Messages: user("x"), Retry: &prompt.RetryConfig{MaxRetries: 3},
				FallbackPolicy: "any", FallbackConfigs: []prompt.LLMConfig{{Model: "evil/m2"}}}
			if stream {
				_, err = c.ChatStream(context.Background(), s, req, func(Delta) error { return nil })
			} else {
				_, err = c.Chat(context.Background(), s, req)
			}
			if err == nil {
				t.Fatalf("%s (stream %v): no error", tc.url, stream)
			}
			e := wantKind(t, err, errs.Unprocessable)
			if !strings.Contains(e.Msg, `"evil"`) || !strings.Contains(e.Msg, tc.names) || !strings.Contains(e.Msg, "refused") {
				t.Errorf("%s: %q", tc.url, e.Msg)
			}
		}
		_, err := c.Embed(context.Background(), s, "evil/m", "", []string{"x"})
		wantKind(t, err, errs.Unprocessable)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Fatalf("%d requests reached the server", n)
	}
	s := Secrets{Custom: []CustomProvider{{Slug: "local", Kind: "custom", URL: srv.URL}}}
	if _, err := c.Chat(context.Background(), s, Request{Config: prompt.LLMConfig{Model: "local/m"}, Messages: user("x")}); err != nil {
		t.Fatalf("the allow-listed server: %v", err)
	}
	// An operator's base URL the policy refuses stops the runtime at start.
	if err := New(Config{BaseURLs: URLMap{"openai": "http://127.0.0.1:9/v1"}}, nil, nil).CheckBaseURLs(); err == nil ||
		!strings.Contains(err.Error(), "RUNTIME_EGRESS_ALLOW") {
		t.Fatalf("base URL check: %v", err)
	}
	if err := New(Config{BaseURLs: URLMap{"openai": srv.URL}}, nil, admitting(srv.Addr())).CheckBaseURLs(); err != nil {
		t.Fatal(err)
	}
}

// fakeDNS answers one address per name, as a public name pointing inside.
type fakeDNS map[string]string

func (f fakeDNS) LookupIPAddr(_ context.Context, host string) ([]net.IPAddr, error) {
	if a, ok := f[host]; ok {
		return []net.IPAddr{{IP: net.ParseIP(a)}}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// TestCustomProviderErrorSummarised: what a custom provider answers in an
// error is not echoed (it would tell what service listens there); its
// status and a class are. A preset family's message, at the operator's
// URL, is still shown.
func TestCustomProviderErrorSummarised(t *testing.T) {
	srv := llmtest.New(t)
	c := newClient(srv, openaiEnv)
	s := Secrets{Custom: []CustomProvider{{Slug: "probe", Kind: "custom", URL: srv.URL}}}
	for _, tc := range []struct {
		status int
		kind   errs.Kind
	}{{404, errs.Invalid}, {401, errs.FailedDependency}, {500, errs.Unavailable}} {
		srv.FailNextWith(llmtest.Error{Status: tc.status, Message: "SSH-2.0-OpenSSH_9.6 redis_version:7.2 (oracle)"}, 1)
		_, err := c.Chat(context.Background(), s, Request{Config: prompt.LLMConfig{Model: "probe/m"}, Messages: user("x")})
		e := wantKind(t, err, tc.kind)
		if strings.Contains(e.Msg, "oracle") || strings.Contains(e.Msg, "redis") || !strings.Contains(e.Msg, fmt.Sprint(tc.status)) {
			t.Errorf("%d: %q", tc.status, e.Msg)
		}
	}
	srv.Script(llmtest.Reply{Content: "half", StreamErr: &llmtest.Error{Status: 500, Type: "server_error", Message: "redis_version:7.2 (oracle)"}})
	_, err := c.ChatStream(context.Background(), s, Request{Config: prompt.LLMConfig{Model: "probe/m"}, Messages: user("x")}, func(Delta) error { return nil })
	if e := errs.From(err); err == nil || strings.Contains(e.Msg, "oracle") {
		t.Errorf("stream: %v", err)
	}
	srv.FailNextWith(llmtest.Error{Status: 400, Message: "Unsupported parameter: top_k"}, 1)
	_, err = c.Chat(context.Background(), Secrets{}, Request{Config: prompt.LLMConfig{Model: "gpt-4o"}, Messages: user("x")})
	if e := wantKind(t, err, errs.Invalid); !strings.Contains(e.Msg, "top_k") {
		t.Errorf("preset: %q", e.Msg)
	}
}

func TestAzure(t *testing.T) {
	srv := llmtest.New(t)
	s := Secrets{Custom: []CustomProvider{{Slug: "corp-azure", Kind: "azure", URL: srv.Root, Version: "2024-06-01", Key: "az-key"}}}
	resp, err := newClient(srv, nil).Chat(context.Background(), s, Request{Config: prompt.LLMConfig{Model: "corp-azure/gpt4o-prod"}, Messages: user("x")})
	if err != nil {
		t.Fatal(err)
	}
	r := lastReq(t, srv)
	if r.Path != "/openai/deployments/gpt4o-prod/chat/completions" || r.Query.Get("api-version") != "2024-06-01" ||
		r.Header.Get("api-key") != "az-key" || r.Header.Get("Authorization") != "" || resp.Provider != "azure" {
		t.Fatalf("path %q query %v api-key %q auth %q provider %q", r.Path, r.Query, r.Header.Get("api-key"), r.Header.Get("Authorization"), resp.Provider)
	}
	// azure/<deployment> with the endpoint from the overrides and the key from the environment.
	_, err = newClient(srv, map[string]string{"AZURE_API_KEY": "az-env"}).Chat(context.Background(), Secrets{}, Request{Config: prompt.LLMConfig{Model: "azure/emb"}, Messages: user("x")})
	if err != nil {
		t.Fatal(err)
	}
	r = lastReq(t, srv)
	if r.Path != "/openai/deployments/emb/chat/completions" || r.Query.Get("api-version") != DefaultAzureAPIVersion || r.Header.Get("api-key") != "az-env" {
		t.Fatalf("path %q query %v api-key %q", r.Path, r.Query, r.Header.Get("api-key"))
	}
	srv.FailNextWith(llmtest.Error{Status: 401, Message: "Access denied due to invalid subscription key az-key."}, 1)
	_, err = newClient(srv, nil).Chat(context.Background(), s, Request{Config: prompt.LLMConfig{Model: "corp-azure/gpt4o-prod"}, Messages: user("x")})
	if e := wantKind(t, err, errs.FailedDependency); strings.Contains(e.Msg, "az-key") {
		t.Fatalf("the api-key leaked: %q", e.Msg)
	}
}

func TestKeyPrecedence(t *testing.T) {
	srv := llmtest.New(t)
	c := newClient(srv, openaiEnv)
	call := func(s Secrets, connection string) string {
		t.Helper()
		if _, err := c.Chat(context.Background(), s, Request{Config: prompt.LLMConfig{Model: "gpt-4o", Connection: connection}, Messages: user("x")}); err != nil {
			t.Fatal(err)
		}
		return lastReq(t, srv).Header.Get("Authorization")
	}
	if a := call(Secrets{}, ""); a != "Bearer sk-env" {
		t.Fatalf("env key: %q", a)
	}
	two := Secrets{Keys: []ProviderKey{{Slug: "team-a", Kind: "openai", Key: "sk-a"}, {Slug: "team-b", Kind: "openai", Key: "sk-b"}, {Slug: "claude", Kind: "anthropic", Key: "sk-c"}}}
	if a := call(two, ""); a != "Bearer sk-a" {
		t.Fatalf("the vault's key shadows the env's: %q", a)
	}
	if a := call(two, "team-b"); a != "Bearer sk-b" {
		t.Fatalf("connection picks its key: %q", a)
	}
	_, err := c.Chat(context.Background(), two, Request{Config: prompt.LLMConfig{Model: "gpt-4o", Connection: "team-z"}, Messages: user("x")})
	if e := wantKind(t, err, errs.FailedDependency); !strings.Contains(e.Msg, "team-z") {
		t.Fatalf("msg %q", e.Msg)
	}
	_, err = c.Chat(context.Background(), two, Request{Config: prompt.LLMConfig{Model: "gpt-4o", Connection: "claude"}, Messages: user("x")})
	wantKind(t, err, errs.Invalid)
	// A model no name rule places takes the connection's family.
	if _, err := c.Chat(context.Background(), two, Request{Config: prompt.LLMConfig{Model: "ft:my-model", Connection: "team-b"}, Messages: user("x")}); err != nil {
		t.Fatal(err)
	}
	if r := lastReq(t, srv); r.Model() != "ft:my-model" || r.Header.Get("Authorization") != "Bearer sk-b" {
		t.Fatalf("model %q auth %q", r.Model(), r.Header.Get("Authorization"))
	}
}

func TestNoKey(t *testing.T) {
	srv := llmtest.New(t)
	_, err := newClient(srv, nil).Chat(context.Background(), Secrets{Keys: []ProviderKey{{Slug: "o", Kind: "openai", Key: "sk"}}},
		Request{Config: prompt.LLMConfig{Model: "together_ai/meta-llama/Llama-3-8b"}, Messages: user("x")})
	e := wantKind(t, err, errs.FailedDependency)
	if !strings.Contains(e.Msg, `"together_ai"`) || !strings.Contains(e.Msg, "TOGETHERAI_API_KEY") || !strings.Contains(e.Msg, "vault") {
		t.Fatalf("msg %q", e.Msg)
	}
	if len(srv.Requests()) != 0 {
		t.Fatal("a call without a key reached the provider")
	}
	if _, err := newClient(srv, nil).Embed(context.Background(), Secrets{}, "text-embedding-3-small", "", []string{"x"}); errs.KindOf(err) != errs.FailedDependency {
		t.Fatalf("embed without key: %v", err)
	}
}

func TestResolvePresetsAndPrefixes(t *testing.T) {
	env := map[string]string{"OPENAI_API_KEY": "o", "ANTHROPIC_API_KEY": "a", "GEMINI_API_KEY": "g", "MISTRAL_API_KEY": "m",
		"GROQ_API_KEY": "q", "TOGETHER_API_KEY": "t", "OPENROUTER_API_KEY": "r", "DEEPINFRA_API_KEY": "d"}
	r := resolver{env: func(k string) string { return env[k] }, baseURLs: map[string]string{"mistral": "http://proxy/v1"}}
	for _, tc := range []struct{ model, fam, base, sent, key string }{
		{"gpt-4o", "openai", "https://api.openai.com/v1", "gpt-4o", "o"},
		{"o1-mini", "openai", "https://api.openai.com/v1", "o1-mini", "o"},
		{"o4-mini", "openai", "https://api.openai.com/v1", "o4-mini", "o"},
		{"text-embedding-3-large", "openai", "https://api.openai.com/v1", "text-embedding-3-large", "o"},
		{"openai/gpt-4.1", "openai", "https://api.openai.com/v1", "gpt-4.1", "o"},
		{"claude-sonnet-4", "anthropic", "https://api.anthropic.com/v1/", "claude-sonnet-4", "a"},
		{"anthropic/claude-3-haiku", "anthropic", "https://api.anthropic.com/v1/", "claude-3-haiku", "a"},
		{"gemini-2.0-flash", "gemini", "https://generativelanguage.googleapis.com/v1beta/openai/", "gemini-2.0-flash", "g"},
		{"gemini/gemini-1.5-pro", "gemini", "https://generativelanguage.googleapis.com/v1beta/openai/", "gemini-1.5-pro", "g"},
		{"mistral/mistral-large-latest", "mistral", "http://proxy/v1", "mistral-large-latest", "m"},
		{"groq/llama-3.1-8b-instant", "groq", "https://api.groq.com/openai/v1", "llama-3.1-8b-instant", "q"},
		{"together_ai/meta-llama/Llama-3-70b", "together_ai", "https://api.together.xyz/v1", "meta-llama/Llama-3-70b", "t"},
		{"openrouter/openai/gpt-4o", "openrouter", "https://openrouter.ai/api/v1", "openai/gpt-4o", "r"},
		{"deepinfra/meta-llama/Meta-Llama-3-8B", "deepinfra", "https://api.deepinfra.com/v1/openai", "meta-llama/Meta-Llama-3-8B", "d"},
	} {
		got, err := r.resolve(tc.model, "")
		if err != nil {
			t.Fatalf("%s: %v", tc.model, err)
		}
		if got.Family != tc.fam || got.BaseURL != tc.base || got.Model != tc.sent || got.Key != tc.key {
			t.Errorf("%s: %+v", tc.model, got)
		}
	}
}

// FuzzResolve: any model and connection resolve to a target with a base URL
// or to an errs kind the invoke surface renders, and a target never sends
// the family prefix it was placed by.
func FuzzResolve(f *testing.F) {
	for _, s := range [][2]string{{"gpt-4o", ""}, {"openai/gpt-4o", ""}, {"local/llama3", ""}, {"x", "local"}, {"", ""},
		{"azure/dep", ""}, {"az/dep", ""}, {"claude-3", "k"}, {"/", "/"}, {"openai/", ""}, {"together/a/b/c", ""}} {
		f.Add(s[0], s[1])
	}
	s := Secrets{
		Keys:   []ProviderKey{{Slug: "k", Kind: "anthropic", Key: "ka"}, {Slug: "weird", Kind: "nope", Key: "kn"}},
		Custom: []CustomProvider{{Slug: "local", Kind: "custom", URL: "http://127.0.0.1:1/v1", Models: []string{"llama3"}}, {Slug: "az", Kind: "azure", URL: "https://x.openai.azure.com", Key: "kz"}},
	}
	r := resolver{secrets: s, env: func(k string) string { return map[string]string{"OPENAI_API_KEY": "ko"}[k] }}
	f.Fuzz(func(t *testing.T, model, connection string) {
		got, err := r.resolve(model, connection)
		if err != nil {
			switch errs.KindOf(err) {
			case errs.Invalid, errs.FailedDependency:
				return
			}
			t.Fatalf("kind of %v", err)
		}
		if got.BaseURL == "" || got.Label == "" {
			t.Fatalf("%q %q: %+v", model, connection, got)
		}
		if p, _, ok := strings.Cut(strings.TrimSpace(model), "/"); ok && got.Family != "custom" && got.Model == strings.TrimSpace(model) {
			if _, known := family(p); known && connection == "" {
				t.Fatalf("%q sent with its family prefix", model)
			}
		}
	})
}

func BenchmarkChat(b *testing.B) {
	srv := llmtest.New(b)
	c := newClient(srv, openaiEnv)
	req := Request{Config: prompt.LLMConfig{Model: "gpt-4o-mini", Temperature: ptr(0.0)}, Messages: []prompt.Message{
		{Role: "system", Content: "You are a terse assistant."}, {Role: "user", Content: "What is the capital of France?"}}}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Chat(ctx, Secrets{}, req); err != nil {
			b.Fatal(err)
		}
	}
}

func TestMalformedMessagesAreInvalid(t *testing.T) {
	srv := llmtest.New(t)
	c := newClient(srv, openaiEnv)
	for _, msgs := range [][]prompt.Message{
		nil,
		{{Role: "wizard", Content: "x"}},
		{{Role: "user", Content: 42}},
		{{Role: "user", Content: map[string]any{"text": "x"}}},
	} {
		_, err := c.Chat(context.Background(), Secrets{}, Request{Config: prompt.LLMConfig{Model: "gpt-4o"}, Messages: msgs})
		if e := wantKind(t, err, errs.Invalid); !strings.Contains(e.Msg, "messages") {
			t.Fatalf("msg %q", e.Msg)
		}
	}
	// Parts in any Go shape that is a JSON list are sent as given.
	parts := []map[string]string{{"type": "text", "text": "hello"}}
	resp, err := c.Chat(context.Background(), Secrets{}, Request{Config: prompt.LLMConfig{Model: "gpt-4o"}, Messages: []prompt.Message{{Role: "user", Content: parts}}})
	if err != nil || resp.Message.Content != "echo: hello" {
		t.Fatalf("resp %+v err %v", resp, err)
	}
	if len(srv.Requests()) != 1 {
		t.Fatalf("malformed messages reached the provider: %d requests", len(srv.Requests()))
	}
}

func TestStreamErrorEventAfterDeltas(t *testing.T) {
	srv := llmtest.New(t)
	srv.Script(llmtest.Reply{Content: "half an", StreamErr: &llmtest.Error{Status: 429, Message: "Rate limit reached for sk-env"}})
	var got string
	_, err := newClient(srv, openaiEnv).ChatStream(context.Background(), Secrets{}, Request{
		Config: prompt.LLMConfig{Model: "gpt-4o"}, Messages: user("x"), Retry: &prompt.RetryConfig{MaxRetries: 2}},
		func(d Delta) error { got += d.Content; return nil })
	e := wantKind(t, err, errs.FailedDependency)
	if got != "half an" || len(srv.Requests()) != 1 || !strings.Contains(e.Msg, "Rate limit reached") || strings.Contains(e.Msg, "sk-env") {
		t.Fatalf("deltas %q requests %d msg %q", got, len(srv.Requests()), e.Msg)
	}
	// Before any delta, an error event is retried like an HTTP failure.
	srv.Script(llmtest.Reply{Refusal: "no", StreamErr: &llmtest.Error{Status: 500, Type: "server_error", Message: "boom"}})
	resp, err := newClient(srv, openaiEnv).ChatStream(context.Background(), Secrets{}, Request{
		Config: prompt.LLMConfig{Model: "gpt-4o"}, Messages: user("again"), Retry: &prompt.RetryConfig{MaxRetries: 2}},
		func(d Delta) error { return nil })
	if err != nil || resp.Message.Content != "echo: again" || len(srv.Requests()) != 3 {
		t.Fatalf("resp %+v err %v requests %d", resp, err, len(srv.Requests()))
	}
}

func TestCancelledCallIsNotRetried(t *testing.T) {
	srv := llmtest.New(t)
	srv.SetDelay(5 * time.Second)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for len(srv.Requests()) == 0 {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	_, err := newClient(srv, openaiEnv).Chat(ctx, Secrets{}, Request{Config: prompt.LLMConfig{Model: "gpt-4o"}, Messages: user("x"),
		Retry: &prompt.RetryConfig{MaxRetries: 3}})
	if e := wantKind(t, err, errs.Unavailable); !strings.Contains(e.Msg, "cancelled") || len(srv.Requests()) != 1 {
		t.Fatalf("msg %q requests %d", e.Msg, len(srv.Requests()))
	}
}

// TestNoKeyNamesTheCustomProviders: a project that added its own endpoint
// and kept a model of a family it has no key for (the console's old
// default, gpt-4o-mini) is told how its own models are named.
func TestNoKeyNamesTheCustomProviders(t *testing.T) {
	srv := llmtest.New(t)
	s := Secrets{Custom: []CustomProvider{{Slug: "local", Kind: "custom", URL: srv.URL, Models: []string{"llama3.1", "qwen2.5"}}}}
	_, err := newClient(srv, nil).Chat(context.Background(), s, Request{Config: prompt.LLMConfig{Model: "gpt-4o-mini"}, Messages: user("x")})
	e := wantKind(t, err, errs.FailedDependency)
	for _, want := range []string{`"openai"`, "OPENAI_API_KEY", "Provider secrets", "<provider slug>/<model>", "local/llama3.1, local/qwen2.5"} {
		if !strings.Contains(e.Msg, want) {
			t.Errorf("msg %q lacks %q", e.Msg, want)
		}
	}
}

// TestProvidersAndCheck: the picker's list (custom providers' models as
// <slug>/<model>, families whose key is stored or in the environment) and
// a connection test through the egress policy that never shows the key.
func TestProvidersAndCheck(t *testing.T) {
	srv := llmtest.New(t)
	srv.SetModels("llama3.1", "qwen2.5")
	c := newClient(srv, openaiEnv)
	s := Secrets{
		Keys:   []ProviderKey{{Slug: "mistral-key", Kind: "mistral", Key: "mk-secret"}},
		Custom: []CustomProvider{{Slug: "local", Kind: "custom", URL: srv.URL, Key: "ck-secret", Models: []string{"llama3.1"}}},
	}
	ps := c.Providers(s)
	var names []string
	for _, p := range ps {
		names = append(names, p.Name+":"+p.Source)
	}
	if got := strings.Join(names, " "); got != "local:vault mistral:vault openai:environment" {
		t.Fatalf("providers %q", got)
	}
	if ps[0].Models[0] != "local/llama3.1" || ps[0].Slug != "local" || ps[2].Models[0] != "gpt-4o-mini" {
		t.Fatalf("providers %+v", ps)
	}

	for _, name := range []string{"local", "mistral-key", "openai"} {
		got, err := c.Check(context.Background(), s, name)
		if err != nil || !got.OK || got.Models != 2 {
			t.Fatalf("check %s: %+v %v", name, got, err)
		}
	}
	if r := lastReq(t, srv); r.Method != "GET" || r.Path != "/v1/models" || r.Header.Get("Authorization") != "Bearer sk-env" {
		t.Fatalf("check request %s %s %q", r.Method, r.Path, r.Header.Get("Authorization"))
	}

	srv.RequireKey("another")
	got, err := c.Check(context.Background(), s, "mistral-key")
	if err != nil || got.OK || got.Status != 401 || got.Error == "" || strings.Contains(got.Error, "mk-secret") {
		t.Fatalf("refused check: %+v %v", got, err)
	}
	got, err = c.Check(context.Background(), s, "local")
	if err != nil || got.OK || !strings.Contains(got.Error, "credentials refused") || strings.Contains(got.Error, "ck-secret") {
		t.Fatalf("refused custom check: %+v %v", got, err)
	}

	// Without the egress exception, a custom provider on loopback is
	// refused before any connection, as its calls are.
	before := len(srv.Requests())
	strict := New(Config{Timeout: 10 * time.Second}, nil, nil)
	got, err = strict.Check(context.Background(), s, "local")
	if err != nil || got.OK || !strings.Contains(got.Error, "local") || len(srv.Requests()) != before {
		t.Fatalf("check past the egress policy: %+v %v", got, err)
	}
	if _, err := c.Check(context.Background(), s, "nowhere"); errs.KindOf(err) != errs.NotFound {
		t.Fatalf("unknown provider: %v", err)
	}
}
