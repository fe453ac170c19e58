package authz_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/pkg/apidoc"
	"github.com/assayhq/assay/pkg/apikey"
	"github.com/assayhq/assay/pkg/roles"
	"github.com/assayhq/assay/pkg/testutil/platformtest"
	"github.com/assayhq/assay/services/gateway/internal/authz"
)

// env is the whole platform with one organization whose owner provisioned
// it, and helpers to add members with a role to the owner's project.
type env struct {
	p         *platformtest.Platform
	pool      *pgxpool.Pool // the gateway's (and registry's) database
	owner     string        // the owner's raw key
	ownerID   uuid.UUID
	projectID uuid.UUID
	n         int
}

func start(t *testing.T) *env {
	t.Helper()
	p := platformtest.Start(t)
	pool, err := pgxpool.New(context.Background(), p.PostgresURL)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	e := &env{p: p, pool: pool, owner: p.Account(t, "owner@example.com")}
	e.ownerID, e.projectID = e.keyOwner(t, e.owner)
	return e
}

func (e *env) keyOwner(t *testing.T, raw string) (user, project uuid.UUID) {
	t.Helper()
	require.NoError(t, e.pool.QueryRow(context.Background(),
		`SELECT created_by_id, project_id FROM api_keys WHERE prefix = $1`, raw[:8]).Scan(&user, &project))
	return user, project
}

// member provisions a user (with an organization of their own), makes
// them a member of the owner's project with role, and returns a key of
// theirs in that project (role NULL: it follows theirs).
func (e *env) member(t *testing.T, role roles.Role) (uuid.UUID, string) {
	t.Helper()
	e.n++
	own := e.p.Account(t, fmt.Sprintf("%s%d@example.com", role, e.n))
	user, _ := e.keyOwner(t, own)
	ctx := context.Background()
	_, err := e.pool.Exec(ctx, `INSERT INTO project_memberships (id, project_id, user_id, role) VALUES ($1, $2, $3, $4)`,
		uuid.New(), e.projectID, user, string(role))
	require.NoError(t, err)
	k := apikey.Generate()
	_, err = e.pool.Exec(ctx, `INSERT INTO api_keys (id, project_id, prefix, secret_hash, created_by_id) VALUES ($1, $2, $3, $4, $5)`,
		uuid.New(), e.projectID, k.Prefix, k.Hash(), user)
	require.NoError(t, err)
	return user, k.String()
}

type answer struct {
	status int
	body   []byte
}

func (a answer) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(a.body, &m), string(a.body))
	return m
}

func (e *env) do(t *testing.T, method, path, key string, body any) answer {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		require.NoError(t, err)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, e.p.URL+path, rd)
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "ApiKey "+key)
	}
	res, err := (&http.Client{Timeout: 60 * time.Second}).Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return answer{res.StatusCode, b}
}

func (e *env) ok(t *testing.T, method, path, key string, body any) map[string]any {
	t.Helper()
	r := e.do(t, method, path, key, body)
	require.Equal(t, http.StatusOK, r.status, "%s %s: %s", method, path, r.body)
	return r.json(t)
}

// denied is roles.Denied's body.
func denied(role roles.Role, p roles.Permission) string {
	return fmt.Sprintf(`{"detail":{"message":"Your role (%s) lacks the \"%s\" permission.","permission":"%s","role":"%s"}}`, role, p, p, role)
}

// representatives picks, from every documented route of the gateway and
// the proxied services, one route per (family, permission) of the authz
// table: the matrix below grows with the table and the routes.
func representatives(t *testing.T) []string {
	t.Helper()
	seen := map[string]string{}
	for _, svc := range apidoc.Services {
		routes, err := apidoc.Routes(svc)
		require.NoError(t, err)
		for _, r := range routes {
			method, path, _ := strings.Cut(r, " ")
			if strings.HasPrefix(path, "/internal/") {
				continue
			}
			rule, _, ok := authz.Lookup(method, path)
			require.True(t, ok, r)
			if rule.Access != authz.ByRole {
				continue
			}
			segs := strings.Split(strings.TrimPrefix(path, "/"), "/")
			family := segs[0]
			if family == "simple" && len(segs) > 1 {
				family += "/" + segs[1]
			}
			k := family + " " + string(rule.Perm)
			if _, dup := seen[k]; !dup {
				seen[k] = r
			}
		}
	}
	out := make([]string, 0, len(seen))
	for _, r := range seen {
		out = append(out, r)
	}
	sort.Strings(out)
	return out
}

