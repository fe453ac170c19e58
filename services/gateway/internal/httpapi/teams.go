package httpapi

import (
	"net/http"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/assayhq/assay/pkg/httpx"
	"github.com/assayhq/assay/pkg/roles"
	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/services/gateway/internal/accounts"
)

// registerTeams adds the team routes: profile changes, organizations,
// workspaces, projects, their members and invitations. Every handler binds,
// calls the accounts service with the caller and renders; the service
// authorizes on the caller's role on the target.
func (h *handler) registerTeams(e *echo.Echo) {
	e.PUT("/profile", h.updateProfile)
	e.DELETE("/profile", h.deleteProfile)

	e.GET("/organizations", h.listOrganizations)
	e.POST("/organizations", h.createOrganization)
	e.GET("/organizations/:id", h.getOrganization)
	e.PUT("/organizations/:id", h.updateOrganization)
	e.DELETE("/organizations/:id", h.deleteOrganization)
	e.POST("/organizations/:id/transfer-ownership", h.transferOwnership)

	e.GET("/workspaces", h.listWorkspaces)
	e.POST("/workspaces", h.createWorkspace)
	e.GET("/workspaces/:id", h.getWorkspace)
	e.PUT("/workspaces/:id", h.updateWorkspace)
	e.DELETE("/workspaces/:id", h.deleteWorkspace)
	e.POST("/workspaces/:id/invitations", h.invite)
	e.GET("/workspaces/:id/invitations", h.listInvitations)
	e.POST("/workspaces/:id/invitations/:invitation_id/resend", h.resendInvitation)
	e.DELETE("/workspaces/:id/invitations/:invitation_id", h.revokeInvitation)
	e.POST("/invitations/accept", h.acceptInvitation)

	e.GET("/projects", h.listProjects)
	e.POST("/projects", h.createProject)
	e.GET("/projects/current", h.currentProject)
	e.GET("/projects/:id", h.getProject)
	e.PUT("/projects/:id", h.updateProject)
	e.DELETE("/projects/:id", h.deleteProject)

	for prefix, lv := range map[string]accounts.Level{"/organizations": accounts.OrganizationLevel,
		"/workspaces": accounts.WorkspaceLevel, "/projects": accounts.ProjectLevel} {
		m := members{h: h, level: lv}
		list := m.list
		if lv == accounts.WorkspaceLevel {
			list = h.workspaceTeam // the compatible frontend's list
		}
		e.GET(prefix+"/:id/members", list)
		e.PUT(prefix+"/:id/members/:user_id", m.set)
		e.DELETE(prefix+"/:id/members/:user_id", m.remove)
	}
	h.registerCompatTeams(e)
}

// workspaceTeam lists a workspace's team in the compatible shape, a plain
// list: members with their effective role there, then open invitations.
func (h *handler) workspaceTeam(c echo.Context) error {
	cl, id, err := target(c)
	if err != nil {
		return err
	}
	team, err := h.accounts.Team(c.Request().Context(), cl, id)
	if err != nil {
		return err
	}
	out := make([]compatMember, len(team))
	for i, m := range team {
		out[i] = toCompatMember(m)
	}
	return c.JSON(http.StatusOK, out)
}

// caller is the authenticated user. A request with an Authorization
// header is an API key's: the key's own role, when it has one, caps what
// it may do (a key without one, and a signed-in session, act with the
// user's full rights on each target; the scope's Role is the role in the
// key's project, not on the target).
func caller(c echo.Context) (accounts.Caller, error) {
	s, err := httpx.ProjectScope(c)
	if err != nil {
		return accounts.Caller{}, err
	}
	if s.UserID == uuid.Nil {
		return accounts.Caller{}, accounts.ErrNoProfile
	}
	cl := accounts.Caller{UserID: s.UserID}
	if c.Request().Header.Get(echo.HeaderAuthorization) != "" && s.KeyRole != "" {
		cl.Cap = roles.Role(s.KeyRole)
	}
	return cl, nil
}

