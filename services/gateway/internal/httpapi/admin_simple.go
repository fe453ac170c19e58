package httpapi

import (
	"net/http"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/assayhq/assay/pkg/errs"
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
	e.POST(base+"/users/identities", h.adminAddIdentities)
	e.DELETE(base+"/users/identities/:id", h.adminDeleteIdentity)
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
	// The per-entity bodies take the entity's fields flat (ours) or
	// nested under its key as in the provisioning request of the
	// compatible admin API ({"organization": {...}}); the
	// nested object wins. The answers carry the entity under its key and,
	// as the provisioning answer does, in the keyed collection
	// (organizations.org, workspaces.wrk, projects.prj).
	adminOrganizationFields struct {
		Name        string     `json:"name"`
		Slug        *string    `json:"slug"`
		Description *string    `json:"description"`
		OwnerUserID *uuid.UUID `json:"owner_user_id"`
		OwnerID     *uuid.UUID `json:"owner_id"` // the compatible name of owner_user_id
	}
	adminOrganizationRequest struct {
		Name         string                   `json:"name"`
		Slug         *string                  `json:"slug"`
		Description  *string                  `json:"description"`
		OwnerUserID  *uuid.UUID               `json:"owner_user_id"`
		Organization *adminOrganizationFields `json:"organization"`
		// User names the owner by id or email, as a provisioning
		// account's user does.
		User *accounts.UserRef `json:"user"`
	}
	adminOrganizationCreated struct {
		Organization  orgOut            `json:"organization"`
		Organizations map[string]orgOut `json:"organizations"`
	}
	adminWorkspaceFields struct {
		OrganizationID uuid.UUID `json:"organization_id"`
		Name           string    `json:"name"`
		Description    *string   `json:"description"`
	}
	adminWorkspaceRequest struct {
		OrganizationID uuid.UUID             `json:"organization_id"`
		Name           string                `json:"name"`
		Description    *string               `json:"description"`
		Workspace      *adminWorkspaceFields `json:"workspace"`
	}
	adminWorkspaceCreated struct {
		Workspace  workspaceOut            `json:"workspace"`
		Workspaces map[string]workspaceOut `json:"workspaces"`
	}
	adminProjectFields struct {
		WorkspaceID uuid.UUID `json:"workspace_id"`
		Name        string    `json:"name"`
		Description *string   `json:"description"`
		IsDefault   bool      `json:"is_default"`
	}
	adminProjectRequest struct {
		WorkspaceID uuid.UUID           `json:"workspace_id"`
		Name        string              `json:"name"`
		Description *string             `json:"description"`
		IsDefault   bool                `json:"is_default"`
		Project     *adminProjectFields `json:"project"`
	}
	adminProjectCreated struct {
		Project  projectOut            `json:"project"`
		Projects map[string]projectOut `json:"projects"`
	}
	adminIdentitiesRequest struct {
		User           *accounts.UserRef       `json:"user"`
		UserID         *uuid.UUID              `json:"user_id"`
		UserIdentities []accounts.IdentitySpec `json:"user_identities"`
		UserIdentity   *accounts.IdentitySpec  `json:"user_identity"` // one identity, instead of the list
	}
	adminIdentitiesCreated struct {
		UserIdentities []identityOut `json:"user_identities"`
	}
	// adminMembershipRequest names the target by the id of its level
	// (organization_id, workspace_id or project_id, as the path says).
	adminMembershipFields struct {
		OrganizationID *uuid.UUID `json:"organization_id,omitempty"`
		WorkspaceID    *uuid.UUID `json:"workspace_id,omitempty"`
		ProjectID      *uuid.UUID `json:"project_id,omitempty"`
		UserID         uuid.UUID  `json:"user_id"`
		Role           string     `json:"role" example:"viewer"`
	}
	// adminMembershipRequest takes the fields flat, nested under
	// membership, or as the one item of the level's list
	// (organization_memberships, ...) as in the provisioning request.
	adminMembershipRequest struct {
		OrganizationID          *uuid.UUID              `json:"organization_id,omitempty"`
		WorkspaceID             *uuid.UUID              `json:"workspace_id,omitempty"`
		ProjectID               *uuid.UUID              `json:"project_id,omitempty"`
		UserID                  uuid.UUID               `json:"user_id"`
		Role                    string                  `json:"role" example:"viewer"`
		Membership              *adminMembershipFields  `json:"membership,omitempty"`
		OrganizationMemberships []adminMembershipFields `json:"organization_memberships,omitempty"`
		WorkspaceMemberships    []adminMembershipFields `json:"workspace_memberships,omitempty"`
		ProjectMemberships      []adminMembershipFields `json:"project_memberships,omitempty"`
	}
	// adminMembershipCreated carries the membership under membership and
	// as the one item of its level's list, as the provisioning answer does.
	adminMembershipCreated struct {
		Membership              membershipOut   `json:"membership"`
		OrganizationMemberships []membershipOut `json:"organization_memberships,omitempty"`
		WorkspaceMemberships    []membershipOut `json:"workspace_memberships,omitempty"`
		ProjectMemberships      []membershipOut `json:"project_memberships,omitempty"`
	}
	adminKeyFields struct {
		UserID    uuid.UUID `json:"user_id"`
		ProjectID uuid.UUID `json:"project_id"`
		Name      *string   `json:"name"`
		// Role caps the key (at most the user's role); default: the
		// user's role at each use.
		Role      *string    `json:"role"`
		ExpiresAt *time.Time `json:"expires_at"`
	}
	adminKeyRequest struct {
		UserID    uuid.UUID       `json:"user_id"`
		ProjectID uuid.UUID       `json:"project_id"`
		Name      *string         `json:"name"`
		Role      *string         `json:"role"`
		ExpiresAt *time.Time      `json:"expires_at"`
		APIKey    *adminKeyFields `json:"api_key"` // the fields nested, instead
	}
	// adminKeyCreated is ours ({count, api_key}) with the provisioning
	// answer's api_keys.key, the raw key.
	adminKeyCreated struct {
		Count   int               `json:"count" example:"1"`
		APIKey  keyOut            `json:"api_key"`
		APIKeys map[string]string `json:"api_keys"`
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
	f := adminOrganizationFields{Name: req.Name, Slug: req.Slug, Description: req.Description, OwnerUserID: req.OwnerUserID}
	if req.Organization != nil {
		f = *req.Organization
	}
	owner := f.OwnerUserID
	if owner == nil {
		owner = f.OwnerID
	}
	if owner == nil {
		owner = req.OwnerUserID
	}
	ctx := c.Request().Context()
	if owner == nil && req.User != nil {
		id, err := h.accounts.AdminUserID(ctx, *req.User)
		if err != nil {
			return err
		}
		owner = &id
	}
	if owner == nil {
		owner = &uuid.Nil // refused, naming the field
	}
	o, err := h.accounts.AdminCreateOrganization(ctx, *owner, f.Name, f.Slug, f.Description)
	if err != nil {
		return err
	}
	out := orgOut{ID: o.ID, Name: o.Name, Slug: o.Slug, Description: o.Description, OwnerUserID: o.OwnerUserID, CreatedAt: o.CreatedAt}
	return c.JSON(http.StatusOK, adminOrganizationCreated{Organization: out, Organizations: map[string]orgOut{"org": out}})
}

func (h *handler) adminCreateWorkspace(c echo.Context) error {
	var req adminWorkspaceRequest
	if err := bind(c, &req); err != nil {
		return err
	}
	f := adminWorkspaceFields{OrganizationID: req.OrganizationID, Name: req.Name, Description: req.Description}
	if req.Workspace != nil {
		f = *req.Workspace
	}
	w, err := h.accounts.AdminCreateWorkspace(c.Request().Context(), f.OrganizationID, f.Name, f.Description)
	if err != nil {
		return err
	}
	out := workspaceOut{ID: w.ID, Name: w.Name, Description: w.Description, OrganizationID: w.OrganizationID, CreatedAt: w.CreatedAt}
	return c.JSON(http.StatusOK, adminWorkspaceCreated{Workspace: out, Workspaces: map[string]workspaceOut{"wrk": out}})
}

func (h *handler) adminCreateProject(c echo.Context) error {
	var req adminProjectRequest
	if err := bind(c, &req); err != nil {
		return err
	}
	f := adminProjectFields{WorkspaceID: req.WorkspaceID, Name: req.Name, Description: req.Description, IsDefault: req.IsDefault}
	if req.Project != nil {
		f = *req.Project
	}
	p, err := h.accounts.AdminCreateProject(c.Request().Context(), f.WorkspaceID, f.Name, f.Description, f.IsDefault)
	if err != nil {
		return err
	}
	out := projectOut{ID: p.ID, Name: p.Name, Description: p.Description, OrganizationID: p.OrganizationID,
		WorkspaceID: p.WorkspaceID, IsDefault: p.IsDefault, CreatedAt: p.CreatedAt}
	return c.JSON(http.StatusOK, adminProjectCreated{Project: out, Projects: map[string]projectOut{"prj": out}})
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
	f := adminMembershipFields{OrganizationID: req.OrganizationID, WorkspaceID: req.WorkspaceID, ProjectID: req.ProjectID,
		UserID: req.UserID, Role: req.Role}
	list := [...][]adminMembershipFields{req.OrganizationMemberships, req.WorkspaceMemberships, req.ProjectMemberships}[a.level]
	switch {
	case len(list) > 1:
		return errs.Message(errs.Invalid, "accounts.invalid", a.level.String()+"_memberships: one membership per call",
			map[string]any{"field": a.level.String() + "_memberships"})
	case len(list) == 1:
		f = list[0]
	case req.Membership != nil:
		f = *req.Membership
	}
	req.UserID, req.Role = f.UserID, f.Role
	ids := [...]*uuid.UUID{f.OrganizationID, f.WorkspaceID, f.ProjectID}
	var target uuid.UUID
	if ids[a.level] != nil {
		target = *ids[a.level]
	}
	m, err := a.h.accounts.AdminCreateMembership(c.Request().Context(), a.level, target, req.UserID, req.Role)
	if err != nil {
		return err
	}
	out := membershipOut{ID: m.ID, UserID: m.UserID, Role: m.Role, CreatedAt: m.CreatedAt}
	res := adminMembershipCreated{}
	switch a.level {
	case accounts.OrganizationLevel:
		out.OrganizationID = &m.TargetID
		res.OrganizationMemberships = []membershipOut{out}
	case accounts.WorkspaceLevel:
		out.WorkspaceID = &m.TargetID
		res.WorkspaceMemberships = []membershipOut{out}
	default:
		out.ProjectID = &m.TargetID
		res.ProjectMemberships = []membershipOut{out}
	}
	res.Membership = out
	return c.JSON(http.StatusOK, res)
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
	f := adminKeyFields{UserID: req.UserID, ProjectID: req.ProjectID, Name: req.Name, Role: req.Role, ExpiresAt: req.ExpiresAt}
	if req.APIKey != nil {
		f = *req.APIKey
	}
	k, raw, err := h.accounts.AdminCreateKey(c.Request().Context(), f.UserID, f.ProjectID, f.Role, f.Name, f.ExpiresAt)
	if err != nil {
		return err
	}
	out := toKeyOut(k)
	out.Key = raw
	return c.JSON(http.StatusOK, adminKeyCreated{Count: 1, APIKey: out, APIKeys: map[string]string{"key": raw}})
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

func (h *handler) adminAddIdentities(c echo.Context) error {
	var req adminIdentitiesRequest
	if err := bind(c, &req); err != nil {
		return err
	}
	ref := accounts.UserRef{ID: req.UserID}
	if req.User != nil && ref.ID == nil {
		ref = *req.User
	}
	specs := req.UserIdentities
	if req.UserIdentity != nil {
		specs = append(specs, *req.UserIdentity)
	}
	ids, err := h.accounts.AdminAddIdentities(c.Request().Context(), ref, specs)
	if err != nil {
		return err
	}
	out := adminIdentitiesCreated{UserIdentities: make([]identityOut, len(ids))}
	for i, id := range ids {
		out.UserIdentities[i] = identityOut{ID: id.ID, UserID: id.UserID, Method: id.Method, Subject: id.Subject, Email: id.Email,
			Verified: id.Verified, CreatedAt: id.CreatedAt}
	}
	return c.JSON(http.StatusOK, out)
}

func (h *handler) adminDeleteIdentity(c echo.Context) error {
	id, err := httpx.UUIDParam(c, "id")
	if err != nil {
		return err
	}
	if err := h.accounts.AdminDeleteIdentity(c.Request().Context(), id); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}
