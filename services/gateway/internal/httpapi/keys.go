package httpapi

import (
	"net/http"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/assayhq/assay/pkg/httpx"
	"github.com/assayhq/assay/pkg/roles"
	"github.com/assayhq/assay/services/gateway/internal/accounts"
)

// keyOut is a key as listed: never the secret, only its prefix.
type keyOut struct {
	ID          uuid.UUID  `json:"id"`
	Prefix      string     `json:"prefix"`
	Name        *string    `json:"name,omitempty"`
	ProjectID   uuid.UUID  `json:"project_id"`
	CreatedByID *uuid.UUID `json:"created_by_id,omitempty"`
	CreatedAt   time.Time  `json:"created_at"`
	ExpiresAt   *time.Time `json:"expires_at,omitempty"`
	Role        *string    `json:"role,omitempty" example:"editor"` // nil: its creator's role
	Key         string     `json:"key,omitempty"`                   // the raw key, on create only
}

func toKeyOut(k accounts.APIKey) keyOut {
	return keyOut{ID: k.ID, Prefix: k.Prefix, Name: k.Name, ProjectID: k.ProjectID, CreatedByID: k.CreatedByID, CreatedAt: k.CreatedAt, ExpiresAt: k.ExpiresAt, Role: k.Role}
}

// keyList and keyCreated are the two key envelopes, named so the OpenAPI
// document is generated from them.
type (
	keyList struct {
		Count   int      `json:"count"`
		APIKeys []keyOut `json:"api_keys"`
	}
	keyCreated struct {
		Count  int    `json:"count" example:"1"`
		APIKey keyOut `json:"api_key"`
	}
)

type createKeyRequest struct {
	APIKey struct {
		Name      *string    `json:"name"`
		ExpiresAt *time.Time `json:"expires_at"`
		// Role is the most the key may do (owner, admin, editor,
		// annotator, viewer); default and maximum: the caller's role.
		Role *string `json:"role"`
	} `json:"api_key"`
}

func (h *handler) listKeys(c echo.Context) error {
	s, err := httpx.ProjectScope(c)
	if err != nil {
		return err
	}
	keys, err := h.accounts.ListKeys(c.Request().Context(), s.ProjectID, s.UserID, roles.Role(s.Role))
	if err != nil {
		return err
	}
	out := make([]keyOut, len(keys))
	for i, k := range keys {
		out[i] = toKeyOut(k)
	}
	return c.JSON(http.StatusOK, keyList{Count: len(out), APIKeys: out})
}

func (h *handler) createKey(c echo.Context) error {
	s, err := httpx.ProjectScope(c)
	if err != nil {
		return err
	}
	var req createKeyRequest
	if c.Request().ContentLength != 0 {
		if err := httpx.BindText(c, &req); err != nil {
			return err
		}
	}
	k, raw, err := h.accounts.CreateKey(c.Request().Context(), s.ProjectID, s.UserID, roles.Role(s.Role), req.APIKey.Role, req.APIKey.Name, req.APIKey.ExpiresAt)
	if err != nil {
		return err
	}
	out := toKeyOut(k)
	out.Key = raw
	return c.JSON(http.StatusOK, keyCreated{Count: 1, APIKey: out})
}

func (h *handler) revokeKey(c echo.Context) error {
	s, err := httpx.ProjectScope(c)
	if err != nil {
		return err
	}
	id, err := httpx.UUIDParam(c, "id")
	if err != nil {
		return err
	}
	if err := h.accounts.RevokeKey(c.Request().Context(), s.ProjectID, s.UserID, roles.Role(s.Role), id); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}
