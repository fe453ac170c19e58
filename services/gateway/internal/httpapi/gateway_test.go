package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/pkg/testutil/natstest"
	"github.com/assayhq/assay/pkg/testutil/pgtest"
	"github.com/assayhq/assay/pkg/testutil/svctest"
	"github.com/assayhq/assay/services/gateway/internal/seeder"
)

var keyShape = regexp.MustCompile(`^[A-Za-z0-9]{8}\.[0-9a-f]{64}$`)

func TestProvisionAccount(t *testing.T) {
	s := newStack(t)
	r := s.do(t, "POST", "/api/admin/simple/accounts/", "Access "+adminKey, map[string]any{
		"accounts": map[string]any{"alice": map[string]any{
			"user":            map[string]any{"email": "alice@example.com", "name": "Alice"},
			"user_identities": []any{map[string]any{"method": "email:password", "subject": "alice@example.com", "password": "s3cret"}},
		}},
	})
	require.Equal(t, http.StatusOK, r.status, string(r.body))
	acc := r.json(t)["accounts"].(map[string]any)["alice"].(map[string]any)

	user := acc["user"].(map[string]any)
	assert.Equal(t, "alice@example.com", user["email"])
	assert.Equal(t, "Alice", user["name"])
	assert.NotContains(t, user, "username", "null fields are omitted")
	org := acc["organizations"].(map[string]any)["org"].(map[string]any)
	assert.Equal(t, "Alice's Organization", org["name"])
	assert.Equal(t, user["id"], org["owner_user_id"])
	wrk := acc["workspaces"].(map[string]any)["wrk"].(map[string]any)
	assert.Equal(t, "Default", wrk["name"])
	prj := acc["projects"].(map[string]any)["prj"].(map[string]any)
	assert.Equal(t, "Default", prj["name"])
	assert.Equal(t, true, prj["is_default"])
	assert.Equal(t, wrk["id"], prj["workspace_id"])
	for _, kind := range []string{"organization", "workspace", "project"} {
		ms := acc[kind+"_memberships"].([]any)
		require.Len(t, ms, 1, kind)
		assert.Equal(t, "owner", ms[0].(map[string]any)["role"])
	}
	ids := acc["user_identities"].([]any)
	require.Len(t, ids, 1)
	assert.NotContains(t, ids[0], "password")
	key := acc["api_keys"].(map[string]any)["key"].(string)
	assert.Regexp(t, keyShape, key)

	// The key works and is scoped to the new project.
	keys := s.do(t, "GET", "/api/keys/", "ApiKey "+key, nil)
	require.Equal(t, http.StatusOK, keys.status, string(keys.body))
	list := keys.json(t)["api_keys"].([]any)
	require.Len(t, list, 1)
	assert.Equal(t, prj["id"], list[0].(map[string]any)["project_id"])
	assert.Equal(t, key[:8], list[0].(map[string]any)["prefix"])
	assert.NotContains(t, string(keys.body), key[9:], "the secret is never listed")

	// Nothing stored holds the secret.
	var stored string
	require.NoError(t, s.pool.QueryRow(context.Background(), `SELECT secret_hash FROM api_keys`).Scan(&stored))
	assert.NotContains(t, stored, key[9:])
}

