package httpapi

import (
	"net/http"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/assayhq/assay/pkg/httpx"
	"github.com/assayhq/assay/services/gateway/internal/accounts"
)

// registerAdmin adds the admin simple routes: one entity or membership
// created or deleted per call, each in one transaction (Authorization:
// Access <admin key>, checked by authenticate).
func (h *handler) registerAdmin(e *echo.Echo) {
	const base = "/admin/simple/accounts"
	e.POST(base+"/users", h.adminCreateUser)
	e.DELETE(base+"/users/:id", h.adminDeleteUser)
	e.POST(base+"/users/:id/password-reset", h.adminIssueReset)
	e.POST(base+"/organizations", h.adminCreateOrganization)
	e.POST(base+"/workspaces", h.adminCreateWorkspace)
	e.POST(base+"/projects", h.adminCreateProject)
	for name, lv := range map[string]accounts.Level{"organizations": accounts.OrganizationLevel,
		"workspaces": accounts.WorkspaceLevel, "projects": accounts.ProjectLevel} {
		a := adminLevel{h: h, level: lv}
		e.DELETE(base+"/"+name+"/:id", a.delete)
		e.POST(base+"/"+name+"/memberships", a.createMembership)
		e.DELETE(base+"/"+name+"/memberships/:id", a.deleteMembership)
	}
	e.POST(base+"/api-keys", h.adminCreateKey)
	e.DELETE(base+"/api-keys/:id", h.adminRevokeKey)
}

type (
	adminUserRequest struct {
		User           accounts.UserSpec       `json:"user"`
		UserIdentities []accounts.IdentitySpec `json:"user_identities"`
	}
	adminUserCreated struct {
		User           userOut       `json:"user"`
		UserIdentities []identityOut `json:"user_identities,omitempty"`
	}
	adminOrganizationRequest struct {
		Name        string    `json:"name"`
		Slug        *string   `json:"slug"`
		Description *string   `json:"description"`
		OwnerUserID uuid.UUID `json:"owner_user_id"`
	}
	adminOrganizationCreated struct {
		Organization orgOut `json:"organization"`
	}
	adminWorkspaceRequest struct {
		OrganizationID uuid.UUID `json:"organization_id"`
		Name           string    `json:"name"`
		Description    *string   `json:"description"`
	}
	adminWorkspaceCreated struct {
		Workspace workspaceOut `json:"workspace"`
	}
	adminProjectRequest struct {
		WorkspaceID uuid.UUID `json:"workspace_id"`
		Name        string    `json:"name"`
		Description *string   `json:"description"`
		IsDefault   bool      `json:"is_default"`
	}
	adminProjectCreated struct {
		Project projectOut `json:"project"`
	}
	// adminMembershipRequest names the target by the id of its level
	// (organization_id, workspace_id or project_id, as the path says).
	adminMembershipRequest struct {
		OrganizationID *uuid.UUID `json:"organization_id,omitempty"`
		WorkspaceID    *uuid.UUID `json:"workspace_id,omitempty"`
		ProjectID      *uuid.UUID `json:"project_id,omitempty"`
		UserID         uuid.UUID  `json:"user_id"`
		Role           string     `json:"role" example:"viewer"`
	}
	adminMembershipCreated struct {
		Membership membershipOut `json:"membership"`
	}
	adminKeyRequest struct {
		UserID    uuid.UUID `json:"user_id"`
		ProjectID uuid.UUID `json:"project_id"`
		Name      *string   `json:"name"`
		// Role caps the key (at most the user's role); default: the
		// user's role at each use.
		Role      *string    `json:"role"`
		ExpiresAt *time.Time `json:"expires_at"`
	}
)

func (h *handler) adminCreateUser(c echo.Context) error {
	var req adminUserRequest
	if err := bind(c, &req); err != nil {
		return err
	}
	u, ids, err := h.accounts.AdminCreateUser(c.Request().Context(), req.User, req.UserIdentities)
	if err != nil {
		return err
	}
	out := adminUserCreated{User: userOut{ID: u.ID, UID: u.ID.String(), Email: u.Email, Username: u.Username, Name: u.Name,
		IsAdmin: u.IsAdmin, IsRoot: u.IsRoot, Metadata: u.Metadata, CreatedAt: u.CreatedAt}}
	for _, id := range ids {
		out.UserIdentities = append(out.UserIdentities, identityOut{ID: id.ID, UserID: id.UserID, Method: id.Method,
			Subject: id.Subject, Email: id.Email, Verified: id.Verified, CreatedAt: id.CreatedAt})
	}
	return c.JSON(http.StatusOK, out)
}

