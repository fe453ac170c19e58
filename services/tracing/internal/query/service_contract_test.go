package query_test

// The query service (Service: Query, Traces, Spans, Distinct, Analytics)
// on a real ClickHouse, with spans written as the pipeline writes them:
// normalised and encoded as ingest does, inserted with the writer's own
// statement (chspans.Insert), tombstones shaped as ingest.Service.Delete
// shapes them. A failure here names the query layer; the HTTP tests
// (internal/httpapi) check the routes over it.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/pkg/chspans"
	"github.com/assayhq/assay/pkg/chx"
	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/genproto/spanspb"
	"github.com/assayhq/assay/pkg/spanmodel"
	"github.com/assayhq/assay/pkg/testutil/chtest"
	"github.com/assayhq/assay/services/tracing/internal/ingest"
	"github.com/assayhq/assay/services/tracing/internal/query"
)

// maxSpans is the service's QueryMaxSpans in these tests: small, so the
// cap is reached with a few spans.
const maxSpans = 6

// world is a query service over one ClickHouse database, in one project.
type world struct {
	conn    driver.Conn
	svc     *query.Service
	project string
}

// TestQueryService runs each contract on one migrated database, each in a
// project of its own.
func TestQueryService(t *testing.T) {
	ctx := context.Background()
	cfg := chx.Config{URL: chtest.NewURL(t), DialTimeout: 5 * time.Second}
	require.NoError(t, chspans.Migrate(ctx, cfg, slog.New(slog.NewTextHandler(io.Discard, nil))))
	conn, err := chx.Open(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	svc := query.NewService(query.NewStore(conn, 30*time.Second), maxSpans)
	for _, tc := range []struct {
		name string
		run  func(*testing.T, *world)
	}{
		{"TracesReturnsWholeTracesByStartWithMetricsRolledUp", testTracesReturnsWholeTraces},
		{"SpansOfOneTraceSentApartAreRolledUpTogether", testSpansSentApartAreRolledUpTogether},
		{"SpansSelectsByTraceAndSpanIDs", testSpansSelectsByIDs},
		{"QueryFiltersSpans", testQueryFiltersSpans},
		{"QueryRefusesABadFilterOrWindowing", testQueryRefusesBadRequests},
		{"QuerySpanWindowingPagesWithoutGapsOrRepeats", testSpanWindowingPages},
		{"QueryTraceFocusPagesByTraceTime", testTraceFocusPages},
		{"QueryReturnsAtMostQueryMaxSpans", testAtMostQueryMaxSpans},
		{"ATombstoneHidesItsSpanFromEveryRead", testTombstonesHideSpans},
		{"AReIngestReplacesTheSpan", testReIngestReplaces},
		{"ProjectsAreIsolated", testProjectsAreIsolated},
		{"DistinctListsSessionsAndUsers", testDistinctSessionsAndUsers},
		{"AnalyticsBucketsRootSpansByIngestTime", testAnalyticsBuckets},
		{"GroupsComputeEachGroupOverItsTracesRootSpans", testGroups},
		{"GroupsRefuseBadIDsAndTooManyTraces", testGroupsBounds},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.run(t, &world{conn: conn, svc: svc, project: uuid.NewString()})
		})
	}
}

// expiry keeps every test row two days.
func expiry(string, time.Time) time.Time {
	return time.Now().Add(48 * time.Hour).UTC().Truncate(24 * time.Hour)
}

// ingest stores native spans as one request received at received: the
// normaliser and encoder ingest uses, then the writer's insert.
func (w *world) ingest(t *testing.T, received time.Time, spans ...map[string]any) {
	t.Helper()
	list := make([]any, len(spans))
	for i, s := range spans {
		list[i] = s
	}
	raws, rejected, err := ingest.NativeSpans(map[string]any{"spans": list})
	require.NoError(t, err)
	require.Empty(t, rejected)
	norm := &spanmodel.Normalizer{}
	normed, rej := norm.Batch(raws)
	require.Empty(t, rej)
	batch := &spanspb.SpanBatch{ProjectId: w.project, ReceivedUnixNano: received.UnixNano()}
	for _, s := range normed {
		p, _, err := chspans.Encode(s, norm.LimitsInForce(), received, "")
		require.NoError(t, err)
		batch.Spans = append(batch.Spans, p)
	}
	_, err = chspans.Insert(context.Background(), w.conn, []*spanspb.SpanBatch{batch}, expiry)
	require.NoError(t, err)
}