// TestRoleMatrix: for each permission, one route of each family that needs
// it, called by a key of each role: a role that holds the permission is not
// refused (whatever else the route answers to an empty body), a role that
// lacks it gets the 403 naming the permission and the role.
func TestRoleMatrix(t *testing.T) {
	e := start(t)
	keys := map[roles.Role]string{roles.Owner: e.owner}
	for _, r := range roles.All[1:] {
		_, keys[r] = e.member(t, r)
	}
	routes := representatives(t)
	require.Greater(t, len(routes), 40, "families × permissions")
	for _, r := range routes {
		method, pattern, _ := strings.Cut(r, " ")
		rule, _, _ := authz.Lookup(method, pattern)
		segs := strings.Split(pattern, "/")
		for i, s := range segs {
			if strings.HasPrefix(s, ":") {
				segs[i] = uuid.NewString()
			}
		}
		path := "/api" + strings.Join(segs, "/")
		if strings.HasPrefix(pattern, "/services/") {
			path = strings.Join(segs, "/") // the runtime's routes are not under /api
		}
		var body any
		if method != http.MethodGet {
			body = map[string]any{}
		}
		for _, role := range roles.All {
			a := e.do(t, method, path, keys[role], body)
			if role.Can(rule.Perm) {
				assert.NotEqual(t, http.StatusForbidden, a.status, "%s as %s: %s", r, role, a.body)
			} else if assert.Equal(t, http.StatusForbidden, a.status, "%s as %s", r, role) {
				assert.JSONEq(t, denied(role, rule.Perm), string(a.body), "%s as %s", r, role)
			}
		}
	}
}

