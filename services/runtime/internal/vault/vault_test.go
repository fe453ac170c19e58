package vault_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/pkg/testutil/natstest"
	"github.com/assayhq/assay/pkg/testutil/pgtest"
	"github.com/assayhq/assay/pkg/testutil/svctest"
	"github.com/assayhq/assay/services/runtime/internal/llm"
	"github.com/assayhq/assay/services/runtime/internal/registryclient"
	"github.com/assayhq/assay/services/runtime/internal/vault"
)

const token = "vault-test-internal-token"

// registry is the real registry binary on a fresh database, behind a
// pass-through proxy that counts the reads of the vault.
type registry struct {
	svc   *svctest.Service
	url   string // the proxy's
	reads atomic.Int64
}

func startRegistry(t testing.TB) *registry {
	t.Helper()
	r := &registry{svc: svctest.Start(t, svctest.Options{
		Pkg:     "services/registry/cmd/registry",
		AddrVar: "REGISTRY_ADDR",
		Env: []string{"REGISTRY_TOKEN_FROM_RUNTIME=" + token, "REGISTRY_TOKEN_TO_TRACING=no-tracing-here-0123456789", "REGISTRY_POSTGRES_URL=" + pgtest.NewURL(t),
			"REGISTRY_LOG_LEVEL=warn", "REGISTRY_VAULT_KEY=dmF1bHQtdGVzdC1rZXktdGhpcnR5LXR3by1ieXRlcyE=",
			"REGISTRY_NATS_URL=" + natstest.New(t).URL()},
	})}
	target, err := url.Parse(r.svc.URL)
	require.NoError(t, err)
	proxy := &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) { pr.SetURL(target) }}
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path == "/internal/secrets" {
			r.reads.Add(1)
		}
		proxy.ServeHTTP(w, req)
	}))
	t.Cleanup(front.Close)
	r.url = front.URL
	return r
}

// call sends a vault request to the registry directly, in project p.
func (r *registry) call(t testing.TB, p uuid.UUID, method, path string, body any) map[string]any {
	t.Helper()
	raw, err := json.Marshal(body)
	require.NoError(t, err)
	req, err := http.NewRequest(method, r.svc.URL+path, bytes.NewReader(raw))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	scope.Set(req.Header, token, scope.Scope{ProjectID: p})
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	var out map[string]any
	require.NoError(t, json.NewDecoder(res.Body).Decode(&out))
	require.Equal(t, http.StatusOK, res.StatusCode, "%v", out)
	return out
}

func providerKey(key string) map[string]any {
	return map[string]any{"secret": map[string]any{"kind": "provider_key",
		"data": map[string]any{"kind": "openai", "provider": map[string]any{"key": key}}}}
}

