package purge_test

import (
	"context"
	"io"
	"log/slog"
	"sort"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/pkg/pgxutil"
	"github.com/assayhq/assay/pkg/testutil/pgtest"
	"github.com/assayhq/assay/services/registry/internal/purge"
	"github.com/assayhq/assay/services/registry/migrations"
)

// TestTablesAreEveryProjectTable fails when a migration adds a table with
// a project_id column that the purge does not clear.
func TestTablesAreEveryProjectTable(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.New(t)
	require.NoError(t, pgxutil.Migrate(ctx, pool, migrations.FS, "registry_schema_version", slog.New(slog.NewTextHandler(io.Discard, nil))))
	rows, err := pool.Query(ctx, `SELECT c.table_name::text FROM information_schema.columns c
		JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
		WHERE c.table_schema = current_schema() AND c.column_name = 'project_id' AND t.table_type = 'BASE TABLE'`)
	require.NoError(t, err)
	var got []string
	for rows.Next() {
		var name string
		require.NoError(t, rows.Scan(&name))
		got = append(got, name)
	}
	require.NoError(t, rows.Err())
	want := append([]string(nil), purge.Tables...)
	sort.Strings(got)
	sort.Strings(want)
	assert.Equal(t, got, want)

	// Idempotent, and a no-op for projects holding nothing.
	p := &purge.Purger{Pool: pool}
	ids := []uuid.UUID{uuid.New(), uuid.New()}
	require.NoError(t, p.Projects(ctx, ids))
	require.NoError(t, p.Projects(ctx, ids))
}