// TestRolesInPractice: the cases the issue names, and keys capped by their
// creator's role as it changes.
func TestRolesInPractice(t *testing.T) {
	e := start(t)
	ctx := context.Background()
	editorID, editor := e.member(t, roles.Editor)
	_, annotator := e.member(t, roles.Annotator)
	_, viewer := e.member(t, roles.Viewer)

	ts := e.ok(t, "POST", "/api/simple/testsets", e.owner, map[string]any{"testset": map[string]any{"slug": "qa", "name": "QA",
		"data": map[string]any{"testcases": []any{map[string]any{"data": map[string]any{"q": "2+2", "a": "4"}}}}}})
	tsID := ts["testset"].(map[string]any)["id"].(string)

	t.Run("a viewer cannot delete a testset", func(t *testing.T) {
		a := e.do(t, "POST", "/api/simple/testsets/"+tsID+"/archive", viewer, nil)
		require.Equal(t, http.StatusForbidden, a.status)
		assert.JSONEq(t, denied(roles.Viewer, roles.Write), string(a.body))
		got := e.ok(t, "GET", "/api/simple/testsets/"+tsID, viewer, nil)
		assert.Equal(t, 1.0, got["count"], "still there, and readable by the viewer: %v", got)
	})

	t.Run("an annotator cannot deploy", func(t *testing.T) {
		a := e.do(t, "POST", "/api/applications/revisions/deploy", annotator, map[string]any{})
		require.Equal(t, http.StatusForbidden, a.status)
		assert.JSONEq(t, denied(roles.Annotator, roles.Deploy), string(a.body))
		a = e.do(t, "POST", "/api/annotations", annotator, map[string]any{})
		assert.NotEqual(t, http.StatusForbidden, a.status, "but may annotate: %s", a.body)
	})

	t.Run("an editor cannot create a key above their role", func(t *testing.T) {
		for _, c := range []struct {
			role roles.Role
			perm roles.Permission
		}{{roles.Admin, roles.ManageMembers}, {roles.Owner, roles.ManageMembers}} {
			a := e.do(t, "POST", "/api/keys", editor, map[string]any{"api_key": map[string]any{"role": c.role}})
			require.Equal(t, http.StatusForbidden, a.status, string(a.body))
			assert.JSONEq(t, denied(roles.Editor, c.perm), string(a.body))
		}
		a := e.do(t, "POST", "/api/keys", e.owner, map[string]any{"api_key": map[string]any{"role": "superuser"}})
		require.Equal(t, http.StatusUnprocessableEntity, a.status, string(a.body))
		assert.Contains(t, string(a.body), "superuser")
		// A viewer key of the editor's reads but cannot write.
		k := e.ok(t, "POST", "/api/keys", editor, map[string]any{"api_key": map[string]any{"role": "viewer"}})["api_key"].(map[string]any)
		assert.Equal(t, "viewer", k["role"])
		vk := k["key"].(string)
		e.ok(t, "GET", "/api/simple/testsets/"+tsID, vk, nil)
		a = e.do(t, "POST", "/api/simple/testsets/"+tsID+"/archive", vk, nil)
		require.Equal(t, http.StatusForbidden, a.status)
		assert.JSONEq(t, denied(roles.Viewer, roles.Write), string(a.body))
		// Viewers and annotators cannot create keys at all.
		for role, key := range map[roles.Role]string{roles.Viewer: viewer, roles.Annotator: annotator} {
			a := e.do(t, "POST", "/api/keys", key, nil)
			require.Equal(t, http.StatusForbidden, a.status)
			assert.JSONEq(t, denied(role, roles.ManageKeys), string(a.body))
		}
	})

	t.Run("a key is capped by its creator's current role", func(t *testing.T) {
		k := e.ok(t, "POST", "/api/keys", editor, nil)["api_key"].(map[string]any)
		assert.Equal(t, "editor", k["role"], "default: the creator's role")
		ek := k["key"].(string)
		e.ok(t, "POST", "/api/simple/testsets/"+tsID+"/unarchive", ek, nil)
		_, err := e.pool.Exec(ctx, `UPDATE project_memberships SET role = 'viewer' WHERE user_id = $1 AND project_id = $2`, editorID, e.projectID)
		require.NoError(t, err)
		require.Eventually(t, func() bool {
			return e.do(t, "POST", "/api/simple/testsets/"+tsID+"/unarchive", ek, nil).status == http.StatusForbidden
		}, 5*time.Second, 20*time.Millisecond, "the membership change reaches the gateway's cache")
		a := e.do(t, "POST", "/api/simple/testsets/"+tsID+"/unarchive", ek, nil)
		assert.JSONEq(t, denied(roles.Viewer, roles.Write), string(a.body))
		e.ok(t, "GET", "/api/simple/testsets/"+tsID, ek, nil)
		// Removed from the project: the key no longer authenticates.
		_, err = e.pool.Exec(ctx, `DELETE FROM project_memberships WHERE user_id = $1 AND project_id = $2`, editorID, e.projectID)
		require.NoError(t, err)
		require.Eventually(t, func() bool {
			return e.do(t, "GET", "/api/simple/testsets/"+tsID, ek, nil).status == http.StatusUnauthorized
		}, 5*time.Second, 20*time.Millisecond)
		assert.Equal(t, http.StatusUnauthorized, e.do(t, "GET", "/api/simple/testsets/"+tsID, editor, nil).status)
	})

	t.Run("organizations are isolated", func(t *testing.T) {
		other := e.p.Account(t, "other-org@example.com")
		a := e.do(t, "GET", "/api/simple/testsets/"+tsID, other, nil)
		assert.NotContains(t, string(a.body), `"QA"`, "another organization's key reads nothing of it")
		assert.Equal(t, http.StatusUnauthorized, e.do(t, "GET", "/api/simple/testsets/"+tsID+"?project_id="+e.projectID.String(), other, nil).status)
		// The other owner's audit log holds nothing of this organization.
		e.ok(t, "POST", "/api/keys", e.owner, nil)
		got := e.ok(t, "GET", "/api/audit", other, nil)
		assert.Equal(t, 0.0, got["count"], "%v", got)
	})
}

