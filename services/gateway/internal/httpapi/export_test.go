package httpapi

import (
	"io"
	"log/slog"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/assayhq/assay/pkg/apidoc"
	"github.com/assayhq/assay/services/gateway/internal/accounts"
)

// Routes returns "METHOD /path" for every route the gateway serves itself
// (not the proxy catch-all), for the OpenAPI test.
func Routes(t *testing.T) []string {
	e := echo.New()
	if err := Register(e, Deps{Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Upstreams: Upstreams{Registry: "http://x", Runtime: "http://x", Tracing: "http://x"}}); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range e.Routes() {
		if r.Path == "/*" {
			continue
		}
		out = append(out, r.Method+" "+r.Path)
	}
	return append(out, "GET /health", "GET /ready") // added by httpx.NewServer (metrics: a listener apart)
}

// Owners returns the proxy's route families ("testsets", "simple/traces").
func Owners() []string {
	out := make([]string, 0, len(owners))
	for k := range owners {
		out = append(out, k)
	}
	return out
}

// Bindings maps the gateway's operations to the Go types their handlers
// bind and render; pkg/apidoc generates the document's schemas from it.
var Bindings = []apidoc.Binding{
	{Method: "POST", Path: "/api/admin/simple/accounts", Request: provisionRequest{}, Response: accountsOut{}},
	{Method: "DELETE", Path: "/api/admin/simple/accounts", Request: deleteRequest{}},
	{Method: "GET", Path: "/api/keys", Response: keyList{}},
	{Method: "POST", Path: "/api/keys", Request: createKeyRequest{}, Response: keyCreated{}},
	{Method: "GET", Path: "/api/profile", Response: profileOut{}},
	{Method: "GET", Path: "/api/audit", Response: auditPage{}},
	{Method: "PUT", Path: "/api/profile", Request: updateProfileRequest{}, Response: profileOut{}},

	{Method: "GET", Path: "/api/organizations", Response: []compatOrganization{}},
	{Method: "POST", Path: "/api/organizations", Request: createOrganizationRequest{}, Response: compatOrganization{}},
	{Method: "GET", Path: "/api/organizations/{id}", Response: compatOrganization{}},
	{Method: "PUT", Path: "/api/organizations/{id}", Request: accounts.OrgChange{}, Response: compatOrganization{}},
	{Method: "PATCH", Path: "/api/organizations/{id}", Request: accounts.OrgChange{}, Response: compatOrganization{}},
	{Method: "POST", Path: "/api/organizations/{id}/transfer-ownership", Request: transferRequest{}, Response: compatOrganization{}},
	{Method: "POST", Path: "/api/organizations/{id}/transfer/{user_id}", Response: compatTransferred{}},
	{Method: "POST", Path: "/api/organizations/{id}/workspaces/{workspace_id}/invite", Request: []compatInviteItem{}, Response: compatInvited{}},
	{Method: "POST", Path: "/api/organizations/{id}/workspaces/{workspace_id}/invite/resend", Request: compatEmail{}, Response: compatInvited{}},
	{Method: "POST", Path: "/api/organizations/{id}/workspaces/{workspace_id}/invite/accept", Request: compatAcceptRequest{}, Response: compatAccepted{}},
	{Method: "DELETE", Path: "/api/workspaces/{id}/users", Response: compatMessage{}},
	{Method: "POST", Path: "/api/workspaces/{id}/roles", Request: compatRoleRequest{}, Response: compatMember{}},
	{Method: "DELETE", Path: "/api/workspaces/{id}/roles", Response: compatMessage{}},
	{Method: "GET", Path: "/api/access/roles", Response: accessRoleSet{}},
	{Method: "GET", Path: "/api/workspaces", Response: workspaceList{}},
	{Method: "POST", Path: "/api/workspaces", Request: createWorkspaceRequest{}, Response: workspaceOne{}},
	{Method: "GET", Path: "/api/workspaces/{id}", Response: workspaceOne{}},
	{Method: "PUT", Path: "/api/workspaces/{id}", Request: accounts.EntityChange{}, Response: workspaceOne{}},
	{Method: "GET", Path: "/api/projects", Response: projectList{}},
	{Method: "POST", Path: "/api/projects", Request: createProjectRequest{}, Response: projectOne{}},
	{Method: "GET", Path: "/api/projects/current", Response: currentProjectOut{}},
	{Method: "GET", Path: "/api/projects/{id}", Response: projectOne{}},
	{Method: "PUT", Path: "/api/projects/{id}", Request: accounts.EntityChange{}, Response: projectOne{}},
	{Method: "GET", Path: "/api/organizations/{id}/members", Response: memberList{}},
	{Method: "PUT", Path: "/api/organizations/{id}/members/{user_id}", Request: roleRequest{}, Response: memberOne{}},
	{Method: "GET", Path: "/api/workspaces/{id}/members", Response: []compatMember{}},
	{Method: "PUT", Path: "/api/workspaces/{id}/members/{user_id}", Request: roleRequest{}, Response: memberOne{}},
	{Method: "GET", Path: "/api/projects/{id}/members", Response: memberList{}},
	{Method: "PUT", Path: "/api/projects/{id}/members/{user_id}", Request: roleRequest{}, Response: memberOne{}},
	{Method: "POST", Path: "/api/workspaces/{id}/invitations", Request: inviteRequest{}, Response: invitationIssued{}},
	{Method: "GET", Path: "/api/workspaces/{id}/invitations", Response: invitationList{}},
	{Method: "POST", Path: "/api/workspaces/{id}/invitations/{invitation_id}/resend", Response: invitationIssued{}},
	{Method: "POST", Path: "/api/invitations/accept", Request: acceptRequest{}, Response: invitationAccepted{}},
	{Method: "POST", Path: "/api/auth/password-reset", Request: resetRequest{}, Response: resetRequested{}},
	{Method: "POST", Path: "/api/auth/password-reset/confirm", Request: resetConfirm{}},
	{Method: "POST", Path: "/api/admin/simple/accounts/users/{id}/password-reset", Response: resetIssued{}},

	{Method: "POST", Path: "/api/admin/simple/accounts/users", Request: adminUserRequest{}, Response: adminUserCreated{}},
	{Method: "POST", Path: "/api/admin/simple/accounts/organizations", Request: adminOrganizationRequest{}, Response: adminOrganizationCreated{}},
	{Method: "POST", Path: "/api/admin/simple/accounts/workspaces", Request: adminWorkspaceRequest{}, Response: adminWorkspaceCreated{}},
	{Method: "POST", Path: "/api/admin/simple/accounts/projects", Request: adminProjectRequest{}, Response: adminProjectCreated{}},
	{Method: "POST", Path: "/api/admin/simple/accounts/organizations/memberships", Request: adminMembershipRequest{}, Response: adminMembershipCreated{}},
	{Method: "POST", Path: "/api/admin/simple/accounts/workspaces/memberships", Request: adminMembershipRequest{}, Response: adminMembershipCreated{}},
	{Method: "POST", Path: "/api/admin/simple/accounts/projects/memberships", Request: adminMembershipRequest{}, Response: adminMembershipCreated{}},
	{Method: "POST", Path: "/api/admin/simple/accounts/api-keys", Request: adminKeyRequest{}, Response: adminKeyCreated{}},
	{Method: "POST", Path: "/api/admin/simple/accounts/users/identities", Request: adminIdentitiesRequest{}, Response: adminIdentitiesCreated{}},
	{Method: "POST", Path: "/api/auth/sign-in", Request: signInRequest{}, Response: sessionOut{}},
	{Method: "GET", Path: "/api/auth/session", Response: sessionOut{}},
}
