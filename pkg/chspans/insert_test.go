package chspans_test

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/assayhq/assay/pkg/chspans"
	"github.com/assayhq/assay/pkg/chx"
	"github.com/assayhq/assay/pkg/genproto/spanspb"
	"github.com/assayhq/assay/pkg/testutil/chtest"
)

// TestInsertKeepsEveryValue reads back what Insert wrote, string and array
// columns included, with columns large enough for appendCols to reserve
// their bytes first (over 64 KiB each) and rows whose arrays differ in
// length, empty ones among them.
func TestInsertKeepsEveryValue(t *testing.T) {
	ctx := context.Background()
	cfg := chx.Config{URL: chtest.NewURL(t), DialTimeout: 5 * time.Second}
	if err := chspans.Migrate(ctx, cfg, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	conn, err := chx.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	now := time.Now()
	const rows = 300
	sb := &spanspb.SpanBatch{ProjectId: uuid.NewString(), ReceivedUnixNano: now.UnixNano()}
	want := map[string][2][]string{}
	for i := range rows {
		s := benchSpan(1, i, now)
		s.AttributesJson = fmt.Appendf(nil, `{"n":%d,"pad":%q}`, i, strings.Repeat("é", i))
		s.AttrKeys, s.AttrValues = nil, nil
		for j := range i % 5 {
			s.AttrKeys = append(s.AttrKeys, fmt.Sprintf("k%d", j))
			s.AttrValues = append(s.AttrValues, strings.Repeat(fmt.Sprint(i), 100+j))
		}
		sb.Spans = append(sb.Spans, s)
		want[s.SpanId] = [2][]string{s.AttrKeys, s.AttrValues}
	}
	if n, err := chspans.Insert(ctx, conn, []*spanspb.SpanBatch{sb}, func(string, time.Time) time.Time { return now.Add(time.Hour) }); err != nil || n != rows {
		t.Fatal(n, err)
	}
	rs, err := conn.Query(ctx, "SELECT span_id, attributes, attr_keys, attr_values FROM spans WHERE project_id = ?", sb.ProjectId)
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	got := 0
	for rs.Next() {
		var id, attrs string
		var keys, values []string
		if err := rs.Scan(&id, &attrs, &keys, &values); err != nil {
			t.Fatal(err)
		}
		w, ok := want[id]
		var i int
		fmt.Sscanf(attrs, `{"n":%d`, &i)
		if !ok || attrs != fmt.Sprintf(`{"n":%d,"pad":%q}`, i, strings.Repeat("é", i)) ||
			!slices.Equal(keys, w[0]) || !slices.Equal(values, w[1]) {
			t.Fatalf("span %s: %.80q %q %.80q, want keys %q", id, attrs, keys, values, w[0])
		}
		got++
	}
	if err := rs.Err(); err != nil || got != rows {
		t.Fatalf("%d rows read back of %d: %v", got, rows, err)
	}
}

// TestPrepareSendsRowsInTableOrder checks that an insert's rows leave in the
// table's order (project_id, trace_id, span_id), so ClickHouse need not sort
// and copy the block, and that each row keeps its own batch's version.
func TestPrepareSendsRowsInTableOrder(t *testing.T) {
	ctx := context.Background()
	cfg := chx.Config{URL: chtest.NewURL(t), DialTimeout: 5 * time.Second}
	if err := chspans.Migrate(ctx, cfg, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	conn, err := chx.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	now := time.Now()
	var batches []*spanspb.SpanBatch
	version := map[string]uint64{}
	for i, p := range []string{"p-b", "p-a", "p-c", "p-a"} {
		sb := &spanspb.SpanBatch{ProjectId: p, ReceivedUnixNano: now.UnixNano() + int64(i)}
		for j := 9; j >= 0; j-- {
			s := benchSpan(j%3, j+10*i, now)
			sb.Spans = append(sb.Spans, s)
			version[p+s.SpanId] = uint64(sb.ReceivedUnixNano)
		}
		batches = append(batches, sb)
	}
	b, n, err := chspans.Prepare(ctx, conn, batches, func(string, time.Time) time.Time { return now.Add(time.Hour) })
	if err != nil || n != 40 {
		t.Fatal(n, err)
	}
	defer func() { _ = b.Abort() }()
	cols := b.Columns()
	key := func(i int) string {
		return cols[0].Row(i, false).(string) + "/" + cols[1].Row(i, false).(string) + "/" + cols[2].Row(i, false).(string)
	}
	for i := range n {
		if i > 0 && key(i-1) > key(i) {
			t.Fatalf("row %d %s after %s", i, key(i), key(i-1))
		}
		p, id := cols[0].Row(i, false).(string), cols[2].Row(i, false).(string)
		if v := cols[35].Row(i, false).(uint64); v != version[p+id] {
			t.Fatalf("row %d (%s): version %d, want %d", i, key(i), v, version[p+id])
		}
	}
}