// Response records of the team routes; nil fields are omitted.
type (
	workspaceRoleOut struct {
		ID             uuid.UUID `json:"id"`
		Name           string    `json:"name"`
		Description    *string   `json:"description,omitempty"`
		OrganizationID uuid.UUID `json:"organization_id"`
		CreatedAt      time.Time `json:"created_at"`
		Role           string    `json:"role,omitempty" example:"admin"`
	}
	projectRoleOut struct {
		ID             uuid.UUID `json:"id"`
		Name           string    `json:"name"`
		Description    *string   `json:"description,omitempty"`
		OrganizationID uuid.UUID `json:"organization_id"`
		WorkspaceID    uuid.UUID `json:"workspace_id"`
		IsDefault      bool      `json:"is_default"`
		CreatedAt      time.Time `json:"created_at"`
		Role           string    `json:"role,omitempty" example:"editor"`
	}
	// currentProjectOut is GET /projects/current's flat answer, the
	// compatible platform's shape (no envelope): its SDK reads the ids at
	// the top level.
	currentProjectOut struct {
		OrganizationID   uuid.UUID `json:"organization_id"`
		OrganizationName string    `json:"organization_name"`
		WorkspaceID      uuid.UUID `json:"workspace_id"`
		WorkspaceName    string    `json:"workspace_name"`
		ProjectID        uuid.UUID `json:"project_id"`
		ProjectName      string    `json:"project_name"`
		IsDefaultProject bool      `json:"is_default_project"`
		UserRole         string    `json:"user_role" example:"owner"`
		// IsDemo is always false: Assay has no demo projects.
		IsDemo bool `json:"is_demo"`
	}
	memberOut struct {
		ID        uuid.UUID `json:"id"` // the membership's id
		UserID    uuid.UUID `json:"user_id"`
		Email     string    `json:"email"`
		Username  *string   `json:"username,omitempty"`
		Name      *string   `json:"name,omitempty"`
		Role      string    `json:"role" example:"viewer"`
		CreatedAt time.Time `json:"created_at"`
	}
	invitationOut struct {
		ID             uuid.UUID   `json:"id"`
		Email          string      `json:"email"`
		Role           string      `json:"role" example:"editor"`
		OrganizationID uuid.UUID   `json:"organization_id"`
		WorkspaceID    uuid.UUID   `json:"workspace_id"`
		ProjectIDs     []uuid.UUID `json:"project_ids"`
		Status         string      `json:"status" example:"pending"` // pending, accepted, revoked or expired
		InvitedByID    *uuid.UUID  `json:"invited_by_id,omitempty"`
		CreatedAt      time.Time   `json:"created_at"`
		ExpiresAt      time.Time   `json:"expires_at"`
		AcceptedAt     *time.Time  `json:"accepted_at,omitempty"`
	}
)

// Envelopes, named so the OpenAPI document is generated from them.
type (
	workspaceOne struct {
		Count     int              `json:"count" example:"1"`
		Workspace workspaceRoleOut `json:"workspace"`
	}
	workspaceList struct {
		Count      int                `json:"count"`
		Workspaces []workspaceRoleOut `json:"workspaces"`
	}
	projectOne struct {
		Count   int            `json:"count" example:"1"`
		Project projectRoleOut `json:"project"`
	}
	projectList struct {
		Count    int              `json:"count"`
		Projects []projectRoleOut `json:"projects"`
	}
	memberOne struct {
		Count  int       `json:"count" example:"1"`
		Member memberOut `json:"member"`
	}
	memberList struct {
		Count   int         `json:"count"`
		Members []memberOut `json:"members"`
	}
	invitationIssued struct {
		Invitation invitationOut `json:"invitation"`
		Token      string        `json:"token,omitempty"`      // shown once, and only when no mail relay is set (the link then goes to the email only); only its hash is stored
		AcceptURL  string        `json:"accept_url,omitempty"` // the console page that redeems the token; as token
		Emailed    bool          `json:"emailed"`              // the link was mailed (GATEWAY_SMTP_URL set and the relay took it)
	}
	invitationList struct {
		Count       int             `json:"count"`
		Invitations []invitationOut `json:"invitations"`
	}
	invitationAccepted struct {
		Invitation invitationOut `json:"invitation"`
		UserID     uuid.UUID     `json:"user_id"` // the invited user (created when the email was unknown)
	}
)

