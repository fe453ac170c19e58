// Package mailer sends the gateway's emails (invitations) through an SMTP
// relay named by a URL: smtp://[user:password@]host[:port]?from=address.
// The connection is upgraded with STARTTLS whenever the relay offers it;
// credentials are sent only over TLS or to a loopback relay (net/smtp's
// PLAIN auth refuses otherwise).
package mailer

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/mail"
	"net/smtp"
	"net/url"
	"time"

	"github.com/assayhq/assay/services/gateway/internal/accounts"
)

// Mailer sends mail through one relay.
type Mailer struct {
	host, addr string
	from       string
	auth       smtp.Auth
	timeout    time.Duration
}

var _ accounts.Mailer = (*Mailer)(nil)

// New parses the relay URL; timeout bounds one message's delivery.
func New(raw string, timeout time.Duration) (*Mailer, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("smtp url: %w", err)
	}
	if u.Scheme != "smtp" {
		return nil, fmt.Errorf("smtp url: scheme %q: only smtp:// (with STARTTLS when offered)", u.Scheme)
	}
	if u.Hostname() == "" {
		return nil, fmt.Errorf("smtp url: no host")
	}
	from := u.Query().Get("from")
	if a, err := mail.ParseAddress(from); err != nil || a.Address != from {
		return nil, fmt.Errorf("smtp url: from=%q is not an email address", from)
	}
	port := u.Port()
	if port == "" {
		port = "587"
	}
	m := &Mailer{host: u.Hostname(), addr: net.JoinHostPort(u.Hostname(), port), from: from, timeout: timeout}
	if u.User != nil {
		pw, _ := u.User.Password()
		m.auth = smtp.PlainAuth("", u.User.Username(), pw, u.Hostname())
	}
	return m, nil
}

// SendInvitation mails an invitation's link to its email.
func (m *Mailer) SendInvitation(ctx context.Context, inv accounts.Invitation, link string) error {
	body := fmt.Sprintf("You are invited to join a workspace on Assay as %s.\r\n\r\n"+
		"Accept the invitation here (the link works until %s):\r\n\r\n%s\r\n",
		inv.Role, inv.ExpiresAt.UTC().Format(time.RFC1123), link)
	msg := "From: " + m.from + "\r\nTo: " + inv.Email + "\r\nSubject: Your invitation to Assay\r\n" +
		"Date: " + time.Now().UTC().Format(time.RFC1123Z) + "\r\nMIME-Version: 1.0\r\n" +
		"Content-Type: text/plain; charset=utf-8\r\n\r\n" + body
	return m.send(ctx, inv.Email, msg)
}

var _ accounts.ResetMailer = (*Mailer)(nil)

// SendPasswordReset mails a one-time link that sets the password of the
// account of email.
func (m *Mailer) SendPasswordReset(ctx context.Context, email, link string, expires time.Time) error {
	body := fmt.Sprintf("Someone asked to set a new password for your Assay account.\r\n\r\n"+
		"Set it here (the link works once, until %s):\r\n\r\n%s\r\n\r\n"+
		"If you did not ask for this, ignore this message: your password stays as it is.\r\n",
		expires.UTC().Format(time.RFC1123), link)
	msg := "From: " + m.from + "\r\nTo: " + email + "\r\nSubject: Set your Assay password\r\n" +
		"Date: " + time.Now().UTC().Format(time.RFC1123Z) + "\r\nMIME-Version: 1.0\r\n" +
		"Content-Type: text/plain; charset=utf-8\r\n\r\n" + body
	return m.send(ctx, email, msg)
}

func (m *Mailer) send(ctx context.Context, to, msg string) error {
	ctx, cancel := context.WithTimeout(ctx, m.timeout)
	defer cancel()
	conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", m.addr)
	if err != nil {
		return fmt.Errorf("dial smtp relay: %w", err)
	}
	deadline, _ := ctx.Deadline()
	_ = conn.SetDeadline(deadline)
	c, err := smtp.NewClient(conn, m.host)
	if err != nil {
		_ = conn.Close()
		return fmt.Errorf("smtp greeting: %w", err)
	}
	defer c.Close()
	if ok, _ := c.Extension("STARTTLS"); ok {
		if err := c.StartTLS(&tls.Config{ServerName: m.host, MinVersion: tls.VersionTLS12}); err != nil {
			return fmt.Errorf("smtp starttls: %w", err)
		}
	}
	if m.auth != nil {
		if err := c.Auth(m.auth); err != nil {
			return fmt.Errorf("smtp auth: %w", err)
		}
	}
	if err := c.Mail(m.from); err != nil {
		return fmt.Errorf("smtp mail from: %w", err)
	}
	if err := c.Rcpt(to); err != nil {
		return fmt.Errorf("smtp rcpt to: %w", err)
	}
	w, err := c.Data()
	if err != nil {
		return fmt.Errorf("smtp data: %w", err)
	}
	if _, err := w.Write([]byte(msg)); err != nil { // the writer dot-stuffs
		return fmt.Errorf("smtp data: %w", err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("smtp data: %w", err)
	}
	return c.Quit()
}
