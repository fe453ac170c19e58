package httpapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/pkg/testutil/pgtest"
	"github.com/assayhq/assay/pkg/testutil/smtptest"
	"github.com/assayhq/assay/services/gateway/internal/accounts"
	"github.com/assayhq/assay/services/gateway/internal/mailer"
)

// teamAccount is a provisioned account with its organization.
type teamAccount struct {
	account
	orgID string
}

func (s *stack) teamAccount(t *testing.T, email string) teamAccount {
	t.Helper()
	a := s.account(t, email)
	orgs := s.orgList(t, a.auth())
	require.Len(t, orgs, 1)
	return teamAccount{account: a, orgID: orgs[0]["id"].(string)}
}

// orgList reads GET /api/organizations, a plain list.
func (s *stack) orgList(t *testing.T, auth string) []map[string]any {
	t.Helper()
	r := s.do(t, "GET", "/api/organizations", auth, nil)
	require.Equal(t, http.StatusOK, r.status, string(r.body))
	var orgs []map[string]any
	require.NoError(t, json.Unmarshal(r.body, &orgs), string(r.body))
	return orgs
}

// want does the request and requires the status; it returns the JSON body
// (nil for an empty one).
func (s *stack) want(t *testing.T, status int, method, path, auth string, body any) map[string]any {
	t.Helper()
	r := s.do(t, method, path, auth, body)
	require.Equal(t, status, r.status, "%s %s: %s", method, path, r.body)
	if len(r.body) == 0 {
		return nil
	}
	return r.json(t)
}

// denied requires the roles.Denied 403 naming the permission and the role.
func (s *stack) denied(t *testing.T, perm, role, method, path, auth string, body any) {
	t.Helper()
	d := s.want(t, http.StatusForbidden, method, path, auth, body)["detail"].(map[string]any)
	assert.Equal(t, perm, d["permission"], "%s %s", method, path)
	assert.Equal(t, role, d["role"], "%s %s", method, path)
	assert.Contains(t, d["message"], `"`+perm+`"`)
}

const admin = "Access " + adminKey

// adminMember gives user a role on the target through the admin route and
// returns the membership id.
func (s *stack) adminMember(t *testing.T, kind, targetID, userID, role string) string {
	t.Helper()
	r := s.want(t, http.StatusOK, "POST", "/api/admin/simple/accounts/"+kind+"s/memberships", admin,
		map[string]any{kind + "_id": targetID, "user_id": userID, "role": role})
	return r["membership"].(map[string]any)["id"].(string)
}

// adminKey issues a key for the user in the project and returns its
// Authorization header.
func (s *stack) adminKey(t *testing.T, userID, projectID string) (auth, id string) {
	t.Helper()
	r := s.want(t, http.StatusOK, "POST", "/api/admin/simple/accounts/api-keys", admin,
		map[string]any{"user_id": userID, "project_id": projectID, "name": "test"})
	k := r["api_key"].(map[string]any)
	return "ApiKey " + k["key"].(string), k["id"].(string)
}

func obj(m map[string]any, key string) map[string]any { return m[key].(map[string]any) }

func ids(list any, key string) []string {
	var out []string
	for _, x := range list.([]any) {
		out = append(out, x.(map[string]any)[key].(string))
	}
	return out
}

func TestOrganizationsCRUD(t *testing.T) {
	s := newStack(t)
	a := s.teamAccount(t, "ann@example.com")

	// create: the caller owns it, with a Default workspace and project
	r := s.want(t, http.StatusCreated, "POST", "/api/organizations", a.auth(), map[string]any{"name": "Acme", "slug": "acme", "description": "d"})
	o := r
	assert.Equal(t, "Acme", o["name"])
	assert.Equal(t, "acme", o["slug"])
	assert.Equal(t, a.userID, o["owner_user_id"])
	assert.Equal(t, "owner", o["role"])
	org := o["id"].(string)
	var list []any
	for _, o := range s.orgList(t, a.auth()) {
		list = append(list, o)
	}
	assert.Equal(t, []string{a.orgID, org}, ids(list, "id"), "oldest first")
	wss := s.want(t, http.StatusOK, "GET", "/api/workspaces", a.auth(), nil)["workspaces"].([]any)
	require.Len(t, wss, 2)
	ws := wss[1].(map[string]any)
	assert.Equal(t, org, ws["organization_id"])
	assert.Equal(t, "Default", ws["name"])
	assert.Equal(t, "owner", ws["role"])
	prjs := s.want(t, http.StatusOK, "GET", "/api/projects", a.auth(), nil)["projects"].([]any)
	require.Len(t, prjs, 2)
	p := prjs[1].(map[string]any)
	assert.Equal(t, ws["id"], p["workspace_id"])
	assert.Equal(t, true, p["is_default"])
	assert.Equal(t, "owner", p["role"])

	// read, update, 400 without fields, 409 on a taken slug
	assert.Equal(t, "Acme", s.want(t, http.StatusOK, "GET", "/api/organizations/"+org, a.auth(), nil)["name"])
	d := s.want(t, http.StatusBadRequest, "PUT", "/api/organizations/"+org, a.auth(), map[string]any{})["detail"].(map[string]any)
	assert.Equal(t, "organization", d["field"])
	assert.Contains(t, d["message"], "at least one of name, slug, description")
	s.want(t, http.StatusBadRequest, "PUT", "/api/organizations/"+org, a.auth(), nil)
	s.want(t, http.StatusBadRequest, "PUT", "/api/organizations/"+org, a.auth(), map[string]any{"name": " "})
	s.want(t, http.StatusBadRequest, "PUT", "/api/organizations/"+org, a.auth(), map[string]any{"slug": "a b"})
	o = s.want(t, http.StatusOK, "PUT", "/api/organizations/"+org, a.auth(), map[string]any{"name": "Acme Inc"})
	assert.Equal(t, "Acme Inc", o["name"])
	assert.Equal(t, "acme", o["slug"], "unchanged fields are kept")
	s.want(t, http.StatusCreated, "POST", "/api/organizations", a.auth(), map[string]any{"name": "Other", "slug": "other"})
	d = s.want(t, http.StatusConflict, "PUT", "/api/organizations/"+org, a.auth(), map[string]any{"slug": "other"})["detail"].(map[string]any)
	assert.Equal(t, map[string]any{"slug": "other"}, d["conflict"])
	s.want(t, http.StatusConflict, "POST", "/api/organizations", a.auth(), map[string]any{"name": "X", "slug": "acme"})
	s.want(t, http.StatusBadRequest, "POST", "/api/organizations", a.auth(), map[string]any{"slug": "noname"})
	s.want(t, http.StatusUnprocessableEntity, "GET", "/api/organizations/not-a-uuid", a.auth(), nil)
	s.want(t, http.StatusNotFound, "GET", "/api/organizations/"+uuid.NewString(), a.auth(), nil)
	s.want(t, http.StatusUnauthorized, "GET", "/api/organizations", "", nil)

	// delete: the projects are purged before their rows go
	s.want(t, http.StatusNoContent, "DELETE", "/api/organizations/"+org, a.auth(), nil)
	purged, missing := s.purger.calls()
	assert.Equal(t, []uuid.UUID{uuid.MustParse(p["id"].(string))}, purged)
	assert.Zero(t, missing, "purged before the rows were deleted")
	s.want(t, http.StatusNotFound, "GET", "/api/organizations/"+org, a.auth(), nil)
	s.want(t, http.StatusNotFound, "GET", "/api/projects/"+p["id"].(string), a.auth(), nil)
	s.want(t, http.StatusNotFound, "DELETE", "/api/organizations/"+org, a.auth(), nil)

	// a failed purge deletes nothing (503, retry later)
	s.purger.mu.Lock()
	s.purger.fail = errors.New("registry down")
	s.purger.mu.Unlock()
	r2 := s.do(t, "DELETE", "/api/organizations/"+a.orgID, a.auth(), nil)
	assert.Equal(t, http.StatusServiceUnavailable, r2.status, string(r2.body))
	s.want(t, http.StatusOK, "GET", "/api/organizations/"+a.orgID, a.auth(), nil)
}

func TestMembersRolesAndOwnership(t *testing.T) {
	s := newStack(t)
	own := s.teamAccount(t, "owner@example.com")
	bob := s.teamAccount(t, "bob@example.com")
	cat := s.teamAccount(t, "cat@example.com")
	org := "/api/organizations/" + own.orgID

	// a non-member gets an organization role only through an invitation
	s.want(t, http.StatusNotFound, "PUT", org+"/members/"+bob.userID, own.auth(), map[string]any{"role": "viewer"})
	s.adminMember(t, "organization", own.orgID, bob.userID, "viewer")
	bobKey, _ := s.adminKey(t, bob.userID, own.projectID)

	// bob the viewer reads but cannot change anything
	o := s.want(t, http.StatusOK, "GET", org, bobKey, nil)
	assert.Equal(t, "viewer", o["role"])
	m := s.want(t, http.StatusOK, "GET", org+"/members", bobKey, nil)
	assert.EqualValues(t, 2, m["count"])
	assert.Equal(t, []string{own.userID, bob.userID}, ids(m["members"], "user_id"))
	assert.Equal(t, "owner@example.com", m["members"].([]any)[0].(map[string]any)["email"])
	s.denied(t, "manage_members", "viewer", "PUT", org, bobKey, map[string]any{"name": "mine"})
	s.denied(t, "manage_members", "viewer", "PUT", org+"/members/"+bob.userID, bobKey, map[string]any{"role": "admin"})
	s.denied(t, "manage_members", "viewer", "POST", "/api/workspaces", bobKey, map[string]any{"organization_id": own.orgID, "name": "w"})
	s.denied(t, "own", "viewer", "DELETE", org, bobKey, nil)
	s.denied(t, "own", "viewer", "POST", org+"/transfer-ownership", bobKey, map[string]any{"user_id": bob.userID})

	// role changes: bad role 400, admin may not grant owner nor touch the owner
	d := s.want(t, http.StatusBadRequest, "PUT", org+"/members/"+bob.userID, own.auth(), map[string]any{"role": "root"})["detail"].(map[string]any)
	assert.Equal(t, "role", d["field"])
	r := s.want(t, http.StatusOK, "PUT", org+"/members/"+bob.userID, own.auth(), map[string]any{"role": "admin"})
	assert.Equal(t, "admin", obj(r, "member")["role"])
	s.adminMember(t, "organization", own.orgID, cat.userID, "editor")
	s.denied(t, "own", "admin", "PUT", org+"/members/"+cat.userID, bobKey, map[string]any{"role": "owner"})
	s.denied(t, "own", "admin", "PUT", org+"/members/"+own.userID, bobKey, map[string]any{"role": "viewer"})
	s.denied(t, "own", "admin", "DELETE", org+"/members/"+own.userID, bobKey, nil)
	assert.Equal(t, "viewer", obj(s.want(t, http.StatusOK, "PUT", org+"/members/"+cat.userID, bobKey, map[string]any{"role": "viewer"}), "member")["role"])

	// the last owner can be neither demoted nor removed
	d = s.want(t, http.StatusConflict, "PUT", org+"/members/"+own.userID, own.auth(), map[string]any{"role": "admin"})["detail"].(map[string]any)
	assert.Contains(t, d["message"], "transfer the ownership")
	s.want(t, http.StatusConflict, "DELETE", org+"/members/"+own.userID, own.auth(), nil)

	// transfer: to a member only; the old owner becomes an admin
	stranger := s.teamAccount(t, "stranger@example.com")
	s.want(t, http.StatusConflict, "POST", org+"/transfer-ownership", own.auth(), map[string]any{"user_id": stranger.userID})
	s.want(t, http.StatusBadRequest, "POST", org+"/transfer-ownership", own.auth(), map[string]any{})
	o = s.want(t, http.StatusOK, "POST", org+"/transfer-ownership", own.auth(), map[string]any{"user_id": bob.userID})
	assert.Equal(t, bob.userID, o["owner_user_id"])
	assert.Equal(t, "admin", o["role"], "the caller's new role")
	assert.Equal(t, "owner", s.want(t, http.StatusOK, "GET", org, bobKey, nil)["role"])
	assert.Equal(t, "admin", obj(s.want(t, http.StatusOK, "GET", "/api/workspaces/"+own.workspaceID, own.auth(), nil), "workspace")["role"],
		"the previous owner's workspace membership is demoted too")
	assert.Equal(t, "admin", obj(s.want(t, http.StatusOK, "GET", "/api/projects/"+own.projectID, own.auth(), nil), "project")["role"])
	s.denied(t, "own", "admin", "DELETE", org, own.auth(), nil)
	s.denied(t, "own", "admin", "POST", org+"/transfer-ownership", own.auth(), map[string]any{"user_id": own.userID})

	// removing a member revokes their keys in the organization at once
	catKey, _ := s.adminKey(t, cat.userID, own.projectID)
	s.want(t, http.StatusOK, "GET", "/api/profile", catKey, nil)
	s.want(t, http.StatusNoContent, "DELETE", org+"/members/"+cat.userID, bobKey, nil)
	s.want(t, http.StatusUnauthorized, "GET", "/api/profile", catKey, nil)
	s.want(t, http.StatusOK, "GET", "/api/profile", cat.auth(), nil)
	s.want(t, http.StatusNotFound, "GET", org, cat.auth(), nil)
	s.want(t, http.StatusNotFound, "DELETE", org+"/members/"+cat.userID, bobKey, nil)

	// a member may leave on their own
	s.adminMember(t, "organization", own.orgID, cat.userID, "viewer")
	s.want(t, http.StatusNoContent, "DELETE", org+"/members/"+cat.userID, cat.auth(), nil)

	// the new owner deletes it: every project purged first
	s.want(t, http.StatusNoContent, "DELETE", org, bobKey, nil)
	purged, missing := s.purger.calls()
	assert.Equal(t, []uuid.UUID{uuid.MustParse(own.projectID)}, purged)
	assert.Zero(t, missing)
	s.want(t, http.StatusUnauthorized, "GET", "/api/profile", bobKey, nil) // the key went with its project
}

// TestCrossOrganizationIsolation: a member of one organization learns
// nothing about another: every read and write on it is a 404, the same
// answer as for an id that does not exist.
func TestCrossOrganizationIsolation(t *testing.T) {
	s := newStack(t)
	a := s.teamAccount(t, "a@example.com")
	b := s.teamAccount(t, "b@example.com")
	for _, c := range []struct{ method, path string }{
		{"GET", "/api/organizations/" + b.orgID},
		{"PUT", "/api/organizations/" + b.orgID},
		{"DELETE", "/api/organizations/" + b.orgID},
		{"POST", "/api/organizations/" + b.orgID + "/transfer-ownership"},
		{"GET", "/api/organizations/" + b.orgID + "/members"},
		{"PUT", "/api/organizations/" + b.orgID + "/members/" + a.userID},
		{"DELETE", "/api/organizations/" + b.orgID + "/members/" + b.userID},
		{"GET", "/api/workspaces/" + b.workspaceID},
		{"PUT", "/api/workspaces/" + b.workspaceID},
		{"DELETE", "/api/workspaces/" + b.workspaceID},
		{"GET", "/api/workspaces/" + b.workspaceID + "/members"},
		{"PUT", "/api/workspaces/" + b.workspaceID + "/members/" + a.userID},
		{"POST", "/api/workspaces/" + b.workspaceID + "/invitations"},
		{"GET", "/api/workspaces/" + b.workspaceID + "/invitations"},
		{"GET", "/api/projects/" + b.projectID},
		{"PUT", "/api/projects/" + b.projectID},
		{"DELETE", "/api/projects/" + b.projectID},
		{"GET", "/api/projects/" + b.projectID + "/members"},
		{"DELETE", "/api/projects/" + b.projectID + "/members/" + b.userID},
		// the compatible frontend's routes
		{"PATCH", "/api/organizations/" + b.orgID},
		{"POST", "/api/organizations/" + b.orgID + "/transfer/" + a.userID},
		{"POST", "/api/organizations/" + b.orgID + "/workspaces/" + b.workspaceID + "/invite"},
		{"POST", "/api/organizations/" + a.orgID + "/workspaces/" + b.workspaceID + "/invite"},
		{"POST", "/api/organizations/" + b.orgID + "/workspaces/" + b.workspaceID + "/invite/resend"},
		{"DELETE", "/api/workspaces/" + b.workspaceID + "/users?email=b@example.com"},
		{"POST", "/api/workspaces/" + b.workspaceID + "/roles"},
		{"DELETE", "/api/workspaces/" + b.workspaceID + "/roles?email=b@example.com&role=owner"},
	} {
		body := map[string]any{"name": "x", "role": "owner", "user_id": a.userID, "email": "x@example.com"}
		r := s.do(t, c.method, c.path, a.auth(), body)
		assert.Equal(t, http.StatusNotFound, r.status, "%s %s: %s", c.method, c.path, r.body)
	}
	s.want(t, http.StatusNotFound, "POST", "/api/workspaces", a.auth(), map[string]any{"organization_id": b.orgID, "name": "x"})
	s.want(t, http.StatusNotFound, "POST", "/api/projects", a.auth(), map[string]any{"workspace_id": b.workspaceID, "name": "x"})
	orgs := s.orgList(t, a.auth())
	require.Len(t, orgs, 1)
	assert.Equal(t, a.orgID, orgs[0]["id"])
	assert.Equal(t, []string{a.projectID}, ids(s.want(t, http.StatusOK, "GET", "/api/projects", a.auth(), nil)["projects"], "id"))
	// nothing changed
	assert.Equal(t, "owner", s.want(t, http.StatusOK, "GET", "/api/organizations/"+b.orgID, b.auth(), nil)["role"])
	assert.EqualValues(t, 1, s.want(t, http.StatusOK, "GET", "/api/projects/"+b.projectID+"/members", b.auth(), nil)["count"])
}

