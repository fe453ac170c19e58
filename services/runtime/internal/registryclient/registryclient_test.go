package registryclient_test

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
	"github.com/assayhq/assay/services/runtime/internal/invoke"
	"github.com/assayhq/assay/services/runtime/internal/registryclient"
)

const token = "registryclient-test-internal-token"

// TestRevisionLookups runs the client against the real registry binary
// behind a proxy that counts the retrieves, so the cache's contract is
// checked where it matters: how often the registry is asked.
func TestRevisionLookups(t *testing.T) {
	reg := svctest.Start(t, svctest.Options{Pkg: "services/registry/cmd/registry", AddrVar: "REGISTRY_ADDR",
		Env: []string{"REGISTRY_TOKEN_FROM_RUNTIME=" + token, "REGISTRY_TOKEN_TO_TRACING=no-tracing-here-0123456789", "REGISTRY_POSTGRES_URL=" + pgtest.NewURL(t),
			"REGISTRY_LOG_LEVEL=warn", "REGISTRY_VAULT_KEY=MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=",
			"REGISTRY_NATS_URL=" + natstest.New(t).URL()}})
	target, err := url.Parse(reg.URL)
	require.NoError(t, err)
	proxy := &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) { pr.SetURL(target) }}
	var retrieves atomic.Int64
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		retrieves.Add(1)
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)

	projectA, projectB := uuid.New(), uuid.New()
	post := func(p uuid.UUID, path string, body any) map[string]any {
		raw, _ := json.Marshal(body)
		req, _ := http.NewRequest("POST", reg.URL+path, bytes.NewReader(raw))
		req.Header.Set("Content-Type", "application/json")
		scope.Set(req.Header, token, scope.Scope{ProjectID: p})
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		var out map[string]any
		require.NoError(t, json.NewDecoder(res.Body).Decode(&out))
		require.Equal(t, 200, res.StatusCode, "%v", out)
		return out
	}
	app := post(projectA, "/simple/applications/", map[string]any{"application": map[string]any{"slug": "capitals",
		"data": map[string]any{"uri": "svc:builtin:completion:v0", "parameters": map[string]any{"prompt": map[string]any{
			"messages": []any{map[string]any{"role": "user", "content": "{{country}}?"}}}}}}})["application"].(map[string]any)

	bySlug := invoke.Lookup{Family: "application", References: map[string]invoke.EntityRef{"application": {Slug: "capitals"}}, Resolve: true}
	a := scope.Scope{ProjectID: projectA}

	t.Run("a found revision is read with its references", func(t *testing.T) {
		c := registryclient.New(front.URL, token, 10*time.Second, 0)
		rev, err := c.Revision(t.Context(), a, bySlug)
		require.NoError(t, err)
		require.NotNil(t, rev)
		assert.Equal(t, app["revision_id"], rev.ID)
		assert.Equal(t, "svc:builtin:completion:v0", rev.Data.URI)
		assert.Contains(t, rev.Data.URL, "/services/completion/v0")
		assert.Equal(t, app["id"], rev.References["application"].ID)
		assert.Equal(t, app["revision_id"], rev.References["application_revision"].ID)
	})

	t.Run("another project's slug is no revision, never another's", func(t *testing.T) {
		c := registryclient.New(front.URL, token, 10*time.Second, time.Minute)
		rev, err := c.Revision(t.Context(), scope.Scope{ProjectID: projectB}, bySlug)
		require.NoError(t, err)
		assert.Nil(t, rev)
		rev, err = c.Revision(t.Context(), a, bySlug) // A's is not taken from B's miss, nor B's from A's hit
		require.NoError(t, err)
		require.NotNil(t, rev)
		rev, err = c.Revision(t.Context(), scope.Scope{ProjectID: projectB}, bySlug)
		require.NoError(t, err)
		assert.Nil(t, rev)
	})

	t.Run("within the ttl one call serves every lookup, concurrent ones included", func(t *testing.T) {
		c := registryclient.New(front.URL, token, 10*time.Second, time.Hour)
		before := retrieves.Load()
		var wg sync.WaitGroup
		for range 20 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rev, err := c.Revision(t.Context(), a, bySlug)
				assert.NoError(t, err)
				assert.NotNil(t, rev)
			}()
		}
		wg.Wait()
		assert.Equal(t, int64(1), retrieves.Load()-before)
		other := bySlug
		other.Resolve = false
		_, err := c.Revision(t.Context(), a, other)
		require.NoError(t, err)
		assert.Equal(t, int64(2), retrieves.Load()-before, "another lookup is another key")
	})

	t.Run("with no ttl every lookup asks", func(t *testing.T) {
		c := registryclient.New(front.URL, token, 10*time.Second, 0)
		before := retrieves.Load()
		for range 3 {
			_, err := c.Revision(t.Context(), a, bySlug)
			require.NoError(t, err)
		}
		assert.Equal(t, int64(3), retrieves.Load()-before)
	})

	t.Run("a reference the registry refuses is the caller's 422", func(t *testing.T) {
		c := registryclient.New(front.URL, token, 10*time.Second, time.Hour)
		_, err := c.Revision(t.Context(), a, invoke.Lookup{Family: "application",
			References: map[string]invoke.EntityRef{"application": {ID: "not-a-uuid"}}})
		assert.Equal(t, errs.Unprocessable, errs.KindOf(err), "%v", err)
	})

	t.Run("a registry that does not answer is a 503", func(t *testing.T) {
		dead := httptest.NewServer(http.NotFoundHandler())
		dead.Close()
		c := registryclient.New(dead.URL, token, time.Second, time.Hour)
		_, err := c.Revision(t.Context(), a, bySlug)
		assert.Equal(t, errs.Unavailable, errs.KindOf(err), "%v", err)
	})
}
