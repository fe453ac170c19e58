package httpapi

import (
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/httpx"
	"github.com/assayhq/assay/pkg/roles"
	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/services/gateway/internal/accounts"
	"github.com/assayhq/assay/services/gateway/internal/sessions"
)

// The team routes of the compatible platform's web frontend, in its shapes
// (docs/reference/gateway.md, teams; docs/api.md, compatibility): organizations
// as plain objects and a plain list, invitations and members named by email.
// Each maps onto the accounts use cases, so roles are checked as on our own
// routes.
func (h *handler) registerCompatTeams(e *echo.Echo) {
	e.PATCH("/organizations/:id", h.updateOrganization)
	e.POST("/organizations/:id/transfer/:user_id", h.transferTo)
	const ws = "/organizations/:id/workspaces/:workspace_id/invite"
	e.POST(ws, h.compatInvite)
	e.POST(ws+"/resend", h.compatResend)
	e.POST(ws+"/accept", h.compatAccept)
	e.DELETE("/workspaces/:id/users", h.compatRemoveUser)
	e.POST("/workspaces/:id/roles", h.compatAssignRole)
	e.DELETE("/workspaces/:id/roles", h.compatUnassignRole)
	e.GET("/access/roles", accessRoles)
}

// Answer records of the compatible routes; nil fields are omitted.
type (
	// compatOrganization is an organization as the compatible clients read
	// it; owner_user_id, created_at and role are ours, kept for our
	// clients.
	compatOrganization struct {
		ID               uuid.UUID        `json:"id"`
		Slug             *string          `json:"slug,omitempty"`
		Name             string           `json:"name"`
		Description      *string          `json:"description,omitempty"`
		Flags            map[string]bool  `json:"flags"`
		Tags             map[string]any   `json:"tags"`
		Meta             map[string]any   `json:"meta"`
		OwnerID          uuid.UUID        `json:"owner_id"`
		OwnerUserID      uuid.UUID        `json:"owner_user_id"`
		CreatedAt        time.Time        `json:"created_at"`
		Role             string           `json:"role,omitempty" example:"owner"` // the caller's role
		Workspaces       []uuid.UUID      `json:"workspaces"`                     // the organization's workspaces the caller has a role in, oldest first
		DefaultWorkspace *compatWorkspace `json:"default_workspace,omitempty"`    // detail only: the oldest of them, with its team
	}
	compatWorkspace struct {
		ID             uuid.UUID      `json:"id"`
		Name           string         `json:"name"`
		Description    *string        `json:"description,omitempty"`
		OrganizationID uuid.UUID      `json:"organization_id"`
		CreatedAt      time.Time      `json:"created_at"`
		Members        []compatMember `json:"members"`
	}
	compatMember struct {
		User  compatMemberUser `json:"user"`
		Roles []compatRole     `json:"roles"`
	}
	compatMemberUser struct {
		ID        uuid.UUID `json:"id"` // the user's id; a pending invitation's id for status pending or expired
		Email     string    `json:"email"`
		Username  string    `json:"username"` // the user's username, else the email's local part
		Name      *string   `json:"name,omitempty"`
		Status    string    `json:"status" example:"member"` // member, pending or expired
		CreatedAt time.Time `json:"created_at"`
	}
	compatRole struct {
		RoleName        string   `json:"role_name" example:"editor"`
		RoleDescription string   `json:"role_description"`
		Permissions     []string `json:"permissions"`
	}
	compatTransferred struct {
		OrganizationID uuid.UUID `json:"organization_id"`
		OwnerID        uuid.UUID `json:"owner_id"`
	}
	compatInviteItem struct {
		Email string   `json:"email"`
		Roles []string `json:"roles"` // one role (ours or workspace_admin, evaluator, deployment_manager); default editor
	}
	compatInvited struct {
		URL     string `json:"url,omitempty"` // the invitation link, only when no mail relay is set (the inviter passes it on)
		Message string `json:"message"`
		Emailed bool   `json:"emailed"` // the relay took the mail
	}
	compatEmail struct {
		Email string `json:"email"`
	}
	compatAcceptRequest struct {
		Token string  `json:"token"`
		Email *string `json:"email"` // when given, must be the invitation's
		// Password and Username are ours: they create the account of an
		// email that has none (the compatible platform signs the invitee
		// up before it calls accept).
		Password *string `json:"password"`
		Username *string `json:"username"`
	}
	compatAccepted struct {
		Message string    `json:"message"`
		UserID  uuid.UUID `json:"user_id"`
	}
	compatRoleRequest struct {
		Email          string     `json:"email"`
		OrganizationID *uuid.UUID `json:"organization_id"`
		Role           string     `json:"role" example:"editor"`
	}
	compatMessage struct {
		Message string `json:"message"`
	}
	accessRole struct {
		Role        string   `json:"role" example:"viewer"`
		Description string   `json:"description"`
		Permissions []string `json:"permissions"`
	}
	accessRoleSet struct {
		Organization []accessRole `json:"organization"`
		Workspace    []accessRole `json:"workspace"`
		Project      []accessRole `json:"project"`
	}
)

