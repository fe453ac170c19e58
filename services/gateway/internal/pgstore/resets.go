package pgstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/assayhq/assay/services/gateway/internal/accounts"
)

// CreatePasswordReset implements accounts.ResetStore.
func (s *Store) CreatePasswordReset(ctx context.Context, id, userID uuid.UUID, tokenHash string, now, expires time.Time) error {
	if _, err := s.pool.Exec(ctx, `INSERT INTO password_resets (id, user_id, token_hash, created_at, expires_at) VALUES ($1, $2, $3, $4, $5)`,
		id, userID, tokenHash, now, expires); err != nil {
		return fmt.Errorf("insert password reset: %w", err)
	}
	return nil
}

// UserByID implements accounts.ResetStore.
func (s *Store) UserByID(ctx context.Context, id uuid.UUID) (*accounts.User, error) {
	var u accounts.User
	err := s.pool.QueryRow(ctx, `SELECT id, email, username, name, created_at FROM users WHERE id = $1`, id).
		Scan(&u.ID, &u.Email, &u.Username, &u.Name, &u.CreatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("find user: %w", err)
	}
	return &u, nil
}

// UsePasswordReset implements accounts.ResetStore. The row is locked, so
// two uses of one token race to one winner.
func (s *Store) UsePasswordReset(ctx context.Context, tokenHash, passwordHash string, now time.Time) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var id, user uuid.UUID
		var email string
		var expires time.Time
		var used *time.Time
		err := tx.QueryRow(ctx, `SELECT r.id, r.user_id, u.email, r.expires_at, r.used_at FROM password_resets r
			JOIN users u ON u.id = r.user_id WHERE r.token_hash = $1 FOR UPDATE OF r`, tokenHash).Scan(&id, &user, &email, &expires, &used)
		if errors.Is(err, pgx.ErrNoRows) {
			return accounts.ErrResetNotFound
		}
		if err != nil {
			return fmt.Errorf("find password reset: %w", err)
		}
		if used != nil || !now.Before(expires) {
			return accounts.ErrResetGone
		}
		b := &pgx.Batch{}
		b.Queue(`UPDATE password_resets SET used_at = $2 WHERE id = $1`, id, now)
		// Every other link of the user dies with this one.
		b.Queue(`UPDATE password_resets SET expires_at = $2 WHERE user_id = $1 AND used_at IS NULL AND expires_at > $2`, user, now)
		b.Queue(`UPDATE user_identities SET password_hash = $2 WHERE user_id = $1 AND method = 'email:password'`, user, passwordHash)
		b.Queue(`INSERT INTO user_identities (id, user_id, method, subject, email, password_hash, verified, created_at)
			SELECT $1, $2, 'email:password', $3, $3, $4, true, $5
			WHERE NOT EXISTS (SELECT 1 FROM user_identities WHERE user_id = $2 AND method = 'email:password')`,
			uuid.Must(uuid.NewV7()), user, email, passwordHash, now)
		// A new password ends every session opened with the old one.
		b.Queue(`DELETE FROM sessions WHERE user_id = $1`, user)
		if err := tx.SendBatch(ctx, b).Close(); err != nil {
			return fmt.Errorf("use password reset: %w", err)
		}
		return nil
	})
}
