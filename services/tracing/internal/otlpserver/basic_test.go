package otlpserver_test

import (
	"encoding/base64"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBasicOnOTLPPort: Langfuse's exporters authenticate with Basic
// base64(<public key>:<secret key>), our key's prefix and secret; pointed
// at the OTLP port they are accepted like ApiKey, and a wrong secret is
// the same 401.
func TestBasicOnOTLPPort(t *testing.T) {
	st := newOTLPStack(t)
	prefix, secret, ok := strings.Cut(strings.TrimPrefix(st.key, "ApiKey "), ".")
	require.True(t, ok)
	post := func(public, secret string) (int, string) {
		req, _ := http.NewRequest("POST", st.httpURL+"/v1/traces", strings.NewReader("{}"))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(public+":"+secret)))
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	status, body := post(prefix, secret)
	assert.Equal(t, http.StatusOK, status, body)
	status, body = post(prefix, strings.Repeat("0", 64))
	assert.Equal(t, http.StatusUnauthorized, status)
	assert.JSONEq(t, `{"detail":{"message":"Unauthorized"}}`, body)
}
