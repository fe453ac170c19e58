package httpapi_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// userWithPassword provisions an account whose user signs in with password.
func (s *stack) userWithPassword(t *testing.T, email, password string) account {
	t.Helper()
	r := s.do(t, "POST", "/api/admin/simple/accounts", "Access "+adminKey, map[string]any{"accounts": map[string]any{"a": map[string]any{
		"user":            map[string]any{"email": email},
		"user_identities": []any{map[string]any{"method": "email:password", "subject": email, "password": password}},
	}}})
	require.Equal(t, http.StatusOK, r.status, string(r.body))
	var out struct {
		Accounts map[string]struct {
			User       struct{ ID string }            `json:"user"`
			Projects   map[string]struct{ ID string } `json:"projects"`
			Workspaces map[string]struct{ ID string } `json:"workspaces"`
			APIKeys    map[string]string              `json:"api_keys"`
		} `json:"accounts"`
	}
	require.NoError(t, json.Unmarshal(r.body, &out))
	a := out.Accounts["a"]
	return account{userID: a.User.ID, projectID: a.Projects["prj"].ID, workspaceID: a.Workspaces["wrk"].ID, key: a.APIKeys["key"]}
}

// signedIn is a session's two cookies.
type signedIn struct{ token, csrf string }

// headers returns the request headers of the session, with its CSRF token
// unless noCSRF.
func (si signedIn) headers(noCSRF ...bool) []string {
	h := []string{"Cookie", "assay_session=" + si.token + "; assay_csrf=" + si.csrf}
	if len(noCSRF) == 0 || !noCSRF[0] {
		h = append(h, "X-CSRF-Token", si.csrf)
	}
	return h
}

