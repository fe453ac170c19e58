package httpapi_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/pkg/vaultwire"
)

const (
	secretKey   = "sk-proj-THE-SECRET-VALUE-0123456789"
	customKey   = "custom-SECRET-KEY-42"
	customExtra = "Bearer EXTRA-SECRET"
)

var openaiSecret = map[string]any{"header": map[string]any{"name": "OpenAI", "description": "team key"},
	"secret": map[string]any{"kind": "provider_key", "data": map[string]any{"kind": "openai", "provider": map[string]any{"key": secretKey}}}}

var ollamaSecret = map[string]any{"header": map[string]any{"name": "My Ollama"},
	"secret": map[string]any{"kind": "custom_provider", "data": map[string]any{"kind": "custom",
		"provider":      map[string]any{"url": "http://127.0.0.1:11434/v1", "key": customKey, "extras": map[string]any{"Authorization": customExtra}},
		"models":        []any{map[string]any{"slug": "llama3"}},
		"provider_slug": "my-ollama"}}}

func noSecretIn(t *testing.T, body []byte) {
	t.Helper()
	for _, v := range []string{secretKey, customKey, customExtra, "EXTRA-SECRET", "\"key\""} {
		assert.NotContains(t, string(body), v, "a key came back")
	}
}

func TestSecretsLifecycle(t *testing.T) {
	s := newServer(t)
	r := s.do(t, "POST", "/api/secrets/", openaiSecret)
	require.Equal(t, http.StatusOK, r.status, string(r.body))
	noSecretIn(t, r.body)
	k := r.json(t)
	assert.Equal(t, "provider_key", k["kind"])
	assert.Equal(t, "openai", k["slug"])
	assert.Equal(t, map[string]any{"name": "OpenAI", "description": "team key"}, k["header"])
	assert.Equal(t, map[string]any{"kind": "openai", "provider": map[string]any{}}, k["data"])
	assert.NotEmpty(t, k["created_at"])
	assert.Contains(t, k, "updated_at")
	id := str(k["id"])

	r = s.do(t, "POST", "/api/secrets", ollamaSecret)
	require.Equal(t, http.StatusOK, r.status, string(r.body))
	noSecretIn(t, r.body)
	c := r.json(t)
	assert.Equal(t, "my-ollama", c["slug"])
	assert.Equal(t, map[string]any{"kind": "custom", "provider": map[string]any{"url": "http://127.0.0.1:11434/v1"},
		"models": []any{map[string]any{"slug": "llama3"}}, "provider_slug": "my-ollama"}, c["data"])

	// The list is a bare list, oldest first, without keys.
	r = s.do(t, "GET", "/api/secrets/", nil)
	require.Equal(t, http.StatusOK, r.status)
	noSecretIn(t, r.body)
	var all []map[string]any
	require.NoError(t, json.Unmarshal(r.body, &all))
	require.Len(t, all, 2)
	assert.Equal(t, id, all[0]["id"])

	for _, ref := range []string{id, "openai"} {
		r = s.do(t, "GET", "/api/secrets/"+ref, nil)
		require.Equal(t, http.StatusOK, r.status, ref)
		noSecretIn(t, r.body)
		assert.Equal(t, id, r.json(t)["id"])
	}
	assert.Equal(t, http.StatusNotFound, s.do(t, "GET", "/api/secrets/nothing", nil).status)
	assert.Equal(t, http.StatusNotFound, s.do(t, "GET", "/api/secrets/"+uuid.NewString(), nil).status)

	// Same slug again: 409.
	r = s.do(t, "POST", "/api/secrets", openaiSecret)
	require.Equal(t, http.StatusConflict, r.status, string(r.body))
	assert.Equal(t, "openai", obj(t, r.json(t), "detail", "conflict")["slug"])

	// PUT without a key keeps it (seen through the internal route).
	r = s.do(t, "PUT", "/api/secrets/"+id, map[string]any{"header": map[string]any{"name": "Renamed"},
		"secret": map[string]any{"kind": "provider_key", "data": map[string]any{"kind": "openai", "provider": map[string]any{}}}})
	require.Equal(t, http.StatusOK, r.status, string(r.body))
	noSecretIn(t, r.body)
	assert.Equal(t, "Renamed", obj(t, r.json(t), "header")["name"])
	assert.NotNil(t, r.json(t)["updated_at"])
	v := s.vault(t)
	require.Len(t, v.ProviderKeys, 1)
	assert.Equal(t, vaultwire.ProviderKey{Slug: "openai", Kind: "openai", Key: secretKey}, v.ProviderKeys[0])
	require.Len(t, v.CustomProviders, 1)
	assert.Equal(t, vaultwire.CustomProvider{Slug: "my-ollama", Kind: "custom", URL: "http://127.0.0.1:11434/v1", Key: customKey,
		Headers: map[string]string{"Authorization": customExtra}, Models: []string{"llama3"}}, v.CustomProviders[0])

	// A new key replaces it.
	r = s.do(t, "PUT", "/api/secrets/"+id, map[string]any{
		"secret": map[string]any{"kind": "provider_key", "data": map[string]any{"kind": "openai", "provider": map[string]any{"key": "sk-rotated"}}}})
	require.Equal(t, http.StatusOK, r.status, string(r.body))
	assert.Equal(t, "sk-rotated", s.vault(t).ProviderKeys[0].Key)

	// PUT takes an id only; DELETE answers 204, then 404.
	assert.Equal(t, http.StatusUnprocessableEntity, s.do(t, "PUT", "/api/secrets/openai", map[string]any{}).status)
	assert.Equal(t, http.StatusUnprocessableEntity, s.do(t, "DELETE", "/api/secrets/openai", nil).status)
	r = s.do(t, "DELETE", "/api/secrets/"+id, nil)
	assert.Equal(t, http.StatusNoContent, r.status)
	assert.Empty(t, r.body)
	assert.Equal(t, http.StatusNotFound, s.do(t, "DELETE", "/api/secrets/"+id, nil).status)
	assert.Equal(t, http.StatusNotFound, s.do(t, "GET", "/api/secrets/openai", nil).status)
	assert.Empty(t, s.vault(t).ProviderKeys)
}

