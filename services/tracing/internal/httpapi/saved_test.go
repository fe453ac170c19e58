package httpapi_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/pkg/testutil/natstest"
	"github.com/assayhq/assay/pkg/testutil/pgtest"
	"github.com/assayhq/assay/pkg/testutil/svctest"
	"github.com/assayhq/assay/services/tracing/internal/annotate"
	"github.com/assayhq/assay/services/tracing/internal/registryclient"
)

// startRegistry runs the real registry binary on a fresh database and
// points the stack's registry client at it. The test calls the registry as
// the gateway (token), the stack as tracing (its own pair's token); the
// in-process tracing admits one token, so the registry calls it with that.
func startRegistry(t testing.TB, s *stack) string {
	t.Helper()
	const fromTracing = "test-tracing-to-registry-token"
	reg := svctest.Start(t, svctest.Options{
		Pkg:     "services/registry/cmd/registry",
		AddrVar: "REGISTRY_ADDR",
		Env: []string{
			"REGISTRY_TOKEN_FROM_GATEWAY=" + token,
			"REGISTRY_TOKEN_FROM_TRACING=" + fromTracing,
			"REGISTRY_TOKEN_TO_TRACING=" + token,
			"REGISTRY_POSTGRES_URL=" + pgtest.NewURL(t),
			"REGISTRY_TRACING_URL=" + s.url,
			"REGISTRY_LOG_LEVEL=warn",
			"REGISTRY_NATS_URL=" + natstest.New(t).URL(),
			"REGISTRY_VAULT_KEY=YXNzYXktdGVzdC12YXVsdC1rZXktMzItYnl0ZXMhISE=", // base64 of a 32-byte test key
		},
	})
	client := registryclient.New(reg.URL, fromTracing, 10*time.Second)
	s.handler.SavedQueries = client
	s.handler.Workflows = &annotate.Resolver{Registry: client, Provider: "svc"}
	return reg.URL
}

// registryPost calls the registry as the gateway would, in the stack's project.
func (s *stack) registryPost(t *testing.T, base, path string, body any) map[string]any {
	t.Helper()
	b, err := json.Marshal(body)
	require.NoError(t, err)
	req, err := http.NewRequest("POST", base+path, bytes.NewReader(b))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	scope.Set(req.Header, token, scope.Scope{ProjectID: s.project})
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	out, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	require.Equal(t, 200, res.StatusCode, string(out))
	var m map[string]any
	require.NoError(t, json.Unmarshal(out, &m))
	return m
}

// saveQuery creates a simple query in the registry; it returns its id.
func (s *stack) saveQuery(t *testing.T, reg, slug string, data map[string]any) string {
	t.Helper()
	m := s.registryPost(t, reg, "/simple/queries/", map[string]any{"query": map[string]any{"slug": slug, "data": data}})
	return m["query"].(map[string]any)["id"].(string)
}

