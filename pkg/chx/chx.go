// Package chx connects to ClickHouse and applies embedded migrations.
//
// Every statement must run on ClickHouse 18.16 (Debian's package, used by
// development and CI) and on current releases: see
// docs/decisions/0007-sql-for-clickhouse-18-16-and-current-releases.md.
package chx

import (
	"context"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// Config is a ClickHouse connection. Variables: <PREFIX>_CLICKHOUSE_*.
type Config struct {
	URL         string        `default:"clickhouse://default@127.0.0.1:59000/assay" desc:"ClickHouse native-protocol URL; the path names the database"`
	DialTimeout time.Duration `split_words:"true" default:"5s" desc:"connection timeout"`
	Migrate     bool          `default:"true" desc:"apply this service's ClickHouse migrations at start"`
	Cluster     string        `desc:"name of the ClickHouse cluster (remote_servers) holding the spans: replicated tables behind a Distributed one, created ON CLUSTER (deployments/clickhouse/cluster.md); empty (the default): the single-server schema"`
}

var clusterName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// Options parses cfg into driver options.
func Options(cfg Config) (*clickhouse.Options, error) {
	opts, err := clickhouse.ParseDSN(cfg.URL)
	if err != nil {
		return nil, fmt.Errorf("parse clickhouse url: %w", err)
	}
	opts.DialTimeout = cfg.DialTimeout
	// No compression on the wire (clickhouse-go's default, unless the URL
	// asks for it): LZ4 made ClickHouse spend 20-35 % more CPU per inserted
	// row on loopback (docs/benchmarks.md, ClickHouse's CPU per inserted
	// row: where it goes).
	if cfg.Cluster != "" {
		if !clusterName.MatchString(cfg.Cluster) {
			return nil, fmt.Errorf("CLICKHOUSE_CLUSTER %q: letters, digits and _ only", cfg.Cluster)
		}
		// An insert into the Distributed table is acknowledged only once
		// its shard has it: the writer acks JetStream after the insert.
		if opts.Settings == nil {
			opts.Settings = clickhouse.Settings{}
		}
		opts.Settings["insert_distributed_sync"] = 1
	}
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
	return open(ctx, opts)
}

// OpenReader connects as Open does, but never creates the database: for a
// read-only user (deployments/clickhouse/users.sh, assay_reader), which may
// not.
func OpenReader(ctx context.Context, cfg Config) (driver.Conn, error) {
	opts, err := Options(cfg)
	if err != nil {
		return nil, err
	}
	return open(ctx, opts)
}

func open(ctx context.Context, opts *clickhouse.Options) (driver.Conn, error) {
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
	// "system", not "default": every user may use system, while a user
	// confined to its database (allow_databases) may not use default.
	opts.Auth.Database = "system"
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

// Migrate applies the migrations in fsys that are not yet recorded in table.
//
// Files are goose-style (NNNNN_name.sql, "-- +goose Up" ... "-- +goose Down")
// but applied here over the native protocol: goose records versions with an
// inline INSERT ... VALUES, which ClickHouse 18.16 never answers through
// clickhouse-go, while batch inserts work on every version. ClickHouse has no
// transactions or locks, so every statement must be idempotent (IF NOT
// EXISTS): replicas starting at once may both apply a file.
func Migrate(ctx context.Context, cfg Config, fsys fs.FS, table string, log *slog.Logger) error {
	conn, err := Open(ctx, cfg)
	if err != nil {
		return err
	}
	defer conn.Close()
	if err := conn.Exec(ctx, "CREATE TABLE IF NOT EXISTS "+quoteIdent(table)+
		" (version_id Int64, applied_at DateTime) ENGINE = MergeTree() ORDER BY version_id"); err != nil {
		return fmt.Errorf("create %s: %w", table, err)
	}
	files, err := fs.Glob(fsys, "*.sql")
	if err != nil {
		return fmt.Errorf("list migrations: %w", err)
	}
	sort.Strings(files)
	current, err := appliedVersion(ctx, conn, table)
	if err != nil {
		return err
	}
	if last := fileVersion(files); last <= current {
		return nil
	}
	// Pending migrations: take the lock (two services starting at once must
	// not both run a table swap), then read the version again.
	unlock, err := lock(ctx, conn, table, log)
	if err != nil {
		return err
	}
	defer unlock()
	if current, err = appliedVersion(ctx, conn, table); err != nil {
		return err
	}
	for _, name := range files {
		digits := name[:strings.IndexFunc(name, func(r rune) bool { return r < '0' || r > '9' })]
		version, err := strconv.ParseInt(digits, 10, 64)
		if err != nil {
			return fmt.Errorf("migration %s: no version prefix", name)
		}
		if version <= current {
			continue
		}
		body, err := fs.ReadFile(fsys, name)
		if err != nil {
			return fmt.Errorf("read migration %s: %w", name, err)
		}
		start := time.Now()
		for _, stmt := range upStatements(string(body)) {
			if err := conn.Exec(ctx, stmt); err != nil {
				return fmt.Errorf("migration %s: %w", name, err)
			}
		}
		b, err := conn.PrepareBatch(ctx, "INSERT INTO "+quoteIdent(table)+" (version_id, applied_at)")
		if err != nil {
			return fmt.Errorf("record migration %s: %w", name, err)
		}
		if err := b.Append(version, time.Now().UTC()); err != nil {
			return fmt.Errorf("record migration %s: %w", name, err)
		}
		if err := b.Send(); err != nil {
			return fmt.Errorf("record migration %s: %w", name, err)
		}
		log.Info("migration applied", "table", table, "version", version, "duration_ms", time.Since(start).Milliseconds())
	}
	return nil
}

func appliedVersion(ctx context.Context, conn driver.Conn, table string) (int64, error) {
	var current int64
	if err := conn.QueryRow(ctx, "SELECT toInt64(max(version_id)) FROM "+quoteIdent(table)).Scan(&current); err != nil {
		return 0, fmt.Errorf("read %s: %w", table, err)
	}
	return current, nil
}

// fileVersion is the highest version among migration file names.
func fileVersion(files []string) int64 {
	var last int64
	for _, name := range files {
		digits := name[:strings.IndexFunc(name, func(r rune) bool { return r < '0' || r > '9' })]
		if v, err := strconv.ParseInt(digits, 10, 64); err == nil && v > last {
			last = v
		}
	}
	return last
}

// lockStale is how old a migration lock may get before another process
// takes it over (its holder died mid-migration).
const lockStale = 30 * time.Minute

// lock serialises migrations of table across processes: ClickHouse has no
// locks, but CREATE TABLE without IF NOT EXISTS succeeds for one caller only.
func lock(ctx context.Context, conn driver.Conn, table string, log *slog.Logger) (func(), error) {
	name := quoteIdent(table + "_lock")
	drop := func() { _ = conn.Exec(context.WithoutCancel(ctx), "DROP TABLE IF EXISTS "+name) }
	for waited := false; ; waited = true {
		err := conn.Exec(ctx, "CREATE TABLE "+name+" (x UInt8) ENGINE = Memory")
		if err == nil {
			return drop, nil
		}
		if !strings.Contains(err.Error(), "already exists") {
			return nil, fmt.Errorf("lock %s: %w", table, err)
		}
		var age int64
		if err := conn.QueryRow(ctx, "SELECT toInt64(now() - metadata_modification_time) FROM system.tables WHERE database = currentDatabase() AND name = ?", table+"_lock").Scan(&age); err == nil && time.Duration(age)*time.Second > lockStale {
			log.Warn("taking over a stale migration lock", "table", table, "age_s", age)
			drop()
			continue
		}
		if !waited {
			log.Info("waiting for another process's migration", "table", table)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// upStatements returns the statements of the file's Up section, split on
// semicolons that end a line, without comment lines.
func upStatements(sql string) []string {
	var stmts []string
	var cur strings.Builder
	up := !strings.Contains(sql, "-- +goose Up")
	for _, line := range strings.Split(sql, "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(trimmed, "-- +goose Up"):
			up = true
			continue
		case strings.HasPrefix(trimmed, "-- +goose Down"):
			up = false
			continue
		case !up || strings.HasPrefix(trimmed, "--") || trimmed == "":
			continue
		}
		cur.WriteString(line)
		cur.WriteString("\n")
		if strings.HasSuffix(trimmed, ";") {
			stmts = append(stmts, strings.TrimSuffix(strings.TrimSpace(cur.String()), ";"))
			cur.Reset()
		}
	}
	if rest := strings.TrimSpace(cur.String()); rest != "" {
		stmts = append(stmts, rest)
	}
	return stmts
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