func TestProvisionOptionsAndErrors(t *testing.T) {
	s := newStack(t)
	admin := "Access " + adminKey
	post := func(body any) resp { return s.do(t, "POST", "/api/admin/simple/accounts", admin, body) }
	one := func(email string, opts map[string]any) map[string]any {
		a := map[string]any{"user": map[string]any{"email": email}}
		if opts != nil {
			a["options"] = opts
		}
		return map[string]any{"accounts": map[string]any{"x": a}}
	}

	t.Run("no key returned when return_api_keys is false", func(t *testing.T) {
		r := post(one("nokey@example.com", map[string]any{"return_api_keys": false}))
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		assert.NotContains(t, r.json(t)["accounts"].(map[string]any)["x"], "api_keys")
	})
	t.Run("duplicate email is 409, case-insensitively", func(t *testing.T) {
		require.Equal(t, http.StatusOK, post(one("dup@example.com", nil)).status)
		r := post(one("DUP@example.com", nil))
		require.Equal(t, http.StatusConflict, r.status)
		assert.JSONEq(t, `{"detail":{"message":"User with email 'DUP@example.com' already exists.","email":"DUP@example.com"}}`, string(r.body))
	})
	t.Run("one bad account writes nothing", func(t *testing.T) {
		r := post(map[string]any{"accounts": map[string]any{
			"ok":  map[string]any{"user": map[string]any{"email": "fresh@example.com"}},
			"bad": map[string]any{"user": map[string]any{"email": "dup@example.com"}},
		}})
		require.Equal(t, http.StatusConflict, r.status)
		var n int
		require.NoError(t, s.pool.QueryRow(context.Background(), `SELECT count(*) FROM users WHERE email = 'fresh@example.com'`).Scan(&n))
		assert.Zero(t, n)
	})
	t.Run("dry run writes nothing", func(t *testing.T) {
		r := post(one("dry@example.com", map[string]any{"dry_run": true}))
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		assert.NotContains(t, r.json(t)["accounts"].(map[string]any)["x"], "api_keys")
		require.Equal(t, http.StatusOK, post(one("dry@example.com", nil)).status, "the email is still free")
	})
	for _, tc := range []struct {
		name, body, field string
	}{
		{"missing email", `{"accounts":{"x":{"user":{}}}}`, "accounts.x.user.email"},
		{"bad email", `{"accounts":{"x":{"user":{"email":"not-an-email"}}}}`, "accounts.x.user.email"},
		{"no accounts", `{"accounts":{}}`, "accounts"},
		{"bad identity method", `{"accounts":{"x":{"user":{"email":"i@example.com"},"user_identities":[{"method":"magic","subject":"i"}]}}}`, "accounts.x.user_identities[0].method"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := s.do(t, "POST", "/api/admin/simple/accounts", admin, tc.body)
			require.Equal(t, http.StatusBadRequest, r.status, string(r.body))
			assert.Equal(t, tc.field, r.json(t)["detail"].(map[string]any)["field"])
		})
	}
	t.Run("malformed JSON is 400", func(t *testing.T) {
		r := s.do(t, "POST", "/api/admin/simple/accounts", admin, `{"accounts":`)
		require.Equal(t, http.StatusBadRequest, r.status, string(r.body))
		assert.Contains(t, r.json(t), "detail")
	})
}

func TestDeleteAccount(t *testing.T) {
	s := newStack(t)
	a := s.account(t, "gone@example.com")
	require.Equal(t, http.StatusOK, s.do(t, "GET", "/api/keys", a.auth(), nil).status)

	del := map[string]any{"accounts": map[string]any{"a": map[string]any{"user": map[string]any{"email": "gone@example.com"}}}}
	r := s.do(t, "DELETE", "/api/admin/simple/accounts/", "Access "+adminKey, del)
	require.Equal(t, http.StatusNoContent, r.status, string(r.body))
	assert.Empty(t, r.body)

	// The key died with the account, at once (the verifier had it cached).
	r = s.do(t, "GET", "/api/keys", a.auth(), nil)
	assert.Equal(t, http.StatusUnauthorized, r.status)
	for _, table := range []string{"users", "organizations", "workspaces", "projects", "api_keys", "project_memberships"} {
		var n int
		require.NoError(t, s.pool.QueryRow(context.Background(), `SELECT count(*) FROM `+table).Scan(&n))
		assert.Zero(t, n, table)
	}
	// Idempotent: deleting again, or by an unknown id, is still 204.
	assert.Equal(t, http.StatusNoContent, s.do(t, "DELETE", "/api/admin/simple/accounts/", "Access "+adminKey, del).status)
	byID := map[string]any{"accounts": map[string]any{"a": map[string]any{"user": map[string]any{"id": uuid.NewString()}}}}
	assert.Equal(t, http.StatusNoContent, s.do(t, "DELETE", "/api/admin/simple/accounts/", "Access "+adminKey, byID).status)
	// Email free again.
	s.account(t, "gone@example.com")
}

