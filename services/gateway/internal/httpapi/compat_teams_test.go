package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The compatible platform's web frontend, replayed call by call as it
// manages organizations, invitations and members (its requests carry
// ?project_id= and session auth).

// ui is a signed-in frontend: every request carries the session's cookies
// and CSRF header and the project_id the frontend adds.
type ui struct {
	s       *stack
	si      signedIn
	project string
}

func (s *stack) ui(t *testing.T, a account, email, password string) ui {
	t.Helper()
	si, _ := s.signIn(t, email, password)
	return ui{s: s, si: si, project: a.projectID}
}

func (u ui) with(path string) string {
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	return path + sep + "project_id=" + u.project
}

// call sends the request and requires the status; it returns the raw body.
func (u ui) call(t *testing.T, status int, method, path string, body any) []byte {
	t.Helper()
	r := u.s.do(t, method, u.with(path), "", body, u.si.headers()...)
	require.Equal(t, status, r.status, "%s %s: %s", method, path, r.body)
	return r.body
}

func (u ui) object(t *testing.T, status int, method, path string, body any) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(u.call(t, status, method, path, body), &m))
	return m
}

func (u ui) list(t *testing.T, path string) []map[string]any {
	t.Helper()
	var l []map[string]any
	b := u.call(t, http.StatusOK, "GET", path, nil)
	require.NoError(t, json.Unmarshal(b, &l), "a plain JSON array: %s", b)
	return l
}

// member finds the email's row in a compatible member list.
func member(t *testing.T, list []map[string]any, email string) map[string]any {
	t.Helper()
	for _, m := range list {
		if obj(m, "user")["email"] == email {
			return m
		}
	}
	return nil
}

func roleOf(m map[string]any) string {
	return m["roles"].([]any)[0].(map[string]any)["role_name"].(string)
}