func toWorkspaceOut(w accounts.Workspace, role string) workspaceRoleOut {
	return workspaceRoleOut{ID: w.ID, Name: w.Name, Description: w.Description, OrganizationID: w.OrganizationID, CreatedAt: w.CreatedAt, Role: role}
}

func toProjectOut(p accounts.Project, role string) projectRoleOut {
	return projectRoleOut{ID: p.ID, Name: p.Name, Description: p.Description, OrganizationID: p.OrganizationID, WorkspaceID: p.WorkspaceID,
		IsDefault: p.IsDefault, CreatedAt: p.CreatedAt, Role: role}
}

func toMemberOut(m accounts.Member) memberOut {
	return memberOut{ID: m.ID, UserID: m.UserID, Email: m.Email, Username: m.Username, Name: m.Name, Role: m.Role, CreatedAt: m.CreatedAt}
}

func toInvitationOut(i accounts.Invitation, now time.Time) invitationOut {
	ids := i.ProjectIDs
	if ids == nil {
		ids = []uuid.UUID{}
	}
	return invitationOut{ID: i.ID, Email: i.Email, Role: string(i.Role), OrganizationID: i.OrganizationID, WorkspaceID: i.WorkspaceID,
		ProjectIDs: ids, Status: i.State(now), InvitedByID: i.InvitedByID, CreatedAt: i.CreatedAt, ExpiresAt: i.ExpiresAt, AcceptedAt: i.AcceptedAt}
}

// Requests.
type (
	updateProfileRequest struct {
		Username *string `json:"username"`
		Name     *string `json:"name"`
	}
	createOrganizationRequest struct {
		Name        string  `json:"name"`
		Slug        *string `json:"slug"`
		Description *string `json:"description"`
	}
	transferRequest struct {
		UserID uuid.UUID `json:"user_id"`
	}
	createWorkspaceRequest struct {
		OrganizationID uuid.UUID `json:"organization_id"`
		Name           string    `json:"name"`
		Description    *string   `json:"description"`
	}
	createProjectRequest struct {
		WorkspaceID uuid.UUID `json:"workspace_id"`
		Name        string    `json:"name"`
		Description *string   `json:"description"`
	}
	roleRequest struct {
		Role string `json:"role" example:"editor"`
	}
	inviteRequest struct {
		Email      string      `json:"email"`
		Role       string      `json:"role" example:"viewer"`
		ProjectIDs []uuid.UUID `json:"project_ids"` // only these projects of the workspace; empty: the whole workspace
	}
	acceptRequest struct {
		Token    string  `json:"token"`
		Password *string `json:"password"` // required for an unknown email; else the user's password unless signed in as them
		Username *string `json:"username"`
	}
)

// bind decodes an optional JSON body (an absent body is an empty one).
func bind(c echo.Context, v any) error {
	if c.Request().ContentLength == 0 {
		return nil
	}
	return httpx.BindText(c, v)
}

func (h *handler) updateProfile(c echo.Context) error {
	cl, err := caller(c)
	if err != nil {
		return err
	}
	var req updateProfileRequest
	if err := bind(c, &req); err != nil {
		return err
	}
	p, err := h.accounts.UpdateProfile(c.Request().Context(), cl, req.Username, req.Name)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, toProfileOut(p))
}