func TestKeyAuth(t *testing.T) {
	s := newStack(t)
	a := s.account(t, "keys@example.com")
	malformed := a.key[:9] + strings.Repeat("0", 64)
	unknown := "zzzzzzzz." + strings.Repeat("a", 64)

	for _, tc := range []struct {
		name, auth string
		status     int
	}{
		{"ApiKey scheme", a.auth(), http.StatusOK},
		{"bare key (legacy)", a.key, http.StatusOK},
		{"no header", "", http.StatusUnauthorized},
		{"Bearer scheme", "Bearer " + a.key, http.StatusUnauthorized},
		{"Access scheme off admin paths", "Access " + adminKey, http.StatusUnauthorized},
		{"wrong secret", "ApiKey " + malformed, http.StatusUnauthorized},
		{"unknown prefix", "ApiKey " + unknown, http.StatusUnauthorized},
		{"not a key", "ApiKey hello", http.StatusUnauthorized},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := s.do(t, "GET", "/api/keys/", tc.auth, nil)
			require.Equal(t, tc.status, r.status, string(r.body))
			if tc.status == http.StatusUnauthorized {
				assert.JSONEq(t, unauthorized, string(r.body))
			}
		})
	}

	t.Run("admin paths take only the admin key", func(t *testing.T) {
		body := `{"accounts":{"x":{"user":{"email":"x@example.com"}}}}`
		for _, auth := range []string{a.auth(), "Access wrong-admin-key-000000", "Access", "ApiKey " + adminKey, ""} {
			r := s.do(t, "POST", "/api/admin/simple/accounts/", auth, body)
			assert.Equal(t, http.StatusUnauthorized, r.status, auth)
			assert.JSONEq(t, unauthorized, string(r.body))
		}
	})
	t.Run("auth is checked before the body", func(t *testing.T) {
		r := s.do(t, "POST", "/api/admin/simple/accounts/", "", `{not json`)
		assert.Equal(t, http.StatusUnauthorized, r.status)
	})
	t.Run("project_id in the query must be the key's", func(t *testing.T) {
		for _, q := range []string{"?project_id=" + uuid.Nil.String(), "?project_id=null", "?project_id=" + uuid.NewString(), "?workspace_id=null"} {
			assert.Equal(t, http.StatusUnauthorized, s.do(t, "GET", "/api/keys"+q, a.auth(), nil).status, q)
		}
		assert.Equal(t, http.StatusOK, s.do(t, "GET", "/api/keys?project_id="+a.projectID, a.auth(), nil).status)
	})
	t.Run("open paths", func(t *testing.T) {
		for _, p := range []string{"/health", "/ready", "/api/openapi.json", "/api/docs", "/openapi.json", "/api/health"} {
			assert.Equal(t, http.StatusOK, s.do(t, "GET", p, "", nil).status, p)
		}
	})
}

