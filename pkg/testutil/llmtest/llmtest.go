// Package llmtest runs a local OpenAI-compatible HTTP server for tests, in
// place of an LLM provider: chat completions (plain and streamed as SSE),
// text completions, embeddings and the model list. Answers are
// deterministic and scripted per test: by default a chat answer echoes the
// last user message ("echo: <text>"); a test may queue replies (content,
// tool calls, refusals, provider errors), inject failures, add latency per
// request or per streamed chunk, and read back every request it received.
//
//	srv := llmtest.New(t)
//	srv.Script(llmtest.Reply{Content: "hello"})
//	srv.FailNext(http.StatusTooManyRequests, 2)
//	... point the client at srv.URL ...
//	reqs := srv.Requests()
//
// Only the standard library is used, so any module can import it.
package llmtest

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"
)

// maxBody bounds what the server reads of one request body.
const maxBody = 16 << 20

// DefaultDimensions is the length of an embedding when the request does not
// ask for "dimensions".
const DefaultDimensions = 64

// Server is a running fake provider. Its methods are safe for concurrent use.
type Server struct {
	// URL is the OpenAI base URL, ending in /v1 (e.g. http://127.0.0.1:port/v1).
	URL string
	// Root is the server's origin without /v1, for clients that build their
	// own paths (Azure's /openai/deployments/<model>/...). Chat, completion,
	// embedding and model requests are recognised by their path's suffix.
	Root string

	srv  *httptest.Server
	done chan struct{}

	mu         sync.Mutex
	replies    []Reply
	fails      []Error
	modelFails map[string]Error
	delay      time.Duration
	chunkDelay time.Duration
	onChunk    func(i int, last bool)
	key        string
	models     []string
	requests   []Request

	// A concurrency limit (LimitConcurrency): requests beyond it answer
	// 429; inFlight counts the admitted ones.
	limit       int
	limitRetry  time.Duration
	inFlight    int
	maxInFlight int
	refused     int
}

// Reply is one scripted chat answer. The zero fields take defaults: the
// content of an empty Reply is the echo of the last user message (or, when
// the request asks for a JSON schema, a JSON object valid for it), the
// finish reason "stop" ("tool_calls" with tool calls), usage counted from the
// words of the request and of the answer.
type Reply struct {
	Content      string
	ToolCalls    []ToolCall
	Refusal      string
	FinishReason string
	Model        string // the answering model; default: the requested one
	Usage        *Usage
	Delay        time.Duration // latency before this answer, on top of the server's
	// Err makes this reply a provider error instead of an answer.
	Err *Error
	// StreamErr, on a streamed request, ends the stream after the content
	// chunks with an error event (data: {"error": {...}}) instead of the
	// finish chunk, as providers do when they fail mid-answer. Its Status is
	// not sent (the stream already answered 200).
	StreamErr *Error
}

// ToolCall is one function call of a scripted reply. ID defaults to
// "call_<n>".
type ToolCall struct {
	ID        string
	Name      string
	Arguments string // JSON text
}

// Usage is the token count an answer reports.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
	// PromptTokensDetails, when set, reports the part of the prompt read
	// from the provider's cache, as OpenAI does (cached tokens are
	// included in PromptTokens).
	PromptTokensDetails *PromptTokensDetails `json:"prompt_tokens_details,omitempty"`
}

// PromptTokensDetails is OpenAI's breakdown of the prompt tokens.
type PromptTokensDetails struct {
	CachedTokens int `json:"cached_tokens"`
}

// Error is a provider failure, answered with Status and an OpenAI-shaped
// body {"error": {"message", "type", "code"}}. Empty Message, Type and Code
// take the values OpenAI uses for the status.
type Error struct {
	Status  int
	Message string
	Type    string
	Code    string
}

// Request is one request the server received.
type Request struct {
	Method string
	Path   string
	Query  url.Values
	Header http.Header
	Raw    []byte
	Body   map[string]any // Raw decoded; nil when it is not a JSON object
}

// Model returns the request's "model" field.
func (r Request) Model() string { s, _ := r.Body["model"].(string); return s }

// New starts a server on a loopback port; it stops when the test ends.
func New(t testing.TB) *Server {
	t.Helper()
	s := &Server{done: make(chan struct{}), modelFails: map[string]Error{},
		models: []string{"gpt-4o-mini", "gpt-4o", "text-embedding-3-small"}}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.Root = s.srv.URL
	s.URL = s.srv.URL + "/v1"
	t.Cleanup(s.Close)
	return s
}

