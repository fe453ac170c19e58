package main

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/pkg/logx"
	"github.com/assayhq/assay/pkg/pgxutil"
	"github.com/assayhq/assay/pkg/testutil/pgtest"
	"github.com/assayhq/assay/services/registry/migrations"
)

// TestMigratesAsOwnerRunsAsApp: the registry's real migrations apply as the
// owner role of deployments/postgres/roles.sql (REGISTRY_POSTGRES_MIGRATE_URL),
// and the role the service runs as reads and writes every table they create
// (its sequences too), listens and notifies, yet cannot change the schema.
func TestMigratesAsOwnerRunsAsApp(t *testing.T) {
	ctx := context.Background()
	ownerURL, appURL := pgtest.Roles(t, pgtest.NewURL(t))
	log := logx.NewTo(io.Discard, logx.Config{Level: slog.LevelError})
	cfg := pgxutil.Config{URL: appURL, MigrateURL: ownerURL, MaxConns: 2}
	pool, err := pgxutil.Open(ctx, cfg)
	require.NoError(t, err)
	defer pool.Close()
	require.NoError(t, pgxutil.MigrateAs(ctx, cfg, pool, migrations.FS, "registry_schema_version", log))

	rows, err := pool.Query(ctx, `SELECT tablename FROM pg_tables WHERE schemaname = 'public'`)
	require.NoError(t, err)
	var tables []string
	for rows.Next() {
		var n string
		require.NoError(t, rows.Scan(&n))
		tables = append(tables, n)
	}
	require.NoError(t, rows.Err())
	require.NotEmpty(t, tables)
	for _, tb := range tables {
		var ok bool
		require.NoError(t, pool.QueryRow(ctx, `SELECT has_table_privilege($1, 'SELECT, INSERT, UPDATE, DELETE') AND NOT has_table_privilege($1, 'TRUNCATE, REFERENCES, TRIGGER')`, tb).Scan(&ok))
		require.True(t, ok, "the app role's privileges on %s are not exactly read and write", tb)
		_, err := pool.Exec(ctx, "ALTER TABLE "+tb+" ADD COLUMN intruder int")
		require.Error(t, err, "the app role altered %s", tb)
	}
	_, err = pool.Exec(ctx, "LISTEN assay_api_keys")
	require.NoError(t, err)
	_, err = pool.Exec(ctx, "SELECT pg_notify('assay_api_keys', 'x')")
	require.NoError(t, err)
}
