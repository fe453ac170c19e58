package httpapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSecretsRoutedInternalNot: the vault's routes reach the registry;
// the registry's /internal routes, which answer decrypted keys to any
// holder of the internal token the gateway adds, are never forwarded.
func TestSecretsRoutedInternalNot(t *testing.T) {
	s := newStack(t)
	a := s.account(t, "vault@example.com")
	for path, want := range map[string]string{
		"/api/secrets/":        "/api/secrets",
		"/secrets":             "/api/secrets",
		"/api/secrets/openai":  "/api/secrets/openai",
		"/api/preview/secrets": "/api/secrets",
	} {
		r := s.do(t, "GET", path, a.auth(), nil)
		require.Equal(t, http.StatusOK, r.status, path)
		assert.Equal(t, want, r.json(t)["path"], path)
		// The registry's second lock on /internal refuses what carries it.
		h, _ := r.json(t)["headers"].(map[string]any)
		assert.NotEmpty(t, h["X-Forwarded-Host"], "the gateway marks what it forwards")
	}
	for _, path := range []string{"/internal/secrets", "/api/internal/secrets", "/api/api/internal/secrets/",
		"/api/preview/internal/secrets", "/api/simple/internal/secrets"} {
		r := s.do(t, "GET", path, a.auth(), nil)
		assert.Equal(t, http.StatusNotFound, r.status, path)
	}
	// A path that climbs out of /secrets is forwarded as is, and no route
	// of the registry matches it; it never becomes /internal/secrets.
	for _, path := range []string{"/api/secrets/../internal/secrets", "/api/secrets/%2e%2e/internal/secrets"} {
		r := s.do(t, "GET", path, a.auth(), nil)
		if r.status == http.StatusOK {
			got, _ := r.json(t)["path"].(string)
			assert.False(t, strings.HasPrefix(got, "/internal"), "%s forwarded as %s", path, got)
		}
	}
}