// Addr is the server's host:port (127.0.0.1:port), as the runtime's
// egress allow-list (RUNTIME_EGRESS_ALLOW) names a destination: the
// server is on loopback, which the runtime refuses unless admitted.
func (s *Server) Addr() string { return s.srv.Listener.Addr().String() }

// Close stops the server; New registers it with the test's cleanup.
// Handlers waiting on a delay return at once.
func (s *Server) Close() {
	s.mu.Lock()
	select {
	case <-s.done:
		s.mu.Unlock()
		return
	default:
		close(s.done)
	}
	s.mu.Unlock()
	s.srv.CloseClientConnections()
	s.srv.Close()
}

// Script queues chat replies, answered in order one per chat request; once
// the queue is empty the default echo answer resumes.
func (s *Server) Script(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.replies = append(s.replies, replies...)
}

// FailNext makes the next n requests (of any endpoint) fail with status and
// OpenAI's error body for it; later requests succeed.
func (s *Server) FailNext(status, n int) { s.FailNextWith(Error{Status: status}, n) }

// FailNextWith is FailNext with a chosen error body.
func (s *Server) FailNextWith(e Error, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range n {
		s.fails = append(s.fails, e)
	}
}

// FailModel makes every request for model fail with e until ClearFailures,
// so a test can fail one configuration and let its fallback answer.
func (s *Server) FailModel(model string, e Error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.modelFails[model] = e
}

// ClearFailures drops pending FailNext failures and FailModel entries.
func (s *Server) ClearFailures() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fails = nil
	s.modelFails = map[string]Error{}
}

// SetDelay makes every request wait d before it is answered (or, streamed,
// before its first chunk). The wait ends early when the client goes away.
func (s *Server) SetDelay(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.delay = d
}

// SetChunkDelay makes a streamed answer wait d before each chunk.
func (s *Server) SetChunkDelay(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.chunkDelay = d
}

// OnChunk installs a hook called before each chunk of a streamed chat answer
// is written (i counts from 0; last is the chunk carrying the finish
// reason). A test can block in it, e.g. until its client saw the first
// delta, to show that deltas arrive as they are sent.
func (s *Server) OnChunk(f func(i int, last bool)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.onChunk = f
}

// RequireKey makes the server answer 401 unless the request carries key as
// "Authorization: Bearer <key>" or as an "api-key" header (Azure's).
func (s *Server) RequireKey(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.key = key
}

// SetModels sets what GET /v1/models lists.
func (s *Server) SetModels(models ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.models = append([]string(nil), models...)
}

// Requests returns a copy of every request received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// LastRequest returns the latest request; ok is false when there was none.
func (s *Server) LastRequest() (r Request, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.requests) == 0 {
		return Request{}, false
	}
	return s.requests[len(s.requests)-1], true
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	raw, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil || len(raw) > maxBody {
		writeError(w, Error{Status: http.StatusRequestEntityTooLarge, Message: "request body too large"})
		return
	}
	req := Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.Query(), Header: r.Header.Clone(), Raw: raw}
	if len(bytes.TrimSpace(raw)) > 0 {
		_ = json.Unmarshal(raw, &req.Body)
	}

	s.mu.Lock()
	s.requests = append(s.requests, req)
	key, delay := s.key, s.delay
	var fail *Error
	if len(s.fails) > 0 {
		e := s.fails[0]
		s.fails = s.fails[1:]
		fail = &e
	} else if e, ok := s.modelFails[req.Model()]; ok && req.Model() != "" {
		fail = &e
	}
	s.mu.Unlock()

	if key != "" && r.Header.Get("Authorization") != "Bearer "+key && r.Header.Get("api-key") != key {
		writeError(w, Error{Status: http.StatusUnauthorized})
		return
	}
	if !s.admit(w) {
		return
	}
	defer s.leave()
	if !s.sleep(r, delay) {
		return
	}
	if fail != nil {
		writeError(w, *fail)
		return
	}

	path := r.URL.Path
	switch {
	case r.Method == http.MethodPost && strings.HasSuffix(path, "/chat/completions"):
		s.chat(w, r, req)
	case r.Method == http.MethodPost && strings.HasSuffix(path, "/completions"):
		s.completion(w, req)
	case r.Method == http.MethodPost && strings.HasSuffix(path, "/embeddings"):
		s.embeddings(w, req)
	case r.Method == http.MethodGet && strings.HasSuffix(path, "/models"):
		s.listModels(w)
	default:
		writeError(w, Error{Status: http.StatusNotFound, Message: "Unknown request URL: " + r.Method + " " + path, Code: "unknown_url"})
	}
}

