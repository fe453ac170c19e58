package httpapi_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/pkg/testutil/llmtest"
	"github.com/assayhq/assay/pkg/testutil/platformtest"
)

// recorder is a local OpenAI-compatible endpoint that keeps the headers of
// every request it gets, or answers each one with a 307 to redirect.
type recorder struct {
	srv      *httptest.Server
	mu       sync.Mutex
	seen     []http.Header
	redirect string
}

func newRecorder(t *testing.T) *recorder {
	r := &recorder{}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		_, _ = io.Copy(io.Discard, req.Body)
		r.mu.Lock()
		r.seen = append(r.seen, req.Header.Clone())
		to := r.redirect
		r.mu.Unlock()
		if to != "" {
			http.Redirect(w, req, to+req.URL.Path, http.StatusTemporaryRedirect)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"id":"c1","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"recorded"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *recorder) addr() string { return r.srv.Listener.Addr().String() }
func (r *recorder) port() string { _, p, _ := net.SplitHostPort(r.addr()); return p }

func (r *recorder) requests() []http.Header {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]http.Header(nil), r.seen...)
}

func (r *recorder) reset(redirect string) {
	r.mu.Lock()
	r.seen, r.redirect = nil, redirect
	r.mu.Unlock()
}

// customProvider stores a custom provider in the caller's project and
// returns its id.
func customProvider(t *testing.T, p *platform, key, slug, kind, url, secret string, extras map[string]any) string {
	t.Helper()
	prov := map[string]any{"url": url}
	if secret != "" {
		prov["key"] = secret
	}
	if extras != nil {
		prov["extras"] = extras
	}
	r := p.do(t, "POST", "/api/secrets/", key, nil, map[string]any{"header": map[string]any{"name": slug},
		"secret": map[string]any{"kind": "custom_provider", "data": map[string]any{"kind": kind, "provider_slug": slug,
			"provider": prov, "models": []any{map[string]any{"slug": "m"}}}}})
	require.Equal(t, 200, r.status, string(r.body))
	return r.json(t)["id"].(string)
}

func invokeModel(t *testing.T, p *platform, key, model string) answer {
	t.Helper()
	return p.do(t, "POST", "/services/completion/v0/invoke", key, nil, map[string]any{
		"data": map[string]any{"parameters": map[string]any{"prompt": map[string]any{
			"messages":   []any{map[string]any{"role": "user", "content": "Say hi to {{who}}."}},
			"llm_config": map[string]any{"model": model}}},
			"inputs": map[string]any{"who": "Ada"}}})
}

func statusMessage(t *testing.T, a answer) string {
	t.Helper()
	st, _ := a.json(t)["status"].(map[string]any)
	msg, _ := st["message"].(string)
	return msg
}

// loopbackName is a host name of this machine that resolves to a loopback
// or private address (its own host name does, in every container and VM
// the tests run in), or "" when there is none.
func loopbackName(t *testing.T) string {
	h, err := os.Hostname()
	if err != nil || h == "" {
		return ""
	}
	addrs, err := net.LookupHost(h)
	if err != nil || len(addrs) == 0 {
		return ""
	}
	for _, a := range addrs {
		ip, err := netip.ParseAddr(a)
		if err != nil || !(ip.IsLoopback() || ip.IsPrivate()) {
			return ""
		}
	}
	return h
}