func TestKeyLifecycle(t *testing.T) {
	s := newStack(t)
	a := s.account(t, "owner@example.com")

	r := s.do(t, "POST", "/api/keys/", a.auth(), map[string]any{"api_key": map[string]any{"name": "ci"}})
	require.Equal(t, http.StatusOK, r.status, string(r.body))
	created := r.json(t)["api_key"].(map[string]any)
	second := created["key"].(string)
	assert.Regexp(t, keyShape, second)
	assert.Equal(t, "ci", created["name"])
	assert.Equal(t, a.projectID, created["project_id"])

	// Warm the second key into the verifier's cache, then revoke it.
	require.Equal(t, http.StatusOK, s.do(t, "GET", "/api/keys", "ApiKey "+second, nil).status)
	list := s.do(t, "GET", "/api/keys", a.auth(), nil).json(t)
	assert.EqualValues(t, 2, list["count"])

	r = s.do(t, "DELETE", "/api/keys/"+created["id"].(string), a.auth(), nil)
	require.Equal(t, http.StatusNoContent, r.status, string(r.body))
	// Revoked at once, although the verifier had it cached.
	assert.Equal(t, http.StatusUnauthorized, s.do(t, "GET", "/api/keys", "ApiKey "+second, nil).status)
	assert.EqualValues(t, 1, s.do(t, "GET", "/api/keys", a.auth(), nil).json(t)["count"])
	// Revoking twice: the key is gone.
	assert.Equal(t, http.StatusNotFound, s.do(t, "DELETE", "/api/keys/"+created["id"].(string), a.auth(), nil).status)

	t.Run("expired keys do not work", func(t *testing.T) {
		r := s.do(t, "POST", "/api/keys", a.auth(), map[string]any{"api_key": map[string]any{"expires_at": "2020-01-01T00:00:00Z"}})
		require.Equal(t, http.StatusUnprocessableEntity, r.status, string(r.body))
		assert.Contains(t, string(r.body), "expires_at")
		// A change made behind the gateway's back reaches it through NOTIFY.
		_, err := s.pool.Exec(context.Background(), `UPDATE api_keys SET expires_at = now() - interval '1 second' WHERE prefix = $1`, a.key[:8])
		require.NoError(t, err)
		require.Eventually(t, func() bool {
			return s.do(t, "GET", "/api/keys", a.auth(), nil).status == http.StatusUnauthorized
		}, 2*time.Second, 5*time.Millisecond)
	})
}

func TestKeysAreScopedToTheirProject(t *testing.T) {
	s := newStack(t)
	a := s.account(t, "a@example.com")
	b := s.account(t, "b@example.com")
	bKeys := s.do(t, "GET", "/api/keys", b.auth(), nil).json(t)["api_keys"].([]any)
	bKeyID := bKeys[0].(map[string]any)["id"].(string)

	// A's key cannot see or revoke B's key: to A it does not exist.
	r := s.do(t, "DELETE", "/api/keys/"+bKeyID, a.auth(), nil)
	assert.Equal(t, http.StatusNotFound, r.status)
	assert.JSONEq(t, `{"detail":"API key not found."}`, string(r.body))
	assert.NotContains(t, string(s.do(t, "GET", "/api/keys", a.auth(), nil).body), bKeyID)
	assert.Equal(t, http.StatusOK, s.do(t, "GET", "/api/keys", b.auth(), nil).status, "B's key still works")
	// Naming B's project in the query with A's key is refused.
	assert.Equal(t, http.StatusUnauthorized, s.do(t, "GET", "/api/keys?project_id="+b.projectID, a.auth(), nil).status)

	// A role through the organization is enough: keys belong to a user
	// with a role in the project, not only to direct project members.
	ctx := context.Background()
	_, err := s.pool.Exec(ctx, `DELETE FROM project_memberships WHERE user_id = $1`, a.userID)
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, s.do(t, "GET", "/api/keys", a.auth(), nil).status)
	// A key whose user has no role in the project any more is refused
	// (a key carries at most its user's role).
	_, err = s.pool.Exec(ctx, `UPDATE organizations SET owner_user_id = $1 WHERE owner_user_id = $2`, b.userID, a.userID)
	require.NoError(t, err)
	for _, table := range []string{"organization_memberships", "workspace_memberships"} {
		_, err = s.pool.Exec(ctx, `DELETE FROM `+table+` WHERE user_id = $1`, a.userID)
		require.NoError(t, err)
	}
	require.Eventually(t, func() bool {
		return s.do(t, "GET", "/api/keys", a.auth(), nil).status == http.StatusUnauthorized
	}, 5*time.Second, 50*time.Millisecond, "the verifiers drop the key once its user lost the project")
}

