package httpapi_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/pkg/testutil/llmtest"
	"github.com/assayhq/assay/pkg/testutil/platformtest"
)

// platform is the whole stack (pkg/testutil/platformtest): every service a
// real binary on real PostgreSQL, NATS and ClickHouse, with the local model
// server as the provider.
type platform struct {
	*platformtest.Platform
	gateway string
	llm     *llmtest.Server
}

func startPlatform(t *testing.T) *platform {
	t.Helper()
	p := platformtest.Start(t)
	return &platform{Platform: p, gateway: p.URL, llm: p.LLM}
}

// account provisions a user with a project and returns its Authorization.
func (p *platform) account(t *testing.T, email string) string {
	t.Helper()
	return "ApiKey " + p.Account(t, email)
}

type answer struct {
	status int
	header http.Header
	body   []byte
}

func (a answer) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(a.body, &m), string(a.body))
	return m
}

func (p *platform) do(t *testing.T, method, path, auth string, header map[string]string, body any) answer {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		require.NoError(t, err)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, p.gateway+path, rd)
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", auth)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return answer{status: res.StatusCode, header: res.Header, body: b}
}

// spans polls the tracing API until the trace has n spans.
func (p *platform) spans(t *testing.T, key, traceID string, n int) []map[string]any {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		r := p.do(t, "POST", "/api/spans/query", key, nil, map[string]any{"filtering": map[string]any{
			"conditions": []any{map[string]any{"field": "trace_id", "value": traceID}}}})
		require.Equal(t, 200, r.status, string(r.body))
		var out struct {
			Spans []map[string]any `json:"spans"`
		}
		require.NoError(t, json.Unmarshal(r.body, &out))
		if len(out.Spans) >= n || time.Now().After(deadline) {
			require.Len(t, out.Spans, n, "spans of trace %s", traceID)
			return out.Spans
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func ag(t *testing.T, span map[string]any, path string) any {
	t.Helper()
	var v any = span["attributes"].(map[string]any)["ag"]
	for _, k := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

var completionParams = map[string]any{"prompt": map[string]any{
	"messages": []any{
		map[string]any{"role": "system", "content": "You answer in one word."},
		map[string]any{"role": "user", "content": "What is the capital of {{country}}?"},
	},
	"llm_config": map[string]any{"model": "gpt-4o-mini"},
}}

func TestInvokeThroughTheGateway(t *testing.T) {
	p := startPlatform(t)
	keyA := p.account(t, "a@example.com")
	keyB := p.account(t, "b@example.com")

	r := p.do(t, "POST", "/api/simple/applications/", keyA, nil, map[string]any{"application": map[string]any{
		"slug": "capitals", "name": "Capitals", "flags": map[string]any{"is_application": true},
		"data": map[string]any{"uri": "agenta:builtin:completion:v0", "parameters": completionParams}}})
	require.Equal(t, 200, r.status, string(r.body))
	app := r.json(t)["application"].(map[string]any)
	url := app["data"].(map[string]any)["url"].(string)
	require.True(t, strings.HasSuffix(url, "/services/completion/v0"), url)

	t.Run("data.url answers invoke with the stored revision's parameters", func(t *testing.T) {
		r := p.do(t, "POST", "/services/completion/v0/invoke", keyA, nil, map[string]any{
			"references": map[string]any{"application": map[string]any{"slug": "capitals"}},
			"data":       map[string]any{"inputs": map[string]any{"country": "France"}}})
		require.Equal(t, 200, r.status, string(r.body))
		out := r.json(t)
		assert.Equal(t, "2025.07.14", out["version"])
		assert.Equal(t, map[string]any{"code": 200.0, "message": "Success"}, out["status"])
		assert.Equal(t, "echo: What is the capital of France?", out["data"].(map[string]any)["outputs"])
		traceID := out["trace_id"].(string)
		assert.Len(t, traceID, 32)
		assert.Equal(t, traceID, r.header.Get("X-Ag-Trace-Id"))
		assert.Equal(t, out["span_id"], r.header.Get("X-Ag-Span-Id"))
		assert.Equal(t, "00-"+traceID+"-"+out["span_id"].(string)+"-01", r.header.Get("Traceparent"))
		assert.NotEmpty(t, r.header.Get("X-Ag-Session-Id"))
		last := p.llm.Requests()[len(p.llm.Requests())-1]
		assert.Equal(t, "Bearer sk-test-env", last.Header.Get("Authorization"))

		spans := p.spans(t, keyA, traceID, 2)
		var root, chat map[string]any
		for _, s := range spans {
			if s["parent_id"] == nil {
				root = s
			} else {
				chat = s
			}
		}
		require.NotNil(t, root)
		require.NotNil(t, chat)
		assert.Equal(t, "workflow", root["span_type"])
		assert.Equal(t, "invocation", root["trace_type"])
		assert.Equal(t, "France", ag(t, root, "data.inputs.country"))
		assert.Equal(t, "echo: What is the capital of France?", ag(t, root, "data.outputs"))
		assert.Equal(t, app["id"], ag(t, root, "references.application.id"))
		assert.Equal(t, app["revision_id"], ag(t, root, "references.application_revision.id"))
		assert.Equal(t, "chat", chat["span_type"])
		assert.Equal(t, root["span_id"], chat["parent_id"])
		assert.NotNil(t, ag(t, chat, "metrics.tokens.incremental.total"))
		assert.NotNil(t, ag(t, chat, "metrics.costs.incremental.total"), "gpt-4o-mini is priced")
	})

	t.Run("a key of another project never reaches the revision", func(t *testing.T) {
		r := p.do(t, "POST", "/services/completion/v0/invoke", keyB, nil, map[string]any{
			"references": map[string]any{"application": map[string]any{"id": app["id"]}},
			"data":       map[string]any{"inputs": map[string]any{"country": "France"}}})
		require.Equal(t, 404, r.status, string(r.body))
		out := r.json(t)
		assert.Equal(t, "runtime.revision_not_found", out["status"].(map[string]any)["type"])
		assert.Len(t, out["trace_id"], 32)
		assert.NotContains(t, out, "version", "an error is {status, trace_id, span_id}")
		assert.NotContains(t, out, "session_id")
		assert.Equal(t, "2025.07.14", r.header.Get("X-Ag-Version"))
	})

	t.Run("the root dispatches by references", func(t *testing.T) {
		r := p.do(t, "POST", "/services/invoke", keyA, nil, map[string]any{
			"references": map[string]any{"application_revision": map[string]any{"id": app["revision_id"]}},
			"data":       map[string]any{"inputs": map[string]any{"country": "Peru"}}})
		require.Equal(t, 200, r.status, string(r.body))
		assert.Equal(t, "echo: What is the capital of Peru?", r.json(t)["data"].(map[string]any)["outputs"])
	})

	t.Run("a playground call runs inline parameters", func(t *testing.T) {
		r := p.do(t, "POST", "/services/chat/v0/invoke", keyA, nil, map[string]any{
			"data": map[string]any{"parameters": completionParams, "inputs": map[string]any{"country": "Chile",
				"messages": []any{map[string]any{"role": "user", "content": "and its population?"}}}}})
		require.Equal(t, 200, r.status, string(r.body))
		assert.Equal(t, map[string]any{"role": "assistant", "content": "echo: and its population?"}, r.json(t)["data"].(map[string]any)["outputs"])
	})

	t.Run("an unresolved variable is a 400 naming it", func(t *testing.T) {
		r := p.do(t, "POST", "/services/completion/v0/invoke", keyA, nil, map[string]any{
			"data": map[string]any{"parameters": completionParams, "inputs": map[string]any{"city": "Lima"}}})
		require.Equal(t, 400, r.status, string(r.body))
		assert.Contains(t, string(r.body), "country")
	})

	t.Run("tokens stream as server-sent events", func(t *testing.T) {
		req, _ := http.NewRequest("POST", p.gateway+"/services/completion/v0/invoke", strings.NewReader(
			`{"references":{"application":{"slug":"capitals"}},"data":{"inputs":{"country":"Japan"}}}`))
		req.Header.Set("Authorization", keyA)
		req.Header.Set("Accept", "text/event-stream")
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		require.Equal(t, 200, res.StatusCode)
		assert.Equal(t, "text/event-stream", res.Header.Get("Content-Type"))
		var text strings.Builder
		var last map[string]any
		sc := bufio.NewScanner(res.Body)
		for sc.Scan() {
			line, ok := strings.CutPrefix(sc.Text(), "data: ")
			if !ok {
				continue
			}
			var ev map[string]any
			require.NoError(t, json.Unmarshal([]byte(line), &ev))
			if ev["type"] == "delta" {
				text.WriteString(ev["data"].(map[string]any)["delta"].(string))
			}
			last = ev
		}
		assert.Equal(t, "echo: What is the capital of Japan?", text.String())
		require.NotNil(t, last)
		assert.Equal(t, "done", last["type"])
		assert.Equal(t, text.String(), last["data"].(map[string]any)["outputs"])
	})

	t.Run("a handler that cannot stream answers 406", func(t *testing.T) {
		r := p.do(t, "POST", "/services/mock/v0/invoke", keyA, map[string]string{"Accept": "application/x-ndjson"},
			map[string]any{"data": map[string]any{"parameters": map[string]any{"key": "pass"}}})
		require.Equal(t, 406, r.status, string(r.body))
	})

	t.Run("an evaluator run is an annotation linked to the invocation", func(t *testing.T) {
		inv := p.do(t, "POST", "/services/completion/v0/invoke", keyA, nil, map[string]any{
			"references": map[string]any{"application": map[string]any{"slug": "capitals"}},
			"data":       map[string]any{"inputs": map[string]any{"country": "Italy"}}}).json(t)
		r := p.do(t, "POST", "/services/auto_exact_match/v0/invoke", keyA, nil, map[string]any{
			"links": map[string]any{"invocation": map[string]any{"trace_id": inv["trace_id"], "span_id": inv["span_id"]}},
			"data": map[string]any{"parameters": map[string]any{"correct_answer_key": "correct_answer"},
				"inputs":  map[string]any{"country": "Italy", "correct_answer": "echo: What is the capital of Italy?"},
				"outputs": inv["data"].(map[string]any)["outputs"]}})
		require.Equal(t, 200, r.status, string(r.body))
		out := r.json(t)
		assert.Equal(t, true, out["data"].(map[string]any)["outputs"].(map[string]any)["success"])
		spans := p.spans(t, keyA, out["trace_id"].(string), 1)
		assert.Equal(t, "annotation", spans[0]["trace_type"])
		links, _ := spans[0]["links"].([]any)
		require.Len(t, links, 1)
		assert.Equal(t, inv["trace_id"], links[0].(map[string]any)["trace_id"])
	})

	t.Run("a provider's 429 is a 424 with the provider's message", func(t *testing.T) {
		p.llm.FailNextWith(llmtest.Error{Status: 429, Message: "Rate limit reached for gpt-4o-mini"}, 1)
		r := p.do(t, "POST", "/services/completion/v0/invoke", keyA, nil, map[string]any{
			"references": map[string]any{"application": map[string]any{"slug": "capitals"}},
			"data":       map[string]any{"inputs": map[string]any{"country": "Spain"}}})
		require.Equal(t, 424, r.status, string(r.body))
		assert.Contains(t, r.json(t)["status"].(map[string]any)["message"], "Rate limit reached")
		assert.NotContains(t, string(r.body), "sk-test-env", "no key in an error")
	})

	t.Run("a key in the project's vault shadows the environment's", func(t *testing.T) {
		r := p.do(t, "POST", "/api/secrets/", keyB, nil, map[string]any{"header": map[string]any{"name": "OpenAI"},
			"secret": map[string]any{"kind": "provider_key", "data": map[string]any{"kind": "openai", "provider": map[string]any{"key": "sk-from-vault"}}}})
		require.Equal(t, 200, r.status, string(r.body))
		assert.NotContains(t, string(r.body), "sk-from-vault", "a secret's value is never returned")
		r = p.do(t, "POST", "/services/completion/v0/invoke", keyB, nil, map[string]any{
			"data": map[string]any{"parameters": completionParams, "inputs": map[string]any{"country": "Chad"}}})
		require.Equal(t, 200, r.status, string(r.body))
		reqs := p.llm.Requests()
		assert.Equal(t, "Bearer sk-from-vault", reqs[len(reqs)-1].Header.Get("Authorization"))
	})

	t.Run("what is deployed to an environment runs, with the environment in its trace", func(t *testing.T) {
		r := p.do(t, "POST", "/api/applications/revisions/deploy", keyA, nil, map[string]any{
			"application_ref": map[string]any{"id": app["id"]}, "environment_ref": map[string]any{"slug": "production"}})
		require.Equal(t, 200, r.status, string(r.body))
		r = p.do(t, "POST", "/services/invoke", keyA, nil, map[string]any{
			"references": map[string]any{"environment": map[string]any{"slug": "production"}},
			"selector":   map[string]any{"key": "capitals.revision"},
			"data":       map[string]any{"inputs": map[string]any{"country": "Kenya"}}})
		require.Equal(t, 200, r.status, string(r.body))
		out := r.json(t)
		assert.Equal(t, "echo: What is the capital of Kenya?", out["data"].(map[string]any)["outputs"])
		spans := p.spans(t, keyA, out["trace_id"].(string), 2)
		for _, s := range spans {
			if s["parent_id"] == nil {
				assert.Equal(t, "production", ag(t, s, "references.environment.slug"))
				assert.Equal(t, app["revision_id"], ag(t, s, "references.application_revision.id"))
			}
		}
	})

	t.Run("a hook on a private address is refused", func(t *testing.T) {
		r := p.do(t, "POST", "/services/invoke", keyA, nil, map[string]any{"data": map[string]any{
			"revision": map[string]any{"data": map[string]any{"uri": "svc:custom:hook:v0", "url": "http://127.0.0.1:9/app"}},
			"inputs":   map[string]any{"q": "hi"}}})
		require.Equal(t, 422, r.status, string(r.body))
		assert.Contains(t, string(r.body), "127.0.0.1")
	})

	t.Run("the LLM judge scores with the model's answer", func(t *testing.T) {
		p.llm.Script(llmtest.Reply{Content: `{"score": 0.8, "comment": "right city"}`})
		r := p.do(t, "POST", "/services/auto_ai_critique/v0/invoke", keyA, nil, map[string]any{
			"data": map[string]any{"parameters": map[string]any{"model": "gpt-4o-mini", "threshold": 0.5},
				"inputs":  map[string]any{"country": "Italy", "correct_answer": "Rome"},
				"outputs": "Rome"}})
		require.Equal(t, 200, r.status, string(r.body))
		out := r.json(t)["data"].(map[string]any)["outputs"].(map[string]any)
		assert.Equal(t, 0.8, out["score"])
		assert.Equal(t, true, out["success"])
	})

	// The catalog's judge and each preset as a user creates them, run on a
	// production trace: its inputs have no reference answer, so a prompt
	// that needs {{correct_answer}} would fail every trace (an online
	// evaluation failed 12 of 12 that way). With a reference answer the
	// prompt shows it.
	t.Run("the catalog's judge and its presets score a trace without a reference answer", func(t *testing.T) {
		r := p.do(t, "GET", "/api/evaluators/catalog/templates/auto_ai_critique", keyA, nil, nil)
		require.Equal(t, 200, r.status, string(r.body))
		configs := map[string]map[string]any{"template": r.json(t)["template"].(map[string]any)["data"].(map[string]any)["parameters"].(map[string]any)}
		r = p.do(t, "GET", "/api/evaluators/catalog/templates/auto_ai_critique/presets/", keyA, nil, nil)
		require.Equal(t, 200, r.status, string(r.body))
		for _, pr := range r.json(t)["presets"].([]any) {
			pm := pr.(map[string]any)
			configs[pm["key"].(string)] = pm["data"].(map[string]any)["parameters"].(map[string]any)
		}
		require.Len(t, configs, 5)
		for name, params := range configs {
			for _, reference := range []bool{false, true} {
				inputs := map[string]any{"question": "What is the capital of Italy?"}
				if reference {
					inputs["correct_answer"] = "Rome"
				}
				p.llm.Script(llmtest.Reply{Content: `{"score": 1, "success": true, "comment": "ok", "reasoning": "ok", "question": "q"}`})
				r := p.do(t, "POST", "/services/auto_ai_critique/v0/invoke", keyA, nil, map[string]any{
					"data": map[string]any{"parameters": params, "inputs": inputs, "outputs": "Rome",
						"trace": map[string]any{"spans": map[string]any{}}}})
				require.Equal(t, 200, r.status, "%s (reference answer: %v): %s", name, reference, r.body)
				assert.Equal(t, true, r.json(t)["data"].(map[string]any)["outputs"].(map[string]any)["success"], name)
				last, ok := p.llm.LastRequest()
				require.True(t, ok)
				assert.Equal(t, reference, strings.Contains(string(last.Raw), `Expected answer: Rome`), "%s: %s", name, last.Raw)
				assert.Contains(t, string(last.Raw), "What is the capital of Italy?", name)
			}
		}
	})

	t.Run("the configured models and a connection test, through the gateway", func(t *testing.T) {
		r := p.do(t, "GET", "/services/models", keyA, nil, nil)
		require.Equal(t, 200, r.status, string(r.body))
		assert.Contains(t, string(r.body), `"name":"openai","kind":"openai","source":"environment"`)
		assert.Equal(t, "gpt-4o-mini", r.json(t)["default"])
		assert.NotContains(t, string(r.body), "sk-test-env")
		r = p.do(t, "POST", "/services/providers/test", keyA, nil, map[string]any{"provider": "openai"})
		require.Equal(t, 200, r.status, string(r.body))
		assert.Equal(t, true, r.json(t)["ok"], string(r.body))
		r = p.do(t, "POST", "/services/providers/test", keyA, nil, map[string]any{"provider": "nowhere"})
		require.Equal(t, 404, r.status, string(r.body))
		assert.Contains(t, string(r.body), "nowhere")
	})

	t.Run("custom code runs in the sandbox", func(t *testing.T) {
		r := p.do(t, "POST", "/services/auto_custom_code_run/v0/invoke", keyA, nil, map[string]any{
			"data": map[string]any{"parameters": map[string]any{"runtime": "typescript", "version": "2",
				"code": "function evaluate(inputs: any, outputs: any, trace: any): number { return outputs === inputs.correct_answer ? 1 : 0 }"},
				"inputs": map[string]any{"correct_answer": "Rome"}, "outputs": "Rome"}})
		require.Equal(t, 200, r.status, string(r.body))
		assert.Equal(t, map[string]any{"score": 1.0, "success": true}, r.json(t)["data"].(map[string]any)["outputs"])
		r = p.do(t, "POST", "/services/auto_custom_code_run/v0/invoke", keyA, nil, map[string]any{
			"data": map[string]any{"parameters": map[string]any{"runtime": "javascript", "version": "2",
				"code": "function evaluate(){ while(true){} }"}, "inputs": map[string]any{}, "outputs": "x"}})
		require.Equal(t, 422, r.status, string(r.body))

		// Python, the default, as the runtime binary runs it: the code sees
		// none of the runtime's environment (its OPENAI_API_KEY here) and
		// cannot reach the gateway it was invoked through.
		gw := strings.TrimPrefix(p.gateway, "http://")
		host, port, _ := strings.Cut(gw, ":")
		r = p.do(t, "POST", "/services/auto_custom_code_run/v0/invoke", keyA, nil, map[string]any{
			"data": map[string]any{"parameters": map[string]any{"version": "2", "code": `
import os, glob, socket
def evaluate(inputs, outputs, trace):
    seen = [k for k in os.environ]
    for p in glob.glob("/proc/*/environ"):
        try:
            with open(p, "rb") as f:
                if b"sk-test-env" in f.read():
                    seen.append(p)
        except OSError:
            pass
    try:
        socket.create_connection((inputs["host"], int(inputs["port"])), timeout=2).close()
        seen.append("gateway")
    except OSError:
        pass
    return {"seen": seen, "success": not seen}
`}, "inputs": map[string]any{"host": host, "port": port}, "outputs": "x"}})
		require.Equal(t, 200, r.status, string(r.body))
		assert.Equal(t, map[string]any{"seen": []any{}, "success": true}, r.json(t)["data"].(map[string]any)["outputs"])
	})

	t.Run("the llm handler runs one turn, tool loops refused by name", func(t *testing.T) {
		params := map[string]any{"llms": []any{map[string]any{"model": "gpt-4o-mini", "template_format": "curly"}},
			"messages": []any{map[string]any{"role": "user", "content": "Hi {{name}}"}}, "response": map[string]any{"format": "text"}}
		r := p.do(t, "POST", "/services/llm/v0/invoke", keyA, nil, map[string]any{
			"data": map[string]any{"parameters": params, "inputs": map[string]any{"name": "Ada"}}})
		require.Equal(t, 200, r.status, string(r.body))
		assert.Equal(t, "echo: Hi Ada", r.json(t)["data"].(map[string]any)["outputs"])
		params["tools"] = map[string]any{"internal": []any{"search"}}
		r = p.do(t, "POST", "/services/llm/v0/invoke", keyA, nil, map[string]any{
			"data": map[string]any{"parameters": params, "inputs": map[string]any{"name": "Ada"}}})
		require.Equal(t, 422, r.status, string(r.body))
		assert.Contains(t, string(r.body), "tools")
	})

	t.Run("health and an unknown handler", func(t *testing.T) {
		r := p.do(t, "GET", "/services/completion/v0/health", keyA, nil, nil)
		require.Equal(t, 200, r.status, string(r.body))
		r = p.do(t, "POST", "/services/nope/v0/invoke", keyA, nil, map[string]any{})
		require.Equal(t, 404, r.status, string(r.body))
	})

	t.Run("every catalog evaluator works with its defaults", func(t *testing.T) { everyCatalogEvaluatorWorksWithItsDefaults(t, p, keyA) })
}
