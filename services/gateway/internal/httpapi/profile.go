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

// invalidField is the 400 of a missing or malformed body field, shaped
// like the accounts service's: {"detail": {"message", "field"}}.
func invalidField(field, msg string) error {
	return errs.Message(errs.Invalid, "accounts.invalid", field+": "+msg, map[string]any{"field": field})
}

// profileOut is GET /api/profile: the key's user, shaped like the
// compatible platform's profile (id, uid, email, username, created_at),
// with the user's memberships and the role in each.
type profileOut struct {
	ID            uuid.UUID        `json:"id"`
	UID           string           `json:"uid"`
	Email         string           `json:"email"`
	Username      *string          `json:"username,omitempty"`
	Name          *string          `json:"name,omitempty"`
	CreatedAt     time.Time        `json:"created_at"`
	Organizations []profileOrg     `json:"organizations"`
	Workspaces    []profileWrk     `json:"workspaces"`
	Projects      []profileProject `json:"projects"`
}

type (
	profileOrg struct {
		ID   uuid.UUID `json:"id"`
		Name string    `json:"name"`
		Slug *string   `json:"slug,omitempty"`
		Role string    `json:"role"`
	}
	profileWrk struct {
		ID             uuid.UUID `json:"id"`
		Name           string    `json:"name"`
		OrganizationID uuid.UUID `json:"organization_id"`
		Role           string    `json:"role"`
	}
	profileProject struct {
		ID             uuid.UUID `json:"id"`
		Name           string    `json:"name"`
		OrganizationID uuid.UUID `json:"organization_id"`
		WorkspaceID    uuid.UUID `json:"workspace_id"`
		IsDefault      bool      `json:"is_default"`
		Role           string    `json:"role"`
	}
)

func (h *handler) profile(c echo.Context) error {
	s, err := httpx.ProjectScope(c)
	if err != nil {
		return err
	}
	p, err := h.accounts.Profile(c.Request().Context(), s.UserID)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, toProfileOut(p))
}

func toProfileOut(p *accounts.Profile) profileOut {
	u := p.User
	out := profileOut{ID: u.ID, UID: u.ID.String(), Email: u.Email, Username: u.Username, Name: u.Name, CreatedAt: u.CreatedAt,
		Organizations: make([]profileOrg, len(p.Organizations)), Workspaces: make([]profileWrk, len(p.Workspaces)),
		Projects: make([]profileProject, len(p.Projects))}
	for i, o := range p.Organizations {
		out.Organizations[i] = profileOrg{ID: o.ID, Name: o.Name, Slug: o.Slug, Role: o.Role}
	}
	for i, w := range p.Workspaces {
		out.Workspaces[i] = profileWrk{ID: w.ID, Name: w.Name, OrganizationID: w.OrganizationID, Role: w.Role}
	}
	for i, pr := range p.Projects {
		out.Projects[i] = profileProject{ID: pr.ID, Name: pr.Name, OrganizationID: pr.OrganizationID, WorkspaceID: pr.WorkspaceID,
			IsDefault: pr.IsDefault, Role: pr.Role}
	}
	return out
}
