package httpapi_test

import (
	"encoding/base64"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// basic is the Authorization header Langfuse's SDKs build from a public
// and a secret key.
func basic(public, secret string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(public+":"+secret))
}

// TestLangfuseExporterEndpoint replays the exporter of Langfuse's JS SDK
// (LangfuseSpanProcessor without a custom exporter): POST
// {baseUrl}/api/public/otel/v1/traces with Basic base64(public:secret),
// where our key's prefix is the public key and its secret the secret key,
// plus its x_langfuse_* headers. The gateway forwards it to tracing with
// the key's project; wrong credentials are the usual 401, and Basic opens
// no route but the OTLP ones.
func TestLangfuseExporterEndpoint(t *testing.T) {
	s := newStack(t)
	a := s.account(t, "langfuse@example.com")
	prefix, secret, ok := strings.Cut(a.key, ".")
	require.True(t, ok)
	auth := basic(prefix, secret)
	headers := []string{"x_langfuse_sdk_name", "javascript", "x_langfuse_sdk_version", "4.6.1", "x_langfuse_public_key", prefix}

	for _, method := range []string{"POST", "GET"} {
		r := s.do(t, method, "/api/public/otel/v1/traces", auth, `{"resourceSpans":[]}`, headers...)
		require.Equal(t, http.StatusOK, r.status, "%s %s", method, r.body)
		got := r.json(t)
		assert.Equal(t, "/api/public/otel/v1/traces", got["path"])
		h := got["headers"].(map[string]any)
		assert.Equal(t, []any{a.projectID}, h["X-Assay-Project-Id"], "the key's project")
		assert.Nil(t, h["Authorization"], "client credentials stop at the gateway")
	}
	// Our OTLP route takes the same credentials (an SDK pointed there with
	// its Langfuse keys).
	r := s.do(t, "POST", "/api/otlp/v1/traces", auth, `{}`)
	require.Equal(t, http.StatusOK, r.status, string(r.body))

	for name, bad := range map[string]string{
		"wrong secret":   basic(prefix, strings.Repeat("0", 64)),
		"unknown prefix": basic("zzzzzzzz", secret),
		"no colon":       "Basic " + base64.StdEncoding.EncodeToString([]byte(a.key)),
		"not base64":     "Basic %%%",
	} {
		r := s.do(t, "POST", "/api/public/otel/v1/traces", bad, `{}`)
		assert.Equal(t, http.StatusUnauthorized, r.status, name)
		assert.JSONEq(t, unauthorized, string(r.body), name)
	}
	r = s.do(t, "GET", "/api/testsets/", auth, nil)
	assert.Equal(t, http.StatusUnauthorized, r.status, "Basic is for the OTLP routes only: %s", r.body)
}