// LimitConcurrency makes the server a rate-limited provider: a request
// that arrives while n others are being answered gets a 429 (OpenAI's
// rate_limit_exceeded) with Retry-After: retryAfter in seconds (none when
// 0). n <= 0 lifts the limit.
func (s *Server) LimitConcurrency(n int, retryAfter time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.limit, s.limitRetry = n, retryAfter
}

// Concurrency reports the most requests answered at once and how many
// were refused for being over the limit of LimitConcurrency.
func (s *Server) Concurrency() (maxInFlight, refused int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.maxInFlight, s.refused
}

func (s *Server) admit(w http.ResponseWriter) bool {
	s.mu.Lock()
	if s.limit > 0 && s.inFlight >= s.limit {
		s.refused++
		retry := s.limitRetry
		s.mu.Unlock()
		if retry > 0 {
			w.Header().Set("Retry-After", strconv.FormatFloat(retry.Seconds(), 'f', -1, 64))
		}
		writeError(w, Error{Status: http.StatusTooManyRequests})
		return false
	}
	s.inFlight++
	s.maxInFlight = max(s.maxInFlight, s.inFlight)
	s.mu.Unlock()
	return true
}

func (s *Server) leave() {
	s.mu.Lock()
	s.inFlight--
	s.mu.Unlock()
}

// sleep waits d; false when the client or the server went away first.
func (s *Server) sleep(r *http.Request, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	case <-s.done:
		return false
	}
}

func (s *Server) chat(w http.ResponseWriter, r *http.Request, req Request) {
	if req.Body == nil {
		writeError(w, Error{Status: http.StatusBadRequest, Message: "We could not parse the JSON body of your request."})
		return
	}
	msgs, _ := req.Body["messages"].([]any)
	if len(msgs) == 0 {
		writeError(w, Error{Status: http.StatusBadRequest, Message: "[] is too short - 'messages'", Code: "invalid_value"})
		return
	}
	s.mu.Lock()
	var rep Reply
	if len(s.replies) > 0 {
		rep = s.replies[0]
		s.replies = s.replies[1:]
	}
	chunkDelay, onChunk := s.chunkDelay, s.onChunk
	s.mu.Unlock()

	if !s.sleep(r, rep.Delay) {
		return
	}
	if rep.Err != nil {
		writeError(w, *rep.Err)
		return
	}
	a := s.answer(req, msgs, rep)
	if stream, _ := req.Body["stream"].(bool); stream {
		s.streamChat(w, r, req, a, rep.StreamErr, chunkDelay, onChunk)
		return
	}
	msg := map[string]any{"role": "assistant", "content": nil}
	if a.content != "" || (len(a.toolCalls) == 0 && a.refusal == "") {
		msg["content"] = a.content
	}
	if a.refusal != "" {
		msg["refusal"] = a.refusal
	}
	if len(a.toolCalls) > 0 {
		tcs := make([]map[string]any, len(a.toolCalls))
		for i, tc := range a.toolCalls {
			tcs[i] = map[string]any{"id": tc.ID, "type": "function",
				"function": map[string]any{"name": tc.Name, "arguments": tc.Arguments}}
		}
		msg["tool_calls"] = tcs
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"id": a.id, "object": "chat.completion", "created": a.created, "model": a.model,
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": a.finish, "logprobs": nil}},
		"usage":   a.usage,
	})
}

type answer struct {
	id, model, content, refusal, finish string
	created                             int64
	toolCalls                           []ToolCall
	usage                               Usage
}

func (s *Server) answer(req Request, msgs []any, rep Reply) answer {
	s.mu.Lock()
	n := len(s.requests)
	s.mu.Unlock()
	a := answer{id: fmt.Sprintf("chatcmpl-%d", n), created: time.Now().Unix(),
		model: rep.Model, content: rep.Content, refusal: rep.Refusal, finish: rep.FinishReason}
	if a.model == "" {
		a.model = req.Model()
	}
	for i, tc := range rep.ToolCalls {
		if tc.ID == "" {
			tc.ID = fmt.Sprintf("call_%d", i+1)
		}
		if tc.Arguments == "" {
			tc.Arguments = "{}"
		}
		a.toolCalls = append(a.toolCalls, tc)
	}
	if a.content == "" && len(a.toolCalls) == 0 && a.refusal == "" {
		a.content = defaultContent(req.Body, lastUserText(msgs))
	}
	if a.finish == "" {
		a.finish = "stop"
		if len(a.toolCalls) > 0 {
			a.finish = "tool_calls"
		}
	}
	if rep.Usage != nil {
		a.usage = *rep.Usage
	} else {
		pt := 0
		for _, m := range msgs {
			if mm, ok := m.(map[string]any); ok {
				pt += countWords(textOf(mm["content"])) + 1
			}
		}
		ct := countWords(a.content) + countWords(a.refusal)
		for _, tc := range a.toolCalls {
			ct += countWords(tc.Name) + countWords(tc.Arguments)
		}
		if ct == 0 {
			ct = 1
		}
		a.usage = Usage{PromptTokens: pt, CompletionTokens: ct, TotalTokens: pt + ct}
	}
	return a
}

