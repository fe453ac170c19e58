// Package migrate applies a service's embedded goose migrations.
package migrate

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"log/slog"

	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
)

// Up applies the *.sql migrations in fsys that are not yet applied. Each
// service keeps its own version table, so services sharing a database migrate
// independently. On PostgreSQL a session advisory lock makes concurrent
// replicas wait for each other instead of racing.
func Up(ctx context.Context, db *sql.DB, dialect goose.Dialect, fsys fs.FS, table string, log *slog.Logger) error {
	opts := []goose.ProviderOption{goose.WithTableName(table), goose.WithDisableGlobalRegistry(true)}
	if dialect == goose.DialectPostgres {
		locker, err := lock.NewPostgresSessionLocker()
		if err != nil {
			return fmt.Errorf("create migration lock: %w", err)
		}
		opts = append(opts, goose.WithSessionLocker(locker))
	}
	p, err := goose.NewProvider(dialect, db, fsys, opts...)
	if err != nil {
		return fmt.Errorf("load migrations: %w", err)
	}
	res, err := p.Up(ctx)
	if err != nil {
		return fmt.Errorf("apply migrations: %w", err)
	}
	for _, r := range res {
		log.Info("migration applied", "table", table, "version", r.Source.Version, "duration_ms", r.Duration.Milliseconds())
	}
	return nil
}
