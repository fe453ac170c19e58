package llmtest

import (
	"bufio"
	"encoding/json"
	"math"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
)

func post(t *testing.T, url, key string, body any) (*http.Response, map[string]any) {
	t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(string(b)))
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp, out
}

func chatBody(text string) map[string]any {
	return map[string]any{"model": "gpt-4o-mini", "messages": []any{
		map[string]any{"role": "system", "content": "be brief"},
		map[string]any{"role": "user", "content": text}}}
}

func content(t *testing.T, out map[string]any) map[string]any {
	t.Helper()
	ch, _ := out["choices"].([]any)
	if len(ch) != 1 {
		t.Fatalf("choices = %v", out)
	}
	return ch[0].(map[string]any)["message"].(map[string]any)
}

func TestChatEchoesAndRecords(t *testing.T) {
	srv := New(t)
	resp, out := post(t, srv.URL+"/chat/completions", "sk-1", chatBody("hello there"))
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %v", resp.StatusCode, out)
	}
	if got := content(t, out)["content"]; got != "echo: hello there" {
		t.Fatalf("content = %v", got)
	}
	u := out["usage"].(map[string]any)
	if u["prompt_tokens"].(float64) != 6 || u["completion_tokens"].(float64) != 3 || u["total_tokens"].(float64) != 9 {
		t.Fatalf("usage = %v", u)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 || reqs[0].Header.Get("Authorization") != "Bearer sk-1" || reqs[0].Model() != "gpt-4o-mini" || reqs[0].Path != "/v1/chat/completions" {
		t.Fatalf("requests = %+v", reqs)
	}
}

func TestScriptFailuresAndKey(t *testing.T) {
	srv := New(t)
	srv.Script(Reply{Content: "one"}, Reply{ToolCalls: []ToolCall{{Name: "f", Arguments: `{"a":1}`}}},
		Reply{Err: &Error{Status: 400, Code: "context_length_exceeded", Message: "too long"}})
	_, out := post(t, srv.URL+"/chat/completions", "", chatBody("x"))
	if content(t, out)["content"] != "one" {
		t.Fatalf("first = %v", out)
	}
	_, out = post(t, srv.URL+"/chat/completions", "", chatBody("x"))
	m := content(t, out)
	tc := m["tool_calls"].([]any)[0].(map[string]any)
	if tc["id"] != "call_1" || tc["function"].(map[string]any)["arguments"] != `{"a":1}` || out["choices"].([]any)[0].(map[string]any)["finish_reason"] != "tool_calls" {
		t.Fatalf("tool call = %v", out)
	}
	resp, out := post(t, srv.URL+"/chat/completions", "", chatBody("x"))
	if e := out["error"].(map[string]any); resp.StatusCode != 400 || e["code"] != "context_length_exceeded" || e["message"] != "too long" {
		t.Fatalf("scripted error = %d %v", resp.StatusCode, out)
	}

	srv.FailNext(429, 2)
	for range 2 {
		resp, out := post(t, srv.URL+"/embeddings", "", map[string]any{"model": "m", "input": "x"})
		if resp.StatusCode != 429 || out["error"].(map[string]any)["code"] != "rate_limit_exceeded" {
			t.Fatalf("failure = %d %v", resp.StatusCode, out)
		}
	}
	if resp, _ := post(t, srv.URL+"/chat/completions", "", chatBody("x")); resp.StatusCode != 200 {
		t.Fatalf("after failures: %d", resp.StatusCode)
	}

	srv.FailModel("bad", Error{Status: 503})
	b := chatBody("x")
	b["model"] = "bad"
	if resp, _ := post(t, srv.URL+"/chat/completions", "", b); resp.StatusCode != 503 {
		t.Fatalf("model failure: %d", resp.StatusCode)
	}
	srv.RequireKey("right")
	if resp, _ := post(t, srv.URL+"/chat/completions", "wrong", chatBody("x")); resp.StatusCode != 401 {
		t.Fatalf("wrong key: %d", resp.StatusCode)
	}
	if resp, _ := post(t, srv.URL+"/chat/completions", "right", chatBody("x")); resp.StatusCode != 200 {
		t.Fatalf("right key: %d", resp.StatusCode)
	}
}