func TestPathNormalisation(t *testing.T) {
	s := newStack(t)
	a := s.account(t, "paths@example.com")
	for _, p := range []string{"/api/keys/", "/api/keys", "/keys", "/keys/", "/api/api/keys/", "/api/api/api/keys"} {
		r := s.do(t, "GET", p, a.auth(), nil)
		assert.Equal(t, http.StatusOK, r.status, p)
		assert.Empty(t, r.header.Get("Location"), "never a redirect")
	}
	r := s.do(t, "DELETE", "/api/keys/not-a-uuid", a.auth(), nil)
	require.Equal(t, http.StatusUnprocessableEntity, r.status)
	detail := r.json(t)["detail"].([]any)[0].(map[string]any)
	assert.Equal(t, []any{"path", "id"}, detail["loc"])
	assert.Equal(t, http.StatusNotFound, s.do(t, "GET", "/api/nothing-here", a.auth(), nil).status)
}

func TestProxy(t *testing.T) {
	s := newStack(t)
	a := s.account(t, "proxy@example.com")

	r := s.do(t, "POST", "/api/api/testsets/query/?x=1", a.auth(), `{"testset":{}}`,
		"X-Assay-Project-Id", uuid.NewString(), "X-Assay-Internal-Token", "forged", "X-Request-Id", "req-123")
	require.Equal(t, http.StatusOK, r.status, string(r.body))
	var got struct {
		Path, Query, Body string
		Headers           http.Header
	}
	require.NoError(t, json.Unmarshal(r.body, &got))
	assert.Equal(t, "/api/testsets/query", got.Path)
	assert.Equal(t, "x=1", got.Query)
	assert.Equal(t, `{"testset":{}}`, got.Body)
	assert.Equal(t, a.projectID, got.Headers.Get("X-Assay-Project-Id"), "the key decides the project, not the client")
	assert.Equal(t, a.userID, got.Headers.Get("X-Assay-User-Id"))
	assert.Equal(t, internalToken, got.Headers.Get("X-Assay-Internal-Token"))
	assert.Empty(t, got.Headers.Get("Authorization"), "client credentials stop at the gateway")
	assert.Equal(t, "req-123", got.Headers.Get("X-Request-Id"))
	assert.Equal(t, "req-123", r.header.Get("X-Request-Id"))

	for path, want := range map[string]string{
		"/api/simple/testsets/":          "/api/simple/testsets",
		"/api/preview/workflows/x":       "/api/workflows/x",
		"/api/otlp/v1/traces":            "/api/otlp/v1/traces",
		"/services/completion/v0/invoke": "/services/completion/v0/invoke",
		"/api/services/chat/v0/invoke":   "/services/chat/v0/invoke",
	} {
		r := s.do(t, "POST", path, a.auth(), `{}`)
		require.Equal(t, http.StatusOK, r.status, path)
		assert.Equal(t, want, r.json(t)["path"], path)
	}
	assert.Equal(t, http.StatusUnauthorized, s.do(t, "POST", "/services/completion/v0/invoke", "", `{}`).status)

	s.upstream.Close()
	r = s.do(t, "GET", "/api/testsets/", a.auth(), nil)
	require.Equal(t, http.StatusServiceUnavailable, r.status)
	assert.JSONEq(t, `{"detail":{"message":"registry is unavailable"}}`, string(r.body))
	assert.Equal(t, "1", r.header.Get("Retry-After"))
}

func TestBodyLimit(t *testing.T) {
	s := newStack(t)
	r := s.do(t, "POST", "/api/admin/simple/accounts/", "Access "+adminKey, `{"pad":"`+strings.Repeat("x", 2<<20)+`"}`)
	require.Equal(t, http.StatusRequestEntityTooLarge, r.status)
	assert.Equal(t, "1M", r.json(t)["detail"].(map[string]any)["limit"])
}

