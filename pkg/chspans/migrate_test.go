package chspans

import (
	"context"
	"io"
	"io/fs"
	"log/slog"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/pkg/chx"
	"github.com/assayhq/assay/pkg/genproto/spanspb"
	"github.com/assayhq/assay/pkg/testutil/chtest"
)

// TestMigrationKeepsOldSpans applies migration 1 alone, stores spans in the
// old table, then runs the whole schema (twice at once, as the writer and
// tracing do at start): the spans are in the new table, partitioned by
// (expiry day, start day), and a time window prunes partitions.
func TestMigrationKeepsOldSpans(t *testing.T) {
	ctx := context.Background()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	cfg := chx.Config{URL: chtest.NewURL(t), DialTimeout: 5 * time.Second}
	first, err := fs.ReadFile(migrations, "migrations/00001_spans.sql")
	require.NoError(t, err)
	require.NoError(t, chx.Migrate(ctx, cfg, fstest.MapFS{"00001_spans.sql": {Data: first}}, MigrationsTable, log))

	conn, err := chx.Open(ctx, cfg)
	require.NoError(t, err)
	defer conn.Close()
	day := 24 * time.Hour
	now := time.Now().UTC()
	var spans []*spanspb.Span
	for i := 0; i < 3; i++ {
		start := now.Add(-time.Duration(i) * day)
		spans = append(spans, &spanspb.Span{TraceId: "0123456789abcdef0123456789abcdef", SpanId: "000000000000000" + string(rune('1'+i)),
			StartUnixMicro: start.UnixMicro(), EndUnixMicro: start.UnixMicro(), AttributesJson: []byte(`{}`)})
	}
	expiry := func(_ string, start time.Time) time.Time { return start.Add(30 * day) }
	n, err := Insert(ctx, conn, []*spanspb.SpanBatch{{ProjectId: "p", ReceivedUnixNano: 1, Spans: spans}}, expiry)
	require.NoError(t, err)
	require.Equal(t, 3, n)

	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range errs {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = Migrate(ctx, cfg, log) }()
	}
	wg.Wait()
	require.NoError(t, errs[0])
	require.NoError(t, errs[1])
	require.NoError(t, Migrate(ctx, cfg, log), "again: nothing to do")

	var key string
	require.NoError(t, conn.QueryRow(ctx, "SELECT partition_key FROM system.tables WHERE database = currentDatabase() AND name = 'spans'").Scan(&key))
	require.Contains(t, key, "start_us")
	var count, parts uint64
	require.NoError(t, conn.QueryRow(ctx, "SELECT count() FROM spans FINAL").Scan(&count))
	require.Equal(t, uint64(3), count, "the old spans were copied, once")
	require.NoError(t, conn.QueryRow(ctx, "SELECT uniqExact(partition) FROM system.parts WHERE database = currentDatabase() AND table = 'spans' AND active").Scan(&parts))
	require.Equal(t, uint64(3), parts, "one partition per start day")
	var left uint64
	require.NoError(t, conn.QueryRow(ctx, "SELECT count() FROM system.tables WHERE database = currentDatabase() AND name LIKE 'spans_%'").Scan(&left))
	require.Zero(t, left, "no leftover copy or lock")
}