func TestStreamChunksAndUsage(t *testing.T) {
	srv := New(t)
	var chunks atomic.Int32
	srv.OnChunk(func(i int, last bool) { chunks.Add(1) })
	body := chatBody("a b c")
	body["stream"] = true
	body["stream_options"] = map[string]any{"include_usage": true}
	b, _ := json.Marshal(body)
	resp, err := http.Post(srv.URL+"/chat/completions", "application/json", strings.NewReader(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	var text strings.Builder
	var usage map[string]any
	done := false
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		if line == "[DONE]" {
			done = true
			break
		}
		var c map[string]any
		if err := json.Unmarshal([]byte(line), &c); err != nil {
			t.Fatalf("chunk %q: %v", line, err)
		}
		if u, ok := c["usage"].(map[string]any); ok {
			usage = u
		}
		for _, ch := range c["choices"].([]any) {
			if s, ok := ch.(map[string]any)["delta"].(map[string]any)["content"].(string); ok {
				text.WriteString(s)
			}
		}
	}
	if !done || text.String() != "echo: a b c" || usage["completion_tokens"].(float64) != 4 {
		t.Fatalf("done=%v text=%q usage=%v", done, text.String(), usage)
	}
	if n := chunks.Load(); n != 6 { // role, 4 words, finish
		t.Fatalf("chunks = %d", n)
	}
}

func TestJSONSchemaReply(t *testing.T) {
	srv := New(t)
	body := chatBody("judge")
	body["response_format"] = map[string]any{"type": "json_schema", "json_schema": map[string]any{"name": "r", "schema": map[string]any{
		"type": "object", "properties": map[string]any{
			"score":   map[string]any{"type": "number", "minimum": 0, "maximum": 10},
			"label":   map[string]any{"type": "string", "enum": []any{"good", "bad"}},
			"reasons": map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
			"ok":      map[string]any{"type": "boolean"}}}}}
	_, out := post(t, srv.URL+"/chat/completions", "", body)
	var v map[string]any
	if err := json.Unmarshal([]byte(content(t, out)["content"].(string)), &v); err != nil {
		t.Fatal(err)
	}
	if v["score"] != 5.0 || v["label"] != "good" || v["ok"] != true || v["reasons"].([]any)[0] != "judge" {
		t.Fatalf("value = %v", v)
	}
}

func TestEmbeddingsAndModels(t *testing.T) {
	srv := New(t)
	_, out := post(t, srv.URL+"/embeddings", "", map[string]any{"model": "text-embedding-3-small",
		"input": []any{"the cat sat", "the cat sat down", "quantum flux"}, "dimensions": 128})
	data := out["data"].([]any)
	vec := func(i int) []float64 {
		var v []float64
		for _, x := range data[i].(map[string]any)["embedding"].([]any) {
			v = append(v, x.(float64))
		}
		return v
	}
	cos := func(a, b []float64) float64 {
		var d float64
		for i := range a {
			d += a[i] * b[i]
		}
		return d
	}
	a, b, c := vec(0), vec(1), vec(2)
	if len(a) != 128 || math.Abs(cos(a, a)-1) > 1e-9 || cos(a, b) < 0.8 || math.Abs(cos(a, c)) > 0.5 {
		t.Fatalf("len=%d aa=%v ab=%v ac=%v", len(a), cos(a, a), cos(a, b), cos(a, c))
	}
	resp, err := http.Get(srv.URL + "/models")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var list map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&list)
	if len(list["data"].([]any)) != 3 {
		t.Fatalf("models = %v", list)
	}
}

// FuzzSchemaValue: any schema (from hostile JSON) yields a value that
// marshals, without looping on deep or self-similar schemas.
func FuzzSchemaValue(f *testing.F) {
	f.Add(`{"type":"object","properties":{"a":{"type":"integer","minimum":3,"maximum":2}}}`)
	f.Add(`{"anyOf":[{"type":["string","null"]}]}`)
	f.Add(`{"type":"array","minItems":16,"items":{"type":"array","minItems":16,"items":{"type":"array","minItems":16}}}`)
	f.Fuzz(func(t *testing.T, s string) {
		var schema map[string]any
		if json.Unmarshal([]byte(s), &schema) != nil {
			return
		}
		if _, err := json.Marshal(SchemaValue(schema, "x")); err != nil {
			t.Fatal(err)
		}
	})
}

func TestStreamErrorEvent(t *testing.T) {
	srv := New(t)
	srv.Script(Reply{Content: "partial answer", StreamErr: &Error{Status: 429, Message: "slow down"}})
	body := chatBody("x")
	body["stream"] = true
	b, _ := json.Marshal(body)
	resp, err := http.Post(srv.URL+"/chat/completions", "application/json", strings.NewReader(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var lines []string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if l, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			lines = append(lines, l)
		}
	}
	last := lines[len(lines)-1]
	if resp.StatusCode != 200 || len(lines) != 4 || last != `{"error":{"code":"rate_limit_exceeded","message":"slow down","param":null,"type":"requests"}}` {
		t.Fatalf("status %d lines %q", resp.StatusCode, lines)
	}
}
