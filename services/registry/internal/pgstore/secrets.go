package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/assayhq/assay/pkg/pgxutil"
	"github.com/assayhq/assay/services/registry/internal/secrets"
)

// Secrets is the vault's store; it shares the registry's pool.
type Secrets struct{ pool db }

// Secrets returns the vault store over s's pool (or transaction).
func (s *Store) Secrets() *Secrets { return &Secrets{pool: s.pool} }

var _ secrets.Store = (*Secrets)(nil)

const secretCols = `project_id, id, slug, kind, name, description, data, sealed, created_at, updated_at, created_by_id, updated_by_id`

func scanSecret(row pgx.Row) (*secrets.Record, error) {
	var (
		r    secrets.Record
		data []byte
	)
	err := row.Scan(&r.ProjectID, &r.ID, &r.Slug, &r.Kind, &r.Header.Name, &r.Header.Description, &data, &r.Sealed,
		&r.CreatedAt, &r.UpdatedAt, &r.CreatedByID, &r.UpdatedByID)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(data, &r.Data); err != nil {
		return nil, fmt.Errorf("decode secret %s data: %w", r.ID, err)
	}
	return &r, nil
}

func one(row pgx.Row) (*secrets.Record, error) {
	r, err := scanSecret(row)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	return r, err
}

// CreateSecret inserts r under a per-project transaction lock, so the
// count check and the insert cannot interleave with another create.
func (s *Secrets) CreateSecret(ctx context.Context, r secrets.Record, max int) error {
	data, err := json.Marshal(r.Data)
	if err != nil {
		return fmt.Errorf("encode secret data: %w", err)
	}
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('secrets:' || $1::text, 0))`, r.ProjectID); err != nil {
			return fmt.Errorf("lock project vault: %w", err)
		}
		var n int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM secrets WHERE project_id = $1`, r.ProjectID).Scan(&n); err != nil {
			return fmt.Errorf("count secrets: %w", err)
		}
		if n >= max {
			return secrets.ErrLimit
		}
		_, err := tx.Exec(ctx, `INSERT INTO secrets (`+secretCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
			r.ProjectID, r.ID, r.Slug, r.Kind, r.Header.Name, r.Header.Description, data, r.Sealed,
			r.CreatedAt, r.UpdatedAt, r.CreatedByID, r.UpdatedByID)
		if pgxutil.IsUniqueViolation(err) {
			return secrets.ErrSlugTaken(r.Slug)
		}
		return err
	})
}

// Secret returns the project's secret id, or nil.
func (s *Secrets) Secret(ctx context.Context, project, id uuid.UUID) (*secrets.Record, error) {
	return one(s.pool.QueryRow(ctx, `SELECT `+secretCols+` FROM secrets WHERE project_id = $1 AND id = $2`, project, id))
}

// SecretBySlug returns the project's secret slug, or nil.
func (s *Secrets) SecretBySlug(ctx context.Context, project uuid.UUID, slug string) (*secrets.Record, error) {
	return one(s.pool.QueryRow(ctx, `SELECT `+secretCols+` FROM secrets WHERE project_id = $1 AND slug = $2`, project, slug))
}

// Secrets returns the project's secrets, oldest first.
func (s *Secrets) Secrets(ctx context.Context, project uuid.UUID) ([]secrets.Record, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+secretCols+` FROM secrets WHERE project_id = $1 ORDER BY created_at, id`, project)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []secrets.Record
	for rows.Next() {
		r, err := scanSecret(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *r)
	}
	return out, rows.Err()
}

// UpdateSecret replaces what r holds besides its creation stamps.
func (s *Secrets) UpdateSecret(ctx context.Context, r secrets.Record) (bool, error) {
	data, err := json.Marshal(r.Data)
	if err != nil {
		return false, fmt.Errorf("encode secret data: %w", err)
	}
	tag, err := s.pool.Exec(ctx, `UPDATE secrets SET slug = $3, kind = $4, name = $5, description = $6, data = $7, sealed = $8,
		updated_at = $9, updated_by_id = $10 WHERE project_id = $1 AND id = $2`,
		r.ProjectID, r.ID, r.Slug, r.Kind, r.Header.Name, r.Header.Description, data, r.Sealed, r.UpdatedAt, r.UpdatedByID)
	if pgxutil.IsUniqueViolation(err) {
		return false, secrets.ErrSlugTaken(r.Slug)
	}
	if err != nil {
		return false, err
	}
	return tag.RowsAffected() == 1, nil
}

// DeleteSecret removes the project's secret id.
func (s *Secrets) DeleteSecret(ctx context.Context, project, id uuid.UUID) (bool, error) {
	tag, err := s.pool.Exec(ctx, `DELETE FROM secrets WHERE project_id = $1 AND id = $2`, project, id)
	if err != nil {
		return false, err
	}
	return tag.RowsAffected() == 1, nil
}
