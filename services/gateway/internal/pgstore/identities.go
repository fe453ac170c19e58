package pgstore

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/assayhq/assay/services/gateway/internal/accounts"
)

// AddIdentities inserts identities of existing users, all or none; a
// taken method and subject is a 409, an unknown user a 404.
func (s *Store) AddIdentities(ctx context.Context, ids []accounts.Identity) error {
	b := &pgx.Batch{}
	for _, id := range ids {
		b.Queue(`INSERT INTO user_identities (id, user_id, method, subject, email, password_hash, verified, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, id.ID, id.UserID, id.Method, id.Subject, id.Email, id.PasswordHash, id.Verified, id.CreatedAt)
	}
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error { return tx.SendBatch(ctx, b).Close() })
	if err != nil {
		return mapWriteErr(err, "add identities", nil)
	}
	return nil
}

// DeleteIdentity deletes one identity; false when there was none.
func (s *Store) DeleteIdentity(ctx context.Context, id uuid.UUID) (bool, error) {
	tag, err := s.pool.Exec(ctx, `DELETE FROM user_identities WHERE id = $1`, id)
	if err != nil {
		return false, fmt.Errorf("delete identity: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}
