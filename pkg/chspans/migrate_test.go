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

// TestMigrationExpiresFromIngestTime stores spans the old way (expiry from
// the start day) under migrations 1 and 2, then runs the schema: every row's
// expiry is now its ingest day (version) plus the retention it was given, so
// a span dated 2023 and received today is live again.
// The migration run again, as after an interruption between its table swap
// and its record, changes nothing more.
func TestMigrationExpiresFromIngestTime(t *testing.T) {
	ctx := context.Background()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	cfg := chx.Config{URL: chtest.NewURL(t), DialTimeout: 5 * time.Second}
	old := fstest.MapFS{}
	for _, name := range []string{"00001_spans.sql", "00002_spans_by_start_day.sql"} {
		b, err := fs.ReadFile(migrations, "migrations/"+name)
		require.NoError(t, err)
		old[name] = &fstest.MapFile{Data: b}
	}
	require.NoError(t, chx.Migrate(ctx, cfg, old, MigrationsTable, log))

	conn, err := chx.Open(ctx, cfg)
	require.NoError(t, err)
	defer conn.Close()
	day := 24 * time.Hour
	received := time.Now().UTC()
	start2023 := time.Date(2023, 3, 14, 12, 0, 0, 0, time.UTC)
	// As the writer used to: the start day plus 30 days, plus one.
	startExpiry := func(_ string, start time.Time) time.Time { return start.Add(30 * day).Truncate(day).Add(day) }
	span := func(sid string, start time.Time, deleted bool) *spanspb.Span {
		return &spanspb.Span{TraceId: "0123456789abcdef0123456789abcdef", SpanId: sid, Deleted: deleted,
			StartUnixMicro: start.UnixMicro(), EndUnixMicro: start.UnixMicro(), AttributesJson: []byte(`{}`)}
	}
	oldInsert := func(at time.Time, spans ...*spanspb.Span) {
		t.Helper()
		c := getCols(len(spans))
		defer putCols(c)
		for _, s := range spans {
			c.add("p", uint64(at.UnixNano()), s, startExpiry("p", time.UnixMicro(s.GetStartUnixMicro()).UTC()))
		}
		b, err := conn.PrepareBatch(ctx, "INSERT INTO spans ("+Columns+")")
		require.NoError(t, err)
		for i, col := range c.slices() {
			require.NoError(t, b.Column(i).Append(col))
		}
		require.NoError(t, b.Send())
	}
	oldInsert(received, span("0000000000000001", start2023, false), span("0000000000000002", received, false))

	expires := func() map[string]string {
		t.Helper()
		rows, err := conn.Query(ctx, "SELECT span_id, toString(expires) FROM spans FINAL")
		require.NoError(t, err)
		defer rows.Close()
		out := map[string]string{}
		for rows.Next() {
			var sid, e string
			require.NoError(t, rows.Scan(&sid, &e))
			out[sid] = e
		}
		require.NoError(t, rows.Err())
		return out
	}
	want := received.Add(30 * day).Truncate(day).Add(day).Format("2006-01-02")
	require.Equal(t, "2023-04-14", expires()["0000000000000001"], "written the old way")

	require.NoError(t, Migrate(ctx, cfg, log))
	require.Equal(t, map[string]string{"0000000000000001": want, "0000000000000002": want}, expires())
	var live uint64
	require.NoError(t, conn.QueryRow(ctx, "SELECT count() FROM spans FINAL WHERE deleted = 0 AND expires > today()").Scan(&live))
	require.Equal(t, uint64(2), live)

	third, err := fs.ReadFile(migrations, "migrations/00003_expires_from_ingest.sql")
	require.NoError(t, err)
	require.NoError(t, chx.Migrate(ctx, cfg, fstest.MapFS{"00003_expires_from_ingest.sql": {Data: third}}, "rerun_migrations", log))
	require.Equal(t, map[string]string{"0000000000000001": want, "0000000000000002": want}, expires(), "a second run shifts nothing")
	var left uint64
	require.NoError(t, conn.QueryRow(ctx, "SELECT count() FROM system.tables WHERE database = currentDatabase() AND name LIKE 'spans_%'").Scan(&left))
	require.Zero(t, left, "no leftover copy")
}