func TestSecretsCachedPerProject(t *testing.T) {
	reg := startRegistry(t)
	a, b := scope.Scope{ProjectID: uuid.New()}, scope.Scope{ProjectID: uuid.New()}
	key := reg.call(t, a.ProjectID, "POST", "/api/secrets", providerKey("sk-1"))
	reg.call(t, a.ProjectID, "POST", "/api/secrets", map[string]any{"secret": map[string]any{"kind": "custom_provider",
		"data": map[string]any{"kind": "custom", "provider_slug": "ollama",
			"provider": map[string]any{"url": "http://127.0.0.1:11434/v1", "extras": map[string]any{"X-Team": "t1"}},
			"models":   []any{map[string]any{"slug": "llama3"}, map[string]any{"slug": "qwen"}}}}})
	reg.call(t, b.ProjectID, "POST", "/api/secrets", providerKey("sk-b"))

	now := time.Unix(1_800_000_000, 0)
	c := vault.New(registryclient.New(reg.url, token, 10*time.Second, 0), time.Minute)
	c.SetClock(func() time.Time { return now })
	ctx := t.Context()

	got, err := c.Secrets(ctx, a)
	require.NoError(t, err)
	assert.Equal(t, llm.Secrets{
		Keys: []llm.ProviderKey{{Slug: "openai", Kind: "openai", Key: "sk-1"}},
		Custom: []llm.CustomProvider{{Slug: "ollama", Kind: "custom", URL: "http://127.0.0.1:11434/v1",
			Headers: map[string]string{"X-Team": "t1"}, Models: []string{"llama3", "qwen"}}},
	}, got)
	gb, err := c.Secrets(ctx, b)
	require.NoError(t, err)
	assert.Equal(t, []llm.ProviderKey{{Slug: "openai", Kind: "openai", Key: "sk-b"}}, gb.Keys, "each project its own")
	assert.Equal(t, int64(2), reg.reads.Load())

	// A new key is not seen within the ttl...
	reg.call(t, a.ProjectID, "PUT", "/api/secrets/"+key["id"].(string), providerKey("sk-2"))
	got, err = c.Secrets(ctx, a)
	require.NoError(t, err)
	assert.Equal(t, "sk-1", got.Keys[0].Key)
	assert.Equal(t, int64(2), reg.reads.Load(), "served from the cache")
	// ...but at once after Forget (a provider refused the old key)...
	c.Forget(a.ProjectID)
	got, err = c.Secrets(ctx, a)
	require.NoError(t, err)
	assert.Equal(t, "sk-2", got.Keys[0].Key)
	// ...and after the ttl.
	reg.call(t, a.ProjectID, "PUT", "/api/secrets/"+key["id"].(string), providerKey("sk-3"))
	now = now.Add(59 * time.Second)
	got, _ = c.Secrets(ctx, a)
	assert.Equal(t, "sk-2", got.Keys[0].Key)
	now = now.Add(2 * time.Second)
	got, err = c.Secrets(ctx, a)
	require.NoError(t, err)
	assert.Equal(t, "sk-3", got.Keys[0].Key)

	// Concurrent misses share one read.
	c.Forget(a.ProjectID)
	before := reg.reads.Load()
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			s, err := c.Secrets(ctx, a)
			assert.NoError(t, err)
			assert.Equal(t, "sk-3", s.Keys[0].Key)
		})
	}
	wg.Wait()
	// One read, or two when a caller missed the cache just as the first
	// read finished; twenty without the sharing.
	assert.LessOrEqual(t, reg.reads.Load()-before, int64(2))

	// Registry down: what is cached is still served, a miss is a 503.
	reg.svc.Kill()
	got, err = c.Secrets(ctx, a)
	require.NoError(t, err)
	assert.Equal(t, "sk-3", got.Keys[0].Key)
	c.Forget(a.ProjectID)
	_, err = c.Secrets(ctx, a)
	require.Error(t, err)
	assert.Equal(t, errs.Unavailable, errs.KindOf(err))
	assert.NotContains(t, errs.From(err).Msg, "sk-")
}

// TestRegistryRefusalIsInternal: a wrong token is a configuration error,
// not the caller's, and is not cached.
func TestRegistryRefusalIsInternal(t *testing.T) {
	reg := startRegistry(t)
	c := vault.New(registryclient.New(reg.url, "wrong-token", 10*time.Second, 0), 0)
	_, err := c.Secrets(t.Context(), scope.Scope{ProjectID: uuid.New()})
	require.Error(t, err)
	assert.Equal(t, errs.Internal, errs.KindOf(err))
	_, err = c.Secrets(t.Context(), scope.Scope{ProjectID: uuid.New()})
	require.Error(t, err)
	assert.Equal(t, int64(2), reg.reads.Load())
}

// BenchmarkSecretsCached is the cost an invocation pays for its project's
// secrets while they are cached: the hot path.
func BenchmarkSecretsCached(b *testing.B) {
	reg := startRegistry(b)
	sc := scope.Scope{ProjectID: uuid.New()}
	reg.call(b, sc.ProjectID, "POST", "/api/secrets", providerKey("sk-1"))
	c := vault.New(registryclient.New(reg.url, token, 10*time.Second, 0), time.Hour)
	if _, err := c.Secrets(b.Context(), sc); err != nil {
		b.Fatal(err)
	}
	ctx := b.Context()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := c.Secrets(ctx, sc); err != nil {
				b.Error(err)
				return
			}
		}
	})
	if n := reg.reads.Load(); n != 1 {
		b.Fatalf("%d reads of the registry, want 1", n)
	}
}