// TestAuditLog: every successful change on an audited route is written,
// with who, what and from which key; owners and admins read it, windowed
// and filtered; the table refuses updates and deletes.
func TestAuditLog(t *testing.T) {
	e := start(t)
	ctx := context.Background()
	_, admin := e.member(t, roles.Admin)
	_, editor := e.member(t, roles.Editor)
	var ownerKeyID uuid.UUID
	require.NoError(t, e.pool.QueryRow(ctx, `SELECT id FROM api_keys WHERE prefix = $1`, e.owner[:8]).Scan(&ownerKeyID))

	k := e.ok(t, "POST", "/api/keys", e.owner, map[string]any{"api_key": map[string]any{"name": "ci"}})["api_key"].(map[string]any)
	keyID := k["id"].(string)
	require.Equal(t, http.StatusNoContent, e.do(t, "DELETE", "/api/keys/"+keyID, e.owner, nil).status)
	run := e.ok(t, "POST", "/api/evaluations/runs", editor, map[string]any{"runs": []any{map[string]any{"name": "r1"}}})
	runID := run["runs"].([]any)[0].(map[string]any)["id"].(string)
	// Not audited: a read, a failure, a family outside the list.
	e.ok(t, "GET", "/api/keys", e.owner, nil)
	require.Equal(t, http.StatusNotFound, e.do(t, "DELETE", "/api/keys/"+uuid.NewString(), e.owner, nil).status)
	e.ok(t, "POST", "/api/simple/testsets", e.owner, map[string]any{"testset": map[string]any{"slug": "t", "data": map[string]any{"testcases": []any{}}}})

	page := e.ok(t, "GET", "/api/audit", admin, nil)
	require.Equal(t, 3.0, page["count"], "%v", page)
	entries := page["entries"].([]any)
	actions := []string{}
	for _, x := range entries {
		actions = append(actions, x.(map[string]any)["action"].(string))
	}
	assert.Equal(t, []string{"POST /evaluations/runs", "DELETE /keys/:id", "POST /keys"}, actions, "newest first")
	del := entries[1].(map[string]any)
	assert.Equal(t, map[string]any{"id": keyID}, del["target"])
	assert.Equal(t, e.ownerID.String(), del["actor_user_id"])
	assert.Equal(t, ownerKeyID.String(), del["actor_key_id"])
	assert.Equal(t, e.projectID.String(), del["project_id"])
	assert.NotEmpty(t, del["organization_id"])
	assert.NotEmpty(t, del["request_id"])
	assert.Equal(t, 204.0, del["status"])
	assert.Equal(t, 200.0, entries[0].(map[string]any)["status"])
	assert.NotContains(t, fmt.Sprint(entries[0]), runID, "a POST carries no id in its path")

	// Filters and windows.
	got := e.ok(t, "GET", "/api/audit?action="+strings.ReplaceAll("DELETE /keys/:id", " ", "%20"), e.owner, nil)
	assert.Equal(t, 1.0, got["count"])
	got = e.ok(t, "GET", "/api/audit?actor="+e.ownerID.String()+"&limit=1", e.owner, nil)
	require.Equal(t, 1.0, got["count"])
	assert.Equal(t, "DELETE /keys/:id", got["entries"].([]any)[0].(map[string]any)["action"])
	got = e.ok(t, "GET", "/api/audit?actor="+e.ownerID.String()+"&limit=1&cursor="+got["next"].(string), e.owner, nil)
	require.Equal(t, 1.0, got["count"])
	assert.Equal(t, "POST /keys", got["entries"].([]any)[0].(map[string]any)["action"])
	assert.Nil(t, got["next"], "the last window")
	got = e.ok(t, "GET", "/api/audit?since="+time.Now().Add(time.Hour).UTC().Format(time.RFC3339), e.owner, nil)
	assert.Equal(t, 0.0, got["count"])
	for _, q := range []string{"limit=0", "limit=501", "actor=bob", "since=yesterday", "cursor=xyz", "colour=red"} {
		a := e.do(t, "GET", "/api/audit?"+q, e.owner, nil)
		assert.Equal(t, http.StatusBadRequest, a.status, q)
		assert.Contains(t, string(a.body), strings.Split(q, "=")[0], q)
	}

	// Only owners and admins.
	a := e.do(t, "GET", "/api/audit", editor, nil)
	require.Equal(t, http.StatusForbidden, a.status)
	assert.JSONEq(t, denied(roles.Editor, roles.ManageMembers), string(a.body))

	// Append-only.
	_, err := e.pool.Exec(ctx, `UPDATE audit_log SET status = 500`)
	assert.ErrorContains(t, err, "append-only")
	_, err = e.pool.Exec(ctx, `DELETE FROM audit_log`)
	assert.ErrorContains(t, err, "append-only")
}
