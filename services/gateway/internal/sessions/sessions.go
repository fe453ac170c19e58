// Package sessions signs console users in with an email and a password and
// resolves a session cookie to the caller's project scope, the way an API
// key is resolved: the same project, user and role reach the services.
package sessions

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"golang.org/x/crypto/bcrypt"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/roles"
	"github.com/assayhq/assay/pkg/scope"
)

// User is the signed-in user as the console shows them.
type User struct {
	ID       uuid.UUID
	Email    string
	Username *string
	Name     *string
}

// Session is a stored sign-in. The token itself is never stored.
type Session struct {
	ID        uuid.UUID
	User      User
	CSRFToken string
	CreatedAt time.Time
	ExpiresAt time.Time
}

// Project is a project the user has a role in.
type Project struct {
	ID             uuid.UUID
	Name           string
	WorkspaceID    uuid.UUID
	OrganizationID uuid.UUID
	IsDefault      bool
	Role           roles.Role
}

// Store persists sessions. Tokens reach it only as their SHA-256 (hex).
type Store interface {
	// Credentials returns the user whose email matches (case-insensitively)
	// and the bcrypt hash of their email:password identity; nil when there
	// is no such user or identity or it has no password.
	Credentials(ctx context.Context, email string) (*User, string, error)
	// CreateSession stores s under tokenHash and, in the same statement
	// batch, deletes sessions that expired before purgeBefore.
	CreateSession(ctx context.Context, s Session, tokenHash string, purgeBefore time.Time) error
	// SessionByToken returns the session with its user, expired or not;
	// nil when there is none.
	SessionByToken(ctx context.Context, tokenHash string) (*Session, error)
	// DeleteSession removes the session; none is not an error.
	DeleteSession(ctx context.Context, tokenHash string) error
	// Projects lists the projects where the user has a role (by the rule
	// of accounts.Store.ProjectRole), oldest first, at most limit of them.
	Projects(ctx context.Context, userID uuid.UUID, limit int) ([]Project, error)
}

// Roles resolves a user's effective role in a project (accounts.Service).
type Roles interface {
	ProjectRole(ctx context.Context, userID, projectID uuid.UUID) (roles.Role, error)
}

// Config holds the session settings. Variables: GATEWAY_SESSION_*.
type Config struct {
	TTL time.Duration `default:"12h" desc:"how long a console sign-in lasts (the assay_session cookie's Max-Age)"`
}

// Limits on sign-in input, checked before any lookup. bcrypt reads at
// most 72 bytes of a password; a longer one is refused rather than cut.
const (
	MaxEmail    = 320
	MaxPassword = 72
	// MaxProjects bounds the project list of a sign-in answer.
	MaxProjects = 1000
	// purgeAfter: an expired session is kept this long, so its cookie is
	// answered "expired" rather than "signed out", then purged.
	purgeAfter = 24 * time.Hour
)

// The errors of the sign-in routes (pkg/apidoc/gateway.sessions.json); their
// bodies are what the console shows.
var (
	ErrBadCredentials = errs.Message(errs.Unauthenticated, "auth.bad_credentials", "Invalid email or password.", nil)
	ErrExpired        = errs.Message(errs.Unauthenticated, "auth.session_expired", "Your session has expired. Sign in again.", map[string]any{"code": "session_expired"})
	ErrSignedOut      = errs.Message(errs.Unauthenticated, "auth.signed_out", "You are signed out. Sign in to continue.", map[string]any{"code": "signed_out"})
	ErrCSRF           = errs.Message(errs.Forbidden, "auth.csrf", "Missing or invalid CSRF token.", map[string]any{"code": "csrf"})
	ErrNoProject      = errs.Message(errs.Forbidden, "auth.no_project", "You are not a member of any project.", map[string]any{"code": "no_project"})
)

// NotMember is the 403 for a project the user has no role in.
func NotMember(projectID uuid.UUID) error {
	return errs.Message(errs.Forbidden, "auth.not_member", fmt.Sprintf("You are not a member of project %s.", projectID),
		map[string]any{"project_id": projectID.String()})
}

// Service signs users in and out and resolves sessions.
type Service struct {
	store Store
	roles Roles
	ttl   time.Duration
	now   func() time.Time

	dummyOnce sync.Once
	dummy     []byte
}

// NewService returns a service.
func NewService(store Store, r Roles, cfg Config) *Service {
	return &Service{store: store, roles: r, ttl: cfg.TTL, now: time.Now}
}

// TTL is how long a new session lasts.
func (s *Service) TTL() time.Duration { return s.ttl }

// dummyHash is compared against when the email is unknown, so a wrong
// email costs the same bcrypt work as a wrong password and the answer's
// timing does not tell which emails have accounts.
func (s *Service) dummyHash() []byte {
	s.dummyOnce.Do(func() {
		h, err := bcrypt.GenerateFromPassword([]byte(randomToken()), bcrypt.DefaultCost)
		if err != nil {
			panic(err) // only for a password over 72 bytes
		}
		s.dummy = h
	})
	return s.dummy
}