// tombstone deletes spans as ingest.Service.Delete writes it: same
// identity and start, newer version, deleted.
func (w *world) tombstone(t *testing.T, spans ...query.Parsed) {
	t.Helper()
	batch := &spanspb.SpanBatch{ProjectId: w.project, ReceivedUnixNano: time.Now().UnixNano()}
	for _, p := range spans {
		batch.Spans = append(batch.Spans, &spanspb.Span{TraceId: p.TraceID, SpanId: p.SpanID, StartUnixMicro: p.StartUS,
			ExpiresUnixDay: int32(expiry("", time.Time{}).Unix() / 86400), Deleted: true})
	}
	_, err := chspans.Insert(context.Background(), w.conn, []*spanspb.SpanBatch{batch}, nil)
	require.NoError(t, err)
}

func span(trace, id, parent, name string, start time.Time, attrs map[string]any) map[string]any {
	s := map[string]any{"trace_id": trace, "span_id": id, "span_name": name,
		"start_time": start.Format(time.RFC3339Nano), "end_time": start.Add(500 * time.Millisecond).Format(time.RFC3339Nano)}
	if parent != "" {
		s["parent_id"] = parent
	}
	if attrs != nil {
		s["attributes"] = attrs
	}
	return s
}

func tid(n int) string { return fmt.Sprintf("%032x", 0xabc000+n) }
func sid(n int) string { return fmt.Sprintf("%016x", 0xdef000+n) }

func tokens(prompt, completion int) map[string]any {
	return map[string]any{"ag": map[string]any{"metrics": map[string]any{"tokens": map[string]any{"incremental": map[string]any{"prompt": prompt, "completion": completion}}}}}
}

// cumulativeTokens reads attributes.ag.metrics.tokens.cumulative.total.
func cumulativeTokens(t *testing.T, p query.Parsed) float64 {
	t.Helper()
	ag, _ := p.Attrs["ag"].(map[string]any)
	m, _ := ag["metrics"].(map[string]any)
	tk, _ := m["tokens"].(map[string]any)
	c, _ := tk["cumulative"].(map[string]any)
	require.NotNil(t, c, "span %s has cumulative tokens: %v", p.SpanID, p.Attrs)
	f, err := toFloat(c["total"])
	require.NoError(t, err)
	return f
}

func toFloat(v any) (float64, error) {
	switch x := v.(type) {
	case float64:
		return x, nil
	case json.Number:
		return x.Float64()
	}
	return 0, fmt.Errorf("%T is not a number", v)
}

func spanIDs(ps []query.Parsed) []string {
	out := []string{}
	for _, p := range ps {
		out = append(out, p.SpanID)
	}
	return out
}

func filter(conds ...map[string]any) json.RawMessage {
	list := make([]any, len(conds))
	for i, c := range conds {
		list[i] = c
	}
	raw, _ := json.Marshal(map[string]any{"conditions": list})
	return raw
}

func cond(field, op string, value any) map[string]any {
	return map[string]any{"field": field, "operator": op, "value": value}
}

func (w *world) query(t *testing.T, req query.Request) query.Result {
	t.Helper()
	res, err := w.svc.Query(context.Background(), w.project, req)
	require.NoError(t, err)
	return res
}

// base is a start time an hour ago, whole seconds.
func base() time.Time { return time.Now().Add(-time.Hour).UTC().Truncate(time.Second) }

// ---- reads by id

func testTracesReturnsWholeTraces(t *testing.T, w *world) {
	b := base()
	w.ingest(t, time.Now(),
		span(tid(1), sid(2), sid(1), "child-late", b.Add(2*time.Second), tokens(3, 4)),
		span(tid(1), sid(1), "", "root", b, nil),
		span(tid(1), sid(3), sid(1), "child-early", b.Add(time.Second), tokens(10, 5)),
		span(tid(2), sid(4), "", "other", b, nil))

	got, err := w.svc.Traces(context.Background(), w.project, []string{tid(1)})
	require.NoError(t, err)
	assert.Equal(t, []string{sid(1), sid(3), sid(2)}, spanIDs(got), "the trace's spans, by start")
	assert.Equal(t, 22.0, cumulativeTokens(t, got[0]), "the root's cumulative metrics cover the whole trace")

	got, err = w.svc.Traces(context.Background(), w.project, []string{tid(9)})
	require.NoError(t, err)
	assert.Empty(t, got, "an unknown trace is no spans, not an error")
}

func testSpansSentApartAreRolledUpTogether(t *testing.T, w *world) {
	b := base()
	w.ingest(t, time.Now(), span(tid(1), sid(1), "", "root", b, tokens(1, 1)))
	w.ingest(t, time.Now(), span(tid(1), sid(2), sid(1), "llm", b.Add(time.Second), tokens(10, 5)))

	got, err := w.svc.Traces(context.Background(), w.project, []string{tid(1)})
	require.NoError(t, err)
	require.Len(t, got, 2)
	assert.Equal(t, 17.0, cumulativeTokens(t, got[0]), "rolled up over the stored trace, not one request")

	// A span read alone is rolled up over its whole trace too.
	res := w.query(t, query.Request{Focus: "span", Filter: filter(cond("span_name", "is", "root"))})
	require.Len(t, res.Spans, 1)
	assert.Equal(t, 17.0, cumulativeTokens(t, res.Spans[0]))
}