func TestWorkspacesAndProjects(t *testing.T) {
	s := newStack(t)
	own := s.teamAccount(t, "own@example.com")
	ed := s.teamAccount(t, "ed@example.com")
	s.adminMember(t, "organization", own.orgID, ed.userID, "editor")
	edKey, _ := s.adminKey(t, ed.userID, own.projectID)

	// workspaces: admin+ of the organization creates and deletes
	s.denied(t, "manage_members", "editor", "POST", "/api/workspaces", edKey, map[string]any{"organization_id": own.orgID, "name": "Research"})
	s.want(t, http.StatusBadRequest, "POST", "/api/workspaces", own.auth(), map[string]any{"name": "Research"})
	s.want(t, http.StatusBadRequest, "POST", "/api/workspaces", own.auth(), map[string]any{"organization_id": own.orgID})
	w := obj(s.want(t, http.StatusOK, "POST", "/api/workspaces", own.auth(), map[string]any{"organization_id": own.orgID, "name": "Research", "description": "r"}), "workspace")
	assert.Equal(t, "Research", w["name"])
	assert.Equal(t, "owner", w["role"])
	ws := w["id"].(string)
	assert.Equal(t, "editor", obj(s.want(t, http.StatusOK, "GET", "/api/workspaces/"+ws, edKey, nil), "workspace")["role"], "the organization role applies")
	s.want(t, http.StatusBadRequest, "PUT", "/api/workspaces/"+ws, own.auth(), map[string]any{})
	s.denied(t, "manage_members", "editor", "PUT", "/api/workspaces/"+ws, edKey, map[string]any{"name": "R"})
	assert.Equal(t, "R&D", obj(s.want(t, http.StatusOK, "PUT", "/api/workspaces/"+ws, own.auth(), map[string]any{"name": "R&D"}), "workspace")["name"])

	// a workspace admin manages the workspace's projects, not the
	// organization; a key without a role of its own acts with its user's
	// role on each target, one with a role is capped by it everywhere
	s.want(t, http.StatusOK, "PUT", "/api/workspaces/"+ws+"/members/"+ed.userID, own.auth(), map[string]any{"role": "admin"})
	assert.Equal(t, "admin", obj(s.want(t, http.StatusOK, "GET", "/api/workspaces/"+ws, edKey, nil), "workspace")["role"])
	r := s.want(t, http.StatusOK, "POST", "/api/admin/simple/accounts/api-keys", admin,
		map[string]any{"user_id": ed.userID, "project_id": own.projectID, "role": "editor"})
	capped := "ApiKey " + obj(r, "api_key")["key"].(string)
	assert.Equal(t, "editor", obj(s.want(t, http.StatusOK, "GET", "/api/workspaces/"+ws, capped, nil), "workspace")["role"])
	s.denied(t, "manage_members", "editor", "POST", "/api/projects", capped, map[string]any{"workspace_id": ws, "name": "Bot"})
	first := obj(s.want(t, http.StatusOK, "POST", "/api/projects", own.auth(), map[string]any{"workspace_id": ws, "name": "First"}), "project")
	assert.Equal(t, "owner", first["role"])
	edWsKey, _ := s.adminKey(t, ed.userID, first["id"].(string))
	assert.Equal(t, "admin", obj(s.want(t, http.StatusOK, "GET", "/api/workspaces/"+ws, edWsKey, nil), "workspace")["role"])
	p := obj(s.want(t, http.StatusOK, "POST", "/api/projects", edWsKey, map[string]any{"workspace_id": ws, "name": "Bot"}), "project")
	assert.Equal(t, ws, p["workspace_id"])
	assert.Equal(t, own.orgID, p["organization_id"])
	assert.Equal(t, false, p["is_default"])
	assert.Equal(t, "admin", p["role"])
	prj := p["id"].(string)
	s.want(t, http.StatusBadRequest, "PUT", "/api/projects/"+prj, edWsKey, map[string]any{})
	assert.Equal(t, "Bot 2", obj(s.want(t, http.StatusOK, "PUT", "/api/projects/"+prj, edWsKey, map[string]any{"name": "Bot 2"}), "project")["name"])
	s.denied(t, "manage_members", "editor", "DELETE", "/api/workspaces/"+ws, edKey, nil)
	s.denied(t, "manage_members", "editor", "DELETE", "/api/workspaces/"+ws, edWsKey, nil) // needs it on the organization, where ed is an editor

	// project members: a project role narrows the workspace's
	s.want(t, http.StatusOK, "PUT", "/api/projects/"+prj+"/members/"+ed.userID, own.auth(), map[string]any{"role": "viewer"})
	edPrjKey, _ := s.adminKey(t, ed.userID, prj)
	assert.Equal(t, "viewer", obj(s.want(t, http.StatusOK, "GET", "/api/projects/"+prj, edPrjKey, nil), "project")["role"])
	s.denied(t, "manage_members", "viewer", "PUT", "/api/projects/"+prj, edPrjKey, map[string]any{"name": "x"})
	assert.Equal(t, []string{ed.userID}, ids(s.want(t, http.StatusOK, "GET", "/api/projects/"+prj+"/members", edPrjKey, nil)["members"], "user_id"))
	stranger := s.teamAccount(t, "stranger@example.com")
	s.want(t, http.StatusNotFound, "PUT", "/api/projects/"+prj+"/members/"+stranger.userID, own.auth(), map[string]any{"role": "viewer"})
	s.want(t, http.StatusNoContent, "DELETE", "/api/projects/"+prj+"/members/"+ed.userID, own.auth(), nil)
	s.want(t, http.StatusUnauthorized, "GET", "/api/profile", edPrjKey, nil) // revoked with the membership
	assert.Equal(t, "admin", obj(s.want(t, http.StatusOK, "GET", "/api/projects/"+prj, edWsKey, nil), "project")["role"])

	// removing from the workspace removes its project memberships and keys
	edPrjKey, _ = s.adminKey(t, ed.userID, prj)
	s.want(t, http.StatusOK, "PUT", "/api/projects/"+prj+"/members/"+ed.userID, own.auth(), map[string]any{"role": "viewer"})
	s.want(t, http.StatusNoContent, "DELETE", "/api/workspaces/"+ws+"/members/"+ed.userID, own.auth(), nil)
	s.want(t, http.StatusUnauthorized, "GET", "/api/profile", edPrjKey, nil)
	s.want(t, http.StatusUnauthorized, "GET", "/api/profile", edWsKey, nil)
	assert.EqualValues(t, 0, s.want(t, http.StatusOK, "GET", "/api/projects/"+prj+"/members", own.auth(), nil)["count"])
	s.want(t, http.StatusOK, "GET", "/api/profile", edKey, nil) // the key in another workspace stays

	// deletes purge first
	s.want(t, http.StatusNoContent, "DELETE", "/api/projects/"+prj, own.auth(), nil)
	s.want(t, http.StatusNotFound, "GET", "/api/projects/"+prj, own.auth(), nil)
	p2 := obj(s.want(t, http.StatusOK, "POST", "/api/projects", own.auth(), map[string]any{"workspace_id": ws, "name": "Two"}), "project")
	s.want(t, http.StatusNoContent, "DELETE", "/api/workspaces/"+ws, own.auth(), nil)
	s.want(t, http.StatusNotFound, "GET", "/api/workspaces/"+ws, own.auth(), nil)
	purged, missing := s.purger.calls()
	assert.ElementsMatch(t, []uuid.UUID{uuid.MustParse(prj), uuid.MustParse(first["id"].(string)), uuid.MustParse(p2["id"].(string))}, purged)
	assert.Zero(t, missing)
}