func (h *handler) deleteProfile(c echo.Context) error {
	cl, err := caller(c)
	if err != nil {
		return err
	}
	if err := h.accounts.DeleteProfile(c.Request().Context(), cl); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

func (h *handler) listOrganizations(c echo.Context) error {
	cl, err := caller(c)
	if err != nil {
		return err
	}
	list, err := h.accounts.Organizations(c.Request().Context(), cl)
	if err != nil {
		return err
	}
	byOrg, err := h.workspacesByOrg(c, cl)
	if err != nil {
		return err
	}
	// A plain list: the compatible frontend keeps the answer only when it
	// is an array.
	out := make([]compatOrganization, len(list))
	for i, o := range list {
		out[i] = toCompatOrganization(o.Organization, o.Role, workspaceIDs(byOrg[o.ID]))
	}
	return c.JSON(http.StatusOK, out)
}

func (h *handler) createOrganization(c echo.Context) error {
	cl, err := caller(c)
	if err != nil {
		return err
	}
	var req createOrganizationRequest
	if err := bind(c, &req); err != nil {
		return err
	}
	o, err := h.accounts.CreateOrganization(c.Request().Context(), cl, req.Name, req.Slug, req.Description)
	if err != nil {
		return err
	}
	return h.renderOrganization(c, cl, o.ID, http.StatusCreated)
}

// target is the caller and the :id of a team route.
func target(c echo.Context) (accounts.Caller, uuid.UUID, error) {
	cl, err := caller(c)
	if err != nil {
		return cl, uuid.Nil, err
	}
	id, err := httpx.UUIDParam(c, "id")
	return cl, id, err
}

func (h *handler) getOrganization(c echo.Context) error {
	cl, id, err := target(c)
	if err != nil {
		return err
	}
	return h.renderOrganization(c, cl, id, http.StatusOK)
}

func (h *handler) updateOrganization(c echo.Context) error {
	cl, id, err := target(c)
	if err != nil {
		return err
	}
	var req accounts.OrgChange
	if err := bind(c, &req); err != nil {
		return err
	}
	if _, err := h.accounts.UpdateOrganization(c.Request().Context(), cl, id, req); err != nil {
		return err
	}
	return h.getOrganization(c)
}

func (h *handler) deleteOrganization(c echo.Context) error {
	cl, id, err := target(c)
	if err != nil {
		return err
	}
	if err := h.accounts.DeleteOrganization(c.Request().Context(), cl, id); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

func (h *handler) transferOwnership(c echo.Context) error {
	cl, id, err := target(c)
	if err != nil {
		return err
	}
	var req transferRequest
	if err := bind(c, &req); err != nil {
		return err
	}
	if req.UserID == uuid.Nil {
		return invalidField("user_id", "is required")
	}
	if err := h.accounts.TransferOwnership(c.Request().Context(), cl, id, req.UserID); err != nil {
		return err
	}
	return h.getOrganization(c)
}

func (h *handler) listWorkspaces(c echo.Context) error {
	cl, err := caller(c)
	if err != nil {
		return err
	}
	list, err := h.accounts.Workspaces(c.Request().Context(), cl)
	if err != nil {
		return err
	}
	out := make([]workspaceRoleOut, len(list))
	for i, w := range list {
		out[i] = toWorkspaceOut(w.Workspace, w.Role)
	}
	return c.JSON(http.StatusOK, workspaceList{Count: len(out), Workspaces: out})
}

func (h *handler) createWorkspace(c echo.Context) error {
	cl, err := caller(c)
	if err != nil {
		return err
	}
	var req createWorkspaceRequest
	if err := bind(c, &req); err != nil {
		return err
	}
	if req.OrganizationID == uuid.Nil {
		return invalidField("organization_id", "is required")
	}
	w, err := h.accounts.CreateWorkspace(c.Request().Context(), cl, req.OrganizationID, req.Name, req.Description)
	if err != nil {
		return err
	}
	got, err := h.accounts.Workspace(c.Request().Context(), cl, w.ID)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, workspaceOne{Count: 1, Workspace: toWorkspaceOut(got.Workspace, got.Role)})
}

func (h *handler) getWorkspace(c echo.Context) error {
	cl, id, err := target(c)
	if err != nil {
		return err
	}
	w, err := h.accounts.Workspace(c.Request().Context(), cl, id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, workspaceOne{Count: 1, Workspace: toWorkspaceOut(w.Workspace, w.Role)})
}

func (h *handler) updateWorkspace(c echo.Context) error {
	cl, id, err := target(c)
	if err != nil {
		return err
	}
	var req accounts.EntityChange
	if err := bind(c, &req); err != nil {
		return err
	}
	if _, err := h.accounts.UpdateWorkspace(c.Request().Context(), cl, id, req); err != nil {
		return err
	}
	return h.getWorkspace(c)
}

func (h *handler) deleteWorkspace(c echo.Context) error {
	cl, id, err := target(c)
	if err != nil {
		return err
	}
	if err := h.accounts.DeleteWorkspace(c.Request().Context(), cl, id); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

func (h *handler) listProjects(c echo.Context) error {
	cl, err := caller(c)
	if err != nil {
		return err
	}
	list, err := h.accounts.Projects(c.Request().Context(), cl)
	if err != nil {
		return err
	}
	out := make([]projectRoleOut, len(list))
	for i, p := range list {
		out[i] = toProjectOut(p.Project, p.Role)
	}
	return c.JSON(http.StatusOK, projectList{Count: len(out), Projects: out})
}

func (h *handler) createProject(c echo.Context) error {
	cl, err := caller(c)
	if err != nil {
		return err
	}
	var req createProjectRequest
	if err := bind(c, &req); err != nil {
		return err
	}
	if req.WorkspaceID == uuid.Nil {
		return invalidField("workspace_id", "is required")
	}
	p, err := h.accounts.CreateProject(c.Request().Context(), cl, req.WorkspaceID, req.Name, req.Description)
	if err != nil {
		return err
	}
	got, err := h.accounts.Project(c.Request().Context(), cl, p.ID)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, projectOne{Count: 1, Project: toProjectOut(got.Project, got.Role)})
}

func (h *handler) getProject(c echo.Context) error {
	cl, id, err := target(c)
	if err != nil {
		return err
	}
	p, err := h.accounts.Project(c.Request().Context(), cl, id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, projectOne{Count: 1, Project: toProjectOut(p.Project, p.Role)})
}

// currentProject serves GET /projects/current: the project of the API
// key, or of a session's ?project_id= (else its default project).
func (h *handler) currentProject(c echo.Context) error {
	cl, err := caller(c)
	if err != nil {
		return err
	}
	s, err := httpx.ProjectScope(c)
	if err != nil {
		return err
	}
	p, err := h.accounts.Current(c.Request().Context(), cl, s.ProjectID)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, currentProjectOut{OrganizationID: p.OrganizationID, OrganizationName: p.OrganizationName,
		WorkspaceID: p.WorkspaceID, WorkspaceName: p.WorkspaceName, ProjectID: p.ID, ProjectName: p.Name,
		IsDefaultProject: p.IsDefault, UserRole: p.Role})
}