// defaultContent is the echo of text, or a JSON object when response_format
// asks for one.
func defaultContent(body map[string]any, text string) string {
	rf, _ := body["response_format"].(map[string]any)
	switch rf["type"] {
	case "json_object":
		b, _ := json.Marshal(map[string]any{"echo": text})
		return string(b)
	case "json_schema":
		js, _ := rf["json_schema"].(map[string]any)
		schema, _ := js["schema"].(map[string]any)
		b, _ := json.Marshal(SchemaValue(schema, text))
		return string(b)
	}
	return "echo: " + text
}

func (s *Server) streamChat(w http.ResponseWriter, r *http.Request, req Request, a answer, streamErr *Error, chunkDelay time.Duration, onChunk func(int, bool)) {
	opts, _ := req.Body["stream_options"].(map[string]any)
	includeUsage, _ := opts["include_usage"].(bool)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	fl, _ := w.(http.Flusher)

	var deltas []map[string]any
	first := map[string]any{"role": "assistant", "content": ""}
	deltas = append(deltas, first)
	for _, piece := range splitPieces(a.content) {
		deltas = append(deltas, map[string]any{"content": piece})
	}
	if a.refusal != "" {
		deltas = append(deltas, map[string]any{"refusal": a.refusal})
	}
	for i, tc := range a.toolCalls {
		deltas = append(deltas, map[string]any{"tool_calls": []any{map[string]any{
			"index": i, "id": tc.ID, "type": "function",
			"function": map[string]any{"name": tc.Name, "arguments": ""}}}})
		for _, piece := range splitArgs(tc.Arguments) {
			deltas = append(deltas, map[string]any{"tool_calls": []any{map[string]any{
				"index": i, "function": map[string]any{"arguments": piece}}}})
		}
	}
	chunk := func(choices []any) map[string]any {
		return map[string]any{"id": a.id, "object": "chat.completion.chunk", "created": a.created,
			"model": a.model, "choices": choices}
	}
	send := func(v any) bool {
		b, _ := json.Marshal(v)
		if _, err := fmt.Fprintf(w, "data: %s\n\n", b); err != nil {
			return false
		}
		if fl != nil {
			fl.Flush()
		}
		return true
	}
	n := len(deltas) + 1 // the deltas, then the finish chunk
	for i := range n {
		if onChunk != nil {
			onChunk(i, i == n-1)
		}
		if !s.sleep(r, chunkDelay) {
			return
		}
		var c map[string]any
		if i == len(deltas) && streamErr != nil {
			send(map[string]any{"error": errorBody(*streamErr)})
			return
		}
		if i < len(deltas) {
			c = chunk([]any{map[string]any{"index": 0, "delta": deltas[i], "finish_reason": nil}})
		} else {
			c = chunk([]any{map[string]any{"index": 0, "delta": map[string]any{}, "finish_reason": a.finish}})
		}
		if includeUsage {
			c["usage"] = nil
		}
		if !send(c) {
			return
		}
	}
	if includeUsage {
		c := chunk([]any{})
		c["usage"] = a.usage
		if !send(c) {
			return
		}
	}
	_, _ = io.WriteString(w, "data: [DONE]\n\n")
	if fl != nil {
		fl.Flush()
	}
}

func (s *Server) completion(w http.ResponseWriter, req Request) {
	if req.Body == nil {
		writeError(w, Error{Status: http.StatusBadRequest, Message: "We could not parse the JSON body of your request."})
		return
	}
	prompt := textOf(req.Body["prompt"])
	text := "echo: " + prompt
	ct := countWords(text)
	writeJSON(w, http.StatusOK, map[string]any{
		"id": "cmpl-1", "object": "text_completion", "created": time.Now().Unix(), "model": req.Model(),
		"choices": []any{map[string]any{"index": 0, "text": text, "finish_reason": "stop", "logprobs": nil}},
		"usage":   Usage{PromptTokens: countWords(prompt), CompletionTokens: ct, TotalTokens: countWords(prompt) + ct},
	})
}

