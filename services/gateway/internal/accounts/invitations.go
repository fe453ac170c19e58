package accounts

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/mail"
	"strings"

	"github.com/google/uuid"
	"golang.org/x/crypto/bcrypt"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/roles"
)

// MaxInvitationProjects bounds the projects one invitation names (one
// membership row each on acceptance).
const MaxInvitationProjects = 1000

// NewInvitation is what an inviter gives.
type NewInvitation struct {
	Email      string
	Role       string
	ProjectIDs []uuid.UUID
}

// IssuedInvitation is an invitation with its raw token, which exists only
// in this answer (and the email).
type IssuedInvitation struct {
	Invitation
	Token     string
	AcceptURL string
	// Emailed is true when a Mailer is set and the relay took the
	// message; the inviter passes the link on otherwise.
	Emailed bool
}

// Mailer sends an invitation's link to its email (mailer.Mailer over
// SMTP). A failure does not undo the invitation: the inviter has the link.
type Mailer interface {
	SendInvitation(ctx context.Context, inv Invitation, link string) error
}

// mail sends the link when a relay is configured, and then keeps the
// token out of the inviter's answer: accepting an invitation to an email
// without an account sets that account's password, so the link must reach
// the email's owner only, or an inviter could create and hold the account
// of any address. A relay that failed is retried by resending. Without a
// relay the inviter gets the link to pass on (the deployment has no way
// to prove who owns an email; docs/reference/gateway.md, teams).
func (s *Service) mail(ctx context.Context, out IssuedInvitation) IssuedInvitation {
	if s.Mailer != nil {
		out.Emailed = s.Mailer.SendInvitation(ctx, out.Invitation, out.AcceptURL) == nil
		out.Token, out.AcceptURL = "", ""
	}
	return out
}

// newToken returns a random token and the hash stored for it.
func newToken() (string, string) {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	t := base64.RawURLEncoding.EncodeToString(b)
	return t, hashToken(t)
}

func hashToken(t string) string {
	sum := sha256.Sum256([]byte(t))
	return hex.EncodeToString(sum[:])
}

func (s *Service) issued(inv Invitation, token string) IssuedInvitation {
	return IssuedInvitation{Invitation: inv, Token: token, AcceptURL: s.AcceptURL + token}
}

func checkEmail(field, email string) (string, error) {
	email = strings.TrimSpace(email)
	if email == "" {
		return "", invalid(field, "is required")
	}
	if len(email) > MaxEmail {
		return "", invalid(field, fmt.Sprintf("must be at most %d characters", MaxEmail))
	}
	if addr, err := mail.ParseAddress(email); err != nil || addr.Address != email {
		return "", invalid(field, fmt.Sprintf("'%s' is not a valid email address", email))
	}
	return email, nil
}

// Invite creates an invitation to the workspace (manage_members on it) for
// a role no higher than the inviter's, optionally narrowed to some of the
// workspace's projects.
func (s *Service) Invite(ctx context.Context, c Caller, workspaceID uuid.UUID, in NewInvitation) (IssuedInvitation, error) {
	email, err := checkEmail("email", in.Email)
	if err != nil {
		return IssuedInvitation{}, err
	}
	r, err := parseRole("role", in.Role)
	if err != nil {
		return IssuedInvitation{}, err
	}
	a, err := s.authorize(ctx, c, WorkspaceLevel, workspaceID, roles.ManageMembers)
	if err != nil {
		return IssuedInvitation{}, err
	}
	if !a.Role.AtLeast(r) {
		return IssuedInvitation{}, roles.Denied(a.Role, roles.Own)
	}
	if len(in.ProjectIDs) > MaxInvitationProjects {
		return IssuedInvitation{}, invalid("project_ids", fmt.Sprintf("must list at most %d projects", MaxInvitationProjects))
	}
	if len(in.ProjectIDs) > 0 {
		ids, err := s.store.ProjectIDs(ctx, WorkspaceLevel, workspaceID)
		if err != nil {
			return IssuedInvitation{}, err
		}
		ours := make(map[uuid.UUID]bool, len(ids))
		for _, id := range ids {
			ours[id] = true
		}
		for i, id := range in.ProjectIDs {
			if !ours[id] {
				return IssuedInvitation{}, invalid(fmt.Sprintf("project_ids[%d]", i), fmt.Sprintf("project %s is not in workspace %s", id, workspaceID))
			}
		}
	}
	token, hash := newToken()
	now := s.stamp()
	inv := Invitation{ID: newID(), OrganizationID: a.OrganizationID, WorkspaceID: workspaceID, Email: email, Role: r,
		ProjectIDs: dedup(in.ProjectIDs), TokenHash: hash, Status: InvitationPending, InvitedByID: &c.UserID,
		CreatedAt: now, ExpiresAt: now.Add(s.InvitationTTL)}
	if err := s.store.CreateInvitation(ctx, inv); err != nil {
		return IssuedInvitation{}, err
	}
	return s.mail(ctx, s.issued(inv, token)), nil
}