func testSpansSelectsByIDs(t *testing.T, w *world) {
	b := base()
	w.ingest(t, time.Now(),
		span(tid(1), sid(1), "", "root", b, nil),
		span(tid(1), sid(2), sid(1), "child", b.Add(time.Second), nil),
		span(tid(2), sid(3), "", "root2", b, nil))
	ctx := context.Background()
	got, err := w.svc.Spans(ctx, w.project, []string{tid(1)}, []string{sid(2)})
	require.NoError(t, err)
	assert.Equal(t, []string{sid(2)}, spanIDs(got))
	got, err = w.svc.Spans(ctx, w.project, []string{tid(1)}, nil)
	require.NoError(t, err)
	assert.Equal(t, []string{sid(1), sid(2)}, spanIDs(got), "no span ids: the whole trace")
	got, err = w.svc.Spans(ctx, w.project, []string{tid(2)}, []string{sid(2)})
	require.NoError(t, err)
	assert.Empty(t, got, "both ids must match")
}

// ---- filtered queries

func testQueryFiltersSpans(t *testing.T, w *world) {
	b := base()
	w.ingest(t, time.Now(),
		span(tid(1), sid(1), "", "root", b, map[string]any{"env": "prod", "ag.session.id": "s1"}),
		span(tid(1), sid(2), sid(1), "llm", b.Add(time.Second), map[string]any{"env": "dev"}),
		span(tid(2), sid(3), "", "root", b.Add(2*time.Second), map[string]any{"env": "prod"}))
	for _, c := range []struct {
		name   string
		filter json.RawMessage
		want   []string
	}{
		{"span_name is", filter(cond("span_name", "is", "llm")), []string{sid(2)}},
		{"attribute is", filter(map[string]any{"field": "attributes", "key": "env", "operator": "is", "value": "prod"}), []string{sid(3), sid(1)}},
		{"parent_id is", filter(cond("parent_id", "is", sid(1))), []string{sid(2)}},
		{"session_id", filter(cond("session_id", "is", "s1")), []string{sid(1)}},
		{"span_name startswith and attribute", filter(cond("span_name", "startswith", "ro"), map[string]any{"field": "attributes", "key": "env", "operator": "is", "value": "prod"}), []string{sid(3), sid(1)}},
		{"no match", filter(cond("span_name", "is", "nothing")), []string{}},
	} {
		res := w.query(t, query.Request{Focus: "span", Filter: c.filter, Windowing: &query.Windowing{}})
		assert.Equal(t, c.want, spanIDs(res.Spans), c.name+": newest first")
	}

	// The trace_id fast path returns the trace's spans (by start).
	res := w.query(t, query.Request{Focus: "span", Filter: filter(cond("trace_id", "is", tid(1)))})
	assert.Equal(t, []string{sid(1), sid(2)}, spanIDs(res.Spans))
	// Focus trace: all spans of the traces that match.
	res = w.query(t, query.Request{Focus: "trace", Filter: filter(cond("span_name", "is", "llm"))})
	assert.Equal(t, []string{sid(1), sid(2)}, spanIDs(res.Spans), "the whole trace of the matching span")
}

func testQueryRefusesBadRequests(t *testing.T, w *world) {
	ctx := context.Background()
	for _, c := range []struct {
		name string
		req  query.Request
	}{
		{"unknown field", query.Request{Focus: "span", Filter: filter(cond("nope", "is", "x"))}},
		{"operator of another family", query.Request{Focus: "span", Filter: filter(cond("trace_id", "contains", "x"))}},
		{"limit over QueryMaxSpans", query.Request{Focus: "span", Windowing: &query.Windowing{Limit: maxSpans + 1}}},
		{"span cursor that is no span id", query.Request{Focus: "span", Windowing: &query.Windowing{Next: "zz", Newest: ptr(time.Now())}}},
		{"span cursor without its edge", query.Request{Focus: "span", Windowing: &query.Windowing{Next: sid(1)}}},
	} {
		_, err := w.svc.Query(ctx, w.project, c.req)
		require.Error(t, err, c.name)
		kind := errs.KindOf(err)
		assert.True(t, kind == errs.Invalid || kind == errs.Unprocessable, "%s: a client error, got %v", c.name, err)
	}
	_, err := w.svc.Query(ctx, w.project, query.Request{Focus: "span", Windowing: &query.Windowing{Limit: maxSpans + 1}})
	assert.Contains(t, err.Error(), "TRACING_QUERY_MAX_SPANS", "the limit is named")
}