func cookieOf(t *testing.T, h http.Header, name string) *http.Cookie {
	t.Helper()
	for _, c := range (&http.Response{Header: h}).Cookies() {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no %s cookie in %v", name, h.Values("Set-Cookie"))
	return nil
}

func (s *stack) signIn(t *testing.T, email, password string) (signedIn, map[string]any) {
	t.Helper()
	r := s.do(t, "POST", "/api/auth/sign-in", "", map[string]any{"email": email, "password": password})
	require.Equal(t, http.StatusOK, r.status, string(r.body))
	return signedIn{token: cookieOf(t, r.header, "assay_session").Value, csrf: cookieOf(t, r.header, "assay_csrf").Value}, r.json(t)
}

const badCredentials = `{"detail":{"message":"Invalid email or password."}}`

// TestSignIn: the password check, the same 401 for a wrong password and an
// unknown email, the cookies' flags, and a token stored only as its hash.
func TestSignIn(t *testing.T) {
	s := newStack(t)
	alice := s.userWithPassword(t, "alice@example.com", "correct horse")

	r := s.do(t, "POST", "/api/auth/sign-in", "", map[string]any{"email": "Alice@Example.com", "password": "correct horse"})
	require.Equal(t, http.StatusOK, r.status, string(r.body))
	body := r.json(t)
	assert.Equal(t, map[string]any{"id": alice.userID, "email": "alice@example.com"}, body["user"])
	assert.Equal(t, alice.projectID, body["project_id"])
	projects := body["projects"].([]any)
	require.Len(t, projects, 1)
	p := projects[0].(map[string]any)
	assert.Equal(t, alice.projectID, p["id"])
	assert.Equal(t, alice.workspaceID, p["workspace_id"])
	assert.Equal(t, "owner", p["role"])
	assert.Equal(t, true, p["is_default"])
	assert.Equal(t, "Default", p["name"])
	assert.NotEmpty(t, p["organization_id"])

	sess := cookieOf(t, r.header, "assay_session")
	assert.True(t, sess.HttpOnly)
	assert.Equal(t, http.SameSiteLaxMode, sess.SameSite)
	assert.Equal(t, "/", sess.Path)
	assert.Equal(t, 3600, sess.MaxAge)
	assert.False(t, sess.Secure, "plain http")
	assert.GreaterOrEqual(t, len(sess.Value), 43, "256 random bits")
	csrf := cookieOf(t, r.header, "assay_csrf")
	assert.False(t, csrf.HttpOnly, "the console's script reads it")
	assert.Equal(t, http.SameSiteLaxMode, csrf.SameSite)
	assert.Equal(t, 3600, csrf.MaxAge)
	assert.Equal(t, body["csrf_token"], csrf.Value)
	assert.NotEqual(t, sess.Value, csrf.Value)

	// At rest: the SHA-256 of the token, never the token.
	sum := sha256.Sum256([]byte(sess.Value))
	var n int
	require.NoError(t, s.pool.QueryRow(context.Background(), `SELECT count(*) FROM sessions WHERE token_hash = $1 AND user_id = $2`,
		hex.EncodeToString(sum[:]), alice.userID).Scan(&n))
	assert.Equal(t, 1, n)
	require.NoError(t, s.pool.QueryRow(context.Background(), `SELECT count(*) FROM sessions s WHERE s::text LIKE '%' || $1 || '%'`, sess.Value).Scan(&n))
	assert.Zero(t, n, "the raw token is nowhere in the table")

	// Behind https (directly or per X-Forwarded-Proto): Secure cookies.
	r = s.do(t, "POST", "/api/auth/sign-in", "", map[string]any{"email": "alice@example.com", "password": "correct horse"}, "X-Forwarded-Proto", "https")
	require.Equal(t, http.StatusOK, r.status)
	assert.True(t, cookieOf(t, r.header, "assay_session").Secure)
	assert.True(t, cookieOf(t, r.header, "assay_csrf").Secure)

	// A wrong password and an unknown email: the same 401, no cookie; the
	// unknown email still costs a bcrypt comparison (tens of ms), so the
	// timing does not tell which emails exist.
	r = s.do(t, "POST", "/api/auth/sign-in", "", map[string]any{"email": "alice@example.com", "password": "wrong"})
	assert.Equal(t, http.StatusUnauthorized, r.status)
	assert.JSONEq(t, badCredentials, string(r.body))
	assert.Empty(t, r.header.Values("Set-Cookie"))
	start := time.Now()
	r = s.do(t, "POST", "/api/auth/sign-in", "", map[string]any{"email": "nobody@example.com", "password": "correct horse"})
	took := time.Since(start)
	assert.Equal(t, http.StatusUnauthorized, r.status)
	assert.JSONEq(t, badCredentials, string(r.body))
	assert.Greater(t, took, 15*time.Millisecond, "an unknown email is compared against a dummy hash")

	// A user without a password identity cannot sign in.
	s.account(t, "keyonly@example.com")
	r = s.do(t, "POST", "/api/auth/sign-in", "", map[string]any{"email": "keyonly@example.com", "password": ""})
	assert.Equal(t, http.StatusBadRequest, r.status)
	r = s.do(t, "POST", "/api/auth/sign-in", "", map[string]any{"email": "keyonly@example.com", "password": "x"})
	assert.JSONEq(t, badCredentials, string(r.body))

	// Bad input: 400 naming the field.
	for _, tc := range []struct {
		body  any
		field string
	}{
		{map[string]any{"password": "x"}, "email"},
		{map[string]any{"email": "alice@example.com"}, "password"},
		{map[string]any{"email": strings.Repeat("a", 321), "password": "x"}, "email"},
		{map[string]any{"email": "alice@example.com", "password": strings.Repeat("p", 73)}, "password"},
	} {
		r = s.do(t, "POST", "/api/auth/sign-in", "", tc.body)
		assert.Equal(t, http.StatusBadRequest, r.status, string(r.body))
		assert.Equal(t, tc.field, r.json(t)["detail"].(map[string]any)["field"], string(r.body))
	}
	r = s.do(t, "POST", "/api/auth/sign-in", "", `{"email": 1}`)
	assert.Equal(t, http.StatusBadRequest, r.status, string(r.body))
	assert.Contains(t, string(r.body), "email")
}

// scopeOf returns the scope headers the upstream last received.
func (s *stack) scopeOf(t *testing.T) (project, user, role string) {
	t.Helper()
	s.upstream.mu.Lock()
	defer s.upstream.mu.Unlock()
	require.NotNil(t, s.upstream.last, "the request was proxied")
	h := s.upstream.last.Header
	assert.Empty(t, h.Get("Cookie"), "the session's token stops at the gateway")
	return h.Get("X-Assay-Project-Id"), h.Get("X-Assay-User-Id"), h.Get("X-Assay-Role")
}

// TestSessionRequests: a session cookie authenticates API calls like a key,
// on the default or the named project with the user's role there, with the
// CSRF token on unsafe methods, until it expires or is signed out.
func TestSessionRequests(t *testing.T) {
	s := newStack(t)
	ctx := context.Background()
	alice := s.userWithPassword(t, "alice@example.com", "pw-alice")
	bob := s.account(t, "bob@example.com")
	carol := s.account(t, "carol@example.com")
	// Alice is an annotator in Bob's project.
	_, err := s.pool.Exec(ctx, `INSERT INTO project_memberships (id, project_id, user_id, role) VALUES ($1, $2, $3, 'annotator')`,
		uuid.New(), bob.projectID, alice.userID)
	require.NoError(t, err)
	si, body := s.signIn(t, "alice@example.com", "pw-alice")
	projects := body["projects"].([]any)
	require.Len(t, projects, 2)
	assert.Equal(t, alice.projectID, projects[0].(map[string]any)["id"], "oldest first")
	assert.Equal(t, bob.projectID, projects[1].(map[string]any)["id"])
	assert.Equal(t, "annotator", projects[1].(map[string]any)["role"])

	// Default project: the oldest.
	r := s.do(t, "GET", "/api/testsets", "", nil, si.headers(true)...)
	require.Equal(t, http.StatusOK, r.status, string(r.body))
	p, u, role := s.scopeOf(t)
	assert.Equal(t, []string{alice.projectID, alice.userID, "owner"}, []string{p, u, role})

	// Switching project: project_id.
	r = s.do(t, "GET", "/api/testsets?project_id="+bob.projectID, "", nil, si.headers(true)...)
	require.Equal(t, http.StatusOK, r.status, string(r.body))
	p, u, role = s.scopeOf(t)
	assert.Equal(t, []string{bob.projectID, alice.userID, "annotator"}, []string{p, u, role})

	// Not a member, or no such project: the same 403.
	for _, id := range []string{carol.projectID, uuid.NewString()} {
		r = s.do(t, "GET", "/api/testsets?project_id="+id, "", nil, si.headers(true)...)
		assert.Equal(t, http.StatusForbidden, r.status)
		assert.JSONEq(t, `{"detail":{"message":"You are not a member of project `+id+`.","project_id":"`+id+`"}}`, string(r.body))
	}
	r = s.do(t, "GET", "/api/testsets?project_id=nope", "", nil, si.headers(true)...)
	assert.Equal(t, http.StatusBadRequest, r.status)
	assert.Equal(t, "project_id", r.json(t)["detail"].(map[string]any)["field"])
	r = s.do(t, "GET", "/api/testsets?project_id="+bob.projectID+"&workspace_id="+alice.workspaceID, "", nil, si.headers(true)...)
	assert.Equal(t, http.StatusForbidden, r.status)
	assert.Equal(t, "workspace_id", r.json(t)["detail"].(map[string]any)["field"])

	// The gateway's own routes too.
	r = s.do(t, "GET", "/api/keys?project_id="+alice.projectID, "", nil, si.headers(true)...)
	require.Equal(t, http.StatusOK, r.status, string(r.body))

	// Unsafe methods: the CSRF token, or 403.
	csrf := `{"detail":{"message":"Missing or invalid CSRF token.","code":"csrf"}}`
	for _, h := range [][]string{si.headers(true), {"Cookie", "assay_session=" + si.token, "X-CSRF-Token", "forged"}} {
		for _, m := range []string{"POST", "PUT", "PATCH", "DELETE"} {
			r = s.do(t, m, "/api/testsets", "", map[string]any{}, h...)
			assert.Equal(t, http.StatusForbidden, r.status, m)
			assert.JSONEq(t, csrf, string(r.body), m)
		}
	}
	r = s.do(t, "POST", "/api/keys", "", map[string]any{"api_key": map[string]any{"name": "from the console"}}, si.headers()...)
	require.Equal(t, http.StatusOK, r.status, string(r.body))
	created := r.json(t)["api_key"].(map[string]any)
	r = s.do(t, "DELETE", "/api/keys/"+created["id"].(string), "", nil, si.headers()...)
	assert.Equal(t, http.StatusNoContent, r.status, string(r.body))

	// The API-key path is unchanged: an Authorization header decides, a
	// cookie beside it is ignored; admin paths still need the admin key.
	r = s.do(t, "GET", "/api/testsets", carol.auth(), nil, si.headers()...)
	require.Equal(t, http.StatusOK, r.status)
	p, _, _ = s.scopeOf(t)
	assert.Equal(t, carol.projectID, p)
	r = s.do(t, "POST", "/api/admin/simple/accounts", "", map[string]any{}, si.headers()...)
	assert.Equal(t, http.StatusUnauthorized, r.status)

	// GET /api/auth/session: the same body, fresh.
	r = s.do(t, "GET", "/api/auth/session", "", nil, si.headers(true)...)
	require.Equal(t, http.StatusOK, r.status)
	again := r.json(t)
	assert.Equal(t, body["user"], again["user"])
	assert.Equal(t, body["projects"], again["projects"])
	assert.Equal(t, si.csrf, again["csrf_token"])
	r = s.do(t, "GET", "/api/auth/session", "", nil)
	assert.Equal(t, http.StatusUnauthorized, r.status)
	assert.JSONEq(t, `{"detail":{"message":"You are signed out. Sign in to continue.","code":"signed_out"}}`, string(r.body))

	// Sign-out: needs the CSRF token, deletes the session, clears both cookies.
	r = s.do(t, "POST", "/api/auth/sign-out", "", nil, si.headers(true)...)
	assert.Equal(t, http.StatusForbidden, r.status)
	r = s.do(t, "POST", "/api/auth/sign-out", "", nil, si.headers()...)
	assert.Equal(t, http.StatusNoContent, r.status)
	for _, name := range []string{"assay_session", "assay_csrf"} {
		c := cookieOf(t, r.header, name)
		assert.Empty(t, c.Value)
		assert.Negative(t, c.MaxAge, name+" is deleted")
	}
	expired := `{"detail":{"message":"Your session has expired. Sign in again.","code":"session_expired"}}`
	r = s.do(t, "GET", "/api/testsets", "", nil, si.headers()...)
	assert.Equal(t, http.StatusUnauthorized, r.status)
	assert.JSONEq(t, expired, string(r.body))
	// Signing out again (a stale cookie) is still a 204.
	r = s.do(t, "POST", "/api/auth/sign-out", "", nil, si.headers()...)
	assert.Equal(t, http.StatusNoContent, r.status)

	// Expiry: a session past its expires_at is refused with session_expired.
	si, _ = s.signIn(t, "alice@example.com", "pw-alice")
	_, err = s.pool.Exec(ctx, `UPDATE sessions SET expires_at = now() - interval '1 second' WHERE token_hash = $1`, hashHex(si.token))
	require.NoError(t, err)
	for _, path := range []string{"/api/testsets", "/api/auth/session", "/api/keys"} {
		r = s.do(t, "GET", path, "", nil, si.headers()...)
		assert.Equal(t, http.StatusUnauthorized, r.status, path)
		assert.JSONEq(t, expired, string(r.body), path)
	}

	// A user with no project at all is told so.
	_, err = s.pool.Exec(ctx, `DELETE FROM organizations WHERE owner_user_id = $1`, alice.userID)
	require.NoError(t, err)
	_, err = s.pool.Exec(ctx, `DELETE FROM project_memberships WHERE user_id = $1`, alice.userID)
	require.NoError(t, err)
	si, body = s.signIn(t, "alice@example.com", "pw-alice")
	assert.Nil(t, body["project_id"])
	assert.Empty(t, body["projects"])
	r = s.do(t, "GET", "/api/testsets", "", nil, si.headers()...)
	assert.Equal(t, http.StatusForbidden, r.status)
	assert.JSONEq(t, `{"detail":{"message":"You are not a member of any project.","code":"no_project"}}`, string(r.body))
}

func hashHex(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// TestConsoleRoutes: "/" sends a browser to the console; /console/ is
// public, forwarded without credentials.
func TestConsoleRoutes(t *testing.T) {
	s := newStack(t)
	res, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Get(s.url + "/")
	require.NoError(t, err)
	res.Body.Close()
	assert.Equal(t, http.StatusFound, res.StatusCode)
	assert.Equal(t, "/console/", res.Header.Get("Location"))

	for _, path := range []string{"/console/", "/console/traces/abc?x=1", "/console/assets/index-abc.js"} {
		r := s.do(t, "GET", path, "", nil, "Cookie", "assay_session=secret", "Authorization", "ApiKey nope")
		require.Equal(t, http.StatusOK, r.status, path)
		var got struct {
			Path    string      `json:"path"`
			Query   string      `json:"query"`
			Headers http.Header `json:"headers"`
		}
		require.NoError(t, json.Unmarshal(r.body, &got))
		want, query, _ := strings.Cut(path, "?")
		assert.Equal(t, strings.TrimSuffix(want, "/"), got.Path)
		assert.Equal(t, query, got.Query)
		assert.Empty(t, got.Headers.Get("Cookie"), "no credentials reach the console service")
		assert.Empty(t, got.Headers.Get("Authorization"))
		assert.Empty(t, got.Headers.Get("X-Assay-Internal-Token"))
	}
}