func dedup(ids []uuid.UUID) []uuid.UUID {
	seen := make(map[uuid.UUID]bool, len(ids))
	out := []uuid.UUID{}
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

// Invitations lists the workspace's invitations, newest first
// (manage_members on the workspace).
func (s *Service) Invitations(ctx context.Context, c Caller, workspaceID uuid.UUID) ([]Invitation, error) {
	if _, err := s.authorize(ctx, c, WorkspaceLevel, workspaceID, roles.ManageMembers); err != nil {
		return nil, err
	}
	return s.store.Invitations(ctx, workspaceID)
}

// ResendInvitation gives a pending (or expired) invitation a new token and
// a new expiry; the old token stops working.
func (s *Service) ResendInvitation(ctx context.Context, c Caller, workspaceID, id uuid.UUID) (IssuedInvitation, error) {
	if _, err := s.authorize(ctx, c, WorkspaceLevel, workspaceID, roles.ManageMembers); err != nil {
		return IssuedInvitation{}, err
	}
	if _, err := s.store.Invitation(ctx, workspaceID, id); err != nil {
		return IssuedInvitation{}, err
	}
	token, hash := newToken()
	inv, err := s.store.Reissue(ctx, id, hash, s.stamp().Add(s.InvitationTTL))
	if err != nil {
		return IssuedInvitation{}, err
	}
	return s.mail(ctx, s.issued(inv, token)), nil
}

// RevokeInvitation revokes a pending invitation; its token stops working.
func (s *Service) RevokeInvitation(ctx context.Context, c Caller, workspaceID, id uuid.UUID) error {
	if _, err := s.authorize(ctx, c, WorkspaceLevel, workspaceID, roles.ManageMembers); err != nil {
		return err
	}
	if _, err := s.store.Invitation(ctx, workspaceID, id); err != nil {
		return err
	}
	return s.store.RevokeInvitation(ctx, id)
}

// Acceptance is what the invited person sends.
type Acceptance struct {
	Token    string
	Password *string
	Username *string
	// Email, when given, must be the invitation's (case aside): a client
	// that names the invitee learns of a link opened by someone else.
	Email *string
}

// MinPassword is the shortest password a new user may choose; bcrypt reads
// at most 72 bytes, so longer ones are refused rather than cut.
const (
	MinPassword = 8
	MaxPassword = 72
)

// IsCredentialsError reports whether err is AcceptInvitation's refusal of
// the credentials given (a guess, for the sign-in throttle).
func IsCredentialsError(err error) bool {
	var e *errs.Error
	return errors.As(err, &e) && e.Code == "invitations.credentials"
}

// errCredentials refuses an acceptance without usable credentials: not
// signed in as the invited user, and no password, a password of the wrong
// length, or (for an existing account) the wrong one. It is one answer
// whether or not the email has an account, so a token holder learns
// nothing about the address from it.
func errCredentials(email string) error {
	return errs.Message(errs.Forbidden, "invitations.credentials",
		fmt.Sprintf("This invitation is for %s: accept it signed in as the invited user, or give a password "+
			"(the account's own if the email has one, else a new one of %d to %d bytes).", email, MinPassword, MaxPassword),
		map[string]any{"email": email, "field": "password"})
}

// AcceptInvitation redeems a token. An email without a user becomes a new
// user with the given password (and username); a known one must be the
// caller (caller may be nil: anonymous) or give its password. An expired
// or revoked invitation is a 410, an accepted one a 409.
func (s *Service) AcceptInvitation(ctx context.Context, caller *Caller, in Acceptance) (Invitation, uuid.UUID, error) {
	if strings.TrimSpace(in.Token) == "" {
		return Invitation{}, uuid.Nil, invalid("token", "is required")
	}
	if err := checkText("username", in.Username, MaxName, false); err != nil {
		return Invitation{}, uuid.Nil, err
	}
	inv, err := s.store.InvitationByToken(ctx, hashToken(in.Token))
	if err != nil {
		return Invitation{}, uuid.Nil, err
	}
	if in.Email != nil && !strings.EqualFold(strings.TrimSpace(*in.Email), inv.Email) {
		return Invitation{}, uuid.Nil, errs.Message(errs.Invalid, "invitations.email_mismatch",
			"This invitation is for another email.", map[string]any{"field": "email"})
	}
	now := s.stamp()
	switch inv.State(now) {
	case InvitationAccepted:
		return Invitation{}, uuid.Nil, ErrInvitationUsed
	case InvitationRevoked, InvitationExpired:
		return Invitation{}, uuid.Nil, ErrInvitationGone
	}
	u, hash, err := s.store.UserByEmail(ctx, inv.Email)
	if err != nil {
		return Invitation{}, uuid.Nil, err
	}
	var newUser *User
	var identity *Identity
	switch {
	case u == nil:
		if in.Password == nil || len(*in.Password) < MinPassword || len(*in.Password) > MaxPassword {
			return Invitation{}, uuid.Nil, errCredentials(inv.Email)
		}
		h, err := bcrypt.GenerateFromPassword([]byte(*in.Password), bcrypt.DefaultCost)
		if err != nil {
			return Invitation{}, uuid.Nil, invalid("password", err.Error())
		}
		hs := string(h)
		newUser = &User{ID: newID(), Email: inv.Email, Username: in.Username, CreatedAt: now}
		identity = &Identity{ID: newID(), UserID: newUser.ID, Method: "email:password", Subject: inv.Email, Email: &inv.Email,
			PasswordHash: &hs, CreatedAt: now}
		u = newUser
	case caller != nil && caller.UserID == u.ID:
	case in.Password != nil && hash != nil && bcrypt.CompareHashAndPassword([]byte(*hash), []byte(*in.Password)) == nil:
	default:
		return Invitation{}, uuid.Nil, errCredentials(inv.Email)
	}
	defer s.rolesChanged()
	if err := s.store.AcceptInvitation(ctx, inv, u.ID, newUser, identity, now); err != nil {
		return Invitation{}, uuid.Nil, err
	}
	inv.Status, inv.AcceptedAt = InvitationAccepted, &now
	return inv, u.ID, nil
}