func TestInvitationsEndToEnd(t *testing.T) {
	s := newStack(t)
	own := s.teamAccount(t, "own@example.com")
	ws := "/api/workspaces/" + own.workspaceID
	second := obj(s.want(t, http.StatusOK, "POST", "/api/projects", own.auth(), map[string]any{"workspace_id": own.workspaceID, "name": "Second"}), "project")["id"].(string)

	// bad input
	for _, body := range []map[string]any{
		{"role": "editor"}, {"email": "nope", "role": "editor"}, {"email": "n@example.com", "role": "root"},
		{"email": "n@example.com", "role": "editor", "project_ids": []string{uuid.NewString()}},
	} {
		s.want(t, http.StatusBadRequest, "POST", ws+"/invitations", own.auth(), body)
	}

	// invite a new person as editor of one project
	r := s.want(t, http.StatusCreated, "POST", ws+"/invitations", own.auth(), map[string]any{"email": "new@example.com", "role": "editor", "project_ids": []string{second}})
	inv := obj(r, "invitation")
	token := r["token"].(string)
	assert.Equal(t, "pending", inv["status"])
	assert.Equal(t, "editor", inv["role"])
	assert.Equal(t, []any{second}, inv["project_ids"])
	assert.Contains(t, r["accept_url"], token)
	var stored string
	require.NoError(t, s.pool.QueryRow(context.Background(), `SELECT token_hash FROM invitations WHERE id = $1`, inv["id"]).Scan(&stored))
	assert.NotContains(t, stored, token, "only the hash is stored")
	s.want(t, http.StatusConflict, "POST", ws+"/invitations", own.auth(), map[string]any{"email": "new@example.com", "role": "viewer"})
	l := s.want(t, http.StatusOK, "GET", ws+"/invitations", own.auth(), nil)
	assert.EqualValues(t, 1, l["count"])

	// accept: a new user needs a password; the token is the credential
	s.want(t, http.StatusForbidden, "POST", "/api/invitations/accept", "", map[string]any{"token": token})
	s.want(t, http.StatusForbidden, "POST", "/api/invitations/accept", "", map[string]any{"token": token, "password": "short"})
	s.want(t, http.StatusBadRequest, "POST", "/api/invitations/accept", "", map[string]any{})
	s.want(t, http.StatusNotFound, "POST", "/api/invitations/accept", "", map[string]any{"token": "nope", "password": "long enough"})
	a := s.want(t, http.StatusOK, "POST", "/api/invitations/accept", "", map[string]any{"token": token, "password": "s3cret-pass", "username": "newbie"})
	newUser := a["user_id"].(string)
	assert.Equal(t, "accepted", obj(a, "invitation")["status"])
	s.want(t, http.StatusConflict, "POST", "/api/invitations/accept", "", map[string]any{"token": token, "password": "s3cret-pass"})
	var hash string
	require.NoError(t, s.pool.QueryRow(context.Background(), `SELECT password_hash FROM user_identities WHERE user_id = $1 AND method = 'email:password'`, newUser).Scan(&hash))
	assert.NotContains(t, hash, "s3cret")

	// the new user, with a key, sees that project only, as editor
	key, _ := s.adminKey(t, newUser, second)
	p := s.want(t, http.StatusOK, "GET", "/api/profile", key, nil)
	assert.Equal(t, "new@example.com", p["email"])
	assert.Equal(t, "newbie", p["username"])
	require.Len(t, p["projects"], 1)
	assert.Equal(t, second, p["projects"].([]any)[0].(map[string]any)["id"])
	assert.Equal(t, "editor", p["projects"].([]any)[0].(map[string]any)["role"])
	assert.Equal(t, []string{second}, ids(s.want(t, http.StatusOK, "GET", "/api/projects", key, nil)["projects"], "id"))
	s.want(t, http.StatusNotFound, "GET", "/api/projects/"+own.projectID, key, nil)
	// expired: 410; resend gives a new token and expiry, the old one dies
	r = s.want(t, http.StatusCreated, "POST", ws+"/invitations", own.auth(), map[string]any{"email": "late@example.com", "role": "viewer"})
	late, lateToken := obj(r, "invitation")["id"].(string), r["token"].(string)
	_, err := s.pool.Exec(context.Background(), `UPDATE invitations SET expires_at = now() - interval '1 second' WHERE id = $1`, late)
	require.NoError(t, err)
	s.want(t, http.StatusGone, "POST", "/api/invitations/accept", "", map[string]any{"token": lateToken, "password": "s3cret-pass"})
	assert.Equal(t, "expired", s.want(t, http.StatusOK, "GET", ws+"/invitations", own.auth(), nil)["invitations"].([]any)[0].(map[string]any)["status"])
	r = s.want(t, http.StatusOK, "POST", ws+"/invitations/"+late+"/resend", own.auth(), nil)
	assert.Equal(t, "pending", obj(r, "invitation")["status"])
	newToken := r["token"].(string)
	assert.NotEqual(t, lateToken, newToken)
	s.want(t, http.StatusNotFound, "POST", "/api/invitations/accept", "", map[string]any{"token": lateToken, "password": "s3cret-pass"})

	// revoked: 410, and it cannot be resent
	s.want(t, http.StatusNoContent, "DELETE", ws+"/invitations/"+late, own.auth(), nil)
	s.want(t, http.StatusGone, "POST", "/api/invitations/accept", "", map[string]any{"token": newToken, "password": "s3cret-pass"})
	s.want(t, http.StatusConflict, "POST", ws+"/invitations/"+late+"/resend", own.auth(), nil)
	s.want(t, http.StatusConflict, "DELETE", ws+"/invitations/"+late, own.auth(), nil)
	s.want(t, http.StatusNotFound, "DELETE", ws+"/invitations/"+uuid.NewString(), own.auth(), nil)

	// a known user accepts signed in as themselves (or with their password)
	known := s.teamAccount(t, "known@example.com")
	r = s.want(t, http.StatusCreated, "POST", ws+"/invitations", own.auth(), map[string]any{"email": "known@example.com", "role": "admin"})
	kt := r["token"].(string)
	d := s.want(t, http.StatusForbidden, "POST", "/api/invitations/accept", "", map[string]any{"token": kt})["detail"].(map[string]any)
	assert.Contains(t, d["message"], "known@example.com")
	s.want(t, http.StatusForbidden, "POST", "/api/invitations/accept", key, map[string]any{"token": kt})
	s.want(t, http.StatusOK, "POST", "/api/invitations/accept", known.auth(), map[string]any{"token": kt})
	assert.Equal(t, "admin", obj(s.want(t, http.StatusOK, "GET", ws, known.auth(), nil), "workspace")["role"])

	// an inviter cannot invite above their own role, nor without manage_members
	knownKey, _ := s.adminKey(t, known.userID, own.projectID)
	s.denied(t, "own", "admin", "POST", ws+"/invitations", knownKey, map[string]any{"email": "boss@example.com", "role": "owner"})
	s.want(t, http.StatusCreated, "POST", ws+"/invitations", knownKey, map[string]any{"email": "peer@example.com", "role": "admin"})
	// the project editor is only a viewer of the workspace
	s.denied(t, "manage_members", "viewer", "GET", "/api/workspaces/"+own.workspaceID+"/invitations", key, nil)
}

