package httpapi_test

import (
	"context"
	"net/http"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/assayhq/assay/pkg/chx"
)

// dated2023 moves the spans of otlpTraces to 14 March 2023.
func dated2023(i int, sp ptrace.Span) {
	start := time.Date(2023, 3, 14, 12, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Millisecond)
	sp.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
	sp.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(250 * time.Millisecond)))
}

// storedRows reads the raw rows of a trace (every version, tombstones
// included) as (span_id, start_us, expires, deleted).
type storedRow struct {
	spanID  string
	startUS int64
	expires time.Time
	deleted uint8
}

func (s *stack) storedRows(t *testing.T, traceID string) []storedRow {
	t.Helper()
	ctx := context.Background()
	conn, err := chx.Open(ctx, chx.Config{URL: s.chURL, DialTimeout: 5 * time.Second})
	require.NoError(t, err)
	defer conn.Close()
	rows, err := conn.Query(ctx, "SELECT span_id, start_us, expires, deleted FROM spans WHERE project_id = ? AND trace_id = ? ORDER BY span_id, version",
		s.project.String(), traceID)
	require.NoError(t, err)
	defer rows.Close()
	var out []storedRow
	for rows.Next() {
		var r storedRow
		require.NoError(t, rows.Scan(&r.spanID, &r.startUS, &r.expires, &r.deleted))
		out = append(out, r)
	}
	require.NoError(t, rows.Err())
	return out
}

// TestSpansDatedLongAgoAreKept: retention counts from when a span was
// received, never from its own start time (a span dated 2023 was once
// acknowledged, invisible at once, and dropped by the retention
// job). OTLP protobuf, OTLP JSON and native spans dated 2023 are found by
// trace id and by a time window covering 2023; deleting one writes its
// tombstone into the span's own partition (same expiry, same start), where
// ReplacingMergeTree merges them.
func TestSpansDatedLongAgoAreKept(t *testing.T) {
	s := newStack(t)
	protoTID := [16]byte{0x20, 0x23, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}
	r := s.do(t, "POST", "/api/otlp/v1/traces", protoBody(t, otlpTraces(protoTID, 2, dated2023)),
		map[string]string{"Content-Type": "application/x-protobuf"})
	require.Equal(t, http.StatusOK, r.status, string(r.body))

	jsonTID := [16]byte{0x20, 0x23, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2}
	b, err := ptraceotlp.NewExportRequestFromTraces(otlpTraces(jsonTID, 2, dated2023)).MarshalJSON()
	require.NoError(t, err)
	r = s.do(t, "POST", "/api/otlp/v1/traces", b, map[string]string{"Content-Type": "application/json"})
	require.Equal(t, http.StatusOK, r.status, string(r.body))

	nativeTID := "20230000000000000000000000000003"
	r = s.doJSON(t, "POST", "/api/tracing/spans/ingest", map[string]any{"spans": []any{map[string]any{
		"trace_id": nativeTID, "span_id": "2023000000000001", "span_name": "backfilled",
		"start_time": "2023-03-14T12:00:00Z", "end_time": "2023-03-14T12:00:01Z"}}})
	require.Equal(t, http.StatusAccepted, r.status, string(r.body))

	ids := []string{"20230000000000000000000000000001", "20230000000000000000000000000002", nativeTID}
	for _, id := range ids {
		eventually(t, "trace "+id+" found by id", func() bool { return s.trace(t, id)["count"] == 1.0 })
	}
	window := map[string]any{"windowing": map[string]any{"oldest": "2023-01-01T00:00:00Z", "newest": "2024-01-01T00:00:00Z"}}
	r = s.doJSON(t, "POST", "/api/traces/query", window)
	require.Equal(t, http.StatusOK, r.status, string(r.body))
	want := append([]string(nil), ids...)
	sort.Strings(want)
	assert.Equal(t, want, traceIDsOf(t, r.json(t)), "a window over 2023 finds them")
	r = s.doJSON(t, "POST", "/api/spans/query", window)
	require.Equal(t, http.StatusOK, r.status, string(r.body))
	assert.Equal(t, 5.0, r.json(t)["count"])

	// Time windows still filter on the start time: a window over this
	// month does not find them.
	r = s.doJSON(t, "POST", "/api/traces/query", map[string]any{"windowing": map[string]any{
		"oldest": time.Now().Add(-24 * time.Hour).UTC().Format(time.RFC3339)}})
	require.Equal(t, http.StatusOK, r.status, string(r.body))
	assert.Empty(t, traceIDsOf(t, r.json(t)))

	// The expiry is the ingest day plus the retention (30 days by default).
	rows := s.storedRows(t, nativeTID)
	require.Len(t, rows, 1)
	assert.True(t, rows[0].expires.After(time.Now().Add(29*24*time.Hour)), "expires %s", rows[0].expires)

	// A delete of an old span hides it, and its tombstone lands in the
	// span's partition: same expiry day, same start.
	r = s.do(t, "DELETE", "/api/traces/"+nativeTID, nil, nil)
	require.Equal(t, http.StatusAccepted, r.status, string(r.body))
	eventually(t, "old trace deleted", func() bool { return s.trace(t, nativeTID)["count"] == 0.0 })
	rows = s.storedRows(t, nativeTID)
	require.GreaterOrEqual(t, len(rows), 2, "the span and its tombstone")
	assert.Equal(t, uint8(0), rows[0].deleted, "oldest version: the span")
	for _, row := range rows[1:] {
		assert.Equal(t, uint8(1), row.deleted, "newer versions: its tombstone (once synchronously, once through the stream)")
		assert.Equal(t, rows[0].startUS, row.startUS)
		assert.Equal(t, rows[0].expires, row.expires)
	}
}