func ptr[T any](v T) *T { return &v }

// next parses a page's next windowing as a client sends it back.
func next(t *testing.T, raw *query.RawWindowing) *query.Windowing {
	t.Helper()
	b, err := json.Marshal(raw)
	require.NoError(t, err)
	var back query.RawWindowing
	require.NoError(t, json.Unmarshal(b, &back))
	w, err := back.Parse("windowing")
	require.NoError(t, err)
	return w
}

// testSpanWindowingPages: pages of a limit, newest first (or oldest first
// when ascending), each with the next page's windowing while full; the
// pages together are every span once, spans sharing a start included.
func testSpanWindowingPages(t *testing.T, w *world) {
	b := base()
	var spans []map[string]any
	for i := range 5 {
		start := b.Add(time.Duration(i) * time.Second)
		if i == 3 {
			start = b.Add(2 * time.Second) // two spans share a start: the cursor breaks the tie by id
		}
		spans = append(spans, span(tid(i), sid(i), "", "s", start, nil))
	}
	w.ingest(t, time.Now(), spans...)

	collect := func(order string) []string {
		var all []string
		win := &query.Windowing{Limit: 2, Order: order}
		for range 5 {
			res := w.query(t, query.Request{Focus: "span", Windowing: win})
			all = append(all, spanIDs(res.Spans)...)
			if res.Next == nil {
				return all
			}
			assert.Len(t, res.Spans, 2, "only a full page has a next one")
			win = next(t, res.Next)
		}
		t.Fatal("paging did not end")
		return nil
	}
	assert.Equal(t, []string{sid(4), sid(3), sid(2), sid(1), sid(0)}, collect(""), "descending by (start, span id)")
	assert.Equal(t, []string{sid(0), sid(1), sid(2), sid(3), sid(4)}, collect("ascending"))

	oldest, newest := b.Add(time.Second), b.Add(2*time.Second)
	res := w.query(t, query.Request{Focus: "span", Windowing: &query.Windowing{Oldest: &oldest, Newest: &newest}})
	assert.Equal(t, []string{sid(1)}, spanIDs(res.Spans), "oldest is inclusive, newest the exclusive edge of a descending page")
	res = w.query(t, query.Request{Focus: "span", Windowing: &query.Windowing{Oldest: &oldest, Newest: &newest, Order: "ascending"}})
	assert.Equal(t, []string{sid(2), sid(3)}, spanIDs(res.Spans), "newest is inclusive, oldest the exclusive edge of an ascending page")
}

// testTraceFocusPages: with focus trace a page is a number of traces, by
// their latest matching start; each comes whole.
func testTraceFocusPages(t *testing.T, w *world) {
	b := base()
	var spans []map[string]any
	for i := range 3 {
		start := b.Add(time.Duration(i) * time.Minute)
		spans = append(spans, span(tid(i), sid(10*i), "", "root", start, nil),
			span(tid(i), sid(10*i+1), sid(10*i), "child", start.Add(time.Second), nil))
	}
	w.ingest(t, time.Now(), spans...)
	win := &query.Windowing{Limit: 2}
	res := w.query(t, query.Request{Focus: "trace", Windowing: win})
	assert.Equal(t, []string{sid(20), sid(21), sid(10), sid(11)}, spanIDs(res.Spans), "the two newest traces, each whole, by start")
	require.NotNil(t, res.Next)
	res = w.query(t, query.Request{Focus: "trace", Windowing: next(t, res.Next)})
	assert.Equal(t, []string{sid(0), sid(1)}, spanIDs(res.Spans))
	assert.Nil(t, res.Next, "a page that is not full ends the paging")
}

// testAtMostQueryMaxSpans: without a limit, a query returns at most
// QueryMaxSpans spans, by any path.
func testAtMostQueryMaxSpans(t *testing.T, w *world) {
	b := base()
	var spans []map[string]any
	for i := range maxSpans + 3 {
		parent := ""
		if i > 0 {
			parent = sid(0)
		}
		spans = append(spans, span(tid(1), sid(i), parent, "s", b.Add(time.Duration(i)*time.Second), nil))
	}
	w.ingest(t, time.Now(), spans...)
	res := w.query(t, query.Request{Focus: "span"})
	assert.Len(t, res.Spans, maxSpans, "no windowing")
	res = w.query(t, query.Request{Focus: "span", Filter: filter(cond("span_name", "is", "s")), Windowing: &query.Windowing{}})
	assert.Len(t, res.Spans, maxSpans, "a filter and a windowing without limit")
	res = w.query(t, query.Request{Focus: "span", Filter: filter(cond("trace_id", "is", tid(1)))})
	assert.Len(t, res.Spans, maxSpans, "the trace_id fast path")
	got, err := w.svc.Spans(context.Background(), w.project, []string{tid(1)}, nil)
	require.NoError(t, err)
	assert.Len(t, got, maxSpans, "Spans")
}

