package httpapi_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPasswordResetMailed: a reset is asked for by email and answered the
// same whether or not the email has an account; the mailed link sets a new
// password once, signs the user out everywhere, and expires.
func TestPasswordResetMailed(t *testing.T) {
	s, relay := mailedStack(t)
	s.userWithPassword(t, "alice@example.com", "old password")
	old, _ := s.signIn(t, "alice@example.com", "old password")

	known := s.do(t, "POST", "/api/auth/password-reset", "", map[string]any{"email": "alice@example.com"})
	unknown := s.do(t, "POST", "/api/auth/password-reset", "", map[string]any{"email": "nobody@example.com"})
	require.Equal(t, http.StatusAccepted, known.status, string(known.body))
	assert.Equal(t, known.status, unknown.status)
	assert.Equal(t, string(known.body), string(unknown.body), "nothing tells whether the email has an account")
	require.Len(t, relay.Messages(), 1, "only the account's email gets a link")
	msg := relay.Messages()[0]
	assert.Contains(t, msg.Data, "https://assay.example.com/console/reset-password?token=")
	token := lastToken(t, relay, "alice@example.com")
	var stored string
	require.NoError(t, s.pool.QueryRow(context.Background(), `SELECT token_hash FROM password_resets`).Scan(&stored))
	assert.NotContains(t, stored, token, "only the hash is stored")

	r := s.do(t, "POST", "/api/auth/password-reset/confirm", "", map[string]any{"token": token, "password": "short"})
	require.Equal(t, http.StatusBadRequest, r.status, string(r.body))
	assert.Contains(t, string(r.body), "password")
	s.want(t, http.StatusNoContent, "POST", "/api/auth/password-reset/confirm", "", map[string]any{"token": token, "password": "new password"})
	s.signIn(t, "alice@example.com", "new password")
	assert.Equal(t, http.StatusUnauthorized, s.do(t, "POST", "/api/auth/sign-in", "", map[string]any{"email": "alice@example.com", "password": "old password"}).status)
	assert.Equal(t, http.StatusUnauthorized, s.do(t, "GET", "/api/auth/session", "", nil, old.headers()...).status, "older sessions end")

	// single use
	r = s.do(t, "POST", "/api/auth/password-reset/confirm", "", map[string]any{"token": token, "password": "third password"})
	assert.Equal(t, http.StatusGone, r.status, string(r.body))
	assert.Equal(t, http.StatusNotFound, s.do(t, "POST", "/api/auth/password-reset/confirm", "", map[string]any{"token": "nope", "password": "third password"}).status)

	// expiry
	s.want(t, http.StatusAccepted, "POST", "/api/auth/password-reset", "", map[string]any{"email": "alice@example.com"})
	late := lastToken(t, relay, "alice@example.com")
	_, err := s.pool.Exec(context.Background(), `UPDATE password_resets SET expires_at = now() - interval '1 second' WHERE used_at IS NULL`)
	require.NoError(t, err)
	r = s.do(t, "POST", "/api/auth/password-reset/confirm", "", map[string]any{"token": late, "password": "third password"})
	assert.Equal(t, http.StatusGone, r.status, string(r.body))
	s.signIn(t, "alice@example.com", "new password")
}

// TestPasswordResetIssuedByTheOperator: without a mail relay the operator
// (the admin key) issues a one-time link for a user; nobody else can.
func TestPasswordResetIssuedByTheOperator(t *testing.T) {
	s := newStack(t)
	bob := s.userWithPassword(t, "bob@example.com", "old password")
	r := s.want(t, http.StatusAccepted, "POST", "/api/auth/password-reset", "", map[string]any{"email": "bob@example.com"})
	assert.Equal(t, false, r["mail_configured"])

	path := "/api/admin/simple/accounts/users/" + bob.userID + "/password-reset"
	assert.Equal(t, http.StatusUnauthorized, s.do(t, "POST", path, bob.auth(), nil).status)
	out := s.want(t, http.StatusOK, "POST", path, admin, nil)
	link := out["reset_url"].(string)
	require.True(t, strings.HasPrefix(link, "/console/reset-password?token="), link)
	token := strings.TrimPrefix(link, "/console/reset-password?token=")
	assert.Equal(t, token, out["token"])
	assert.NotEmpty(t, out["expires_at"])
	s.want(t, http.StatusNoContent, "POST", "/api/auth/password-reset/confirm", "", map[string]any{"token": token, "password": "new password"})
	s.signIn(t, "bob@example.com", "new password")
	assert.Equal(t, http.StatusGone, s.do(t, "POST", "/api/auth/password-reset/confirm", "", map[string]any{"token": token, "password": "new password"}).status)
	assert.Equal(t, http.StatusNotFound, s.do(t, "POST", "/api/admin/simple/accounts/users/00000000-0000-0000-0000-000000000001/password-reset", admin, nil).status)
}
