// Package pgstore implements accounts.Store on PostgreSQL.
package pgstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/assayhq/assay/pkg/apikey"
	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/pgxutil"
	"github.com/assayhq/assay/pkg/roles"
	"github.com/assayhq/assay/services/gateway/internal/accounts"
)

// Store is the PostgreSQL accounts store.
type Store struct{ pool *pgxpool.Pool }

// New returns a store over pool.
func New(pool *pgxpool.Pool) *Store { return &Store{pool: pool} }

var _ accounts.Store = (*Store)(nil)

var errRollback = errors.New("dry run")

// CreateAccounts inserts every account in one transaction.
func (s *Store) CreateAccounts(ctx context.Context, list []*accounts.Account, commit bool) error {
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		for _, a := range list {
			if err := insertAccount(ctx, tx, a); err != nil {
				return err
			}
		}
		if !commit {
			return errRollback
		}
		return nil
	})
	if errors.Is(err, errRollback) {
		return nil
	}
	return err
}

func insertAccount(ctx context.Context, tx pgx.Tx, a *accounts.Account) error {
	u := a.User
	var exists bool
	if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM users WHERE lower(email) = lower($1))`, u.Email).Scan(&exists); err != nil {
		return fmt.Errorf("check email: %w", err)
	}
	if exists {
		return accounts.ErrEmailTaken(u.Email)
	}
	o, w, p := a.Organization, a.Workspace, a.Project
	b := &pgx.Batch{}
	b.Queue(`INSERT INTO users (id, email, username, name, is_admin, is_root, metadata, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, u.ID, u.Email, u.Username, u.Name, u.IsAdmin, u.IsRoot, u.Metadata, u.CreatedAt)
	b.Queue(`INSERT INTO organizations (id, name, slug, description, owner_user_id, created_at)
		VALUES ($1, $2, $3, $4, $5, $6)`, o.ID, o.Name, o.Slug, o.Description, o.OwnerUserID, o.CreatedAt)
	b.Queue(`INSERT INTO workspaces (id, organization_id, name, description, created_at)
		VALUES ($1, $2, $3, $4, $5)`, w.ID, w.OrganizationID, w.Name, w.Description, w.CreatedAt)
	b.Queue(`INSERT INTO projects (id, organization_id, workspace_id, name, description, is_default, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`, p.ID, p.OrganizationID, p.WorkspaceID, p.Name, p.Description, p.IsDefault, p.CreatedAt)
	for i, table := range []string{"organization_memberships (id, organization_id", "workspace_memberships (id, workspace_id", "project_memberships (id, project_id"} {
		m := a.Memberships[i]
		b.Queue(`INSERT INTO `+table+`, user_id, role, created_at) VALUES ($1, $2, $3, $4, $5)`, m.ID, m.TargetID, m.UserID, m.Role, m.CreatedAt)
	}
	for _, id := range a.Identities {
		b.Queue(`INSERT INTO user_identities (id, user_id, method, subject, email, password_hash, verified, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, id.ID, id.UserID, id.Method, id.Subject, id.Email, id.PasswordHash, id.Verified, id.CreatedAt)
	}
	if k := a.Key; k != nil {
		queueKey(b, *k)
	}
	if err := tx.SendBatch(ctx, b).Close(); err != nil {
		var pe *pgconn.PgError
		switch {
		case pgxutil.IsUniqueViolation(err) && errors.As(err, &pe) && pe.ConstraintName == "users_email_key":
			return accounts.ErrEmailTaken(u.Email)
		case pgxutil.IsUniqueViolation(err) && errors.As(err, &pe) && pe.ConstraintName == "organizations_slug_key":
			return conflict(fmt.Sprintf("An organization with slug '%s' already exists.", deref(o.Slug)), "slug", deref(o.Slug))
		case pgxutil.IsUniqueViolation(err) && errors.As(err, &pe) && pe.ConstraintName == "user_identities_method_subject_key":
			return conflict("An identity with this method and subject already exists.", "subject", pe.Detail)
		}
		return fmt.Errorf("insert account %s: %w", u.Email, err)
	}
	return nil
}

func queueKey(b *pgx.Batch, k accounts.APIKey) {
	b.Queue(`INSERT INTO api_keys (id, project_id, prefix, secret_hash, name, created_by_id, created_at, expires_at, role)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`, k.ID, k.ProjectID, k.Prefix, k.SecretHash, k.Name, k.CreatedByID, k.CreatedAt, k.ExpiresAt, k.Role)
}

// DeleteUsers deletes the users. The foreign keys cascade to the
// organizations they own and everything below them (workspaces, projects,
// memberships, keys), and the api_keys trigger tells every verifier.
func (s *Store) DeleteUsers(ctx context.Context, refs []accounts.UserRef) ([]string, error) {
	var prefixes []string
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		for _, r := range refs {
			// Keys the user made in organizations they do not own would
			// outlive them (created_by_id is set null): revoke them.
			// (Only those: a key that is also deleted by cascade must not be
			// touched first, or the two cascades collide.)
			rows, _ := tx.Query(ctx, `WITH u AS (SELECT id FROM users WHERE id = $1::uuid OR lower(email) = lower($2::text))
				UPDATE api_keys SET revoked_at = now() WHERE revoked_at IS NULL AND created_by_id IN (SELECT id FROM u)
				AND project_id NOT IN (SELECT p.id FROM projects p JOIN organizations o ON o.id = p.organization_id
					WHERE o.owner_user_id IN (SELECT id FROM u))
				RETURNING prefix`, r.ID, r.Email)
			revoked, err := pgx.CollectRows(rows, pgx.RowTo[string])
			if err != nil {
				return fmt.Errorf("revoke the user's keys: %w", err)
			}
			prefixes = append(prefixes, revoked...)
			rows, err = tx.Query(ctx, `
				WITH target AS (DELETE FROM users WHERE id = $1 OR lower(email) = lower($2) RETURNING id)
				SELECT k.prefix FROM api_keys k JOIN projects p ON p.id = k.project_id
				JOIN organizations o ON o.id = p.organization_id
				WHERE o.owner_user_id IN (SELECT id FROM target)`, r.ID, r.Email)
			if err != nil {
				return fmt.Errorf("delete user: %w", err)
			}
			ps, err := pgx.CollectRows(rows, pgx.RowTo[string])
			if err != nil {
				return fmt.Errorf("delete user: %w", err)
			}
			prefixes = append(prefixes, ps...)
		}
		return nil
	})
	return prefixes, err
}

// ProjectRole resolves the user's effective role in the project in one
// query (accounts.Store.ProjectRole).
func (s *Store) ProjectRole(ctx context.Context, userID, projectID uuid.UUID) (roles.Role, error) {
	var role string
	err := s.pool.QueryRow(ctx, `
		SELECT `+apikey.ProjectRoleSQL("$1::uuid")+`
		FROM projects p WHERE p.id = $2`, userID, projectID).Scan(&role)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("resolve project role: %w", err)
	}
	return roles.Role(role), nil
}

// ProjectWorkspace returns the workspace of the project, or uuid.Nil when
// there is no such project.
func (s *Store) ProjectWorkspace(ctx context.Context, projectID uuid.UUID) (uuid.UUID, error) {
	var ws uuid.UUID
	err := s.pool.QueryRow(ctx, `SELECT workspace_id FROM projects WHERE id = $1`, projectID).Scan(&ws)
	if errors.Is(err, pgx.ErrNoRows) {
		return uuid.Nil, nil
	}
	if err != nil {
		return uuid.Nil, fmt.Errorf("look up project workspace: %w", err)
	}
	return ws, nil
}

// ListKeys returns the project's unrevoked keys, oldest first.
func (s *Store) ListKeys(ctx context.Context, projectID uuid.UUID) ([]accounts.APIKey, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT id, project_id, prefix, secret_hash, name, created_by_id, created_at, expires_at, role
		FROM api_keys WHERE project_id = $1 AND revoked_at IS NULL ORDER BY created_at, id`, projectID)
	if err != nil {
		return nil, fmt.Errorf("list keys: %w", err)
	}
	keys, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (accounts.APIKey, error) {
		var k accounts.APIKey
		err := r.Scan(&k.ID, &k.ProjectID, &k.Prefix, &k.SecretHash, &k.Name, &k.CreatedByID, &k.CreatedAt, &k.ExpiresAt, &k.Role)
		return k, err
	})
	if err != nil {
		return nil, fmt.Errorf("list keys: %w", err)
	}
	return keys, nil
}