// ---- versions

func testTombstonesHideSpans(t *testing.T, w *world) {
	b := base()
	w.ingest(t, time.Now(),
		span(tid(1), sid(1), "", "root", b, map[string]any{"ag.session.id": "s-gone"}),
		span(tid(1), sid(2), sid(1), "child", b.Add(time.Second), nil),
		span(tid(2), sid(3), "", "kept", b, nil))
	ctx := context.Background()
	all, err := w.svc.Traces(ctx, w.project, []string{tid(1)})
	require.NoError(t, err)
	require.Len(t, all, 2)
	w.tombstone(t, all...)

	got, err := w.svc.Traces(ctx, w.project, []string{tid(1)})
	require.NoError(t, err)
	assert.Empty(t, got, "Traces")
	got, err = w.svc.Spans(ctx, w.project, []string{tid(1)}, nil)
	require.NoError(t, err)
	assert.Empty(t, got, "Spans")
	res := w.query(t, query.Request{Focus: "span", Windowing: &query.Windowing{}})
	assert.Equal(t, []string{sid(3)}, spanIDs(res.Spans), "Query, unmerged first phase")
	res = w.query(t, query.Request{Focus: "span", Filter: filter(cond("span_name", "is", "root"))})
	assert.Empty(t, res.Spans, "Query with a filter")
	res = w.query(t, query.Request{Focus: "trace"})
	assert.Equal(t, []string{sid(3)}, spanIDs(res.Spans), "Query by trace")
	sessions, _, err := w.svc.Distinct(ctx, w.project, "session_id", false, nil)
	require.NoError(t, err)
	assert.Empty(t, sessions, "Distinct")
}

func testReIngestReplaces(t *testing.T, w *world) {
	b := base()
	first := time.Now().Add(-time.Minute)
	w.ingest(t, first, span(tid(1), sid(1), "", "old-name", b, map[string]any{"v": "1"}))
	w.ingest(t, first.Add(30*time.Second), span(tid(1), sid(1), "", "new-name", b, map[string]any{"v": "2"}))
	// A redelivery of the first request (same version) changes nothing.
	w.ingest(t, first, span(tid(1), sid(1), "", "old-name", b, map[string]any{"v": "1"}))

	got, err := w.svc.Traces(context.Background(), w.project, []string{tid(1)})
	require.NoError(t, err)
	require.Len(t, got, 1, "one span, whatever its versions")
	assert.Equal(t, "new-name", got[0].SpanName, "the newest version wins")
	res := w.query(t, query.Request{Focus: "span", Filter: filter(cond("span_name", "is", "old-name"))})
	assert.Empty(t, res.Spans, "a filter matching only a replaced version finds nothing")
	res = w.query(t, query.Request{Focus: "span", Filter: filter(cond("span_name", "is", "new-name"))})
	assert.Len(t, res.Spans, 1)
}

// ---- projects

func testProjectsAreIsolated(t *testing.T, w *world) {
	b := base()
	other := &world{conn: w.conn, svc: w.svc, project: uuid.NewString()}
	// The same ids in both projects, different content.
	w.ingest(t, time.Now(), span(tid(1), sid(1), "", "mine", b, map[string]any{"ag.session.id": "s-mine", "ag.user.id": "u-mine"}))
	other.ingest(t, time.Now(), span(tid(1), sid(1), "", "theirs", b, map[string]any{"ag.session.id": "s-theirs"}),
		span(tid(2), sid(2), "", "theirs-only", b, nil))
	ctx := context.Background()

	got, err := w.svc.Traces(ctx, w.project, []string{tid(1), tid(2)})
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, "mine", got[0].SpanName)
	got, err = w.svc.Spans(ctx, w.project, []string{tid(2)}, nil)
	require.NoError(t, err)
	assert.Empty(t, got)
	res := w.query(t, query.Request{Focus: "span"})
	assert.Equal(t, []string{sid(1)}, spanIDs(res.Spans))
	assert.Equal(t, "mine", res.Spans[0].SpanName)
	res = w.query(t, query.Request{Focus: "trace", Filter: filter(cond("span_name", "startswith", "theirs"))})
	assert.Empty(t, res.Spans)
	sessions, _, err := w.svc.Distinct(ctx, w.project, "session_id", false, nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"s-mine"}, sessions)
	a, err := w.svc.Analytics(ctx, w.project, query.AnalyticsRequest{Specs: []query.MetricSpec{{Type: "string", Path: "span_name"}}})
	require.NoError(t, err)
	require.Len(t, a.Buckets, 1)
	assert.Equal(t, 1, a.Buckets[0].Metrics["span_name"].(map[string]any)["count"])

	// A tombstone written in one project hides nothing in the other.
	other.tombstone(t, query.Parsed{Row: query.Row{TraceID: tid(1), SpanID: sid(1), StartUS: b.UnixMicro()}})
	got, err = w.svc.Traces(ctx, w.project, []string{tid(1)})
	require.NoError(t, err)
	assert.Len(t, got, 1)
}

