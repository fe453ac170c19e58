package pgstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/assayhq/assay/pkg/roles"
	"github.com/assayhq/assay/services/gateway/internal/sessions"
)

// Sessions implements sessions.Store on PostgreSQL.
type Sessions struct{ pool *pgxpool.Pool }

// NewSessions returns a session store over pool.
func NewSessions(pool *pgxpool.Pool) *Sessions { return &Sessions{pool: pool} }

var _ sessions.Store = (*Sessions)(nil)

// Credentials finds the user by email (users_email_key) and their
// password identity (user_identities_user).
func (s *Sessions) Credentials(ctx context.Context, email string) (*sessions.User, string, error) {
	var u sessions.User
	var hash string
	err := s.pool.QueryRow(ctx, `
		SELECT u.id, u.email, u.username, u.name, i.password_hash
		FROM users u JOIN user_identities i ON i.user_id = u.id
		WHERE lower(u.email) = lower($1) AND i.method = 'email:password' AND i.password_hash IS NOT NULL
		ORDER BY i.created_at, i.id LIMIT 1`, email).Scan(&u.ID, &u.Email, &u.Username, &u.Name, &hash)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, "", nil
	}
	if err != nil {
		return nil, "", fmt.Errorf("read credentials: %w", err)
	}
	return &u, hash, nil
}

// CreateSession inserts the session and purges long-expired ones (through
// sessions_expires, so the purge costs what it removes).
func (s *Sessions) CreateSession(ctx context.Context, ss sessions.Session, tokenHash string, purgeBefore time.Time) error {
	b := &pgx.Batch{}
	b.Queue(`DELETE FROM sessions WHERE expires_at < $1`, purgeBefore)
	b.Queue(`INSERT INTO sessions (id, token_hash, user_id, csrf_token, created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6)`,
		ss.ID, tokenHash, ss.User.ID, ss.CSRFToken, ss.CreatedAt, ss.ExpiresAt)
	if err := s.pool.SendBatch(ctx, b).Close(); err != nil {
		return fmt.Errorf("create session: %w", err)
	}
	return nil
}

// SessionByToken reads the session and its user in one query.
func (s *Sessions) SessionByToken(ctx context.Context, tokenHash string) (*sessions.Session, error) {
	var ss sessions.Session
	err := s.pool.QueryRow(ctx, `
		SELECT s.id, s.csrf_token, s.created_at, s.expires_at, u.id, u.email, u.username, u.name
		FROM sessions s JOIN users u ON u.id = s.user_id WHERE s.token_hash = $1`, tokenHash).
		Scan(&ss.ID, &ss.CSRFToken, &ss.CreatedAt, &ss.ExpiresAt, &ss.User.ID, &ss.User.Email, &ss.User.Username, &ss.User.Name)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read session: %w", err)
	}
	return &ss, nil
}

// DeleteSession removes the session.
func (s *Sessions) DeleteSession(ctx context.Context, tokenHash string) error {
	if _, err := s.pool.Exec(ctx, `DELETE FROM sessions WHERE token_hash = $1`, tokenHash); err != nil {
		return fmt.Errorf("delete session: %w", err)
	}
	return nil
}

// Projects applies Store.ProjectRole's rule (organization owner, then
// project, workspace, organization membership) to every project of the
// organizations the user reaches in any way.
func (s *Sessions) Projects(ctx context.Context, userID uuid.UUID, limit int) ([]sessions.Project, error) {
	rows, err := s.pool.Query(ctx, `
		WITH orgs AS (
			SELECT id FROM organizations WHERE owner_user_id = $1
			UNION SELECT organization_id FROM organization_memberships WHERE user_id = $1
			UNION SELECT w.organization_id FROM workspace_memberships m JOIN workspaces w ON w.id = m.workspace_id WHERE m.user_id = $1
			UNION SELECT p.organization_id FROM project_memberships m JOIN projects p ON p.id = m.project_id WHERE m.user_id = $1)
		SELECT id, name, workspace_id, organization_id, is_default, role FROM (
			SELECT p.id, p.name, p.workspace_id, p.organization_id, p.is_default, p.created_at, COALESCE(
				(SELECT 'owner' FROM organizations o WHERE o.id = p.organization_id AND o.owner_user_id = $1),
				(SELECT role FROM project_memberships WHERE project_id = p.id AND user_id = $1),
				(SELECT role FROM workspace_memberships WHERE workspace_id = p.workspace_id AND user_id = $1),
				(SELECT role FROM organization_memberships WHERE organization_id = p.organization_id AND user_id = $1)) AS role
			FROM projects p WHERE p.organization_id IN (SELECT id FROM orgs)) r
		WHERE role IS NOT NULL
		ORDER BY created_at, id LIMIT $2`, userID, limit)
	if err != nil {
		return nil, fmt.Errorf("list projects: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (sessions.Project, error) {
		var p sessions.Project
		var role string
		err := r.Scan(&p.ID, &p.Name, &p.WorkspaceID, &p.OrganizationID, &p.IsDefault, &role)
		p.Role = roles.Role(role)
		return p, err
	})
	if err != nil {
		return nil, fmt.Errorf("list projects: %w", err)
	}
	return out, nil
}
