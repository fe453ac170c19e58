// Package pgxutil opens PostgreSQL pools and applies a service's embedded
// goose migrations.
package pgxutil

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
)

// Config is a PostgreSQL connection. Variables: <PREFIX>_POSTGRES_*.
type Config struct {
	URL      string `default:"postgres://postgres@127.0.0.1:55432/assay?sslmode=disable" desc:"PostgreSQL connection URL"`
	MaxConns int32  `split_words:"true" default:"10" desc:"largest number of pooled connections"`
	Migrate  bool   `default:"true" desc:"apply this service's migrations at start (under an advisory lock, safe with replicas)"`
	// MigrateURL lets the schema owner apply migrations while the service
	// runs as a role that may only read and write rows
	// (deployments/postgres/roles.sql).
	MigrateURL string `split_words:"true" desc:"PostgreSQL URL of the schema owner that applies the migrations; empty: the URL above"`
}

// Open connects a pool and checks the server answers.
func Open(ctx context.Context, cfg Config) (*pgxpool.Pool, error) {
	pc, err := pgxpool.ParseConfig(cfg.URL)
	if err != nil {
		return nil, fmt.Errorf("parse postgres url: %w", err)
	}
	if cfg.MaxConns > 0 {
		pc.MaxConns = cfg.MaxConns
	}
	pool, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		return nil, fmt.Errorf("open postgres pool: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("ping postgres: %w", err)
	}
	return pool, nil
}

// Migrate applies the service's embedded goose migrations (see migrate).
func Migrate(ctx context.Context, pool *pgxpool.Pool, fsys fs.FS, table string, log *slog.Logger) error {
	db := stdlib.OpenDBFromPool(pool)
	defer db.Close()
	return migrate(ctx, db, fsys, table, log)
}

// MigrateAs applies the migrations as cfg.MigrateURL's role, over a
// connection of its own closed afterwards, or over pool when no migration
// URL is set.
func MigrateAs(ctx context.Context, cfg Config, pool *pgxpool.Pool, fsys fs.FS, table string, log *slog.Logger) error {
	if cfg.MigrateURL == "" {
		return Migrate(ctx, pool, fsys, table, log)
	}
	owner, err := Open(ctx, Config{URL: cfg.MigrateURL, MaxConns: 2})
	if err != nil {
		return fmt.Errorf("migration role: %w", err)
	}
	defer owner.Close()
	return Migrate(ctx, owner, fsys, table, log)
}

// IsUniqueViolation reports whether err is a unique-constraint violation.
func IsUniqueViolation(err error) bool { return hasCode(err, "23505") }

// IsForeignKeyViolation reports whether err is a foreign-key violation.
func IsForeignKeyViolation(err error) bool { return hasCode(err, "23503") }

func hasCode(err error, code string) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == code
}

// Check is a readiness check that pings the pool.
func Check(pool *pgxpool.Pool) func(context.Context) error {
	return func(ctx context.Context) error { return pool.Ping(ctx) }
}

// migrate applies the *.sql migrations in fsys that are not yet applied. Each
// service keeps its own version table, so services sharing a database migrate
// independently. A session advisory lock makes concurrent
// replicas wait for each other instead of racing.
func migrate(ctx context.Context, db *sql.DB, fsys fs.FS, table string, log *slog.Logger) error {
	locker, err := lock.NewPostgresSessionLocker()
	if err != nil {
		return fmt.Errorf("create migration lock: %w", err)
	}
	p, err := goose.NewProvider(goose.DialectPostgres, db, fsys,
		goose.WithTableName(table), goose.WithDisableGlobalRegistry(true), goose.WithSessionLocker(locker))
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