func testDistinctSessionsAndUsers(t *testing.T, w *world) {
	b := base()
	w.ingest(t, time.Now(),
		span(tid(1), sid(1), "", "a", b, map[string]any{"ag.session.id": "s1", "ag.user.id": "u1"}),
		span(tid(2), sid(2), "", "b", b.Add(time.Minute), map[string]any{"ag.session.id": "s2", "ag.user.id": "u1"}),
		span(tid(3), sid(3), "", "c", b.Add(2*time.Minute), map[string]any{"ag.session.id": "s1"}),
		span(tid(4), sid(4), "", "d", b.Add(3*time.Minute), nil))
	ctx := context.Background()
	sessions, nextW, err := w.svc.Distinct(ctx, w.project, "session_id", false, nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"s2", "s1"}, sessions, "by first start, newest first; spans without one left out")
	assert.Nil(t, nextW)
	sessions, _, err = w.svc.Distinct(ctx, w.project, "session_id", true, nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"s1", "s2"}, sessions, "realtime: by last start")
	users, _, err := w.svc.Distinct(ctx, w.project, "user_id", false, nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"u1"}, users)
	page, nextW, err := w.svc.Distinct(ctx, w.project, "session_id", false, &query.Windowing{Limit: 1})
	require.NoError(t, err)
	assert.Equal(t, []string{"s2"}, page)
	require.NotNil(t, nextW, "a full page has a next one")
	page, _, err = w.svc.Distinct(ctx, w.project, "session_id", false, next(t, nextW))
	require.NoError(t, err)
	assert.Equal(t, []string{"s1"}, page)
}

// testAnalyticsBucketsRootSpansByIngestTime: analytics counts root spans
// only, in buckets of the interval by when they were received, with each
// spec's statistics.
func testAnalyticsBuckets(t *testing.T, w *world) {
	hour := time.Now().UTC().Truncate(time.Hour).Add(-3 * time.Hour)
	b := base()
	w.ingest(t, hour.Add(10*time.Minute),
		span(tid(1), sid(1), "", "root", b, map[string]any{"score": 1}),
		span(tid(1), sid(2), sid(1), "child", b.Add(time.Second), map[string]any{"score": 100}))
	w.ingest(t, hour.Add(20*time.Minute), span(tid(2), sid(3), "", "root", b, map[string]any{"score": 3}))
	w.ingest(t, hour.Add(2*time.Hour+5*time.Minute), span(tid(3), sid(4), "", "other", b, map[string]any{"score": 5}))

	oldest, newest := hour, hour.Add(3*time.Hour)
	res, err := w.svc.Analytics(context.Background(), w.project, query.AnalyticsRequest{Oldest: &oldest, Newest: &newest, Interval: 60,
		Specs: []query.MetricSpec{{Type: "numeric/continuous", Path: "attributes.score"}, {Type: "categorical/single", Path: "span_name"}}})
	require.NoError(t, err)
	assert.Equal(t, 60, res.Interval)
	require.Len(t, res.Buckets, 2, "empty buckets are left out")
	first, last := res.Buckets[0], res.Buckets[1]
	assert.True(t, hour.Equal(first.Timestamp), "%v", first.Timestamp)
	assert.True(t, hour.Add(2*time.Hour).Equal(last.Timestamp), "%v", last.Timestamp)

	score := first.Metrics["attributes.score"].(map[string]any)
	assert.Equal(t, 2, score["count"], "root spans only: the child is not counted")
	assert.Equal(t, 4.0, score["sum"])
	assert.Equal(t, 1.0, score["min"])
	assert.Equal(t, 3.0, score["max"])
	names := first.Metrics["span_name"].(map[string]any)
	assert.Equal(t, 1, names["uniq"])
	assert.Equal(t, 5.0, last.Metrics["attributes.score"].(map[string]any)["sum"])

	// A filter narrows the spans counted.
	res, err = w.svc.Analytics(context.Background(), w.project, query.AnalyticsRequest{Oldest: &oldest, Newest: &newest,
		Filter: filter(cond("span_name", "is", "other")), Specs: []query.MetricSpec{{Type: "numeric/continuous", Path: "attributes.score"}}})
	require.NoError(t, err)
	require.Len(t, res.Buckets, 1, "interval 0: one bucket over the window")
	assert.Equal(t, 180, res.Buckets[0].Interval)
	assert.Equal(t, 1, res.Buckets[0].Metrics["attributes.score"].(map[string]any)["count"])

	// Spans received outside the window are not counted.
	later := hour.Add(time.Hour)
	res, err = w.svc.Analytics(context.Background(), w.project, query.AnalyticsRequest{Oldest: &later, Newest: &newest, Interval: 60,
		Specs: []query.MetricSpec{{Type: "numeric/continuous", Path: "attributes.score"}}})
	require.NoError(t, err)
	require.Len(t, res.Buckets, 1)
	assert.Equal(t, 5.0, res.Buckets[0].Metrics["attributes.score"].(map[string]any)["sum"])
}

