package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLegacyConfigFetch: the compatible SDK 0.27-0.95's
// POST /variants/configs/fetch on the retrieve's lookups (the whole flow,
// through the gateway with a bare key, is sdkflows' TestSDKFlows).
func TestLegacyConfigFetch(t *testing.T) {
	s := newServer(t)
	s.ok(t, "POST", "/simple/environments", m{"environment": m{"slug": "production", "name": "Production"}})
	app := obj(t, s.ok(t, "POST", "/simple/applications", m{"application": m{"slug": "bot", "data": m{"uri": "svc:builtin:chat:v0", "parameters": m{"v": 1}}}}), "application")
	s.ok(t, "POST", "/applications/revisions/deploy", m{"application_variant_ref": m{"id": app["variant_id"]}, "environment_ref": m{"slug": "production"}})

	got := s.ok(t, "POST", "/variants/configs/fetch", m{"variant_ref": m{"id": app["variant_id"], "version": nil, "slug": nil}, "environment_ref": nil, "application_ref": nil})
	assert.Equal(t, m{"v": float64(1)}, got["params"])
	assert.Equal(t, app["variant_id"], obj(t, got, "variant_ref")["id"])
	assert.Nil(t, got["environment_ref"])

	got = s.ok(t, "POST", "/variants/configs/fetch", m{"application_ref": m{"slug": "bot"}})
	assert.Equal(t, m{"v": float64(1)}, got["params"])
	assert.Equal(t, "production", obj(t, got, "environment_ref")["slug"], "production by default")
	assert.Equal(t, m{"id": app["id"], "slug": "bot"}, got["application_ref"])

	r := s.do(t, "POST", "/variants/configs/fetch", m{"application_ref": m{"slug": "bot"}, "environment_ref": m{"slug": "production", "version": 99}})
	require.Equal(t, http.StatusNotFound, r.status, "%s", r.body)
	assert.JSONEq(t, `{"detail": "Config not found."}`, string(r.body))
	r = s.do(t, "POST", "/variants/configs/fetch", m{"variant_ref": m{"version": "x"}})
	assert.Equal(t, http.StatusUnprocessableEntity, r.status, "%s", r.body)
}
