package pgxutil_test

import (
	"context"
	"io"
	"io/fs"
	"log/slog"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/pkg/logx"
	"github.com/assayhq/assay/pkg/pgxutil"
	"github.com/assayhq/assay/pkg/testutil/pgtest"
)

// TestRolesLeastPrivilege: with deployments/postgres/roles.sql applied, the
// owner role applies the migrations (MigrateURL) and the role the services
// run as reads and writes the migrated tables but is no superuser and can
// create no role, database or table.
func TestRolesLeastPrivilege(t *testing.T) {
	ctx := context.Background()
	db := pgtest.NewURL(t)
	ownerURL, appURL := pgtest.Roles(t, db)
	log := logx.NewTo(io.Discard, logx.Config{Level: slog.LevelError})
	sub, err := fs.Sub(testMigrations, "testdata/migrations")
	require.NoError(t, err)

	cfg := pgxutil.Config{URL: appURL, MigrateURL: ownerURL, MaxConns: 2}
	pool, err := pgxutil.Open(ctx, cfg)
	require.NoError(t, err)
	defer pool.Close()
	require.NoError(t, pgxutil.MigrateAs(ctx, cfg, pool, sub, "test_schema_version", log))

	// The app role uses the rows of what the owner's migrations created.
	_, err = pool.Exec(ctx, `INSERT INTO things VALUES (1, 'a')`)
	require.NoError(t, err)
	_, err = pool.Exec(ctx, `UPDATE things SET name = 'b' WHERE id = 1`)
	require.NoError(t, err)
	_, err = pool.Exec(ctx, `DELETE FROM things WHERE id = 1`)
	require.NoError(t, err)

	var super, createRole, createDB bool
	require.NoError(t, pool.QueryRow(ctx, `SELECT rolsuper, rolcreaterole, rolcreatedb FROM pg_roles WHERE rolname = current_user`).Scan(&super, &createRole, &createDB))
	assert.False(t, super, "the services' role is a superuser")
	assert.False(t, createRole, "the services' role may create roles")
	assert.False(t, createDB, "the services' role may create databases")
	for _, q := range []string{
		`CREATE ROLE intruder LOGIN SUPERUSER`,
		`CREATE ROLE intruder LOGIN`,
		`CREATE DATABASE intruder`,
		`CREATE TABLE intruder (id int)`,
		`DROP TABLE things`,
		`ALTER TABLE things ADD COLUMN x int`,
		`TRUNCATE things`,
		`COPY things TO PROGRAM 'id'`,
		`SELECT pg_read_file('/etc/passwd')`,
	} {
		_, err := pool.Exec(ctx, q)
		assert.Error(t, err, "the services' role ran %s", q)
	}

	// Migrating as the app role (no MigrateURL) cannot change the schema.
	appOnly := pgxutil.Config{URL: appURL}
	err = pgxutil.MigrateAs(ctx, appOnly, pool, sub, "other_schema_version", log)
	assert.Error(t, err, "the services' role applied migrations")

	// The owner is no superuser either.
	c, err := pgx.Connect(ctx, ownerURL)
	require.NoError(t, err)
	defer c.Close(ctx)
	require.NoError(t, c.QueryRow(ctx, `SELECT rolsuper, rolcreaterole FROM pg_roles WHERE rolname = current_user`).Scan(&super, &createRole))
	assert.False(t, super, "the owner role is a superuser")
	assert.False(t, createRole, "the owner role may create roles")
}
