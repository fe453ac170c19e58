package httpapi

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/assayhq/assay/pkg/httpx"
)

type (
	resetRequest struct {
		Email string `json:"email"`
	}
	// resetRequested is the one answer to a reset request, whether or not
	// the email has an account.
	resetRequested struct {
		Message string `json:"message"`
		// MailConfigured is false when the gateway has no mail relay: no
		// link is mailed, and the operator issues one instead.
		MailConfigured bool `json:"mail_configured"`
	}
	resetConfirm struct {
		Token    string `json:"token"`
		Password string `json:"password"`
	}
	resetIssued struct {
		Token     string    `json:"token"`
		ResetURL  string    `json:"reset_url"`
		ExpiresAt time.Time `json:"expires_at"`
	}
)

// requestReset mails a reset link to an account's email (throttled like a
// failed sign-in per client address, so it cannot be used to flood a
// mailbox from one address).
func (h *handler) requestReset(c echo.Context) error {
	var req resetRequest
	if err := httpx.BindText(c, &req); err != nil {
		return err
	}
	if err := h.throttled(c, "", h.proxies.ClientAddr(c.Request())); err != nil {
		return err
	}
	mail, err := h.accounts.RequestPasswordReset(c.Request().Context(), req.Email)
	if err != nil {
		return err
	}
	msg := "If the email has an account, a link to set its password was mailed to it."
	if !mail {
		msg = "No mail relay is configured: ask the operator for a password reset link."
	}
	return c.JSON(http.StatusAccepted, resetRequested{Message: msg, MailConfigured: mail})
}

func (h *handler) confirmReset(c echo.Context) error {
	var req resetConfirm
	if err := httpx.BindText(c, &req); err != nil {
		return err
	}
	if err := h.accounts.ResetPassword(c.Request().Context(), req.Token, req.Password); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// adminIssueReset is the operator's one-time link for a user (admin key).
func (h *handler) adminIssueReset(c echo.Context) error {
	id, err := httpx.UUIDParam(c, "id")
	if err != nil {
		return err
	}
	r, err := h.accounts.IssuePasswordReset(c.Request().Context(), id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, resetIssued{Token: r.Token, ResetURL: r.URL, ExpiresAt: r.ExpiresAt})
}
