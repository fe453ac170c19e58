package httpapi

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/assayhq/assay/pkg/httpx"
	"github.com/assayhq/assay/services/gateway/internal/sessions"
	"github.com/assayhq/assay/services/gateway/internal/throttle"
)

// The console's cookies (docs/console.md, signing in). The session cookie is
// HttpOnly: no script reads it; the CSRF cookie is read by the console's
// script and sent back as X-CSRF-Token, which another site cannot do.
const (
	SessionCookie = "assay_session"
	CSRFCookie    = "assay_csrf"
	CSRFHeader    = "X-CSRF-Token"
)

type signInRequest struct {
	Email    string `json:"email"`
	Password string `json:"password"`
}

// sessionOut is the answer of sign-in and of GET /api/auth/session.
type (
	sessionUser struct {
		ID       uuid.UUID `json:"id"`
		Email    string    `json:"email"`
		Username *string   `json:"username,omitempty"`
		Name     *string   `json:"name,omitempty"`
	}
	sessionProject struct {
		ID             uuid.UUID `json:"id"`
		Name           string    `json:"name"`
		WorkspaceID    uuid.UUID `json:"workspace_id"`
		OrganizationID uuid.UUID `json:"organization_id"`
		Role           string    `json:"role"`
		IsDefault      bool      `json:"is_default"`
	}
	sessionOut struct {
		User     sessionUser      `json:"user"`
		Projects []sessionProject `json:"projects"`
		// ProjectID is the user's default project (the oldest they have
		// a role in); null when they have none.
		ProjectID *uuid.UUID `json:"project_id"`
		CSRFToken string     `json:"csrf_token"`
		ExpiresAt time.Time  `json:"expires_at"`
	}
)

func (h *handler) sessionBody(c echo.Context, s *sessions.Session) (sessionOut, error) {
	ps, err := h.sessions.Projects(c.Request().Context(), s.User.ID)
	if err != nil {
		return sessionOut{}, err
	}
	u := s.User
	out := sessionOut{User: sessionUser{ID: u.ID, Email: u.Email, Username: u.Username, Name: u.Name},
		Projects: make([]sessionProject, len(ps)), CSRFToken: s.CSRFToken, ExpiresAt: s.ExpiresAt}
	for i, p := range ps {
		out.Projects[i] = sessionProject{ID: p.ID, Name: p.Name, WorkspaceID: p.WorkspaceID, OrganizationID: p.OrganizationID,
			Role: string(p.Role), IsDefault: p.IsDefault}
	}
	if len(ps) > 0 {
		out.ProjectID = &ps[0].ID
	}
	return out, nil
}

func (h *handler) signIn(c echo.Context) error {
	var req signInRequest
	if err := httpx.BindText(c, &req); err != nil {
		return err
	}
	addr := h.proxies.ClientAddr(c.Request())
	if err := h.throttled(c, req.Email, addr); err != nil {
		return err
	}
	in, err := h.sessions.SignIn(c.Request().Context(), req.Email, req.Password)
	h.signIns.Done(req.Email, addr, errors.Is(err, sessions.ErrBadCredentials), err == nil)
	if err != nil {
		return err
	}
	out, err := h.sessionBody(c, &in.Session)
	if err != nil {
		return err
	}
	maxAge := int(h.sessions.TTL() / time.Second)
	setCookie(c, SessionCookie, in.Token, maxAge, true)
	setCookie(c, CSRFCookie, in.Session.CSRFToken, maxAge, false)
	return c.JSON(http.StatusOK, out)
}

func (h *handler) session(c echo.Context) error {
	s, err := h.sessions.Lookup(c.Request().Context(), cookie(c, SessionCookie))
	if err != nil {
		return err
	}
	out, err := h.sessionBody(c, s)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, out)
}

// signOut ends a live session (with its CSRF token, like every unsafe
// request of a session) and always clears the cookies: a stale cookie is
// signed out already.
func (h *handler) signOut(c echo.Context) error {
	ctx := c.Request().Context()
	token := cookie(c, SessionCookie)
	if s, err := h.sessions.Lookup(ctx, token); err == nil {
		if err := sessions.CheckCSRF(s, c.Request().Header.Get(CSRFHeader)); err != nil {
			return err
		}
		if err := h.sessions.SignOut(ctx, token); err != nil {
			return err
		}
	} else if err != sessions.ErrExpired && err != sessions.ErrSignedOut {
		return err
	}
	setCookie(c, SessionCookie, "", -1, true)
	setCookie(c, CSRFCookie, "", -1, false)
	return c.NoContent(http.StatusNoContent)
}

func cookie(c echo.Context, name string) string {
	ck, err := c.Cookie(name)
	if err != nil {
		return ""
	}
	return ck.Value
}

// setCookie writes a console cookie; maxAge < 0 deletes it. Secure when the
// request came over https, directly or through a proxy that says so.
func setCookie(c echo.Context, name, value string, maxAge int, httpOnly bool) {
	r := c.Request()
	c.SetCookie(&http.Cookie{Name: name, Value: value, Path: "/", MaxAge: maxAge, HttpOnly: httpOnly,
		SameSite: http.SameSiteLaxMode, Secure: r.TLS != nil || r.Header.Get("X-Forwarded-Proto") == "https"})
}

// throttled counts an attempt of email (may be "") from addr and answers
// 429 with Retry-After when either has used its failures.
func (h *handler) throttled(c echo.Context, email, addr string) error {
	err := h.signIns.Attempt(email, addr)
	var refused *throttle.Refused
	if errors.As(err, &refused) {
		c.Response().Header().Set("Retry-After", strconv.Itoa(refused.RetryAfter))
		return refused.Err()
	}
	return err
}