// TestSeedingFailureCreatesNothing provisions while the registry is down:
// the caller gets a 503 and no half-made account is left behind.
func TestSeedingFailureCreatesNothing(t *testing.T) {
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close() // a port nobody listens on
	s := startStackSeeding(t, pgtest.NewURL(t), seeder.New(dead.URL, internalToken, time.Second))
	body := map[string]any{"accounts": map[string]any{"a": map[string]any{"user": map[string]any{"email": "seed@example.com"}}}}
	r := s.do(t, "POST", "/api/admin/simple/accounts/", "Access "+adminKey, body)
	require.Equal(t, http.StatusServiceUnavailable, r.status, string(r.body))
	assert.Contains(t, string(r.body), "no account was created")
	for _, table := range []string{"users", "organizations", "projects", "api_keys"} {
		var n int
		require.NoError(t, s.pool.QueryRow(context.Background(), `SELECT count(*) FROM `+table).Scan(&n))
		assert.Zero(t, n, table)
	}
	// Without seeding the same email is free.
	body["options"] = map[string]any{"seed_defaults": false}
	r = s.do(t, "POST", "/api/admin/simple/accounts/", "Access "+adminKey, body)
	require.Equal(t, http.StatusOK, r.status, string(r.body))
}

// TestProvisioningSeedsTheRegistry provisions an account against the real
// registry binary and reads the seeded defaults back from it.
func TestProvisioningSeedsTheRegistry(t *testing.T) {
	reg := svctest.Start(t, svctest.Options{
		Pkg:     "services/registry/cmd/registry",
		AddrVar: "REGISTRY_ADDR",
		Env: []string{"REGISTRY_TOKEN_FROM_GATEWAY=" + internalToken, "REGISTRY_TOKEN_TO_TRACING=unused-tracing-token-0123456789", "REGISTRY_POSTGRES_URL=" + pgtest.NewURL(t), "REGISTRY_LOG_LEVEL=warn",
			"REGISTRY_VAULT_KEY=YXNzYXktdGVzdC12YXVsdC1rZXktMzItYnl0ZXMhISE=", // base64 of a 32-byte test key
			"REGISTRY_NATS_URL=" + natstest.New(t).URL()},
	})
	s := startStackSeeding(t, pgtest.NewURL(t), seeder.New(reg.URL, internalToken, 10*time.Second))
	r := s.do(t, "POST", "/api/admin/simple/accounts/", "Access "+adminKey,
		map[string]any{"accounts": map[string]any{"a": map[string]any{"user": map[string]any{"email": "seeded@example.com"}}}})
	require.Equal(t, http.StatusOK, r.status, string(r.body))
	var out struct {
		Accounts map[string]struct {
			Projects map[string]struct{ ID uuid.UUID } `json:"projects"`
		} `json:"accounts"`
	}
	require.NoError(t, json.Unmarshal(r.body, &out))
	project := out.Accounts["a"].Projects["prj"].ID

	slugs := func(path, key string) []string {
		req, err := http.NewRequest("POST", reg.URL+path, strings.NewReader(`{}`))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		scope.Set(req.Header, internalToken, scope.Scope{ProjectID: project})
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		var body map[string]json.RawMessage
		require.NoError(t, json.NewDecoder(res.Body).Decode(&body))
		var items []struct{ Slug string }
		require.NoError(t, json.Unmarshal(body[key], &items))
		var got []string
		for _, it := range items {
			got = append(got, it.Slug)
		}
		sort.Strings(got)
		return got
	}
	assert.Equal(t, []string{"development", "production", "staging"}, slugs("/simple/environments/query", "environments"))
	assert.Equal(t, []string{"contains-json", "exact-match", "quality-rating"}, slugs("/simple/evaluators/query", "evaluators"))
}