// outputs is a root's attributes with ag.data.outputs.
func outputs(o map[string]any) map[string]any {
	return map[string]any{"ag": map[string]any{"data": map[string]any{"outputs": o}}}
}

func testGroups(t *testing.T, w *world) {
	b := base()
	// Three evaluator traces; t1's child has a score that must not count
	// (roots only) and tokens that must roll up into t1's root.
	w.ingest(t, time.Now(),
		span(tid(1), sid(1), "", "eval", b, outputs(map[string]any{"score": 1, "success": true, "label": "good"})),
		span(tid(1), sid(2), sid(1), "llm", b.Add(time.Second), map[string]any{"ag": map[string]any{
			"data":    map[string]any{"outputs": map[string]any{"score": 100}},
			"metrics": map[string]any{"tokens": map[string]any{"incremental": map[string]any{"prompt": 10, "completion": 5, "total": 15}}}}}),
		span(tid(2), sid(3), "", "eval", b, outputs(map[string]any{"score": 3, "success": false, "label": "bad"})),
		span(tid(3), sid(4), "", "eval", b, outputs(map[string]any{"score": 8, "success": true, "label": "good"})))
	// A failed evaluator: an exception event and no outputs.
	failed := span(tid(5), sid(6), "", "eval", b, nil)
	failed["events"] = []any{map[string]any{"name": "exception", "timestamp": b.Format(time.RFC3339Nano), "attributes": map[string]any{"message": "boom"}}}
	w.ingest(t, time.Now(), failed)
	// A deleted trace is not counted.
	w.ingest(t, time.Now(), span(tid(4), sid(5), "", "eval", b, outputs(map[string]any{"score": 1000})))
	gone, err := w.svc.Traces(context.Background(), w.project, []string{tid(4)})
	require.NoError(t, err)
	w.tombstone(t, gone...)

	specs := []query.MetricSpec{
		{Type: "numeric/continuous", Path: "attributes.ag.data.outputs.score"},
		{Type: "binary", Path: "attributes.ag.data.outputs.success"},
		{Type: "categorical/single", Path: "attributes.ag.data.outputs.label"},
		{Type: "numeric/continuous", Path: "attributes.ag.metrics.tokens.cumulative.total"},
	}
	got, err := w.svc.Groups(context.Background(), w.project, query.GroupsRequest{Specs: specs, Groups: map[string][]string{
		"all":     {tid(1), tid(2), tid(3), tid(4)},
		"pair":    {tid(2), strings.ToUpper(tid(3)), tid(3)}, // a trace listed twice counts twice
		"missing": {tid(9)},
	}})
	require.NoError(t, err)
	require.Len(t, got, 3)

	all := got["all"]
	assert.Equal(t, 3, all.Roots, "t4 is deleted")
	score := all.Metrics["attributes.ag.data.outputs.score"].(map[string]any)
	assert.Equal(t, 3, score["count"], "roots only: the child's 100 is not counted")
	assert.Equal(t, 12.0, score["sum"])
	assert.Equal(t, 4.0, score["mean"])
	assert.Equal(t, 1.0, score["min"])
	assert.Equal(t, 8.0, score["max"])
	assert.Equal(t, 3.0, score["pcts"].(map[string]float64)["p50.00"])
	assert.Equal(t, 2.0, score["pcts"].(map[string]float64)["p25.00"], "linear interpolation between 1 and 3")
	success := all.Metrics["attributes.ag.data.outputs.success"].(map[string]any)
	assert.Equal(t, 3, success["count"])
	assert.Equal(t, []map[string]any{{"value": true, "count": 2, "density": 2.0 / 3}, {"value": false, "count": 1, "density": 1.0 / 3}}, success["freq"])
	label := all.Metrics["attributes.ag.data.outputs.label"].(map[string]any)
	assert.Equal(t, []map[string]any{{"value": "good", "count": 2, "density": 2.0 / 3}, {"value": "bad", "count": 1, "density": 1.0 / 3}}, label["freq"])
	tok := all.Metrics["attributes.ag.metrics.tokens.cumulative.total"].(map[string]any)
	assert.Equal(t, 1, tok["count"], "only t1 has tokens")
	assert.Equal(t, 15.0, tok["sum"], "rolled up from the child")

	pair := got["pair"]
	assert.Equal(t, 3, pair.Roots)
	assert.Equal(t, 19.0, pair.Metrics["attributes.ag.data.outputs.score"].(map[string]any)["sum"], "3 + 8 + 8")

	missing := got["missing"]
	assert.Equal(t, 0, missing.Roots, "a trace not stored (yet) has no root")
	assert.Equal(t, 0, missing.Metrics["attributes.ag.data.outputs.score"].(map[string]any)["count"])

	// on_error: the failed trace counts with the given values where it
	// has none; a trace without an exception that lacks a value still
	// does not count.
	w.ingest(t, time.Now(), span(tid(6), sid(7), "", "eval", b, outputs(map[string]any{"label": "good"})))
	got, err = w.svc.Groups(context.Background(), w.project, query.GroupsRequest{Specs: []query.MetricSpec{
		{Type: "numeric/continuous", Path: "attributes.ag.data.outputs.score", OnError: 0.0},
		{Type: "binary", Path: "attributes.ag.data.outputs.success", OnError: false},
		{Type: "categorical/single", Path: "attributes.ag.data.outputs.label"},
	}, Groups: map[string][]string{"g": {tid(1), tid(2), tid(3), tid(5), tid(6)}}})
	require.NoError(t, err)
	g := got["g"]
	assert.Equal(t, 5, g.Roots)
	score = g.Metrics["attributes.ag.data.outputs.score"].(map[string]any)
	assert.Equal(t, 4, score["count"], "1, 3, 8 and the failure's 0; t6 has no score")
	assert.Equal(t, 12.0, score["sum"])
	assert.Equal(t, 3.0, score["mean"])
	assert.Equal(t, 0.0, score["min"])
	assert.Equal(t, 2.0, score["pcts"].(map[string]float64)["p50.00"], "median of 0, 1, 3, 8")
	success = g.Metrics["attributes.ag.data.outputs.success"].(map[string]any)
	assert.Equal(t, []map[string]any{{"value": false, "count": 2, "density": 0.5}, {"value": true, "count": 2, "density": 0.5}}, success["freq"])
	label = g.Metrics["attributes.ag.data.outputs.label"].(map[string]any)
	assert.Equal(t, 4, label["count"], "t1, t2, t3, t6; no on_error: the failure has no label")

	// No specs: the defaults.
	got, err = w.svc.Groups(context.Background(), w.project, query.GroupsRequest{Groups: map[string][]string{"g": {tid(1)}}})
	require.NoError(t, err)
	assert.Contains(t, got["g"].Metrics, "attributes.ag.metrics.duration.cumulative")
	assert.Equal(t, 500.0, got["g"].Metrics["attributes.ag.metrics.duration.cumulative"].(map[string]any)["sum"])
}