func TestProfileChanges(t *testing.T) {
	s := newStack(t)
	a := s.teamAccount(t, "pat@example.com")
	d := s.want(t, http.StatusBadRequest, "PUT", "/api/profile", a.auth(), map[string]any{})["detail"].(map[string]any)
	assert.Equal(t, "profile", d["field"])
	s.want(t, http.StatusBadRequest, "PUT", "/api/profile", a.auth(), nil)
	p := s.want(t, http.StatusOK, "PUT", "/api/profile", a.auth(), map[string]any{"username": "pat"})
	assert.Equal(t, "pat", p["username"])
	p = s.want(t, http.StatusOK, "PUT", "/api/profile", a.auth(), map[string]any{"name": "Pat"})
	assert.Equal(t, "pat", p["username"])
	assert.Equal(t, "Pat", p["name"])

	// sole owner of an organization with other members: 409
	b := s.teamAccount(t, "other@example.com")
	mid := s.adminMember(t, "project", a.projectID, b.userID, "viewer")
	s.want(t, http.StatusConflict, "DELETE", "/api/profile", a.auth(), nil)
	s.want(t, http.StatusNoContent, "DELETE", "/api/admin/simple/accounts/projects/memberships/"+mid, admin, nil)
	s.want(t, http.StatusNoContent, "DELETE", "/api/profile", a.auth(), nil)
	purged, missing := s.purger.calls()
	assert.Equal(t, []uuid.UUID{uuid.MustParse(a.projectID)}, purged)
	assert.Zero(t, missing)
	require.Eventually(t, func() bool { return s.do(t, "GET", "/api/profile", a.auth(), nil).status == http.StatusUnauthorized }, 2*time.Second, 10*time.Millisecond)
	var n int
	require.NoError(t, s.pool.QueryRow(context.Background(), `SELECT count(*) FROM organizations WHERE id = $1`, a.orgID).Scan(&n))
	assert.Zero(t, n)
}

