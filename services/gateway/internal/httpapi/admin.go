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

type provisionRequest struct {
	Options  *accounts.Options        `json:"options"`
	Accounts map[string]accounts.Spec `json:"accounts"`
}

type deleteRequest struct {
	Accounts map[string]struct {
		User accounts.UserRef `json:"user"`
	} `json:"accounts"`
	DryRun  bool    `json:"dry_run"`
	Reason  *string `json:"reason"`
	Confirm *string `json:"confirm"`
}

// Response records, shaped as the compatible platform's account
// provisioning answers them; nil fields are omitted.
type (
	userOut struct {
		ID        uuid.UUID      `json:"id"`
		UID       string         `json:"uid"`
		Email     string         `json:"email"`
		Username  *string        `json:"username,omitempty"`
		Name      *string        `json:"name,omitempty"`
		IsAdmin   bool           `json:"is_admin"`
		IsRoot    bool           `json:"is_root"`
		Metadata  map[string]any `json:"metadata,omitempty"`
		CreatedAt time.Time      `json:"created_at"`
	}
	orgOut struct {
		ID          uuid.UUID `json:"id"`
		Name        string    `json:"name"`
		Slug        *string   `json:"slug,omitempty"`
		Description *string   `json:"description,omitempty"`
		OwnerUserID uuid.UUID `json:"owner_user_id"`
		CreatedAt   time.Time `json:"created_at"`
	}
	workspaceOut struct {
		ID             uuid.UUID `json:"id"`
		Name           string    `json:"name"`
		Description    *string   `json:"description,omitempty"`
		OrganizationID uuid.UUID `json:"organization_id"`
		CreatedAt      time.Time `json:"created_at"`
	}
	projectOut struct {
		ID             uuid.UUID `json:"id"`
		Name           string    `json:"name"`
		Description    *string   `json:"description,omitempty"`
		OrganizationID uuid.UUID `json:"organization_id"`
		WorkspaceID    uuid.UUID `json:"workspace_id"`
		IsDefault      bool      `json:"is_default"`
		CreatedAt      time.Time `json:"created_at"`
	}
	membershipOut struct {
		ID             uuid.UUID  `json:"id"`
		OrganizationID *uuid.UUID `json:"organization_id,omitempty"`
		WorkspaceID    *uuid.UUID `json:"workspace_id,omitempty"`
		ProjectID      *uuid.UUID `json:"project_id,omitempty"`
		UserID         uuid.UUID  `json:"user_id"`
		Role           string     `json:"role"`
		CreatedAt      time.Time  `json:"created_at"`
	}
	identityOut struct {
		ID        uuid.UUID `json:"id"`
		UserID    uuid.UUID `json:"user_id"`
		Method    string    `json:"method"`
		Subject   string    `json:"subject"`
		Email     *string   `json:"email,omitempty"`
		Verified  bool      `json:"verified"`
		CreatedAt time.Time `json:"created_at"`
	}
	accountOut struct {
		User                    userOut                 `json:"user"`
		Organizations           map[string]orgOut       `json:"organizations"`
		Workspaces              map[string]workspaceOut `json:"workspaces"`
		Projects                map[string]projectOut   `json:"projects"`
		APIKeys                 map[string]string       `json:"api_keys,omitempty"`
		OrganizationMemberships []membershipOut         `json:"organization_memberships"`
		WorkspaceMemberships    []membershipOut         `json:"workspace_memberships"`
		ProjectMemberships      []membershipOut         `json:"project_memberships"`
		UserIdentities          []identityOut           `json:"user_identities,omitempty"`
	}
)

// accountsOut is the provisioning answer: the created accounts keyed by
// the request's references.
type accountsOut struct {
	Accounts map[string]accountOut `json:"accounts"`
}

func toAccountOut(a *accounts.Account) accountOut {
	u, o, w, p := a.User, a.Organization, a.Workspace, a.Project
	out := accountOut{
		User: userOut{ID: u.ID, UID: u.ID.String(), Email: u.Email, Username: u.Username, Name: u.Name,
			IsAdmin: u.IsAdmin, IsRoot: u.IsRoot, Metadata: u.Metadata, CreatedAt: u.CreatedAt},
		Organizations: map[string]orgOut{"org": {ID: o.ID, Name: o.Name, Slug: o.Slug, Description: o.Description, OwnerUserID: o.OwnerUserID, CreatedAt: o.CreatedAt}},
		Workspaces:    map[string]workspaceOut{"wrk": {ID: w.ID, Name: w.Name, Description: w.Description, OrganizationID: w.OrganizationID, CreatedAt: w.CreatedAt}},
		Projects: map[string]projectOut{"prj": {ID: p.ID, Name: p.Name, Description: p.Description, OrganizationID: p.OrganizationID,
			WorkspaceID: p.WorkspaceID, IsDefault: p.IsDefault, CreatedAt: p.CreatedAt}},
	}
	if a.RawKey != "" {
		out.APIKeys = map[string]string{"key": a.RawKey}
	}
	for i, m := range a.Memberships {
		mo := membershipOut{ID: m.ID, UserID: m.UserID, Role: m.Role, CreatedAt: m.CreatedAt}
		target := m.TargetID
		switch i {
		case 0:
			mo.OrganizationID = &target
			out.OrganizationMemberships = []membershipOut{mo}
		case 1:
			mo.WorkspaceID = &target
			out.WorkspaceMemberships = []membershipOut{mo}
		case 2:
			mo.ProjectID = &target
			out.ProjectMemberships = []membershipOut{mo}
		}
	}
	for _, id := range a.Identities {
		out.UserIdentities = append(out.UserIdentities, identityOut{ID: id.ID, UserID: id.UserID, Method: id.Method,
			Subject: id.Subject, Email: id.Email, Verified: id.Verified, CreatedAt: id.CreatedAt})
	}
	return out
}

func (h *handler) provisionAccounts(c echo.Context) error {
	var req provisionRequest
	if err := httpx.BindText(c, &req); err != nil {
		return err
	}
	created, err := h.accounts.Provision(c.Request().Context(), req.Options, req.Accounts)
	if err != nil {
		return err
	}
	out := make(map[string]accountOut, len(created))
	for ref, a := range created {
		out[ref] = toAccountOut(a)
	}
	return c.JSON(http.StatusOK, accountsOut{Accounts: out})
}

func (h *handler) deleteAccounts(c echo.Context) error {
	var req deleteRequest
	if err := httpx.BindText(c, &req); err != nil {
		return err
	}
	if len(req.Accounts) == 0 {
		return errs.Message(errs.Invalid, "accounts.invalid", "accounts: at least one account is required", map[string]any{"field": "accounts"})
	}
	if req.DryRun {
		return c.NoContent(http.StatusNoContent)
	}
	refs := make(map[string]accounts.UserRef, len(req.Accounts))
	for ref, a := range req.Accounts {
		refs[ref] = a.User
	}
	if err := h.accounts.Delete(c.Request().Context(), refs); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}
