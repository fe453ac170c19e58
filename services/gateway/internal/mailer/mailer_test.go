package mailer_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/pkg/roles"
	"github.com/assayhq/assay/pkg/testutil/smtptest"
	"github.com/assayhq/assay/services/gateway/internal/accounts"
	"github.com/assayhq/assay/services/gateway/internal/mailer"
)

func TestNewRefusesBadURLs(t *testing.T) {
	for _, raw := range []string{
		"", "http://mail.example.com?from=a@example.com", "smtp://?from=a@example.com",
		"smtp://mail.example.com", "smtp://mail.example.com?from=not-an-address",
		"smtp://mail.example.com?from=A <a@example.com>", "smtp://[::1",
	} {
		_, err := mailer.New(raw, time.Second)
		assert.Error(t, err, raw)
	}
	_, err := mailer.New("smtp://user:pw@mail.example.com:2525?from=a@example.com", time.Second)
	assert.NoError(t, err)
}

func TestSendInvitation(t *testing.T) {
	relay := smtptest.New(t)
	m, err := mailer.New("smtp://"+relay.Addr+"?from=assay@example.com", 5*time.Second)
	require.NoError(t, err)
	inv := accounts.Invitation{Email: "you@example.com", Role: roles.Editor, ExpiresAt: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)}
	require.NoError(t, m.SendInvitation(context.Background(), inv, "https://assay.example.com/console/invitations/accept?token=abc"))
	msgs := relay.Messages()
	require.Len(t, msgs, 1)
	assert.Equal(t, "assay@example.com", msgs[0].From)
	assert.Equal(t, []string{"you@example.com"}, msgs[0].To)
	assert.Contains(t, msgs[0].Data, "From: assay@example.com\r\n")
	assert.Contains(t, msgs[0].Data, "as editor")
	assert.Contains(t, msgs[0].Data, "Wed, 02 Jan 2030 03:04:05 UTC")
	assert.True(t, strings.HasSuffix(msgs[0].Data, "\r\n\r\nhttps://assay.example.com/console/invitations/accept?token=abc"), msgs[0].Data)

	relay.Close()
	assert.Error(t, m.SendInvitation(context.Background(), inv, "x"), "the relay is down")
}