// SignedIn is a new session with the raw token for its cookie.
type SignedIn struct {
	Session Session
	Token   string
}

// SignIn checks the email and password and opens a session. Every wrong
// email or password is the same ErrBadCredentials.
func (s *Service) SignIn(ctx context.Context, email, password string) (*SignedIn, error) {
	email = strings.TrimSpace(email)
	switch {
	case email == "":
		return nil, field("email", "is required")
	case utf8.RuneCountInString(email) > MaxEmail:
		return nil, field("email", fmt.Sprintf("must be at most %d characters", MaxEmail))
	case password == "":
		return nil, field("password", "is required")
	case len(password) > MaxPassword:
		return nil, field("password", fmt.Sprintf("must be at most %d bytes", MaxPassword))
	}
	u, hash, err := s.store.Credentials(ctx, email)
	if err != nil {
		return nil, err
	}
	if u == nil {
		_ = bcrypt.CompareHashAndPassword(s.dummyHash(), []byte(password))
		return nil, ErrBadCredentials
	}
	if bcrypt.CompareHashAndPassword([]byte(hash), []byte(password)) != nil {
		return nil, ErrBadCredentials
	}
	now := s.now().UTC().Truncate(time.Microsecond)
	token := randomToken()
	sess := Session{ID: uuid.Must(uuid.NewV7()), User: *u, CSRFToken: randomToken(), CreatedAt: now, ExpiresAt: now.Add(s.ttl)}
	if err := s.store.CreateSession(ctx, sess, HashToken(token), now.Add(-purgeAfter)); err != nil {
		return nil, err
	}
	return &SignedIn{Session: sess, Token: token}, nil
}

// Lookup returns the live session of a cookie token: ErrExpired for an
// expired or unknown one (the cookie outlived its row), ErrSignedOut for
// none.
func (s *Service) Lookup(ctx context.Context, token string) (*Session, error) {
	if token == "" {
		return nil, ErrSignedOut
	}
	sess, err := s.store.SessionByToken(ctx, HashToken(token))
	if err != nil {
		return nil, err
	}
	if sess == nil || !s.now().Before(sess.ExpiresAt) {
		return nil, ErrExpired
	}
	return sess, nil
}

// SignOut deletes the cookie's session.
func (s *Service) SignOut(ctx context.Context, token string) error {
	if token == "" {
		return nil
	}
	return s.store.DeleteSession(ctx, HashToken(token))
}

// Projects lists the user's projects, oldest first.
func (s *Service) Projects(ctx context.Context, userID uuid.UUID) ([]Project, error) {
	return s.store.Projects(ctx, userID, MaxProjects)
}

// Scope resolves the session's project: the one named (project may be
// uuid.Nil for none), else the user's oldest project. A project where the
// user has no role is NotMember, as is a project that does not exist: the
// answer must not tell which ids exist.
func (s *Service) Scope(ctx context.Context, sess *Session, project uuid.UUID) (scope.Scope, error) {
	if project == uuid.Nil {
		ps, err := s.store.Projects(ctx, sess.User.ID, 1)
		if err != nil {
			return scope.Scope{}, err
		}
		if len(ps) == 0 {
			return scope.Scope{}, ErrNoProject
		}
		return scope.Scope{ProjectID: ps[0].ID, UserID: sess.User.ID, Role: string(ps[0].Role)}, nil
	}
	role, err := s.roles.ProjectRole(ctx, sess.User.ID, project)
	if err != nil {
		return scope.Scope{}, err
	}
	if role == "" {
		return scope.Scope{}, NotMember(project)
	}
	return scope.Scope{ProjectID: project, UserID: sess.User.ID, Role: string(role)}, nil
}

// CheckCSRF compares the request's X-CSRF-Token with the session's in
// constant time.
func CheckCSRF(sess *Session, header string) error {
	if header == "" || subtle.ConstantTimeCompare([]byte(header), []byte(sess.CSRFToken)) != 1 {
		return ErrCSRF
	}
	return nil
}

// HashToken is what the store keeps of a token: its SHA-256, hex.
func HashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// randomToken returns 32 random bytes, base64url: 256 bits a guess cannot reach.
func randomToken() string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

func field(name, msg string) error {
	return errs.Message(errs.Invalid, "auth.invalid", name+": "+msg, map[string]any{"field": name})
}

type ctxKey struct{}

// WithID returns ctx carrying the id of the session that authenticated
// the request (for the audit log: which sign-in did it).
func WithID(ctx context.Context, id uuid.UUID) context.Context {
	return context.WithValue(ctx, ctxKey{}, id)
}

// IDFrom returns the session id in ctx; false for a request authenticated
// otherwise.
func IDFrom(ctx context.Context) (uuid.UUID, bool) {
	id, ok := ctx.Value(ctxKey{}).(uuid.UUID)
	return id, ok
}