// TestLLMEgress replays the attacks of an editor on the runtime's LLM
// calls: custom base URLs at loopback, private and link-local addresses,
// a redirect inside, provider keys and extra headers following a URL
// change or a redirect, a family-kind custom provider borrowing the
// project's key, and the upstream's error text echoed back. The model
// server and one recorder are on the egress allow-list (as an operator's
// private model server would be); the other recorder is not.
func TestLLMEgress(t *testing.T) {
	allowed, outside := newRecorder(t), newRecorder(t)
	pt := platformtest.Start(t, platformtest.Options{EgressAllow: []string{allowed.addr()},
		// Every invocation reads the vault again, so a change shows at once;
		// a short provider time-out bounds what a refused destination costs
		// a runtime that would try it anyway.
		Runtime: []string{"RUNTIME_SECRETS_TTL=1ns", "RUNTIME_LLM_TIMEOUT=3s"}})
	p := &platform{Platform: pt, gateway: pt.URL, llm: pt.LLM}
	key := p.account(t, "egress@example.com")

	t.Run("custom base URLs inside are refused with a 422 naming the URL", func(t *testing.T) {
		type target struct{ url, host string }
		targets := []target{
			{"http://127.0.0.1:" + outside.port() + "/v1", "127.0.0.1"},
			{"http://[::1]:" + outside.port() + "/v1", "::1"},
			{"http://[::ffff:127.0.0.1]:" + outside.port() + "/v1", "127.0.0.1"},
			{"http://localhost:" + outside.port() + "/v1", "localhost"},
			{"http://169.254.169.254/v1", "169.254.169.254"},
			{"http://10.20.30.40:8000/v1", "10.20.30.40"},
			{"https://127.0.0.1:" + outside.port() + "/v1", "127.0.0.1"},
		}
		if name := loopbackName(t); name != "" {
			// Resolved at dial time: only the address tells.
			targets = append(targets, target{"https://" + name + ":" + outside.port() + "/v1", name})
		}
		for i, tc := range targets {
			slug := fmt.Sprintf("inside-%d", i)
			customProvider(t, p, key, slug, "custom", tc.url, "ck-inside", map[string]any{"X-Tenant": "t"})
			r := invokeModel(t, p, key, slug+"/m")
			assert.Equal(t, 422, r.status, "%s: %s", tc.url, r.body)
			assert.Contains(t, statusMessage(t, r), slug, "%s: the answer names the provider", tc.url)
			assert.Contains(t, statusMessage(t, r), tc.host, "%s: the answer names the URL", tc.url)
		}
		assert.Empty(t, outside.requests(), "nothing reached the server inside")
	})

	t.Run("the allow-list admits the test model server", func(t *testing.T) {
		customProvider(t, p, key, "local-model", "custom", p.LLM.URL, "ck-local", map[string]any{"X-Tenant": "t"})
		r := invokeModel(t, p, key, "local-model/m")
		require.Equal(t, 200, r.status, string(r.body))
		last, ok := p.LLM.LastRequest()
		require.True(t, ok)
		assert.Equal(t, "Bearer ck-local", last.Header.Get("Authorization"))
		assert.Equal(t, "t", last.Header.Get("X-Tenant"))
	})

	t.Run("a redirect from an allowed host to loopback is refused", func(t *testing.T) {
		allowed.reset("http://" + outside.addr())
		outside.reset("")
		defer allowed.reset("")
		customProvider(t, p, key, "bouncer", "custom", "http://"+allowed.addr()+"/v1", "ck-bounce", map[string]any{"X-Tenant": "t"})
		r := invokeModel(t, p, key, "bouncer/m")
		assert.Equal(t, 422, r.status, string(r.body))
		assert.Contains(t, statusMessage(t, r), "127.0.0.1")
		assert.Len(t, allowed.requests(), 1)
		assert.Empty(t, outside.requests(), "the redirect was not followed inside")
	})

	t.Run("a redirect to another allowed origin carries none of the caller's headers", func(t *testing.T) {
		// The provider client refuses to follow a redirect off its base
		// URL's origin, and the egress policy would strip the headers if it
		// did (egress.TestRedirectDropsHeadersAcrossOrigins): either way no
		// key nor extra header reaches the other origin.
		allowed.reset(p.LLM.Root)
		defer allowed.reset("")
		customProvider(t, p, key, "hop", "custom", "http://"+allowed.addr()+"/v1", "ck-hop", map[string]any{"X-Tenant": "hop-secret"})
		before := len(p.LLM.Requests())
		r := invokeModel(t, p, key, "hop/m")
		assert.NotEqual(t, 200, r.status, string(r.body))
		for _, req := range p.LLM.Requests()[before:] {
			assert.Empty(t, req.Header.Get("Authorization"), "the key stayed with its origin")
			assert.Empty(t, req.Header.Get("X-Tenant"), "the extra header stayed with its origin")
		}
	})

	t.Run("the upstream's error text is summarised, not echoed", func(t *testing.T) {
		customProvider(t, p, key, "oracle", "custom", p.LLM.URL, "", nil)
		p.LLM.FailNextWith(llmtest.Error{Status: 404, Message: "pg_hba.conf rejects host on port 5432 (oracle text)"}, 1)
		r := invokeModel(t, p, key, "oracle/m")
		assert.Equal(t, 400, r.status, string(r.body))
		assert.NotContains(t, string(r.body), "oracle text")
		assert.NotContains(t, string(r.body), "pg_hba")
		assert.Contains(t, statusMessage(t, r), "404")
	})

	t.Run("a URL change without the key drops the stored key and extra headers", func(t *testing.T) {
		id := customProvider(t, p, key, "moving", "custom", p.LLM.URL, "ck-moving", map[string]any{"X-Tenant-Token": "tt-moving"})
		r := invokeModel(t, p, key, "moving/m")
		require.Equal(t, 200, r.status, string(r.body))
		last, _ := p.LLM.LastRequest()
		require.Equal(t, "Bearer ck-moving", last.Header.Get("Authorization"), "the key goes where it was stored for")

		// What a client editing the provider sends: the shown fields, a new
		// URL, no key (it is never shown, so it cannot be sent back).
		r = p.do(t, "PUT", "/api/secrets/"+id, key, nil, map[string]any{"header": map[string]any{"name": "moving"},
			"secret": map[string]any{"kind": "custom_provider", "data": map[string]any{"kind": "custom", "provider_slug": "moving",
				"provider": map[string]any{"url": "http://" + allowed.addr() + "/v1"}, "models": []any{map[string]any{"slug": "m"}}}}})
		require.Equal(t, 200, r.status, string(r.body))
		allowed.reset("")
		r = invokeModel(t, p, key, "moving/m")
		require.Equal(t, 200, r.status, string(r.body))
		seen := allowed.requests()
		require.Len(t, seen, 1)
		assert.Empty(t, seen[0].Get("Authorization"), "the stored key did not follow the URL")
		assert.Empty(t, seen[0].Get("X-Tenant-Token"), "the stored extra header did not follow the URL")

		// Given again with the new URL, the key goes there.
		r = p.do(t, "PUT", "/api/secrets/"+id, key, nil, map[string]any{"secret": map[string]any{"kind": "custom_provider",
			"data": map[string]any{"kind": "custom", "provider_slug": "moving", "models": []any{map[string]any{"slug": "m"}},
				"provider": map[string]any{"url": "http://" + allowed.addr() + "/v1", "key": "ck-new"}}}})
		require.Equal(t, 200, r.status, string(r.body))
		allowed.reset("")
		require.Equal(t, 200, invokeModel(t, p, key, "moving/m").status)
		require.Len(t, allowed.requests(), 1)
		assert.Equal(t, "Bearer ck-new", allowed.requests()[0].Get("Authorization"))
	})

	t.Run("a family-kind custom provider without a key borrows none", func(t *testing.T) {
		other := p.account(t, "borrow@example.com")
		r := p.do(t, "POST", "/api/secrets/", other, nil, map[string]any{"header": map[string]any{"name": "OpenAI"},
			"secret": map[string]any{"kind": "provider_key", "data": map[string]any{"kind": "openai", "provider": map[string]any{"key": "sk-project"}}}})
		require.Equal(t, 200, r.status, string(r.body))
		customProvider(t, p, other, "borrow", "openai", "http://"+allowed.addr()+"/v1", "", nil)
		allowed.reset("")
		r = invokeModel(t, p, other, "borrow/gpt-4o")
		require.Equal(t, 200, r.status, string(r.body))
		seen := allowed.requests()
		require.Len(t, seen, 1)
		assert.Empty(t, seen[0].Get("Authorization"), "neither the project's key nor the runtime's environment key")
		raw, _ := json.Marshal(seen[0])
		assert.NotContains(t, string(raw), "sk-project")
		assert.NotContains(t, string(raw), "sk-test-env")
	})
}