func (s *Server) embeddings(w http.ResponseWriter, req Request) {
	var inputs []string
	switch v := req.Body["input"].(type) {
	case string:
		inputs = []string{v}
	case []any:
		for _, x := range v {
			str, ok := x.(string)
			if !ok {
				writeError(w, Error{Status: http.StatusBadRequest, Message: "'input' must be a string or an array of strings", Code: "invalid_value"})
				return
			}
			inputs = append(inputs, str)
		}
	}
	if len(inputs) == 0 {
		writeError(w, Error{Status: http.StatusBadRequest, Message: "'input' is required", Code: "invalid_value"})
		return
	}
	dims := DefaultDimensions
	if d, ok := req.Body["dimensions"].(float64); ok && d >= 1 && d <= 4096 {
		dims = int(d)
	}
	base64Enc := req.Body["encoding_format"] == "base64"
	data := make([]any, len(inputs))
	tokens := 0
	for i, in := range inputs {
		vec := Embedding(in, dims)
		tokens += countWords(in)
		var emb any = vec
		if base64Enc {
			buf := make([]byte, 4*len(vec))
			for j, f := range vec {
				binary.LittleEndian.PutUint32(buf[4*j:], math.Float32bits(float32(f)))
			}
			emb = base64.StdEncoding.EncodeToString(buf)
		}
		data[i] = map[string]any{"object": "embedding", "index": i, "embedding": emb}
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"object": "list", "data": data, "model": req.Model(),
		"usage": map[string]int{"prompt_tokens": tokens, "total_tokens": tokens},
	})
}

func (s *Server) listModels(w http.ResponseWriter) {
	s.mu.Lock()
	models := append([]string(nil), s.models...)
	s.mu.Unlock()
	data := make([]any, len(models))
	for i, m := range models {
		data[i] = map[string]any{"id": m, "object": "model", "created": 0, "owned_by": "llmtest"}
	}
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": data})
}

// Embedding is the vector the server answers for text: a hashed bag of its
// lower-cased words, L2-normalised, so texts sharing words are close
// (cosine similarity 1 for the same words, 0 for none in common, bar hash
// collisions). Tests use it to compute the expected similarity.
func Embedding(text string, dims int) []float64 {
	if dims < 1 {
		dims = DefaultDimensions
	}
	v := make([]float64, dims)
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	if len(words) == 0 {
		words = []string{""}
	}
	for _, w := range words {
		h := fnv.New64a()
		_, _ = h.Write([]byte(w))
		x := h.Sum64()
		sign := 1.0
		if x>>63 == 1 {
			sign = -1
		}
		v[x%uint64(dims)] += sign
	}
	var norm float64
	for _, f := range v {
		norm += f * f
	}
	if norm = math.Sqrt(norm); norm > 0 {
		for i := range v {
			v[i] /= norm
		}
	}
	return v
}

// SchemaValue returns a value valid for simple JSON Schemas (type object
// with properties, string with enum, number/integer with minimum/maximum,
// boolean, array, null): what the server answers when a request asks for a
// json_schema response format and no reply is scripted. Strings are text.
func SchemaValue(schema map[string]any, text string) any {
	budget := 1000 // values built at most, so nested minItems cannot explode
	return schemaValue(schema, text, 0, &budget)
}