func TestSecretsProjectIsolation(t *testing.T) {
	a := newServer(t)
	b := a.as(uuid.New())
	r := a.do(t, "POST", "/api/secrets", openaiSecret)
	require.Equal(t, http.StatusOK, r.status)
	id := str(r.json(t)["id"])

	for _, ref := range []string{id, "openai"} {
		assert.Equal(t, http.StatusNotFound, b.do(t, "GET", "/api/secrets/"+ref, nil).status, ref)
	}
	assert.Equal(t, http.StatusNotFound, b.do(t, "PUT", "/api/secrets/"+id, map[string]any{"header": map[string]any{"name": "x"}}).status)
	assert.Equal(t, http.StatusNotFound, b.do(t, "DELETE", "/api/secrets/"+id, nil).status)
	r = b.do(t, "GET", "/api/secrets", nil)
	require.Equal(t, http.StatusOK, r.status)
	assert.JSONEq(t, `[]`, string(r.body))
	v := b.vault(t)
	assert.Empty(t, v.ProviderKeys)
	assert.Empty(t, v.CustomProviders)

	// B may use the same slug; A still has its own key.
	require.Equal(t, http.StatusOK, b.do(t, "POST", "/api/secrets", map[string]any{"secret": map[string]any{"kind": "provider_key",
		"data": map[string]any{"kind": "openai", "provider": map[string]any{"key": "sk-b"}}}}).status)
	assert.Equal(t, secretKey, a.vault(t).ProviderKeys[0].Key)
	assert.Equal(t, "sk-b", b.vault(t).ProviderKeys[0].Key)
	r = a.do(t, "GET", "/api/secrets/openai", nil)
	require.Equal(t, http.StatusOK, r.status)
	assert.Equal(t, id, r.json(t)["id"])
}