// TestCompatOrganizationsUIFlow replays the organization switcher, create,
// rename, flags, transfer and delete, as the compatible web frontend sends
// them.
func TestCompatOrganizationsUIFlow(t *testing.T) {
	s := newStack(t)
	ann := s.userWithPassword(t, "ann@example.com", "ann password")
	bob := s.userWithPassword(t, "bob@example.com", "bob password")
	eve := s.userWithPassword(t, "eve@example.com", "eve password")
	u := s.ui(t, ann, "ann@example.com", "ann password")
	ub := s.ui(t, bob, "bob@example.com", "bob password")
	ue := s.ui(t, eve, "eve@example.com", "eve password")

	// the switcher keeps the answer only when it is an array
	orgs := u.list(t, "/api/organizations")
	require.Len(t, orgs, 1)
	home := orgs[0]
	assert.Equal(t, ann.userID, home["owner_id"])
	assert.Equal(t, []any{ann.workspaceID}, home["workspaces"])
	assert.Equal(t, false, obj(home, "flags")["is_demo"])
	assert.Equal(t, true, obj(home, "flags")["allow_email"])
	homeID := home["id"].(string)

	// detail: flat, with the default workspace and its members
	d := u.object(t, http.StatusOK, "GET", "/api/organizations/"+homeID, nil)
	assert.Equal(t, homeID, d["id"])
	assert.Equal(t, ann.userID, d["owner_id"])
	dw := obj(d, "default_workspace")
	assert.Equal(t, ann.workspaceID, dw["id"])
	var members []map[string]any
	for _, m := range dw["members"].([]any) {
		members = append(members, m.(map[string]any))
	}
	me := member(t, members, "ann@example.com")
	require.NotNil(t, me, "%v", members)
	assert.Equal(t, "owner", roleOf(me))
	assert.Equal(t, "member", obj(me, "user")["status"])
	assert.Equal(t, ann.userID, obj(me, "user")["id"])

	// create: 201 flat; the frontend switches to createdOrg.id
	c := u.object(t, http.StatusCreated, "POST", "/api/organizations/", map[string]any{"name": "Acme", "description": "d"})
	org := c["id"].(string)
	require.NotEmpty(t, org)
	assert.Equal(t, "Acme", c["name"])
	assert.Equal(t, "d", c["description"])
	assert.Len(t, u.list(t, "/api/organizations"), 2)

	// rename and flags by PATCH (PUT too); 400 without a field, 409 on a taken slug
	r := u.object(t, http.StatusOK, "PATCH", "/api/organizations/"+org, map[string]any{"name": "Acme Inc"})
	assert.Equal(t, "Acme Inc", r["name"])
	r = u.object(t, http.StatusOK, "PATCH", "/api/organizations/"+org, map[string]any{"slug": "acme", "description": "dd",
		"flags": map[string]any{"is_demo": true, "auto_join": true}})
	assert.Equal(t, "acme", r["slug"])
	assert.Equal(t, true, obj(r, "flags")["is_demo"])
	assert.Equal(t, true, obj(r, "flags")["allow_email"], "unset flags keep their defaults")
	r = u.object(t, http.StatusOK, "PUT", "/api/organizations/"+org, map[string]any{"flags": map[string]any{"auto_join": false}})
	assert.Equal(t, true, obj(r, "flags")["is_demo"], "flags merge")
	assert.Equal(t, false, obj(r, "flags")["auto_join"])
	u.call(t, http.StatusBadRequest, "PATCH", "/api/organizations/"+org, map[string]any{})
	e := u.object(t, http.StatusBadRequest, "PATCH", "/api/organizations/"+org, map[string]any{"flags": map[string]any{"is_dmeo": true}})
	assert.Equal(t, "flags.is_dmeo", obj(e, "detail")["field"])
	u.call(t, http.StatusOK, "PATCH", "/api/organizations/"+homeID, map[string]any{"slug": "home"})
	u.call(t, http.StatusConflict, "PATCH", "/api/organizations/"+org, map[string]any{"slug": "home"})

	// roles hold on every alias: a viewer is refused, a non-member sees nothing
	s.adminMember(t, "organization", org, bob.userID, "viewer")
	assert.Equal(t, org, ub.object(t, http.StatusOK, "GET", "/api/organizations/"+org, nil)["id"])
	ub.call(t, http.StatusForbidden, "PATCH", "/api/organizations/"+org, map[string]any{"name": "mine"})
	ue.call(t, http.StatusNotFound, "PATCH", "/api/organizations/"+org, map[string]any{"name": "mine"})
	ub.call(t, http.StatusForbidden, "POST", "/api/organizations/"+org+"/transfer/"+bob.userID, nil)
	ue.call(t, http.StatusNotFound, "POST", "/api/organizations/"+org+"/transfer/"+eve.userID, nil)
	ub.call(t, http.StatusForbidden, "DELETE", "/api/organizations/"+org, nil)
	ue.call(t, http.StatusNotFound, "DELETE", "/api/organizations/"+org, nil)

	// transfer: the new owner in the path, no body; a non-member is a bad target
	u.call(t, http.StatusBadRequest, "POST", "/api/organizations/"+org+"/transfer/"+eve.userID, nil)
	tr := u.object(t, http.StatusOK, "POST", "/api/organizations/"+org+"/transfer/"+bob.userID, nil)
	assert.Equal(t, map[string]any{"organization_id": org, "owner_id": bob.userID}, tr)
	assert.Equal(t, bob.userID, ub.object(t, http.StatusOK, "GET", "/api/organizations/"+org, nil)["owner_id"])
	u.call(t, http.StatusForbidden, "DELETE", "/api/organizations/"+org, nil) // ann is an admin now

	ub.call(t, http.StatusNoContent, "DELETE", "/api/organizations/"+org, nil)
	assert.Len(t, u.list(t, "/api/organizations"), 1)
}

