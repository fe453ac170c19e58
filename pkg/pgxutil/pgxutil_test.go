package pgxutil_test

import (
	"context"
	"embed"
	"io"
	"io/fs"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sync/errgroup"

	"github.com/assayhq/assay/pkg/logx"
	"github.com/assayhq/assay/pkg/pgxutil"
	"github.com/assayhq/assay/pkg/testutil/pgtest"
)

//go:embed testdata/migrations/*.sql
var testMigrations embed.FS

func TestMigrateConcurrentlyAndErrors(t *testing.T) {
	ctx := context.Background()
	url := pgtest.NewURL(t)
	log := logx.NewTo(io.Discard, logx.Config{Level: slog.LevelError})
	sub, err := fs.Sub(testMigrations, "testdata/migrations")
	require.NoError(t, err)

	// Three replicas starting at once: the advisory lock serialises them.
	var g errgroup.Group
	for range 3 {
		g.Go(func() error {
			pool, err := pgxutil.Open(ctx, pgxutil.Config{URL: url, MaxConns: 2})
			if err != nil {
				return err
			}
			defer pool.Close()
			return pgxutil.Migrate(ctx, pool, sub, "test_schema_version", log)
		})
	}
	require.NoError(t, g.Wait())

	pool, err := pgxutil.Open(ctx, pgxutil.Config{URL: url})
	require.NoError(t, err)
	defer pool.Close()
	require.NoError(t, pgxutil.Check(pool)(ctx))
	_, err = pool.Exec(ctx, `INSERT INTO things VALUES (1, 'a')`)
	require.NoError(t, err)
	_, err = pool.Exec(ctx, `INSERT INTO things VALUES (2, 'a')`)
	assert.True(t, pgxutil.IsUniqueViolation(err))
	assert.False(t, pgxutil.IsForeignKeyViolation(err))
}