// roleDescriptions say what each role is for, for role pickers.
var roleDescriptions = map[roles.Role]string{
	roles.Owner:     "Everything, including deleting the organization and transferring its ownership.",
	roles.Admin:     "Everything but deleting or transferring the organization: members, invitations, keys, structure.",
	roles.Editor:    "Create and edit testsets, applications, evaluators and traces; deploy; run evaluations; manage API keys.",
	roles.Annotator: "Read everything and annotate: human evaluation steps and annotations.",
	roles.Viewer:    "Read everything.",
}

func permissionsOf(r roles.Role) []string {
	out := []string{}
	for _, p := range roles.Permissions {
		if r.Can(p) {
			out = append(out, string(p))
		}
	}
	return out
}

func toCompatRole(r roles.Role) compatRole {
	return compatRole{RoleName: string(r), RoleDescription: roleDescriptions[r], Permissions: permissionsOf(r)}
}

func toCompatMember(m accounts.TeamMember) compatMember {
	username := strings.SplitN(m.Email, "@", 2)[0]
	if m.Username != nil && *m.Username != "" {
		username = *m.Username
	}
	return compatMember{User: compatMemberUser{ID: m.UserID, Email: m.Email, Username: username, Name: m.Name, Status: m.Status,
		CreatedAt: m.CreatedAt}, Roles: []compatRole{toCompatRole(m.Role)}}
}

func toCompatOrganization(o accounts.Organization, role string, wss []uuid.UUID) compatOrganization {
	if wss == nil {
		wss = []uuid.UUID{}
	}
	return compatOrganization{ID: o.ID, Slug: o.Slug, Name: o.Name, Description: o.Description, Flags: o.OrgFlags(),
		Tags: map[string]any{}, Meta: map[string]any{}, OwnerID: o.OwnerUserID, OwnerUserID: o.OwnerUserID,
		CreatedAt: o.CreatedAt, Role: role, Workspaces: wss}
}

// workspacesByOrg groups the caller's workspaces by organization, oldest
// first.
func (h *handler) workspacesByOrg(c echo.Context, cl accounts.Caller) (map[uuid.UUID][]accounts.Workspace, error) {
	list, err := h.accounts.Workspaces(c.Request().Context(), cl)
	if err != nil {
		return nil, err
	}
	out := map[uuid.UUID][]accounts.Workspace{}
	for _, w := range list {
		out[w.OrganizationID] = append(out[w.OrganizationID], w.Workspace)
	}
	for _, ws := range out {
		sortWorkspaces(ws)
	}
	return out, nil
}

func sortWorkspaces(ws []accounts.Workspace) {
	for i := 1; i < len(ws); i++ { // a handful per organization
		for j := i; j > 0 && ws[j].CreatedAt.Before(ws[j-1].CreatedAt); j-- {
			ws[j], ws[j-1] = ws[j-1], ws[j]
		}
	}
}

func workspaceIDs(ws []accounts.Workspace) []uuid.UUID {
	out := make([]uuid.UUID, len(ws))
	for i, w := range ws {
		out[i] = w.ID
	}
	return out
}

// renderOrganization answers the organization as the detail route does:
// the flat object with the default workspace and its team.
func (h *handler) renderOrganization(c echo.Context, cl accounts.Caller, id uuid.UUID, status int) error {
	ctx := c.Request().Context()
	o, err := h.accounts.Organization(ctx, cl, id)
	if err != nil {
		return err
	}
	byOrg, err := h.workspacesByOrg(c, cl)
	if err != nil {
		return err
	}
	wss := byOrg[id]
	out := toCompatOrganization(o.Organization, o.Role, workspaceIDs(wss))
	if len(wss) > 0 {
		w := wss[0]
		team, err := h.accounts.Team(ctx, cl, w.ID)
		if err != nil {
			return err
		}
		dw := &compatWorkspace{ID: w.ID, Name: w.Name, Description: w.Description, OrganizationID: w.OrganizationID,
			CreatedAt: w.CreatedAt, Members: make([]compatMember, len(team))}
		for i, m := range team {
			dw.Members[i] = toCompatMember(m)
		}
		out.DefaultWorkspace = dw
	}
	return c.JSON(status, out)
}

