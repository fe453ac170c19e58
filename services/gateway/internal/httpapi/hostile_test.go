package httpapi_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/pkg/testutil/pgtest"
)

// onlyReader hides the concrete type of a reader, so net/http cannot learn
// the body's length and sends it chunked.
type onlyReader struct{ io.Reader }

// TestBodyOverLimitIsA413 sends bodies over the gateway's body limit (1M in
// the test stack) to a proxied route: with Content-Length the limit is
// known up front; chunked, it is only found while the proxy streams the
// body upstream. Both are the gateway's own 413 naming the limit, never a
// 503 blaming the upstream.
func TestBodyOverLimitIsA413(t *testing.T) {
	s := newStack(t)
	a := s.account(t, "limit@example.com")
	big := bytes.Repeat([]byte("x"), 2<<20)
	for _, tc := range []struct {
		name string
		body io.Reader
	}{
		{"with Content-Length", bytes.NewReader(big)},
		{"chunked", onlyReader{bytes.NewReader(big)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest("POST", s.url+"/api/spans/ingest", tc.body)
			require.NoError(t, err)
			req.Header.Set("Authorization", a.auth())
			req.Header.Set("Content-Type", "application/json")
			res, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			defer res.Body.Close()
			b, err := io.ReadAll(res.Body)
			require.NoError(t, err)
			require.Equal(t, http.StatusRequestEntityTooLarge, res.StatusCode, string(b))
			assert.Equal(t, "application/json", strings.Split(res.Header.Get("Content-Type"), ";")[0])
			var got struct {
				Detail map[string]any `json:"detail"`
			}
			require.NoError(t, json.Unmarshal(b, &got), string(b))
			assert.Equal(t, "1M", got.Detail["limit"])
			assert.Contains(t, got.Detail["message"], "limit of 1M")
		})
	}
	t.Run("a body within the limit still passes, chunked", func(t *testing.T) {
		req, err := http.NewRequest("POST", s.url+"/api/spans/ingest", onlyReader{bytes.NewReader(big[:1<<19])})
		require.NoError(t, err)
		req.Header.Set("Authorization", a.auth())
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		var got struct{ Body string }
		require.NoError(t, json.NewDecoder(res.Body).Decode(&got))
		assert.Equal(t, http.StatusOK, res.StatusCode)
		assert.Len(t, got.Body, 1<<19)
	})
}

// TestUpstreamRefusalPassesThrough has the upstream refuse a large body
// with 413 before reading it (as tracing does over its own limits): the
// client gets that 413, not a 503, whether the body is chunked or not.
func TestUpstreamRefusalPassesThrough(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusRequestEntityTooLarge)
		_, _ = w.Write([]byte(`{"detail":"request body exceeds 1000 bytes"}`))
	}))
	t.Cleanup(up.Close)
	s := startStackUpstream(t, pgtest.NewURL(t), nil, up.URL)
	a := s.account(t, "refused@example.com")
	big := bytes.Repeat([]byte("x"), 900<<10)
	for i := range 20 {
		var body io.Reader = bytes.NewReader(big)
		if i%2 == 1 {
			body = onlyReader{body}
		}
		req, err := http.NewRequest("POST", s.url+"/api/spans/ingest", body)
		require.NoError(t, err)
		req.Header.Set("Authorization", a.auth())
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		require.Equal(t, http.StatusRequestEntityTooLarge, res.StatusCode, "attempt %d: %s", i, b)
		assert.JSONEq(t, `{"detail":"request body exceeds 1000 bytes"}`, string(b))
	}
}

// TestWorkspaceInQueryMustBeTheKeys names another account's workspace in
// the query: refused like a foreign project_id, on the gateway's own
// routes and on proxied ones, while the key's own workspace passes.
func TestWorkspaceInQueryMustBeTheKeys(t *testing.T) {
	s := newStack(t)
	a := s.account(t, "wa@example.com")
	b := s.account(t, "wb@example.com")
	require.NotEqual(t, a.workspaceID, b.workspaceID)
	for _, path := range []string{"/api/keys", "/api/testsets/query"} {
		for _, q := range []string{"?workspace_id=" + b.workspaceID, "?workspace_id=" + uuid.NewString(),
			"?workspace_id=" + b.workspaceID + "&project_id=" + a.projectID, "?project_id=" + a.projectID + "&workspace_id=" + a.projectID} {
			r := s.do(t, "GET", path+q, a.auth(), nil)
			assert.Equal(t, http.StatusUnauthorized, r.status, path+q)
			assert.JSONEq(t, unauthorized, string(r.body), path+q)
		}
		for _, q := range []string{"?workspace_id=" + a.workspaceID, "?workspace_id=" + a.workspaceID + "&project_id=" + a.projectID} {
			assert.Equal(t, http.StatusOK, s.do(t, "GET", path+q, a.auth(), nil).status, path+q)
		}
	}
}