func (h *handler) updateProject(c echo.Context) error {
	cl, id, err := target(c)
	if err != nil {
		return err
	}
	var req accounts.EntityChange
	if err := bind(c, &req); err != nil {
		return err
	}
	if _, err := h.accounts.UpdateProject(c.Request().Context(), cl, id, req); err != nil {
		return err
	}
	return h.getProject(c)
}

func (h *handler) deleteProject(c echo.Context) error {
	cl, id, err := target(c)
	if err != nil {
		return err
	}
	if err := h.accounts.DeleteProject(c.Request().Context(), cl, id); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// members serves the member routes of one level.
type members struct {
	h     *handler
	level accounts.Level
}

func (m members) list(c echo.Context) error {
	cl, id, err := target(c)
	if err != nil {
		return err
	}
	list, err := m.h.accounts.Members(c.Request().Context(), cl, m.level, id)
	if err != nil {
		return err
	}
	out := make([]memberOut, len(list))
	for i, x := range list {
		out[i] = toMemberOut(x)
	}
	return c.JSON(http.StatusOK, memberList{Count: len(out), Members: out})
}

func (m members) set(c echo.Context) error {
	cl, id, err := target(c)
	if err != nil {
		return err
	}
	user, err := httpx.UUIDParam(c, "user_id")
	if err != nil {
		return err
	}
	var req roleRequest
	if err := bind(c, &req); err != nil {
		return err
	}
	mem, err := m.h.accounts.SetMemberRole(c.Request().Context(), cl, m.level, id, user, req.Role)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, memberOne{Count: 1, Member: toMemberOut(mem)})
}