// transferTo is the compatible ownership transfer: the new owner in the
// path, no body. A target who is not a member is the 400 of a bad target
// there (our /transfer-ownership answers 409).
func (h *handler) transferTo(c echo.Context) error {
	cl, id, err := target(c)
	if err != nil {
		return err
	}
	to, err := httpx.UUIDParam(c, "user_id")
	if err != nil {
		return err
	}
	if err := h.accounts.TransferOwnership(c.Request().Context(), cl, id, to); err != nil {
		if e := errs.From(err); e.Kind == errs.Conflict && e.Code == "accounts.not_member" {
			return errs.Message(errs.Invalid, e.Code, e.Msg, map[string]any{"field": "new_owner_user_id", "user_id": to.String()})
		}
		return err
	}
	return c.JSON(http.StatusOK, compatTransferred{OrganizationID: id, OwnerID: to})
}

// plainDenial renders a 403 with a string detail: the compatible frontend
// shows detail as the toast text of its member-management actions.
func plainDenial(err error) error {
	if e := errs.From(err); e.Kind == errs.Forbidden {
		return errs.New(errs.Forbidden, e.Code, e.Msg)
	}
	return err
}

// orgWorkspace is the caller and the organization and workspace of an
// invite route, checked to belong together (404 otherwise).
func (h *handler) orgWorkspace(c echo.Context) (accounts.Caller, uuid.UUID, error) {
	cl, org, err := target(c)
	if err != nil {
		return cl, uuid.Nil, err
	}
	ws, err := httpx.UUIDParam(c, "workspace_id")
	if err != nil {
		return cl, uuid.Nil, err
	}
	return cl, ws, h.accounts.CheckWorkspaceIn(c.Request().Context(), cl, org, ws)
}

func invited(inv accounts.IssuedInvitation) compatInvited {
	out := compatInvited{URL: inv.AcceptURL, Emailed: inv.Emailed, Message: "Invitation created: pass the link on to " + inv.Email + "."}
	if inv.Emailed {
		out.Message = "Invitation sent to " + inv.Email + "."
	} else if inv.AcceptURL == "" {
		out.Message = "The invitation was created but the mail relay refused it: resend it."
	}
	return out
}

// compatInvite takes the compatible body, a list of exactly one invitee.
func (h *handler) compatInvite(c echo.Context) error {
	cl, ws, err := h.orgWorkspace(c)
	if err != nil {
		return err
	}
	var items []compatInviteItem
	if err := httpx.BindText(c, &items); err != nil {
		return err
	}
	if len(items) != 1 {
		return errs.Message(errs.Invalid, "invitations.one", "give exactly one invitee per request (a list of one item)",
			map[string]any{"field": "body", "count": len(items)})
	}
	role := string(roles.Editor)
	switch n := len(items[0].Roles); {
	case n > 1:
		return errs.Message(errs.Invalid, "invitations.one_role", "[0].roles: give one role; a member holds one role in a workspace",
			map[string]any{"field": "[0].roles"})
	case n == 1:
		r, err := accounts.ParseRole("[0].roles[0]", items[0].Roles[0])
		if err != nil {
			return err
		}
		role = string(r)
	}
	inv, err := h.accounts.Invite(c.Request().Context(), cl, ws, accounts.NewInvitation{Email: items[0].Email, Role: role})
	if err != nil {
		return plainDenial(err)
	}
	return c.JSON(http.StatusOK, invited(inv))
}

func (h *handler) compatResend(c echo.Context) error {
	cl, ws, err := h.orgWorkspace(c)
	if err != nil {
		return err
	}
	var req compatEmail
	if err := bind(c, &req); err != nil {
		return err
	}
	inv, err := h.accounts.ResendByEmail(c.Request().Context(), cl, ws, req.Email)
	if err != nil {
		return plainDenial(err)
	}
	return c.JSON(http.StatusOK, invited(inv))
}