func TestSavedQueryRefs(t *testing.T) {
	s := newStack(t)
	reg := startRegistry(t, s)
	seed(t, s)

	onlyA := map[string]any{"conditions": []any{map[string]any{"field": "span_name", "value": "llm"}}}
	traceQ := s.saveQuery(t, reg, "llm-traces", map[string]any{"formatting": map[string]any{"focus": "trace"}, "filtering": onlyA})
	spanQ := s.saveQuery(t, reg, "llm-spans", map[string]any{"formatting": map[string]any{"focus": "span"}, "filtering": onlyA,
		"windowing": map[string]any{"limit": 5}})
	s.saveQuery(t, reg, "no-focus", map[string]any{"filtering": map[string]any{"conditions": []any{
		map[string]any{"field": "trace_type", "value": "annotation"}}}})

	t.Run("trace ref runs the stored filter", func(t *testing.T) {
		// The stored filter wins over the request's: only limit and next may change.
		r := s.doJSON(t, "POST", "/api/traces/query", map[string]any{"query_ref": map[string]any{"id": traceQ},
			"filtering": map[string]any{"conditions": []any{map[string]any{"field": "trace_id", "value": tidB}}}})
		require.Equal(t, 200, r.status, string(r.body))
		body := r.json(t)
		require.Equal(t, 1.0, body["count"])
		assert.Equal(t, tidA, body["traces"].([]any)[0].(map[string]any)["trace_id"])
	})
	t.Run("span ref by slug, request limit overrides", func(t *testing.T) {
		r := s.doJSON(t, "POST", "/api/spans/query", map[string]any{"query_ref": map[string]any{"slug": "llm-spans"}, "windowing": map[string]any{"limit": 1}})
		require.Equal(t, 200, r.status, string(r.body))
		body := r.json(t)
		require.Equal(t, 1.0, body["count"])
		assert.Equal(t, "llm", body["spans"].([]any)[0].(map[string]any)["span_name"])
	})
	t.Run("stored focus that contradicts the endpoint is 409", func(t *testing.T) {
		r := s.doJSON(t, "POST", "/api/spans/query", map[string]any{"query_ref": map[string]any{"id": traceQ}})
		assert.Equal(t, http.StatusConflict, r.status, string(r.body))
		r = s.doJSON(t, "POST", "/api/traces/query", map[string]any{"query_ref": map[string]any{"id": spanQ}})
		assert.Equal(t, http.StatusConflict, r.status, string(r.body))
	})
	t.Run("no stored focus takes the endpoint's", func(t *testing.T) {
		r := s.doJSON(t, "POST", "/api/spans/query", map[string]any{"query_variant_ref": nil, "query_ref": map[string]any{"slug": "no-focus"}})
		require.Equal(t, 200, r.status, string(r.body))
		assert.Equal(t, 3.0, r.json(t)["count"], "the three spans of the annotation trace")
		r = s.doJSON(t, "POST", "/api/spans/query", map[string]any{"query_ref": map[string]any{"slug": "no-focus"}, "windowing": map[string]any{"limit": 2}})
		require.Equal(t, 200, r.status, string(r.body))
		assert.Equal(t, 2.0, r.json(t)["count"], "the request's limit applies to a saved query")
	})
	t.Run("an unresolvable ref is the empty envelope", func(t *testing.T) {
		r := s.doJSON(t, "POST", "/api/traces/query", map[string]any{"query_ref": map[string]any{"slug": "nope"}})
		require.Equal(t, 200, r.status, string(r.body))
		assert.Equal(t, map[string]any{"count": 0.0}, r.json(t))
	})
	t.Run("a malformed ref is 400", func(t *testing.T) {
		r := s.doJSON(t, "POST", "/api/traces/query", map[string]any{"query_ref": "llm-traces"})
		assert.Equal(t, 400, r.status, string(r.body))
	})
	t.Run("a ref the registry refuses is 422 naming the field", func(t *testing.T) {
		// Found by FuzzQueryHTTP: the registry's 422 came back as a 503.
		r := s.doJSON(t, "POST", "/api/spans/query", map[string]any{"query_ref": map[string]any{"id": "0"}})
		assert.Equal(t, http.StatusUnprocessableEntity, r.status, string(r.body))
		assert.Contains(t, string(r.body), `["body","query_ref","id"]`)
	})
}

// TestRegistryRunsSavedQueriesHere is the other direction: the registry's
// query retrieve with include_trace_ids and include_traces calls this
// service (its REGISTRY_TRACING_URL is the stack) and answers what was
// ingested.
func TestRegistryRunsSavedQueriesHere(t *testing.T) {
	s := newStack(t)
	reg := startRegistry(t, s)
	seed(t, s)
	s.saveQuery(t, reg, "llm-only", map[string]any{"filtering": map[string]any{"conditions": []any{
		map[string]any{"field": "span_name", "value": "llm"}}}})

	plain := s.registryPost(t, reg, "/queries/revisions/retrieve", map[string]any{"query_ref": map[string]any{"slug": "llm-only"}})
	data := plain["query_revision"].(map[string]any)["data"].(map[string]any)
	assert.NotContains(t, data, "trace_ids", "the include flags are opt-in")

	got := s.registryPost(t, reg, "/queries/revisions/retrieve", map[string]any{"query_ref": map[string]any{"slug": "llm-only"},
		"include_trace_ids": true, "include_traces": true})
	data = got["query_revision"].(map[string]any)["data"].(map[string]any)
	assert.Equal(t, []any{tidA}, data["trace_ids"])
	traces := data["traces"].([]any)
	require.Len(t, traces, 1)
	assert.Equal(t, tidA, traces[0].(map[string]any)["trace_id"])
}

func TestSavedQueryWithoutRegistryIs503(t *testing.T) {
	s := newStack(t, func(o *options) { o.noWriter = true })
	s.handler.SavedQueries = registryclient.New("http://127.0.0.1:1", token, time.Second)
	r := s.doJSON(t, "POST", "/api/traces/query", map[string]any{"query_ref": map[string]any{"slug": "x"}})
	assert.Equal(t, http.StatusServiceUnavailable, r.status, string(r.body))
}
