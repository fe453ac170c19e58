package httpapi_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestProfile: GET /api/profile answers the key's user and every
// membership that user has, with its role, and is never proxied.
func TestProfile(t *testing.T) {
	s := newStack(t)
	r := s.do(t, "POST", "/api/admin/simple/accounts/", "Access "+adminKey, map[string]any{"accounts": map[string]any{
		"bob": map[string]any{"user": map[string]any{"email": "bob@example.com", "username": "bob", "name": "Bob"}},
	}})
	require.Equal(t, http.StatusOK, r.status, string(r.body))
	acc := r.json(t)["accounts"].(map[string]any)["bob"].(map[string]any)
	user := acc["user"].(map[string]any)
	org := acc["organizations"].(map[string]any)["org"].(map[string]any)
	wrk := acc["workspaces"].(map[string]any)["wrk"].(map[string]any)
	prj := acc["projects"].(map[string]any)["prj"].(map[string]any)
	key := "ApiKey " + acc["api_keys"].(map[string]any)["key"].(string)
	other := s.account(t, "carol@example.com")

	// Bob is also a viewer of Carol's project (a membership stored by
	// another path than provisioning).
	_, err := s.pool.Exec(context.Background(), `INSERT INTO project_memberships (id, project_id, user_id, role) VALUES ($1, $2, $3, 'viewer')`,
		uuid.New(), other.projectID, user["id"])
	require.NoError(t, err)

	for _, path := range []string{"/api/profile", "/api/profile/", "/profile"} {
		r = s.do(t, "GET", path, key, nil)
		require.Equal(t, http.StatusOK, r.status, "%s: %s", path, r.body)
	}
	s.upstream.mu.Lock()
	assert.Nil(t, s.upstream.last, "answered by the gateway, not proxied")
	s.upstream.mu.Unlock()
	p := r.json(t)
	assert.Equal(t, user["id"], p["id"])
	assert.Equal(t, "bob@example.com", p["email"])
	assert.Equal(t, "bob", p["username"])
	assert.Equal(t, "Bob", p["name"])
	assert.Equal(t, user["created_at"], p["created_at"])
	assert.NotContains(t, r.body, "password")

	orgs := p["organizations"].([]any)
	require.Len(t, orgs, 1)
	assert.Equal(t, map[string]any{"id": org["id"], "name": org["name"], "role": "owner"}, orgs[0])
	wss := p["workspaces"].([]any)
	require.Len(t, wss, 1)
	assert.Equal(t, map[string]any{"id": wrk["id"], "name": "Default", "organization_id": org["id"], "role": "owner"}, wss[0])
	prjs := p["projects"].([]any)
	require.Len(t, prjs, 2)
	assert.Equal(t, map[string]any{"id": prj["id"], "name": "Default", "organization_id": org["id"], "workspace_id": wrk["id"],
		"is_default": true, "role": "owner"}, prjs[0], "oldest membership first")
	assert.Equal(t, other.projectID, prjs[1].(map[string]any)["id"])
	assert.Equal(t, "viewer", prjs[1].(map[string]any)["role"])

	// Carol sees only her own.
	c := s.do(t, "GET", "/api/profile", other.auth(), nil).json(t)
	assert.Equal(t, other.userID, c["id"])
	assert.Len(t, c["projects"].([]any), 1)

	// No key, no profile; a key whose user is gone answers 404, in JSON.
	r = s.do(t, "GET", "/api/profile", "", nil)
	assert.Equal(t, http.StatusUnauthorized, r.status)
	assert.JSONEq(t, unauthorized, string(r.body))
	_, err = s.pool.Exec(context.Background(), `UPDATE api_keys SET created_by_id = NULL WHERE prefix = $1`, other.key[:8])
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		return s.do(t, "GET", "/api/profile", other.auth(), nil).status == http.StatusNotFound
	}, 2*time.Second, 5*time.Millisecond, "the NOTIFY drops the cached key; its user is now unknown")
	r = s.do(t, "GET", "/api/profile", other.auth(), nil)
	assert.Contains(t, string(r.body), `"detail"`)
}
