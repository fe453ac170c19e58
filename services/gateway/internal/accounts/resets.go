package accounts

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"golang.org/x/crypto/bcrypt"

	"github.com/assayhq/assay/pkg/errs"
)

// ResetStore keeps password resets (pgstore.Store).
type ResetStore interface {
	// CreatePasswordReset stores a reset of the user's password.
	CreatePasswordReset(ctx context.Context, id, userID uuid.UUID, tokenHash string, now, expires time.Time) error
	// UsePasswordReset, in one transaction, marks the reset used, sets the
	// user's email:password hash (creating the identity if the user has
	// none), voids the user's other unused resets and ends their sessions.
	// ErrResetNotFound, ErrResetGone when used or expired.
	UsePasswordReset(ctx context.Context, tokenHash, passwordHash string, now time.Time) error
	// UserByID returns the user, nil when there is none.
	UserByID(ctx context.Context, id uuid.UUID) (*User, error)
}

// ResetMailer mails a password reset link (mailer.Mailer).
type ResetMailer interface {
	SendPasswordReset(ctx context.Context, email, link string, expires time.Time) error
}

var (
	// ErrResetNotFound answers a token that was never issued.
	ErrResetNotFound = errs.New(errs.NotFound, "password_reset.not_found", "Password reset link not found.")
	// ErrResetGone answers a used or expired one.
	ErrResetGone = errs.New(errs.Gone, "password_reset.gone", "This password reset link was used or has expired: ask for a new one.")
	errNoUser    = errs.New(errs.NotFound, "users.not_found", "User not found.")
)

// IssuedReset is a reset link, returned to the operator only.
type IssuedReset struct {
	Token     string
	URL       string
	ExpiresAt time.Time
}

func (s *Service) resets() ResetStore { return s.store }

func (s *Service) newReset(ctx context.Context, userID uuid.UUID) (IssuedReset, error) {
	token, hash := newToken()
	now := s.stamp()
	exp := now.Add(s.ResetTTL)
	if err := s.resets().CreatePasswordReset(ctx, newID(), userID, hash, now, exp); err != nil {
		return IssuedReset{}, err
	}
	return IssuedReset{Token: token, URL: s.ResetURL + token, ExpiresAt: exp}, nil
}

// RequestPasswordReset mails a reset link to email when it has an account
// and a mail relay is configured; otherwise it does nothing. The caller
// answers the same in every case, so the route tells nobody whether an
// email has an account. It reports whether mail is configured at all.
func (s *Service) RequestPasswordReset(ctx context.Context, email string) (bool, error) {
	email, err := checkEmail("email", email)
	if err != nil {
		return s.Mailer != nil, err
	}
	m, ok := s.Mailer.(ResetMailer)
	if !ok || s.Mailer == nil {
		return false, nil
	}
	u, _, err := s.store.UserByEmail(ctx, email)
	if err != nil || u == nil {
		return true, err
	}
	r, err := s.newReset(ctx, u.ID)
	if err != nil {
		return true, err
	}
	// A relay failure is not told to the requester (it would tell that
	// the account exists); they ask again.
	_ = m.SendPasswordReset(ctx, u.Email, r.URL, r.ExpiresAt)
	return true, nil
}

// IssuePasswordReset is the operator's one-time link for a user, for
// deployments without a mail relay: the operator hands it to the user.
func (s *Service) IssuePasswordReset(ctx context.Context, userID uuid.UUID) (IssuedReset, error) {
	u, err := s.resets().UserByID(ctx, userID)
	if err != nil {
		return IssuedReset{}, err
	}
	if u == nil {
		return IssuedReset{}, errNoUser
	}
	return s.newReset(ctx, userID)
}

// ResetPassword sets the password of the reset's user, once.
func (s *Service) ResetPassword(ctx context.Context, token, password string) error {
	if token == "" {
		return invalid("token", "is required")
	}
	if n := len(password); n < MinPassword || n > MaxPassword {
		return invalid("password", fmt.Sprintf("must be %d to %d bytes long", MinPassword, MaxPassword))
	}
	h, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.DefaultCost)
	if err != nil {
		return invalid("password", err.Error())
	}
	return s.resets().UsePasswordReset(ctx, hashToken(token), string(h), s.stamp())
}