func TestAdminSimpleRoutes(t *testing.T) {
	s := newStack(t)
	base := "/api/admin/simple/accounts"
	count := func(table string) int {
		var n int
		require.NoError(t, s.pool.QueryRow(context.Background(), `SELECT count(*) FROM `+table).Scan(&n))
		return n
	}

	// users: with identities; a taken email or a bad identity creates nothing
	u := s.want(t, http.StatusOK, "POST", base+"/users", admin, map[string]any{
		"user":            map[string]any{"email": "dev@example.com", "username": "dev"},
		"user_identities": []any{map[string]any{"method": "email:password", "subject": "dev@example.com", "password": "pw-12345678"}}})
	user := obj(u, "user")["id"].(string)
	require.Len(t, u["user_identities"], 1)
	assert.NotContains(t, string(mustJSON(t, u)), "pw-12345678")
	s.want(t, http.StatusConflict, "POST", base+"/users", admin, map[string]any{"user": map[string]any{"email": "DEV@example.com"}})
	s.want(t, http.StatusBadRequest, "POST", base+"/users", admin, map[string]any{"user": map[string]any{"email": "x@example.com"},
		"user_identities": []any{map[string]any{"method": "sms", "subject": "1"}}})
	s.want(t, http.StatusBadRequest, "POST", base+"/users", admin, map[string]any{"user": map[string]any{"email": "bad"}})
	assert.Equal(t, 1, count("users"))
	assert.Equal(t, 1, count("user_identities"))
	s.want(t, http.StatusUnauthorized, "POST", base+"/users", "ApiKey x.y", map[string]any{"user": map[string]any{"email": "y@example.com"}})

	// organization, workspace, project, each on its own
	s.want(t, http.StatusNotFound, "POST", base+"/organizations", admin, map[string]any{"name": "O", "owner_user_id": uuid.NewString()})
	s.want(t, http.StatusBadRequest, "POST", base+"/organizations", admin, map[string]any{"name": "O"})
	o := obj(s.want(t, http.StatusOK, "POST", base+"/organizations", admin, map[string]any{"name": "O", "slug": "o", "owner_user_id": user}), "organization")
	org := o["id"].(string)
	s.want(t, http.StatusConflict, "POST", base+"/organizations", admin, map[string]any{"name": "O2", "slug": "o", "owner_user_id": user})
	assert.Equal(t, 1, count("organizations"))
	assert.Equal(t, 1, count("organization_memberships"), "the owner's membership, nothing else")
	assert.Equal(t, 0, count("workspaces"))
	s.want(t, http.StatusNotFound, "POST", base+"/workspaces", admin, map[string]any{"organization_id": uuid.NewString(), "name": "W"})
	w := obj(s.want(t, http.StatusOK, "POST", base+"/workspaces", admin, map[string]any{"organization_id": org, "name": "W"}), "workspace")
	s.want(t, http.StatusNotFound, "POST", base+"/projects", admin, map[string]any{"workspace_id": uuid.NewString(), "name": "P"})
	s.want(t, http.StatusBadRequest, "POST", base+"/projects", admin, map[string]any{"workspace_id": w["id"]})
	p := obj(s.want(t, http.StatusOK, "POST", base+"/projects", admin, map[string]any{"workspace_id": w["id"], "name": "P", "is_default": true}), "project")
	assert.Equal(t, org, p["organization_id"])
	prj := p["id"].(string)

	// memberships
	other := obj(s.want(t, http.StatusOK, "POST", base+"/users", admin, map[string]any{"user": map[string]any{"email": "ops@example.com"}}), "user")["id"].(string)
	s.want(t, http.StatusBadRequest, "POST", base+"/projects/memberships", admin, map[string]any{"project_id": prj, "user_id": other, "role": "god"})
	s.want(t, http.StatusBadRequest, "POST", base+"/projects/memberships", admin, map[string]any{"user_id": other, "role": "viewer"})
	s.want(t, http.StatusNotFound, "POST", base+"/projects/memberships", admin, map[string]any{"project_id": prj, "user_id": uuid.NewString(), "role": "viewer"})
	mid := s.adminMember(t, "project", prj, other, "viewer")
	s.want(t, http.StatusConflict, "POST", base+"/projects/memberships", admin, map[string]any{"project_id": prj, "user_id": other, "role": "editor"})
	wmid := s.adminMember(t, "workspace", w["id"].(string), other, "editor")

	// api keys: for a user with a role in the project only
	s.want(t, http.StatusNotFound, "POST", base+"/api-keys", admin, map[string]any{"user_id": uuid.NewString(), "project_id": prj})
	s.want(t, http.StatusBadRequest, "POST", base+"/api-keys", admin, map[string]any{"user_id": other, "project_id": prj, "expires_at": "2001-01-01T00:00:00Z"})
	s.want(t, http.StatusUnprocessableEntity, "POST", base+"/api-keys", admin, map[string]any{"user_id": other, "project_id": prj, "role": "editor"}) // above viewer
	s.want(t, http.StatusUnprocessableEntity, "POST", base+"/api-keys", admin, map[string]any{"user_id": other, "project_id": prj, "role": "root"})
	r := s.want(t, http.StatusOK, "POST", base+"/api-keys", admin, map[string]any{"user_id": other, "project_id": prj, "role": "viewer"})
	assert.Equal(t, "viewer", obj(r, "api_key")["role"])
	key, keyID := s.adminKey(t, other, prj)
	prof := s.want(t, http.StatusOK, "GET", "/api/profile", key, nil)
	assert.Equal(t, "ops@example.com", prof["email"])
	assert.Equal(t, "viewer", prof["projects"].([]any)[0].(map[string]any)["role"], "the project membership is the most specific")
	s.want(t, http.StatusNoContent, "DELETE", base+"/api-keys/"+keyID, admin, nil)
	s.want(t, http.StatusUnauthorized, "GET", "/api/profile", key, nil)
	s.want(t, http.StatusNotFound, "DELETE", base+"/api-keys/"+keyID, admin, nil)

	// deleting a membership revokes the member's keys below it
	key, _ = s.adminKey(t, other, prj)
	s.want(t, http.StatusNoContent, "DELETE", base+"/workspaces/memberships/"+wmid, admin, nil)
	s.want(t, http.StatusUnauthorized, "GET", "/api/profile", key, nil)
	s.want(t, http.StatusNotFound, "DELETE", base+"/workspaces/memberships/"+wmid, admin, nil)
	s.want(t, http.StatusNoContent, "DELETE", base+"/projects/memberships/"+mid, admin, nil)
	var ownerMembership string
	require.NoError(t, s.pool.QueryRow(context.Background(), `SELECT id FROM organization_memberships WHERE organization_id = $1`, org).Scan(&ownerMembership))
	s.want(t, http.StatusConflict, "DELETE", base+"/organizations/memberships/"+ownerMembership, admin, nil)
	assert.Equal(t, 1, count("organization_memberships"))

	// deletes, each purging first; unknown ids are 404s
	s.want(t, http.StatusNoContent, "DELETE", base+"/projects/"+prj, admin, nil)
	s.want(t, http.StatusNotFound, "DELETE", base+"/projects/"+prj, admin, nil)
	s.want(t, http.StatusNoContent, "DELETE", base+"/workspaces/"+w["id"].(string), admin, nil)
	s.want(t, http.StatusNotFound, "DELETE", base+"/workspaces/"+w["id"].(string), admin, nil)
	s.want(t, http.StatusOK, "POST", base+"/workspaces", admin, map[string]any{"organization_id": org, "name": "W2"})
	s.want(t, http.StatusNoContent, "DELETE", base+"/organizations/"+org, admin, nil)
	s.want(t, http.StatusNotFound, "DELETE", base+"/organizations/"+org, admin, nil)
	purged, missing := s.purger.calls()
	assert.Equal(t, []uuid.UUID{uuid.MustParse(prj)}, purged)
	assert.Zero(t, missing)

	// users: their owned organizations go with them, purged first
	acc := s.teamAccount(t, "gone@example.com")
	keeper := s.teamAccount(t, "keeper@example.com")
	s.adminMember(t, "project", keeper.projectID, acc.userID, "editor")
	elsewhere, _ := s.adminKey(t, acc.userID, keeper.projectID)
	s.want(t, http.StatusOK, "GET", "/api/keys", elsewhere, nil)
	s.want(t, http.StatusNoContent, "DELETE", base+"/users/"+acc.userID, admin, nil)
	s.want(t, http.StatusUnauthorized, "GET", "/api/keys", elsewhere, nil) // revoked, not left without a user
	s.want(t, http.StatusNotFound, "DELETE", base+"/users/"+acc.userID, admin, nil)
	purged, _ = s.purger.calls()
	assert.Contains(t, purged, uuid.MustParse(acc.projectID))
	assert.Equal(t, 1, count("organizations"), "the keeper's")
}

func mustJSON(t *testing.T, v any) []byte {
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}