func testGroupsBounds(t *testing.T, w *world) {
	ctx := context.Background()
	many := make([]string, query.MaxGroupTraces+1)
	for i := range many {
		many[i] = fmt.Sprintf("%032x", i+1)
	}
	for _, tc := range []struct {
		name string
		req  query.GroupsRequest
		want string
	}{
		{"no groups", query.GroupsRequest{}, "groups: at least one group"},
		{"bad id", query.GroupsRequest{Groups: map[string][]string{"g": {tid(1), "nope"}}}, "groups.g[1]"},
		{"bad spec", query.GroupsRequest{Specs: []query.MetricSpec{{Type: "size", Path: "attributes.x"}}, Groups: map[string][]string{"g": {tid(1)}}}, "specs[0].type"},
		{"on_error of the wrong type", query.GroupsRequest{Specs: []query.MetricSpec{{Type: "binary", Path: "attributes.x", OnError: 0.0}}, Groups: map[string][]string{"g": {tid(1)}}}, "specs[0].on_error"},
		{"on_error on a string spec", query.GroupsRequest{Specs: []query.MetricSpec{{Type: "string", Path: "attributes.x", OnError: "x"}}, Groups: map[string][]string{"g": {tid(1)}}}, "specs[0].on_error"},
		{"too many traces", query.GroupsRequest{Groups: map[string][]string{"a": many[:5000], "b": many[5000:]}}, "10001 distinct trace ids is over the limit of 10000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := w.svc.Groups(ctx, w.project, tc.req)
			require.Error(t, err)
			assert.Equal(t, errs.Invalid, errs.KindOf(err))
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	// At the limit, the statement runs (and finds nothing).
	got, err := w.svc.Groups(ctx, w.project, query.GroupsRequest{Groups: map[string][]string{"a": many[:query.MaxGroupTraces]}})
	require.NoError(t, err)
	assert.Equal(t, 0, got["a"].Roots)
}