func (h *handler) adminDeleteUser(c echo.Context) error {
	id, err := httpx.UUIDParam(c, "id")
	if err != nil {
		return err
	}
	if err := h.accounts.AdminDeleteUser(c.Request().Context(), id); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

func (h *handler) adminCreateOrganization(c echo.Context) error {
	var req adminOrganizationRequest
	if err := bind(c, &req); err != nil {
		return err
	}
	o, err := h.accounts.AdminCreateOrganization(c.Request().Context(), req.OwnerUserID, req.Name, req.Slug, req.Description)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, adminOrganizationCreated{Organization: orgOut{ID: o.ID, Name: o.Name, Slug: o.Slug,
		Description: o.Description, OwnerUserID: o.OwnerUserID, CreatedAt: o.CreatedAt}})
}

func (h *handler) adminCreateWorkspace(c echo.Context) error {
	var req adminWorkspaceRequest
	if err := bind(c, &req); err != nil {
		return err
	}
	w, err := h.accounts.AdminCreateWorkspace(c.Request().Context(), req.OrganizationID, req.Name, req.Description)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, adminWorkspaceCreated{Workspace: workspaceOut{ID: w.ID, Name: w.Name, Description: w.Description,
		OrganizationID: w.OrganizationID, CreatedAt: w.CreatedAt}})
}

func (h *handler) adminCreateProject(c echo.Context) error {
	var req adminProjectRequest
	if err := bind(c, &req); err != nil {
		return err
	}
	p, err := h.accounts.AdminCreateProject(c.Request().Context(), req.WorkspaceID, req.Name, req.Description, req.IsDefault)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, adminProjectCreated{Project: projectOut{ID: p.ID, Name: p.Name, Description: p.Description,
		OrganizationID: p.OrganizationID, WorkspaceID: p.WorkspaceID, IsDefault: p.IsDefault, CreatedAt: p.CreatedAt}})
}

// adminLevel serves the admin routes of one level.
type adminLevel struct {
	h     *handler
	level accounts.Level
}

func (a adminLevel) delete(c echo.Context) error {
	id, err := httpx.UUIDParam(c, "id")
	if err != nil {
		return err
	}
	if err := a.h.accounts.AdminDelete(c.Request().Context(), a.level, id); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

func (a adminLevel) createMembership(c echo.Context) error {
	var req adminMembershipRequest
	if err := bind(c, &req); err != nil {
		return err
	}
	ids := [...]*uuid.UUID{req.OrganizationID, req.WorkspaceID, req.ProjectID}
	var target uuid.UUID
	if ids[a.level] != nil {
		target = *ids[a.level]
	}
	m, err := a.h.accounts.AdminCreateMembership(c.Request().Context(), a.level, target, req.UserID, req.Role)
	if err != nil {
		return err
	}
	out := membershipOut{ID: m.ID, UserID: m.UserID, Role: m.Role, CreatedAt: m.CreatedAt}
	switch a.level {
	case accounts.OrganizationLevel:
		out.OrganizationID = &m.TargetID
	case accounts.WorkspaceLevel:
		out.WorkspaceID = &m.TargetID
	default:
		out.ProjectID = &m.TargetID
	}
	return c.JSON(http.StatusOK, adminMembershipCreated{Membership: out})
}

func (a adminLevel) deleteMembership(c echo.Context) error {
	id, err := httpx.UUIDParam(c, "id")
	if err != nil {
		return err
	}
	if err := a.h.accounts.AdminDeleteMembership(c.Request().Context(), a.level, id); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

func (h *handler) adminCreateKey(c echo.Context) error {
	var req adminKeyRequest
	if err := bind(c, &req); err != nil {
		return err
	}
	k, raw, err := h.accounts.AdminCreateKey(c.Request().Context(), req.UserID, req.ProjectID, req.Role, req.Name, req.ExpiresAt)
	if err != nil {
		return err
	}
	out := toKeyOut(k)
	out.Key = raw
	return c.JSON(http.StatusOK, keyCreated{Count: 1, APIKey: out})
}

func (h *handler) adminRevokeKey(c echo.Context) error {
	id, err := httpx.UUIDParam(c, "id")
	if err != nil {
		return err
	}
	if err := h.accounts.AdminRevokeKey(c.Request().Context(), id); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}