// TestTeamHostileInput: bodies PostgreSQL cannot store, over the limits,
// malformed or of the wrong type are 4xx naming the field, and write
// nothing.
func TestTeamHostileInput(t *testing.T) {
	s := newStack(t)
	a := s.teamAccount(t, "h@example.com")
	ws := "/api/workspaces/" + a.workspaceID
	long := strings.Repeat("é", 513)
	for _, tc := range []struct {
		method, path, auth, body string
		status                   int
		field                    string
	}{
		{"POST", "/api/organizations", a.auth(), `{"name":"a\u0000"}`, 422, ""},
		{"POST", "/api/organizations", a.auth(), "{\"name\":\"a\xff\"}", 422, ""},
		{"POST", "/api/organizations", a.auth(), `{"name":"` + long + `"}`, 400, "name"},
		{"POST", "/api/organizations", a.auth(), `{"name":"ok","slug":"` + strings.Repeat("s", 256) + `"}`, 400, "slug"},
		{"POST", "/api/organizations", a.auth(), `{"name":"ok","description":"` + strings.Repeat("d", 65537) + `"}`, 400, "description"},
		{"POST", "/api/organizations", a.auth(), `{"name":`, 400, ""},
		{"POST", "/api/organizations", a.auth(), `{"name":1}`, 400, ""},
		{"PUT", "/api/organizations/" + a.orgID, a.auth(), `{"name":"` + long + `"}`, 400, "name"},
		{"POST", "/api/workspaces", a.auth(), `{"organization_id":"nope","name":"w"}`, 400, ""},
		{"POST", "/api/projects", a.auth(), `{"workspace_id":"` + a.workspaceID + `","name":"` + long + `"}`, 400, "name"},
		{"PUT", "/api/projects/" + a.projectID, a.auth(), `{"description":"\u0000"}`, 422, ""},
		{"PUT", "/api/profile", a.auth(), `{"username":"` + long + `"}`, 400, "username"},
		{"PUT", "/api/organizations/" + a.orgID + "/members/" + a.userID, a.auth(), `{"role":["owner"]}`, 400, ""},
		{"PUT", "/api/organizations/" + a.orgID + "/members/nope", a.auth(), `{"role":"owner"}`, 422, ""},
		{"POST", ws + "/invitations", a.auth(), `{"email":"` + strings.Repeat("e", 400) + `@example.com","role":"viewer"}`, 400, "email"},
		{"POST", ws + "/invitations", a.auth(), `{"email":"x@example.com","role":"viewer","project_ids":["nope"]}`, 400, ""},
		{"POST", "/api/invitations/accept", "", `{"token":"` + strings.Repeat("t", 100000) + `","password":"long enough"}`, 404, ""},
		{"POST", "/api/invitations/accept", "", `{"token":"t","username":"\u0000"}`, 422, ""},
		{"POST", "/api/admin/simple/accounts/users", admin, `{"user":{"email":"x@example.com","name":"` + long + `"}}`, 400, "user.name"},
		{"POST", "/api/admin/simple/accounts/organizations", admin, `{"name":"o","owner_user_id":"` + a.userID + `","slug":"a b"}`, 400, "organization.slug"},
	} {
		r := s.do(t, tc.method, tc.path, tc.auth, tc.body)
		require.Equal(t, tc.status, r.status, "%s %s %.80s: %s", tc.method, tc.path, tc.body, r.body)
		assert.Contains(t, string(r.body), `"detail"`)
		if tc.field != "" {
			assert.Equal(t, tc.field, r.json(t)["detail"].(map[string]any)["field"], "%s %s", tc.method, tc.path)
		}
	}
	var n int
	require.NoError(t, s.pool.QueryRow(context.Background(), `SELECT (SELECT count(*) FROM organizations) + (SELECT count(*) FROM users)
		+ (SELECT count(*) FROM invitations) + (SELECT count(*) FROM projects)`).Scan(&n))
	assert.Equal(t, 3, n, "only the test's own account")
}

// TestInvitationMailed: with a mail relay the invitation's absolute link
// is mailed to the invitee, on create and on resend; a relay that is down
// leaves the invitation made and says so (emailed false).
func TestInvitationMailed(t *testing.T) {
	relay := smtptest.New(t)
	m, err := mailer.New("smtp://"+relay.Addr+"?from=assay@example.com", 5*time.Second)
	require.NoError(t, err)
	s := startStackConfigured(t, pgtest.NewURL(t), nil, "", "1M", func(a *accounts.Service) {
		a.Mailer, a.AcceptURL = m, "https://assay.example.com"+a.AcceptURL
	})
	own := s.teamAccount(t, "own@example.com")
	ws := "/api/workspaces/" + own.workspaceID
	r := s.want(t, http.StatusCreated, "POST", ws+"/invitations", own.auth(), map[string]any{"email": "mailme@example.com", "role": "viewer"})
	assert.Equal(t, true, r["emailed"])
	assert.Nil(t, r["token"], "a mailed link is the invitee's only")
	link := "https://assay.example.com/console/invitations/accept?token=" + lastToken(t, relay, "mailme@example.com")
	msgs := relay.Messages()
	require.Len(t, msgs, 1)
	assert.Equal(t, "assay@example.com", msgs[0].From)
	assert.Equal(t, []string{"mailme@example.com"}, msgs[0].To)
	assert.Contains(t, msgs[0].Data, "To: mailme@example.com\r\n")
	assert.Contains(t, msgs[0].Data, "Subject: Your invitation to Assay\r\n")
	assert.Contains(t, msgs[0].Data, link)

	r = s.want(t, http.StatusOK, "POST", ws+"/invitations/"+obj(r, "invitation")["id"].(string)+"/resend", own.auth(), nil)
	require.Len(t, relay.Messages(), 2)
	assert.Nil(t, r["token"])
	assert.NotEqual(t, link, "https://assay.example.com/console/invitations/accept?token="+lastToken(t, relay, "mailme@example.com"), "a new token")

	// a relay that is down: the invitation is made, not mailed, and the
	// inviter resends it once the relay is back (no token in the answer)
	relay.Close()
	r = s.want(t, http.StatusCreated, "POST", ws+"/invitations", own.auth(), map[string]any{"email": "lost@example.com", "role": "viewer"})
	assert.Equal(t, false, r["emailed"])
	assert.Nil(t, r["token"])
	assert.Len(t, relay.Messages(), 2)
}
