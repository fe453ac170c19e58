package httpapi_test

import (
	"encoding/json"
	"net/http"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/pkg/apidoc"
	"github.com/assayhq/assay/services/gateway/internal/httpapi"
)

// TestOpenAPIMatchesRoutes keeps the gateway's fragment of the OpenAPI
// document and its echo routes in step: a route without documentation, or
// documentation without a route, fails.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	documented, err := apidoc.Routes("gateway")
	require.NoError(t, err)
	served := httpapi.Routes(t)
	sort.Strings(served)
	assert.Equal(t, served, documented)
}

// TestOpenAPITypes keeps pkg/apidoc/gateway.types.json generated from the
// handlers' Go types: change a request or response struct and this fails
// until the file is regenerated with UPDATE_APIDOC=1.
func TestOpenAPITypes(t *testing.T) {
	require.NoError(t, apidoc.CheckTypes("gateway", httpapi.Bindings, os.Getenv("UPDATE_APIDOC") == "1"))
}

func TestOpenAPIDocumentAndDocsPage(t *testing.T) {
	s := newStack(t)
	r := s.do(t, "GET", "/api/openapi.json", "", nil)
	require.Equal(t, http.StatusOK, r.status)
	var doc struct {
		OpenAPI string                     `json:"openapi"`
		Paths   map[string]json.RawMessage `json:"paths"`
	}
	require.NoError(t, json.Unmarshal(r.body, &doc))
	assert.Equal(t, "3.1.0", doc.OpenAPI)
	// canonical form without the trailing slash (Redocly's
	// no-path-trailing-slash); the gateway serves both forms
	assert.Contains(t, doc.Paths, "/api/admin/simple/accounts")
	assert.NotContains(t, doc.Paths, "/api/admin/simple/accounts/")
	assert.Contains(t, doc.Paths, "/api/keys/{id}")

	// the summaries Redoc renders come from the document
	assert.Contains(t, string(r.body), `"summary": "Revoke an API key"`)

	r = s.do(t, "GET", "/api/docs", "", nil)
	require.Equal(t, http.StatusOK, r.status)
	assert.True(t, strings.HasPrefix(r.header.Get("Content-Type"), "text/html"))
	page := string(r.body)
	// The index draws at once: a link per tag, not every operation in one
	// Redoc page (hundreds of paths took seconds to draw).
	assert.NotContains(t, page, `<redoc`)
	assert.NotContains(t, page, `<script`)
	assert.Contains(t, page, `href="/api/docs?tag=Secrets"`)
	assert.Contains(t, page, `href="/api/docs?tag=Evaluation%20runs"`)
	assert.Regexp(t, `Secrets</a>\s*<span[^>]*>\d+ operations</span>`, page)
	// offline: the page names no other origin (no http(s):// nor //host URL)
	assert.NotRegexp(t, `(?i)(https?:)?//[a-z0-9.-]+\.[a-z]`, page)
	// the no-JavaScript fallback still lists the operations
	assert.Contains(t, page, "/api/admin/simple/accounts")
	assert.Contains(t, page, "Revoke an API key")

	// A tag's page: Redoc over that tag's operations only.
	r = s.do(t, "GET", "/api/docs?tag=Secrets", "", nil)
	require.Equal(t, http.StatusOK, r.status)
	page = string(r.body)
	assert.Contains(t, page, `<script src="/api/docs/redoc.standalone.js"></script>`)
	assert.Contains(t, page, `const tag = "Secrets"`)
	assert.Contains(t, page, `href="/api/docs"`, "a way back to the index")
	assert.NotRegexp(t, `(?i)(https?:)?//[a-z0-9.-]+\.[a-z]`, page)
	r = s.do(t, "GET", "/api/docs?tag=all", "", nil)
	require.Equal(t, http.StatusOK, r.status, "everything on one page stays reachable")
	assert.Contains(t, string(r.body), `const tag = "all"`)
	r = s.do(t, "GET", "/api/docs?tag=Nope", "", nil)
	require.Equal(t, http.StatusNotFound, r.status)
	assert.Contains(t, string(r.body), `Nope`, "the error names the tag")
	assert.Contains(t, string(r.body), `"tag"`)

	r = s.do(t, "GET", "/api/docs/redoc.standalone.js", "", nil)
	require.Equal(t, http.StatusOK, r.status)
	assert.Equal(t, "text/javascript; charset=utf-8", r.header.Get("Content-Type"))
	assert.True(t, strings.HasPrefix(string(r.body), "/*! For license information please see redoc.standalone.js.LICENSE.txt */"))
	assert.Greater(t, len(r.body), 500_000, "the whole standalone bundle")
}
