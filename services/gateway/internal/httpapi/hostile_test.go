package httpapi_test

import (
	"bytes"
	"context"
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
	s := startStackUpstream(t, pgtest.NewURL(t), nil, up.URL, "1M")
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

// fieldError returns the loc and msg of a 422 body.
func fieldError(t *testing.T, r resp) ([]any, string) {
	t.Helper()
	require.Equal(t, http.StatusUnprocessableEntity, r.status, string(r.body))
	var body struct {
		Detail []struct {
			Loc []any  `json:"loc"`
			Msg string `json:"msg"`
		} `json:"detail"`
	}
	require.NoError(t, json.Unmarshal(r.body, &body), string(r.body))
	require.NotEmpty(t, body.Detail)
	return body.Detail[0].Loc, body.Detail[0].Msg
}

// TestTextInput sends what PostgreSQL cannot store (NUL, invalid UTF-8)
// and text over the documented limits: each is a 4xx naming the field,
// before the database is asked, and nothing is written.
func TestTextInput(t *testing.T) {
	s := startStackUpstream(t, pgtest.NewURL(t), nil, "", "8M")
	a := s.account(t, "text@example.com")
	admin := "Access " + adminKey

	t.Run("API key name", func(t *testing.T) {
		for _, tc := range []struct {
			name, body string
			msg        string
		}{
			{"NUL", `{"api_key":{"name":"ci\u0000"}}`, "NUL"},
			{"invalid UTF-8", "{\"api_key\":{\"name\":\"ci\xff\"}}", "UTF-8"},
			{"lone surrogate", `{"api_key":{"name":"ci\ud800"}}`, "surrogate"},
			{"2 MB", `{"api_key":{"name":"` + strings.Repeat("k", 2<<20) + `"}}`, "at most 512 characters"},
			{"513 characters", `{"api_key":{"name":"` + strings.Repeat("é", 513) + `"}}`, "at most 512 characters"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				loc, msg := fieldError(t, s.do(t, "POST", "/api/keys", a.auth(), tc.body))
				assert.Equal(t, []any{"body", "api_key", "name"}, loc)
				assert.Contains(t, msg, tc.msg)
			})
		}
		r := s.do(t, "POST", "/api/keys", a.auth(), map[string]any{"api_key": map[string]any{"name": strings.Repeat("é", 512)}})
		assert.Equal(t, http.StatusOK, r.status, "512 characters are fine")
	})

	t.Run("account fields", func(t *testing.T) {
		for _, tc := range []struct {
			name, body string
			loc        []any
		}{
			{"NUL in the user name", `{"accounts":{"x":{"user":{"email":"n@example.com","name":"a\u0000"}}}}`, []any{"body", "accounts", "x", "user", "name"}},
			{"NUL in metadata", `{"accounts":{"x":{"user":{"email":"n@example.com","metadata":{"k":["\u0000"]}}}}}`, []any{"body", "accounts", "x", "user", "metadata", "k", 0.0}},
			{"NUL in the project description", `{"accounts":{"x":{"user":{"email":"n@example.com"},"project":{"description":"\u0000"}}}}`, []any{"body", "accounts", "x", "project", "description"}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				loc, msg := fieldError(t, s.do(t, "POST", "/api/admin/simple/accounts", admin, tc.body))
				assert.Equal(t, tc.loc, loc)
				assert.Contains(t, msg, "NUL")
			})
		}
		for _, tc := range []struct {
			name, field string
			account     map[string]any
		}{
			{"9,000-character organization slug", "accounts.x.organization.slug",
				map[string]any{"user": map[string]any{"email": "s@example.com"}, "organization": map[string]any{"slug": strings.Repeat("s", 9000)}}},
			{"long email", "accounts.x.user.email",
				map[string]any{"user": map[string]any{"email": strings.Repeat("e", 400) + "@example.com"}}},
			{"long user name", "accounts.x.user.name",
				map[string]any{"user": map[string]any{"email": "u@example.com", "name": strings.Repeat("n", 513)}}},
			{"long identity subject", "accounts.x.user_identities[0].subject",
				map[string]any{"user": map[string]any{"email": "i@example.com"}, "user_identities": []any{map[string]any{"method": "email:otp", "subject": strings.Repeat("i", 400)}}}},
			{"large metadata", "accounts.x.user.metadata",
				map[string]any{"user": map[string]any{"email": "m@example.com", "metadata": map[string]any{"k": strings.Repeat("m", 70000)}}}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				r := s.do(t, "POST", "/api/admin/simple/accounts", admin, map[string]any{"accounts": map[string]any{"x": tc.account}})
				require.Equal(t, http.StatusBadRequest, r.status, string(r.body))
				assert.Equal(t, tc.field, r.json(t)["detail"].(map[string]any)["field"])
				assert.Contains(t, r.json(t)["detail"].(map[string]any)["message"], "at most")
			})
		}
		var n int
		require.NoError(t, s.pool.QueryRow(context.Background(), `SELECT count(*) FROM users`).Scan(&n))
		assert.Equal(t, 1, n, "only the account made for the test")
	})
}