// TestCompatInvitationsUIFlow replays team management: invite (a list of one),
// the member list with the pending invitee, resend, accept by the signed-in
// invitee, role assignment and removal by email, the role table (as the
// compatible web frontend sends them); viewers and non-members are refused on
// each write.
func TestCompatInvitationsUIFlow(t *testing.T) {
	s := newStack(t)
	ann := s.userWithPassword(t, "ann@example.com", "ann password")
	bob := s.userWithPassword(t, "bob@example.com", "bob password")
	carol := s.userWithPassword(t, "carol@example.com", "carol password")
	dave := s.userWithPassword(t, "dave@example.com", "dave password")
	u := s.ui(t, ann, "ann@example.com", "ann password")
	ub := s.ui(t, bob, "bob@example.com", "bob password")
	uc := s.ui(t, carol, "carol@example.com", "carol password")
	ud := s.ui(t, dave, "dave@example.com", "dave password")
	org := u.list(t, "/api/organizations")[0]["id"].(string)
	ws := ann.workspaceID
	invite := "/api/organizations/" + org + "/workspaces/" + ws + "/invite"
	s.adminMember(t, "workspace", ws, carol.userID, "viewer")

	// invite: one item; without mail the answer is the link to pass on
	inv := u.object(t, http.StatusOK, "POST", invite, []any{map[string]any{"email": "bob@example.com", "roles": []any{"editor"}}})
	link := inv["url"].(string)
	require.Contains(t, link, "token=")
	u.call(t, http.StatusBadRequest, "POST", invite, []any{map[string]any{"email": "x@example.com"}, map[string]any{"email": "y@example.com"}})
	u.call(t, http.StatusNotFound, "POST", "/api/organizations/"+uuid.NewString()+"/workspaces/"+ws+"/invite",
		[]any{map[string]any{"email": "x@example.com"}})
	d := uc.object(t, http.StatusForbidden, "POST", invite, []any{map[string]any{"email": "x@example.com"}})
	assert.IsType(t, "", d["detail"], "the frontend shows detail as a toast")
	ud.call(t, http.StatusNotFound, "POST", invite, []any{map[string]any{"email": "x@example.com"}})

	// the team: members with their roles, the invitee pending
	team := u.list(t, "/api/workspaces/"+ws+"/members")
	assert.Equal(t, "owner", roleOf(member(t, team, "ann@example.com")))
	assert.Equal(t, "viewer", roleOf(member(t, team, "carol@example.com")))
	pending := member(t, team, "bob@example.com")
	require.NotNil(t, pending, "%v", team)
	assert.Equal(t, "pending", obj(pending, "user")["status"])
	assert.Equal(t, "editor", roleOf(pending))
	perms := pending["roles"].([]any)[0].(map[string]any)["permissions"]
	assert.Contains(t, perms, "write")

	// resend: a new link, the old one stops working
	uc.call(t, http.StatusForbidden, "POST", invite+"/resend", map[string]any{"email": "bob@example.com"})
	ud.call(t, http.StatusNotFound, "POST", invite+"/resend", map[string]any{"email": "bob@example.com"})
	link2 := u.object(t, http.StatusOK, "POST", invite+"/resend", map[string]any{"email": "bob@example.com"})["url"].(string)
	assert.NotEqual(t, link, link2)
	token := func(l string) string {
		p, err := url.Parse(l)
		require.NoError(t, err)
		return p.Query().Get("token")
	}

	// accept, signed in as the invitee, with the project of the link (one
	// the invitee is not a member of yet)
	accept := invite + "/accept"
	ub.project = ann.projectID
	e := ub.object(t, http.StatusBadRequest, "POST", accept, map[string]any{"token": token(link), "email": "bob@example.com"})
	assert.Equal(t, "invitations.unknown", obj(e, "detail")["error"], "the resent link replaced this one")
	assert.NotEmpty(t, obj(e, "detail")["message"])
	revoked := u.object(t, http.StatusOK, "POST", invite, []any{map[string]any{"email": "frank@example.com"}})["url"].(string)
	u.call(t, http.StatusOK, "DELETE", "/api/workspaces/"+ws+"/users?email=frank@example.com", nil)
	e = ub.object(t, http.StatusGone, "POST", accept, map[string]any{"token": token(revoked)})
	assert.Equal(t, "invitations.expired", obj(e, "detail")["error"])
	ub.call(t, http.StatusBadRequest, "POST", accept, map[string]any{"token": token(link2), "email": "other@example.com"})
	ok := ub.object(t, http.StatusOK, "POST", accept, map[string]any{"token": token(link2), "email": "bob@example.com"})
	assert.NotEmpty(t, ok["message"])
	e = ub.object(t, http.StatusConflict, "POST", accept, map[string]any{"token": token(link2)})
	assert.Equal(t, "invitations.used", obj(e, "detail")["error"])
	ub.project = bob.projectID
	m := member(t, u.list(t, "/api/workspaces/"+ws+"/members"), "bob@example.com")
	assert.Equal(t, "member", obj(m, "user")["status"])
	assert.Equal(t, bob.userID, obj(m, "user")["id"])
	assert.Equal(t, "editor", roleOf(m))

	// roles by email; the compatible role names are read as ours
	roles := "/api/workspaces/" + ws + "/roles"
	body := map[string]any{"email": "bob@example.com", "organization_id": org, "role": "workspace_admin"}
	uc.call(t, http.StatusForbidden, "POST", roles, body)
	ud.call(t, http.StatusNotFound, "POST", roles, body)
	a := u.object(t, http.StatusOK, "POST", roles, body)
	assert.Equal(t, "admin", roleOf(a))
	assert.Equal(t, "admin", roleOf(member(t, u.list(t, "/api/workspaces/"+ws+"/members"), "bob@example.com")))
	q := "?email=carol@example.com&organization_id=" + org + "&role=viewer"
	ud.call(t, http.StatusNotFound, "DELETE", roles+q, nil)
	uc.call(t, http.StatusForbidden, "DELETE", roles+"?email=bob@example.com&organization_id="+org+"&role=admin", nil)
	u.call(t, http.StatusNotFound, "DELETE", roles+"?email=carol@example.com&organization_id="+org+"&role=editor", nil)
	u.call(t, http.StatusOK, "DELETE", roles+q, nil)
	assert.Nil(t, member(t, u.list(t, "/api/workspaces/"+ws+"/members"), "carol@example.com"))

	// remove by email, with and without the trailing slash; a pending
	// invitee's invitation is revoked
	s.adminMember(t, "workspace", ws, carol.userID, "viewer")
	users := "/api/workspaces/" + ws + "/users"
	uc.call(t, http.StatusForbidden, "DELETE", users+"?email=bob@example.com&organization_id="+org, nil)
	ud.call(t, http.StatusNotFound, "DELETE", users+"?email=bob@example.com&organization_id="+org, nil)
	u.call(t, http.StatusOK, "DELETE", users+"/?email=bob@example.com&organization_id="+org, nil)
	u.object(t, http.StatusOK, "POST", invite, []any{map[string]any{"email": "erin@example.com"}})
	assert.Equal(t, "editor", roleOf(member(t, u.list(t, "/api/workspaces/"+ws+"/members"), "erin@example.com")), "default role")
	u.call(t, http.StatusOK, "DELETE", users+"?email=erin@example.com&organization_id="+org, nil)
	u.call(t, http.StatusNotFound, "DELETE", users+"?email=erin@example.com&organization_id="+org, nil)
	team = u.list(t, "/api/workspaces/"+ws+"/members")
	assert.Nil(t, member(t, team, "bob@example.com"))
	assert.Nil(t, member(t, team, "erin@example.com"))

	// every write of the compatible routes is audited under its pattern
	for _, action := range []string{"POST /organizations/:id/workspaces/:workspace_id/invite",
		"POST /organizations/:id/workspaces/:workspace_id/invite/accept", "POST /workspaces/:id/roles", "DELETE /workspaces/:id/users"} {
		var n int
		require.NoError(t, s.pool.QueryRow(context.Background(), `SELECT count(*) FROM audit_log WHERE action = $1 AND organization_id = $2`,
			action, org).Scan(&n))
		assert.Positive(t, n, action)
	}
	var actor string
	require.NoError(t, s.pool.QueryRow(context.Background(), `SELECT actor_user_id::text FROM audit_log
		WHERE action = 'POST /organizations/:id/workspaces/:workspace_id/invite/accept'`).Scan(&actor))
	assert.Equal(t, bob.userID, actor, "the invitee accepted")

	// the role table
	rt := u.object(t, http.StatusOK, "GET", "/api/access/roles", nil)
	for _, level := range []string{"organization", "workspace", "project"} {
		require.Len(t, rt[level], 5, level)
	}
	viewer := rt["workspace"].([]any)[4].(map[string]any)
	assert.Equal(t, "viewer", viewer["role"])
	assert.Equal(t, []any{"read"}, viewer["permissions"])
}

