// Package chx connects to ClickHouse and applies embedded migrations.
//
// Every statement must run on ClickHouse 18.16 (Debian's package, used by
// development and CI) and on current releases: see design.md.
package chx

import (
	"context"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/pressly/goose/v3"

	"github.com/assayhq/assay/pkg/migrate"
)

// Config is a ClickHouse connection. Variables: <PREFIX>_CLICKHOUSE_*.
type Config struct {
	URL         string        `default:"clickhouse://default@127.0.0.1:59000/assay" desc:"ClickHouse native-protocol URL; the path names the database"`
	DialTimeout time.Duration `split_words:"true" default:"5s" desc:"connection timeout"`
	Migrate     bool          `default:"true" desc:"apply this service's ClickHouse migrations at start"`
}

// Options parses cfg into driver options.
func Options(cfg Config) (*clickhouse.Options, error) {
	opts, err := clickhouse.ParseDSN(cfg.URL)
	if err != nil {
		return nil, fmt.Errorf("parse clickhouse url: %w", err)
	}
	opts.DialTimeout = cfg.DialTimeout
	return opts, nil
}

// Open connects with the native protocol, creating the database first when
// it does not exist, and checks the server answers.
func Open(ctx context.Context, cfg Config) (driver.Conn, error) {
	opts, err := Options(cfg)
	if err != nil {
		return nil, err
	}
	if err := ensureDatabase(ctx, *opts); err != nil {
		return nil, err
	}
	conn, err := clickhouse.Open(opts)
	if err != nil {
		return nil, fmt.Errorf("open clickhouse: %w", err)
	}
	if err := conn.Ping(ctx); err != nil {
		conn.Close()
		return nil, fmt.Errorf("ping clickhouse: %w", err)
	}
	return conn, nil
}

func ensureDatabase(ctx context.Context, opts clickhouse.Options) error {
	name := opts.Auth.Database
	if name == "" || name == "default" {
		return nil
	}
	opts.Auth.Database = "default"
	conn, err := clickhouse.Open(&opts)
	if err != nil {
		return fmt.Errorf("open clickhouse: %w", err)
	}
	defer conn.Close()
	if err := conn.Exec(ctx, "CREATE DATABASE IF NOT EXISTS "+quoteIdent(name)); err != nil {
		return fmt.Errorf("create clickhouse database %s: %w", name, err)
	}
	return nil
}

// Migrate applies the goose migrations in fsys (each file marked
// "-- +goose NO TRANSACTION": ClickHouse has none).
func Migrate(ctx context.Context, cfg Config, fsys fs.FS, table string, log *slog.Logger) error {
	opts, err := Options(cfg)
	if err != nil {
		return err
	}
	if err := ensureDatabase(ctx, *opts); err != nil {
		return err
	}
	db := clickhouse.OpenDB(opts)
	defer db.Close()
	return migrate.Up(ctx, db, goose.DialectClickHouse, fsys, table, log)
}

// Check is a readiness check that pings the server.
func Check(conn driver.Conn) func(context.Context) error {
	return func(ctx context.Context) error { return conn.Ping(ctx) }
}

// WithDatabase returns url u with its database path replaced by db.
func WithDatabase(u, db string) (string, error) {
	p, err := url.Parse(u)
	if err != nil {
		return "", fmt.Errorf("parse clickhouse url: %w", err)
	}
	p.Path = "/" + db
	return p.String(), nil
}

func quoteIdent(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }
