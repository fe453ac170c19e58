package chx_test

import (
	"context"
	"embed"
	"io"
	"io/fs"
	"log/slog"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/pkg/chx"
	"github.com/assayhq/assay/pkg/logx"
	"github.com/assayhq/assay/pkg/testutil/chtest"
)

//go:embed testdata/migrations/*.sql
var testMigrations embed.FS

// TestMigrateAndInsert runs chx migrations (twice) and a named-column batch insert
// against the real server (ClickHouse 18.16 under `make test`).
func TestMigrateAndInsert(t *testing.T) {
	ctx := context.Background()
	cfg := chx.Config{URL: chtest.NewURL(t), DialTimeout: 5 * time.Second}
	log := logx.NewTo(io.Discard, logx.Config{Level: slog.LevelError})
	sub, err := fs.Sub(testMigrations, "testdata/migrations")
	require.NoError(t, err)
	require.NoError(t, chx.Migrate(ctx, cfg, sub, "test_schema_version", log))
	require.NoError(t, chx.Migrate(ctx, cfg, sub, "test_schema_version", log), "a second run applies nothing")

	conn, err := chx.Open(ctx, cfg)
	require.NoError(t, err)
	defer conn.Close()
	require.NoError(t, chx.Check(conn)(ctx))

	project := uuid.New()
	batch, err := conn.PrepareBatch(ctx, "INSERT INTO events (project_id, id, at, version)")
	require.NoError(t, err)
	now := time.Now().UTC().Truncate(time.Second)
	for i, id := range []string{"a", "b", "a"} {
		require.NoError(t, batch.Append(project, id, now, uint64(i)))
	}
	require.NoError(t, batch.Send())

	var n uint64
	require.NoError(t, conn.QueryRow(ctx, "SELECT count() FROM events FINAL WHERE project_id = ?", project).Scan(&n))
	assert.EqualValues(t, 2, n, "the ReplacingMergeTree keeps one row per id")

	var versions []int64
	rows, err := conn.Query(ctx, "SELECT version_id FROM test_schema_version ORDER BY version_id")
	require.NoError(t, err)
	for rows.Next() {
		var v int64
		require.NoError(t, rows.Scan(&v))
		versions = append(versions, v)
	}
	assert.Equal(t, []int64{1, 2}, versions, "each file is recorded once")
	for _, table := range []string{"a", "b"} {
		require.NoError(t, conn.Exec(ctx, "SELECT 1 FROM "+table+" LIMIT 1"), table)
	}
}