// TestCompatAdminRoutes replays the per-entity admin calls with the
// bodies and answers of the compatible admin API (the entity nested under
// its key, answers keyed as in the provisioning answer) and its
// user-identity routes; the admin key stays their only credential.
func TestCompatAdminRoutes(t *testing.T) {
	s := newStack(t)
	base := "/api/admin/simple/accounts"
	u := obj(s.want(t, http.StatusOK, "POST", base+"/users/", admin, map[string]any{"user": map[string]any{"email": "ops@example.com"}}), "user")
	user := u["id"].(string)

	// identities of an existing user, by email or id
	idb := map[string]any{"user": map[string]any{"email": "ops@example.com"},
		"user_identities": []any{map[string]any{"method": "email:password", "subject": "ops@example.com", "password": "ops password"}}}
	s.want(t, http.StatusUnauthorized, "POST", base+"/users/identities/", "ApiKey x.y", idb)
	r := s.want(t, http.StatusOK, "POST", base+"/users/identities/", admin, idb)
	ids := r["user_identities"].([]any)
	require.Len(t, ids, 1)
	ident := ids[0].(map[string]any)
	assert.Equal(t, user, ident["user_id"])
	assert.NotContains(t, string(mustJSON(t, r)), "ops password")
	s.signIn(t, "ops@example.com", "ops password")
	s.want(t, http.StatusConflict, "POST", base+"/users/identities/", admin, map[string]any{"user_id": user,
		"user_identity": map[string]any{"method": "email:password", "subject": "ops@example.com", "password": "another one"}})
	s.want(t, http.StatusNotFound, "POST", base+"/users/identities/", admin, map[string]any{"user": map[string]any{"email": "nobody@example.com"},
		"user_identities": []any{map[string]any{"method": "email:otp", "subject": "nobody@example.com"}}})
	s.want(t, http.StatusBadRequest, "POST", base+"/users/identities/", admin, map[string]any{"user_id": user})
	s.want(t, http.StatusUnauthorized, "DELETE", base+"/users/identities/"+ident["id"].(string), "ApiKey x.y", nil)
	s.want(t, http.StatusNoContent, "DELETE", base+"/users/identities/"+ident["id"].(string), admin, nil)
	s.want(t, http.StatusNotFound, "DELETE", base+"/users/identities/"+ident["id"].(string), admin, nil)
	r2 := s.do(t, "POST", "/api/auth/sign-in", "", map[string]any{"email": "ops@example.com", "password": "ops password"})
	assert.Equal(t, http.StatusUnauthorized, r2.status, "the identity is gone")

	// entities nested under their key; answers keyed as in provisioning
	o := s.want(t, http.StatusOK, "POST", base+"/organizations/", admin, map[string]any{
		"organization": map[string]any{"name": "Ops", "slug": "ops"}, "user": map[string]any{"email": "ops@example.com"}})
	org := obj(obj(o, "organizations"), "org")
	assert.Equal(t, obj(o, "organization")["id"], org["id"])
	assert.Equal(t, user, org["owner_user_id"])
	s.want(t, http.StatusUnauthorized, "POST", base+"/organizations/", "ApiKey x.y", map[string]any{"organization": map[string]any{"name": "X"}})
	w := obj(obj(s.want(t, http.StatusOK, "POST", base+"/workspaces/", admin, map[string]any{
		"workspace": map[string]any{"organization_id": org["id"], "name": "W"}}), "workspaces"), "wrk")
	assert.Equal(t, org["id"], w["organization_id"])
	p := obj(obj(s.want(t, http.StatusOK, "POST", base+"/projects/", admin, map[string]any{
		"project": map[string]any{"workspace_id": w["id"], "name": "P", "is_default": true}}), "projects"), "prj")
	assert.Equal(t, w["id"], p["workspace_id"])
	m := s.want(t, http.StatusOK, "POST", base+"/workspaces/memberships/", admin, map[string]any{
		"workspace_memberships": []any{map[string]any{"workspace_id": w["id"], "user_id": user, "role": "editor"}}})
	wm := m["workspace_memberships"].([]any)[0].(map[string]any)
	assert.Equal(t, "editor", wm["role"])
	assert.Equal(t, w["id"], wm["workspace_id"])
	s.want(t, http.StatusOK, "POST", base+"/projects/memberships/", admin, map[string]any{
		"membership": map[string]any{"project_id": p["id"], "user_id": user, "role": "viewer"}})
	k := s.want(t, http.StatusOK, "POST", base+"/api-keys/", admin, map[string]any{"api_key": map[string]any{"user_id": user, "project_id": p["id"]}})
	raw := obj(k, "api_keys")["key"].(string)
	assert.Equal(t, "ops@example.com", s.want(t, http.StatusOK, "GET", "/api/profile", "ApiKey "+raw, nil)["email"])
}