func (m members) remove(c echo.Context) error {
	cl, id, err := target(c)
	if err != nil {
		return err
	}
	user, err := httpx.UUIDParam(c, "user_id")
	if err != nil {
		return err
	}
	if err := m.h.accounts.RemoveMember(c.Request().Context(), cl, m.level, id, user); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

func (h *handler) invite(c echo.Context) error {
	cl, id, err := target(c)
	if err != nil {
		return err
	}
	var req inviteRequest
	if err := bind(c, &req); err != nil {
		return err
	}
	inv, err := h.accounts.Invite(c.Request().Context(), cl, id, accounts.NewInvitation{Email: req.Email, Role: req.Role, ProjectIDs: req.ProjectIDs})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, invitationIssued{Invitation: toInvitationOut(inv.Invitation, time.Now()), Token: inv.Token, AcceptURL: inv.AcceptURL, Emailed: inv.Emailed})
}

func (h *handler) listInvitations(c echo.Context) error {
	cl, id, err := target(c)
	if err != nil {
		return err
	}
	list, err := h.accounts.Invitations(c.Request().Context(), cl, id)
	if err != nil {
		return err
	}
	now := time.Now()
	out := make([]invitationOut, len(list))
	for i, x := range list {
		out[i] = toInvitationOut(x, now)
	}
	return c.JSON(http.StatusOK, invitationList{Count: len(out), Invitations: out})
}

func (h *handler) resendInvitation(c echo.Context) error {
	cl, id, err := target(c)
	if err != nil {
		return err
	}
	inv, err := httpx.UUIDParam(c, "invitation_id")
	if err != nil {
		return err
	}
	out, err := h.accounts.ResendInvitation(c.Request().Context(), cl, id, inv)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, invitationIssued{Invitation: toInvitationOut(out.Invitation, time.Now()), Token: out.Token, AcceptURL: out.AcceptURL, Emailed: out.Emailed})
}

func (h *handler) revokeInvitation(c echo.Context) error {
	cl, id, err := target(c)
	if err != nil {
		return err
	}
	inv, err := httpx.UUIDParam(c, "invitation_id")
	if err != nil {
		return err
	}
	if err := h.accounts.RevokeInvitation(c.Request().Context(), cl, id, inv); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// acceptInvitation is open: the token is the credential. A caller who is
// authenticated anyway is passed on, so a signed-in user accepts without
// their password.
func (h *handler) acceptInvitation(c echo.Context) error {
	var req acceptRequest
	if err := bind(c, &req); err != nil {
		return err
	}
	var cl *accounts.Caller
	if s, ok := scope.From(c.Request().Context()); ok && s.UserID != uuid.Nil {
		cl = &accounts.Caller{UserID: s.UserID}
	}
	// A password given here is checked against an existing account's, so
	// it is throttled like a sign-in from the client's address.
	addr := h.proxies.ClientAddr(c.Request())
	if req.Password != nil {
		if err := h.throttled(c, "", addr); err != nil {
			return err
		}
	}
	inv, user, err := h.accounts.AcceptInvitation(c.Request().Context(), cl, accounts.Acceptance{Token: req.Token, Password: req.Password, Username: req.Username})
	if req.Password != nil {
		h.signIns.Done("", addr, accounts.IsCredentialsError(err), err == nil)
	}
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, invitationAccepted{Invitation: toInvitationOut(inv, time.Now()), UserID: user})
}
