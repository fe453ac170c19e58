package httpapi_test

import (
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/pkg/testutil/pgtest"
	"github.com/assayhq/assay/pkg/testutil/smtptest"
	"github.com/assayhq/assay/services/gateway/internal/accounts"
	"github.com/assayhq/assay/services/gateway/internal/mailer"
)

var tokenInLink = regexp.MustCompile(`token=([A-Za-z0-9_-]+)`)

// mailedStack is a stack whose gateway mails through a local relay.
func mailedStack(t *testing.T) (*stack, *smtptest.Server) {
	relay := smtptest.New(t)
	m, err := mailer.New("smtp://"+relay.Addr+"?from=assay@example.com", 5*time.Second)
	require.NoError(t, err)
	s := startStackConfigured(t, pgtest.NewURL(t), nil, "", "1M", func(a *accounts.Service) {
		a.Mailer, a.AcceptURL = m, "https://assay.example.com"+a.AcceptURL
		a.ResetURL = "https://assay.example.com" + a.ResetURL
	})
	return s, relay
}

// lastToken is the token of the last link mailed to email.
func lastToken(t *testing.T, relay *smtptest.Server, email string) string {
	t.Helper()
	msgs := relay.Messages()
	for i := len(msgs) - 1; i >= 0; i-- {
		if len(msgs[i].To) == 1 && msgs[i].To[0] == email {
			m := tokenInLink.FindStringSubmatch(msgs[i].Data)
			require.NotNil(t, m, msgs[i].Data)
			return m[1]
		}
	}
	t.Fatalf("nothing mailed to %s", email)
	return ""
}

// TestInviterCannotTakeOverANewEmail: an organization's admin invites an
// email that has no account and tries to accept it themselves, setting
// the password. With a mail relay the link goes only to the email: the
// invite and resend answers carry no token, so the inviter has nothing
// to accept with; the invitee sets the password from the mailed link.
func TestInviterCannotTakeOverANewEmail(t *testing.T) {
	s, relay := mailedStack(t)
	own := s.teamAccount(t, "own@example.com")
	ws := "/api/workspaces/" + own.workspaceID

	r := s.want(t, http.StatusCreated, "POST", ws+"/invitations", own.auth(), map[string]any{"email": "victim@example.com", "role": "admin"})
	assert.Equal(t, true, r["emailed"])
	assert.Empty(t, r["token"], "the inviter never sees the token of a mailed invitation")
	assert.Empty(t, r["accept_url"])
	id := obj(r, "invitation")["id"].(string)
	r = s.want(t, http.StatusOK, "POST", ws+"/invitations/"+id+"/resend", own.auth(), nil)
	assert.Empty(t, r["token"])
	assert.NotContains(t, string(s.do(t, "GET", ws+"/invitations", own.auth(), nil).body), lastToken(t, relay, "victim@example.com"))

	// the invitee, with the mailed link, chooses the password
	token := lastToken(t, relay, "victim@example.com")
	s.want(t, http.StatusOK, "POST", "/api/invitations/accept", "", map[string]any{"token": token, "password": "victim's own"})
	s.signIn(t, "victim@example.com", "victim's own")
}

// TestAcceptErrorSameForKnownAndUnknownEmails: the token holder learns
// nothing about whether the invited email has an account from the
// refusals of accept.
func TestAcceptErrorSameForKnownAndUnknownEmails(t *testing.T) {
	s := newStack(t)
	own := s.teamAccount(t, "own@example.com")
	s.teamAccount(t, "known@example.com")
	ws := "/api/workspaces/" + own.workspaceID
	tok := func(email string) string {
		return s.want(t, http.StatusCreated, "POST", ws+"/invitations", own.auth(), map[string]any{"email": email, "role": "viewer"})["token"].(string)
	}
	known, unknown := tok("known@example.com"), tok("unknown@example.com")
	for _, body := range []map[string]any{{}, {"password": "short"}, {"password": strings.Repeat("x", 80)}} {
		k, u := map[string]any{"token": known}, map[string]any{"token": unknown}
		for key, v := range body {
			k[key], u[key] = v, v
		}
		rk := s.do(t, "POST", "/api/invitations/accept", "", k)
		ru := s.do(t, "POST", "/api/invitations/accept", "", u)
		assert.Equal(t, rk.status, ru.status, "%v", body)
		assert.Equal(t, strings.ReplaceAll(string(rk.body), "known@", "EMAIL@"), strings.ReplaceAll(string(ru.body), "unknown@", "EMAIL@"),
			"the same answer but for the invitation's own email: %v", body)
		assert.Contains(t, string(rk.body), `"field":"password"`, "%v", body)
	}
}