func TestSecretsRefusals(t *testing.T) {
	s := newServer(t)
	for _, tc := range []struct {
		name   string
		body   any
		status int
		loc    []any
	}{
		{"malformed", `{"secret":`, http.StatusBadRequest, nil},
		{"no secret", map[string]any{"header": map[string]any{"name": "x"}}, 422, []any{"body", "secret"}},
		{"unknown kind", map[string]any{"secret": map[string]any{"kind": "password", "data": map[string]any{}}}, 422, []any{"body", "secret", "kind"}},
		{"no key", map[string]any{"secret": map[string]any{"kind": "provider_key", "data": map[string]any{"kind": "openai", "provider": map[string]any{}}}}, 422,
			[]any{"body", "secret", "data", "provider", "key"}},
		{"bad url", map[string]any{"secret": map[string]any{"kind": "custom_provider", "data": map[string]any{"kind": "custom", "provider": map[string]any{"url": "file:///etc/passwd"}}}}, 422,
			[]any{"body", "secret", "data", "provider", "url"}},
		{"long name", map[string]any{"header": map[string]any{"name": strings.Repeat("n", 300)}, "secret": openaiSecret["secret"]}, 422, []any{"body", "header", "name"}},
		{"huge body", map[string]any{"header": map[string]any{"description": strings.Repeat("d", 70000)}}, http.StatusRequestEntityTooLarge, nil},
	} {
		r := s.do(t, "POST", "/api/secrets", tc.body)
		require.Equal(t, tc.status, r.status, "%s: %s", tc.name, r.body)
		if tc.loc != nil {
			d := r.json(t)["detail"].([]any)[0].(map[string]any)
			assert.Equal(t, tc.loc, d["loc"], tc.name)
		}
	}
	assert.JSONEq(t, `[]`, string(s.do(t, "GET", "/api/secrets", nil).body), "nothing was stored")

	// The per-project limit.
	for i := range testMaxSecrets {
		r := s.do(t, "POST", "/api/secrets", map[string]any{"header": map[string]any{"slug": "k" + string(rune('a'+i))}, "secret": openaiSecret["secret"]})
		require.Equal(t, http.StatusOK, r.status, string(r.body))
	}
	r := s.do(t, "POST", "/api/secrets", map[string]any{"header": map[string]any{"slug": "one-more"}, "secret": openaiSecret["secret"]})
	assert.Equal(t, http.StatusConflict, r.status, string(r.body))
}

// TestVaultInternalRoute: the read needs the runtime's own token (the
// gateway's is refused as unknown) and a project, and refuses what the
// gateway forwarded.
func TestVaultInternalRoute(t *testing.T) {
	s := newServer(t)
	require.Equal(t, http.StatusOK, s.do(t, "POST", "/api/secrets", openaiSecret).status)

	get := func(h http.Header) int {
		req, err := http.NewRequest("GET", s.url+vaultwire.Path, nil)
		require.NoError(t, err)
		for k, v := range h {
			req.Header[k] = v
		}
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		res.Body.Close()
		return res.StatusCode
	}
	h := http.Header{}
	assert.Equal(t, http.StatusUnauthorized, get(h), "no token")
	scope.Set(h, "wrong", scope.Scope{ProjectID: s.project})
	assert.Equal(t, http.StatusUnauthorized, get(h), "wrong token")
	h = http.Header{}
	scope.Set(h, runtimeToken, scope.Scope{})
	assert.Equal(t, http.StatusUnauthorized, get(h), "no project")
	h = http.Header{}
	scope.Set(h, token, scope.Scope{ProjectID: s.project})
	assert.Equal(t, http.StatusNotFound, get(h), "the gateway's token")
	h = http.Header{}
	scope.Set(h, runtimeToken, scope.Scope{ProjectID: s.project})
	assert.Equal(t, http.StatusOK, get(h))
	h.Set("X-Forwarded-For", "10.0.0.7")
	assert.Equal(t, http.StatusOK, get(h), "a sidecar proxy's mark")
	h.Set("X-Forwarded-Host", "assay.example.com")
	assert.Equal(t, http.StatusNotFound, get(h), "forwarded by the gateway")
}

// vault reads the internal route as the runtime does, with its token.
func (s *server) vault(t *testing.T) vaultwire.Secrets {
	t.Helper()
	req, err := http.NewRequest("GET", s.url+vaultwire.Path, nil)
	require.NoError(t, err)
	scope.Set(req.Header, runtimeToken, scope.Scope{ProjectID: s.project, UserID: s.user})
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, res.StatusCode, string(body))
	assert.Equal(t, "no-store", res.Header.Get("Cache-Control"))
	var v vaultwire.Secrets
	require.NoError(t, json.Unmarshal(body, &v))
	return v
}