// TestCompatTeamHostileInput: malformed bodies and parameters of the
// compatible team routes are 4xx naming what is wrong, and change nothing.
func TestCompatTeamHostileInput(t *testing.T) {
	s := newStack(t)
	ann := s.userWithPassword(t, "ann@example.com", "ann password")
	u := s.ui(t, ann, "ann@example.com", "ann password")
	org := u.list(t, "/api/organizations")[0]["id"].(string)
	invite := "/api/organizations/" + org + "/workspaces/" + ann.workspaceID + "/invite"

	u.call(t, http.StatusBadRequest, "POST", invite, map[string]any{"email": "x@example.com"}) // an object, not a list
	u.call(t, http.StatusBadRequest, "POST", invite, []any{})
	e := u.object(t, http.StatusBadRequest, "POST", invite, []any{map[string]any{"email": "x@example.com", "roles": []any{"editor", "viewer"}}})
	assert.Equal(t, "[0].roles", obj(e, "detail")["field"])
	e = u.object(t, http.StatusBadRequest, "POST", invite, []any{map[string]any{"email": "x@example.com", "roles": []any{"root"}}})
	assert.Equal(t, "[0].roles[0]", obj(e, "detail")["field"])
	e = u.object(t, http.StatusBadRequest, "POST", invite, []any{map[string]any{"email": "not an email"}})
	assert.Equal(t, "email", obj(e, "detail")["field"])
	u.call(t, http.StatusUnprocessableEntity, "POST", invite, []any{map[string]any{"email": "x\u0000@example.com"}})
	e = u.object(t, http.StatusBadRequest, "DELETE", "/api/workspaces/"+ann.workspaceID+"/users", nil)
	assert.Equal(t, "email", obj(e, "detail")["field"])
	u.call(t, http.StatusUnprocessableEntity, "DELETE", "/api/workspaces/"+ann.workspaceID+"/users?email=a@example.com&organization_id=nope", nil)
	e = u.object(t, http.StatusBadRequest, "POST", "/api/workspaces/"+ann.workspaceID+"/roles", map[string]any{"email": "ann@example.com", "role": "root"})
	assert.Equal(t, "role", obj(e, "detail")["field"])
	u.call(t, http.StatusUnprocessableEntity, "POST", "/api/organizations/"+org+"/transfer/nope", nil)
	assert.Len(t, u.list(t, "/api/workspaces/"+ann.workspaceID+"/members"), 1, "nothing was invited or changed")
}