// CreateKey stores a new key.
func (s *Store) CreateKey(ctx context.Context, k accounts.APIKey) error {
	b := &pgx.Batch{}
	queueKey(b, k)
	if err := s.pool.SendBatch(ctx, b).Close(); err != nil {
		return fmt.Errorf("insert key: %w", err)
	}
	return nil
}

// RevokeKey marks the key revoked if it belongs to the project.
func (s *Store) RevokeKey(ctx context.Context, projectID, id uuid.UUID) (string, error) {
	var prefix string
	err := s.pool.QueryRow(ctx, `UPDATE api_keys SET revoked_at = now()
		WHERE id = $1 AND project_id = $2 AND revoked_at IS NULL RETURNING prefix`, id, projectID).Scan(&prefix)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("revoke key: %w", err)
	}
	return prefix, nil
}

// Profile reads the user and their memberships in one read-only snapshot,
// so the lists agree with each other.
func (s *Store) Profile(ctx context.Context, userID uuid.UUID) (*accounts.Profile, error) {
	var p *accounts.Profile
	err := pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		u := accounts.User{ID: userID}
		err := tx.QueryRow(ctx, `SELECT email, username, name, is_admin, is_root, metadata, created_at FROM users WHERE id = $1`, userID).
			Scan(&u.Email, &u.Username, &u.Name, &u.IsAdmin, &u.IsRoot, &u.Metadata, &u.CreatedAt)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		p = &accounts.Profile{User: u}
		rows, _ := tx.Query(ctx, `
			SELECT o.id, o.name, o.slug, o.description, o.owner_user_id, o.created_at, m.role
			FROM organization_memberships m JOIN organizations o ON o.id = m.organization_id
			WHERE m.user_id = $1 ORDER BY m.created_at, m.id`, userID)
		if p.Organizations, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (accounts.OrganizationRole, error) {
			var o accounts.OrganizationRole
			err := r.Scan(&o.ID, &o.Name, &o.Slug, &o.Description, &o.OwnerUserID, &o.CreatedAt, &o.Role)
			return o, err
		}); err != nil {
			return err
		}
		rows, _ = tx.Query(ctx, `
			SELECT w.id, w.organization_id, w.name, w.description, w.created_at, m.role
			FROM workspace_memberships m JOIN workspaces w ON w.id = m.workspace_id
			WHERE m.user_id = $1 ORDER BY m.created_at, m.id`, userID)
		if p.Workspaces, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (accounts.WorkspaceRole, error) {
			var w accounts.WorkspaceRole
			err := r.Scan(&w.ID, &w.OrganizationID, &w.Name, &w.Description, &w.CreatedAt, &w.Role)
			return w, err
		}); err != nil {
			return err
		}
		// Projects: every project the user has a role in, through any
		// level, so a member invited to a workspace sees its projects.
		p.Projects, err = collectProjects(tx.Query(ctx, projectsQuery, userID))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("read profile: %w", err)
	}
	return p, nil
}

func conflict(msg, key, value string) error {
	return errs.Message(errs.Conflict, "accounts.conflict", msg, map[string]any{"conflict": map[string]any{key: value}})
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