func schemaValue(schema map[string]any, text string, depth int, budget *int) any {
	if *budget--; depth > 16 || *budget < 0 {
		return nil
	}
	if c, ok := schema["const"]; ok {
		return c
	}
	if e, ok := schema["enum"].([]any); ok && len(e) > 0 {
		return e[0]
	}
	for _, k := range []string{"anyOf", "oneOf", "allOf"} {
		if alts, ok := schema[k].([]any); ok && len(alts) > 0 {
			if a, ok := alts[0].(map[string]any); ok {
				return schemaValue(a, text, depth+1, budget)
			}
		}
	}
	typ := schema["type"]
	if ts, ok := typ.([]any); ok && len(ts) > 0 {
		typ = ts[0]
	}
	if typ == nil {
		if _, ok := schema["properties"]; ok {
			typ = "object"
		}
	}
	switch typ {
	case "object":
		out := map[string]any{}
		props, _ := schema["properties"].(map[string]any)
		for k, p := range props {
			ps, _ := p.(map[string]any)
			out[k] = schemaValue(ps, text, depth+1, budget)
		}
		return out
	case "array":
		items, _ := schema["items"].(map[string]any)
		n := 1
		if m, ok := schema["minItems"].(float64); ok && m > 1 && m <= 16 {
			n = int(m)
		}
		out := make([]any, n)
		for i := range out {
			out[i] = schemaValue(items, text, depth+1, budget)
		}
		return out
	case "number", "integer":
		lo, hasLo := schema["minimum"].(float64)
		hi, hasHi := schema["maximum"].(float64)
		x := 1.0
		switch {
		case hasLo && hasHi:
			x = (lo + hi) / 2
		case hasLo:
			x = lo
		case hasHi:
			x = math.Min(hi, 1)
		}
		if typ == "integer" {
			x = math.Ceil(x)
			if hasHi && x > hi {
				x = math.Floor(hi)
			}
		}
		return x
	case "boolean":
		return true
	case "null":
		return nil
	default:
		return text
	}
}

func lastUserText(msgs []any) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		m, _ := msgs[i].(map[string]any)
		if m["role"] == "user" {
			return textOf(m["content"])
		}
	}
	return ""
}

// textOf reads a message content: a string, or the text of its parts.
func textOf(c any) string {
	switch v := c.(type) {
	case string:
		return v
	case []any:
		var b strings.Builder
		for _, p := range v {
			switch pp := p.(type) {
			case map[string]any:
				if t, ok := pp["text"].(string); ok {
					if b.Len() > 0 {
						b.WriteByte(' ')
					}
					b.WriteString(t)
				}
			case string:
				if b.Len() > 0 {
					b.WriteByte(' ')
				}
				b.WriteString(pp)
			}
		}
		return b.String()
	}
	return ""
}

func countWords(s string) int { return len(strings.Fields(s)) }

// splitPieces cuts text into word-sized pieces, each keeping its trailing
// spaces, so the pieces concatenate back to text.
func splitPieces(text string) []string {
	var out []string
	for len(text) > 0 {
		i := strings.IndexByte(text, ' ')
		if i < 0 {
			out = append(out, text)
			break
		}
		j := i
		for j < len(text) && text[j] == ' ' {
			j++
		}
		out = append(out, text[:j])
		text = text[j:]
	}
	return out
}

// splitArgs cuts tool-call arguments in two, as providers stream them in
// pieces that are not JSON on their own.
func splitArgs(args string) []string {
	if len(args) < 2 {
		return []string{args}
	}
	h := len(args) / 2
	return []string{args[:h], args[h:]}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, e Error) {
	if e.Status == 0 {
		e.Status = http.StatusInternalServerError
	}
	writeJSON(w, e.Status, map[string]any{"error": errorBody(e)})
}

// errorBody is OpenAI's {"message", "type", "param", "code"} for e, with
// the status's defaults for what e leaves empty.
func errorBody(e Error) map[string]any {
	if e.Status == 0 {
		e.Status = http.StatusInternalServerError
	}
	dm, dt, dc := defaults(e.Status)
	if e.Message == "" {
		e.Message = dm
	}
	if e.Type == "" {
		e.Type = dt
	}
	if e.Code == "" {
		e.Code = dc
	}
	var code any = e.Code
	if e.Code == "" {
		code = nil
	}
	return map[string]any{"message": e.Message, "type": e.Type, "param": nil, "code": code}
}

// defaults are OpenAI's message, type and code for a status.
func defaults(status int) (msg, typ, code string) {
	switch status {
	case http.StatusBadRequest:
		return "Invalid request.", "invalid_request_error", ""
	case http.StatusUnauthorized:
		return "Incorrect API key provided. You can find your API key at https://platform.openai.com/account/api-keys.", "invalid_request_error", "invalid_api_key"
	case http.StatusForbidden:
		return "You are not allowed to sample from this model.", "invalid_request_error", "model_not_allowed"
	case http.StatusNotFound:
		return "The model does not exist or you do not have access to it.", "invalid_request_error", "model_not_found"
	case http.StatusTooManyRequests:
		return "Rate limit reached for requests. Please try again later.", "requests", "rate_limit_exceeded"
	case http.StatusServiceUnavailable:
		return "The engine is currently overloaded, please try again later.", "server_error", ""
	default:
		if status >= 500 {
			return "The server had an error while processing your request. Sorry about that!", "server_error", ""
		}
		return http.StatusText(status), "invalid_request_error", ""
	}
}
