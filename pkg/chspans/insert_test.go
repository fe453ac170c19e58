package chspans_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/google/uuid"

	"github.com/assayhq/assay/pkg/chspans"
	"github.com/assayhq/assay/pkg/chx"
	"github.com/assayhq/assay/pkg/genproto/spanspb"
	"github.com/assayhq/assay/pkg/spanmodel"
	"github.com/assayhq/assay/pkg/testutil/chtest"
)

// TestInsertKeepsEveryValue reads back what Insert wrote, string and array
// columns included, with columns large enough for appendCols to reserve
// their bytes first (over 64 KiB each) and rows whose arrays differ in
// length, empty ones among them.
func TestInsertKeepsEveryValue(t *testing.T) {
	ctx := context.Background()
	conn := migrated(t)
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

// TestInsertReadsLongTextBack: attributes with long text (repeated, with
// NULs and quotes, starting with U+FFFF, in lists) go through ClickHouse and
// read back, expanded from attr_values, as encoding/json writes them; the
// JSON column holds none of the long text. A row written before long text
// moved to attr_values (its JSON whole) reads as it did.
func TestInsertReadsLongTextBack(t *testing.T) {
	ctx := context.Background()
	conn := migrated(t)
	now := time.Now()
	long := strings.Repeat("the model's answer, ", 20)
	attrs := []map[string]any{
		{"input": map[string]any{"value": long}, "ag": map[string]any{"data": map[string]any{"inputs": long}}, "n": 1.5},
		{"nul": long + "\x00\"quoted\"\x00", "ff": "\uffff\x00#1 kept in full " + strings.Repeat("x", 300), "key": map[string]any{"\uffff\x00[1": long}},
		{"msgs": []any{map[string]any{"role": "user", "content": long}, map[string]any{"role": "assistant", "content": long + "!"}},
			"nums": []any{1.25, 2.5, 3.75, 4.125, 5.0625, 6.25, 7.5, 8.75, 9.125, 10.0625, 11.25, 12.5, 13.75, 14.125, 15.0625, 16.25, 17.5, 18.75, 19.125, 20.0625, 21.25, 22.5, 23.75, 24.125, 25.0625, 26.25, 27.5, 28.75, 29.125, 30.0625, 31.25, 32.5, 33.75}},
		{"short": "only short text"},
	}
	sb := &spanspb.SpanBatch{ProjectId: uuid.NewString(), ReceivedUnixNano: now.UnixNano()}
	want := map[string]string{}
	for i, a := range attrs {
		s := chspans.Proto(&spanmodel.Span{TraceID: fmt.Sprintf("%032x", 7), SpanID: fmt.Sprintf("%016x", i+1), SpanName: "s",
			Start: now, End: now, Attributes: a}, now, "")
		if strings.Contains(string(s.AttributesJson), "answer") {
			t.Fatalf("span %d: long text in the JSON column: %.200s", i, s.AttributesJson)
		}
		b, err := json.Marshal(a)
		if err != nil {
			t.Fatal(err)
		}
		sb.Spans = append(sb.Spans, s)
		want[s.SpanId] = string(b)
	}
	// A row as written before: the whole JSON, an @ pointer to an earlier
	// copy in it.
	old := benchSpan(7, 100, now)
	old.AttributesJson = []byte(`{"a":"` + long + `","b":"` + "\uffff" + `\u0000@5"}`)
	old.AttrKeys, old.AttrValues = []string{"a", "b"}, []string{long, chspans.PointerMark + "1"}
	sb.Spans = append(sb.Spans, old)
	want[old.SpanId] = `{"a":"` + long + `","b":"` + long + `"}`
	if _, err := chspans.Insert(ctx, conn, []*spanspb.SpanBatch{sb}, func(string, time.Time) time.Time { return now.Add(time.Hour) }); err != nil {
		t.Fatal(err)
	}
	// As the query service reads them (services/tracing/internal/query/store.go, rowColumns).
	rs, err := conn.Query(ctx, `SELECT span_id, attributes, if(position(attributes, '"\xEF\xBF\xBF\\u0000') > 0, attr_values, emptyArrayString())
		FROM spans WHERE project_id = ?`, sb.ProjectId)
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	got := 0
	for rs.Next() {
		var id, js string
		var values []string
		if err := rs.Scan(&id, &js, &values); err != nil {
			t.Fatal(err)
		}
		expanded := chspans.ExpandAttributes(js, values)
		var g, w any
		if json.Unmarshal([]byte(expanded), &g) != nil || json.Unmarshal([]byte(want[id]), &w) != nil || !reflect.DeepEqual(g, w) {
			t.Fatalf("span %s: read back %.300q\nwant %.300q", id, expanded, want[id])
		}
		if id == fmt.Sprintf("%016x", 4) && len(values) != 0 {
			t.Fatalf("span %s without pointers: attr_values read: %q", id, values)
		}
		got++
	}
	if err := rs.Err(); err != nil || got != len(want) {
		t.Fatalf("%d rows read back of %d: %v", got, len(want), err)
	}
}

// migrated is a connection to a fresh ClickHouse database holding the span
// schema, closed when the test ends.
func migrated(t *testing.T) driver.Conn {
	t.Helper()
	ctx := context.Background()
	cfg := chx.Config{URL: chtest.NewURL(t), DialTimeout: 5 * time.Second}
	if err := chspans.Migrate(ctx, cfg, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	conn, err := chx.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// TestPrepareSendsRowsInTableOrder checks that an insert's rows leave in the
// table's order (project_id, trace_id, span_id), so ClickHouse need not sort
// and copy the block, and that each row keeps its own batch's version.
func TestPrepareSendsRowsInTableOrder(t *testing.T) {
	ctx := context.Background()
	conn := migrated(t)
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