// compatAccept redeems a token on the compatible path. It is open like
// /invitations/accept (the token is the credential); a signed-in session
// (its cookie and CSRF header) accepts as its user, whatever project_id
// the link carries: the invitee is not a member of it yet. Errors carry
// detail {error, message}; an unknown token is a 400 there.
func (h *handler) compatAccept(c echo.Context) error {
	var req compatAcceptRequest
	if err := bind(c, &req); err != nil {
		return acceptError(err)
	}
	ctx := c.Request().Context()
	var cl *accounts.Caller
	var sid *uuid.UUID
	if token := cookie(c, SessionCookie); token != "" && h.sessions != nil {
		sess, err := h.sessions.Lookup(ctx, token)
		if err != nil {
			return acceptError(err)
		}
		if err := sessions.CheckCSRF(sess, c.Request().Header.Get(CSRFHeader)); err != nil {
			return acceptError(err)
		}
		cl = &accounts.Caller{UserID: sess.User.ID}
		sid = &sess.ID
	}
	addr := h.proxies.ClientAddr(c.Request())
	if req.Password != nil {
		if err := h.throttled(c, "", addr); err != nil {
			return err
		}
	}
	inv, user, err := h.accounts.AcceptInvitation(ctx, cl, accounts.Acceptance{Token: req.Token, Password: req.Password,
		Username: req.Username, Email: req.Email})
	if req.Password != nil {
		h.signIns.Done("", addr, accounts.IsCredentialsError(err), err == nil)
	}
	if err != nil {
		return acceptError(err)
	}
	// The audit entry names the invitee as the actor (the route is open,
	// so no scope was set before).
	actx := scope.With(ctx, scope.Scope{UserID: user})
	if sid != nil {
		actx = sessions.WithID(actx, *sid)
	}
	c.SetRequest(c.Request().WithContext(actx))
	return c.JSON(http.StatusOK, compatAccepted{Message: "Invitation accepted: you are a member of the workspace as " + string(inv.Role) + ".", UserID: user})
}

// acceptError gives an accept error the compatible detail {error,
// message}, error being our code.
func acceptError(err error) error {
	e := errs.From(err)
	if e.Kind == errs.Internal || e.Kind == errs.Unavailable {
		return err
	}
	kind := e.Kind
	if e.Code == "invitations.unknown" {
		kind = errs.Invalid
	}
	d := map[string]any{}
	if m, ok := e.Detail.(map[string]any); ok {
		for k, v := range m {
			d[k] = v
		}
	}
	d["error"], d["message"] = e.Code, e.Msg
	return errs.WithDetail(kind, e.Code, e.Msg, d)
}

func (h *handler) compatRemoveUser(c echo.Context) error {
	cl, ws, err := target(c)
	if err != nil {
		return err
	}
	email := c.QueryParam("email")
	if err := h.compatOrgParam(c, cl, ws); err != nil {
		return err
	}
	if err := h.accounts.RemoveByEmail(c.Request().Context(), cl, ws, email); err != nil {
		return plainDenial(err)
	}
	return c.JSON(http.StatusOK, compatMessage{Message: email + " was removed from the workspace."})
}

// compatOrgParam checks an organization_id query parameter, when given,
// against the workspace's organization.
func (h *handler) compatOrgParam(c echo.Context, cl accounts.Caller, ws uuid.UUID) error {
	raw := c.QueryParam("organization_id")
	if raw == "" {
		return nil
	}
	org, err := uuid.Parse(raw)
	if err != nil {
		return errs.Field("not a UUID", raw, "query", "organization_id")
	}
	return h.accounts.CheckWorkspaceIn(c.Request().Context(), cl, org, ws)
}

func (h *handler) compatAssignRole(c echo.Context) error {
	cl, ws, err := target(c)
	if err != nil {
		return err
	}
	var req compatRoleRequest
	if err := bind(c, &req); err != nil {
		return err
	}
	if req.OrganizationID != nil {
		if err := h.accounts.CheckWorkspaceIn(c.Request().Context(), cl, *req.OrganizationID, ws); err != nil {
			return err
		}
	}
	m, err := h.accounts.SetWorkspaceRoleByEmail(c.Request().Context(), cl, ws, req.Email, req.Role)
	if err != nil {
		return plainDenial(err)
	}
	return c.JSON(http.StatusOK, toCompatMember(accounts.TeamMember{UserID: m.UserID, Email: m.Email, Username: m.Username,
		Name: m.Name, Role: roles.Role(m.Role), Status: "member", CreatedAt: m.CreatedAt}))
}

func (h *handler) compatUnassignRole(c echo.Context) error {
	cl, ws, err := target(c)
	if err != nil {
		return err
	}
	if err := h.compatOrgParam(c, cl, ws); err != nil {
		return err
	}
	email, role := c.QueryParam("email"), c.QueryParam("role")
	if err := h.accounts.UnsetWorkspaceRoleByEmail(c.Request().Context(), cl, ws, email, role); err != nil {
		return plainDenial(err)
	}
	return c.JSON(http.StatusOK, compatMessage{Message: "The role " + role + " of " + email + " in the workspace was removed."})
}

// accessRoles lists the roles at each level with what they may do; the
// same roles apply at all three.
func accessRoles(c echo.Context) error {
	list := make([]accessRole, len(roles.All))
	for i, r := range roles.All {
		list[i] = accessRole{Role: string(r), Description: roleDescriptions[r], Permissions: permissionsOf(r)}
	}
	return c.JSON(http.StatusOK, accessRoleSet{Organization: list, Workspace: list, Project: list})
}
