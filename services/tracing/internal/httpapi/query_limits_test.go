package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/pkg/chspans"
	"github.com/assayhq/assay/pkg/chx"
	"github.com/assayhq/assay/pkg/genproto/spanspb"
)

// insert writes the batches in one ClickHouse insert: their rows land in
// one part, sorted by project, so rows of different projects share
// granules and blocks.
func (s *stack) insert(t *testing.T, batches ...*spanspb.SpanBatch) {
	t.Helper()
	ctx := context.Background()
	conn, err := chx.Open(ctx, chx.Config{URL: s.chURL, DialTimeout: 5 * time.Second})
	require.NoError(t, err)
	defer conn.Close()
	exp := func(string, time.Time) time.Time {
		return time.Now().Add(48 * time.Hour).UTC().Truncate(24 * time.Hour)
	}
	_, err = chspans.Insert(ctx, conn, batches, exp)
	require.NoError(t, err)
}

func batch(project uuid.UUID, spans ...*spanspb.Span) *spanspb.SpanBatch {
	return &spanspb.SpanBatch{ProjectId: project.String(), ReceivedUnixNano: time.Now().UnixNano(), Spans: spans}
}

// wideSpan is a span with n attributes of size bytes each, stored as the
// writer stores them (attrs.0 ... attrs.<n-1> in attr_keys/attr_values).
func wideSpan(tid, sid string, start time.Time, n, size int) *spanspb.Span {
	sp := storedSpan(tid, sid, start, `{"wide":true}`)
	sp.AttrKeys, sp.AttrValues = make([]string, 0, n+1), make([]string, 0, n+1)
	sp.AttrKeys, sp.AttrValues = append(sp.AttrKeys, "ag.type.trace"), append(sp.AttrValues, "invocation")
	for i := 0; i < n; i++ {
		sp.AttrKeys = append(sp.AttrKeys, fmt.Sprintf("attrs.%d", i))
		sp.AttrValues = append(sp.AttrValues, fmt.Sprintf("%06d", i)+strings.Repeat("v", size-6))
	}
	return sp
}

// taggedSpan has the list tags = [x, y, long], long also under copy: the
// writer stores the first copy (copy) as text and the list element as a
// pointer to it.
func taggedSpan(tid, sid string, start time.Time, long string) *spanspb.Span {
	sp := storedSpan(tid, sid, start, `{"copy":"`+long+`","tags":["x","y","`+long+`"]}`)
	sp.AttrKeys = []string{"ag.type.trace", "copy", "tags", "tags.0", "tags.1", "tags.2"}
	sp.AttrValues = []string{"invocation", long, `["x","y","` + long + `"]`, "x", "y", "\uffff\x00" + "2"}
	return sp
}

func inFilter(key string, values ...any) map[string]any {
	return map[string]any{"conditions": []any{map[string]any{"field": "attributes", "key": key, "operator": "in", "value": values}}}
}

// TestOneTenantCannotBreakAnothersQueries: two spans of project A with
// 2,506 and 5,006 attributes (6 MB and 25 MB of values) stored in the same
// part as project B's span made B's attribute filter with "in" answer 503:
// ClickHouse estimated 16–128 GiB for it. B's queries
// now run under a per-query memory limit far below that, and answer.
func TestOneTenantCannotBreakAnothersQueries(t *testing.T) {
	s := newStack(t, func(o *options) { o.noWriter = true; o.queryLimits.MaxMemory = 1 << 30 })
	a := uuid.New()
	start := time.Now().Add(-time.Hour).UTC().Truncate(time.Millisecond)
	long := strings.Repeat("long text ", 40)
	s.insert(t,
		batch(a, wideSpan("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa11", "a000000000000011", start, 2506, 2400),
			wideSpan("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa12", "a000000000000012", start, 5006, 5000)),
		batch(s.project, taggedSpan("bbbbbbbbbbbbbbbbbbbbbbbbbbbbbb11", "b000000000000011", start, long)))

	for _, q := range []struct {
		path string
		body map[string]any
	}{
		{"/api/spans/query", map[string]any{"filtering": inFilter("tags", "y")}},
		{"/api/spans/query", map[string]any{"filtering": inFilter("tags", "y", "x"), "windowing": map[string]any{"limit": 5}}},
		{"/api/spans/query", map[string]any{"filtering": inFilter("tags", long)}},
		{"/api/traces/query", map[string]any{"filtering": inFilter("tags", "x")}},
		{"/api/spans/query", map[string]any{"filtering": map[string]any{"conditions": []any{map[string]any{
			"field": "attributes", "key": "tags", "operator": "in", "value": []any{"x", "y", long}, "options": map[string]any{"all": true}}}}}},
	} {
		t.Run(q.path, func(t *testing.T) {
			r := s.doJSON(t, "POST", q.path, q.body)
			require.Equal(t, http.StatusOK, r.status, string(r.body))
			assert.Equal(t, 1.0, r.json(t)["count"], string(r.body))
		})
	}
	t.Run("no match", func(t *testing.T) {
		r := s.doJSON(t, "POST", "/api/spans/query", map[string]any{"filtering": inFilter("tags", "z", strings.Repeat("other ", 50))})
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		assert.Equal(t, 0.0, r.json(t)["count"])
	})
	t.Run("analytics over a list", func(t *testing.T) {
		r := s.doJSON(t, "POST", "/api/spans/analytics/query", map[string]any{"specs": []any{
			map[string]any{"type": "categorical/multiple", "path": "attributes.tags"}}})
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		buckets := r.json(t)["buckets"].([]any)
		require.Len(t, buckets, 1)
		m := buckets[0].(map[string]any)["metrics"].(map[string]any)["attributes.tags"].(map[string]any)
		var values []any
		for _, f := range m["freq"].([]any) {
			values = append(values, f.(map[string]any)["value"])
		}
		assert.ElementsMatch(t, []any{"x", "y", long}, values, "the long element is read through its pointer")
	})
}

// TestQueryOverItsMemoryLimitIs422: a query that needs more memory than
// TRACING_QUERY_MAX_MEMORY answers 422 naming the limit; another project's
// span queries over the same table still answer. B's id sorts after A's:
// B's reads meet A's part's last granule, which the primary index cannot
// rule out on 18.16.
func TestQueryOverItsMemoryLimitIs422(t *testing.T) {
	s := newStack(t, func(o *options) { o.noWriter = true; o.queryLimits.MaxMemory = 96 << 20 })
	s.project = uuid.MustParse("ffffffff-ffff-4fff-bfff-ffffffffffff")
	a := *s
	a.project = uuid.MustParse("00000000-0000-4000-8000-000000000000")
	start := time.Now().Add(-time.Hour).UTC().Truncate(time.Millisecond)
	// Another start day: another partition, so the projects share no part.
	s.insert(t, batch(a.project, wideSpan("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa21", "a000000000000021", start.Add(-48*time.Hour), 5006, 16000)))
	s.insert(t, batch(s.project, taggedSpan("bbbbbbbbbbbbbbbbbbbbbbbbbbbbbb21", "b000000000000021", start, "short")))

	r := a.doJSON(t, "POST", "/api/spans/query", map[string]any{"filtering": inFilter("attrs", "000001"+strings.Repeat("v", 15994))})
	require.Equal(t, http.StatusUnprocessableEntity, r.status, string(r.body))
	detail := r.json(t)["detail"].(map[string]any)
	assert.Equal(t, "TRACING_QUERY_MAX_MEMORY", detail["limit"])
	assert.Equal(t, float64(96<<20), detail["value"])
	assert.Contains(t, detail["message"], "memory")

	for _, body := range []map[string]any{
		{"filtering": inFilter("tags", "y")},
		{"filtering": inFilter("tags", "y"), "windowing": map[string]any{"limit": 3}},
		{"filtering": map[string]any{"conditions": []any{map[string]any{"field": "attributes", "key": "copy", "value": "short"}}}},
	} {
		r = s.doJSON(t, "POST", "/api/spans/query", body)
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		assert.Equal(t, 1.0, r.json(t)["count"])
	}
	r = s.do(t, "GET", "/api/traces/bbbbbbbbbbbbbbbbbbbbbbbbbbbbbb21", nil, nil)
	require.Equal(t, http.StatusOK, r.status, string(r.body))
	assert.Equal(t, 1.0, r.json(t)["count"])
}

// TestFilterLimits: a filter over one of its limits is a 400 naming the
// limit and the condition, before any SQL runs. A value of ~300 KB used to
// overflow ClickHouse's max_query_size and answer 503 "retry later".
func TestFilterLimits(t *testing.T) {
	s := newStack(t, func(o *options) { o.noWriter = true })
	cond := func(v any) map[string]any {
		return map[string]any{"field": "attributes", "key": "k", "operator": "in", "value": v}
	}
	many := func(n int, v any) []any {
		out := make([]any, n)
		for i := range out {
			out[i] = v
		}
		return out
	}
	nestedGroup := func(depth int) map[string]any {
		f := map[string]any{"field": "span_name", "value": "x"}
		for i := 0; i < depth; i++ {
			f = map[string]any{"conditions": []any{f}}
		}
		return f
	}
	tests := []struct {
		name   string
		filter any
		detail string
	}{
		{"a 300 KB value", map[string]any{"conditions": []any{map[string]any{"field": "span_name", "value": strings.Repeat("x", 300_000)}}},
			"filtering.conditions[0].value: length in bytes 300000 is over the limit of 16384 (TRACING_QUERY_FILTER_MAX_VALUE_BYTES)"},
		{"a long key", map[string]any{"conditions": []any{map[string]any{"field": "attributes", "key": strings.Repeat("k", 2000), "operator": "exists"}}},
			"filtering.conditions[0].key: key length in bytes 2000 is over the limit of 1024 (TRACING_QUERY_FILTER_MAX_KEY_BYTES)"},
		{"a long leaf key", map[string]any{"conditions": []any{map[string]any{"field": "attributes", "key": "k", "value": map[string]any{strings.Repeat("k", 1023): 1}}}},
			"filtering.conditions[0].value: key length in bytes 1025 is over the limit of 1024"},
		{"too many values", map[string]any{"conditions": []any{cond(many(1001, "v"))}},
			"filtering.conditions[0].value[1000]: value count 1001 is over the limit of 1000 (TRACING_QUERY_FILTER_MAX_VALUES)"},
		{"too many bytes", map[string]any{"conditions": []any{cond(many(17, strings.Repeat("v", 16_000)))}},
			"filtering.conditions[0].value[16]: filter size in bytes 272001 is over the limit of 262144 (TRACING_QUERY_FILTER_MAX_BYTES)"},
		{"too many conditions", map[string]any{"conditions": many(51, map[string]any{"field": "span_name", "value": "x"})},
			"filtering.conditions[50]: condition count 51 is over the limit of 50 (TRACING_QUERY_FILTER_MAX_CONDITIONS)"},
		{"too many groups", map[string]any{"conditions": many(51, map[string]any{"conditions": []any{}})},
			"filtering.conditions[50]: condition count 51"},
		{"too many list items", map[string]any{"conditions": []any{map[string]any{"field": "links", "operator": "in",
			"value": many(51, map[string]any{"trace_id": tidA})}}},
			"filtering.conditions[0].value[50]: condition count 51"},
		{"too many long values, all", map[string]any{"conditions": []any{map[string]any{"field": "attributes", "key": "k", "operator": "in",
			"value": many(51, strings.Repeat("v", 300)), "options": map[string]any{"all": true}}}},
			"filtering.conditions[0]: condition count 51"},
		{"too deep", nestedGroup(10),
			"filtering" + strings.Repeat(".conditions[0]", 10) + ": nesting depth 11 is over the limit of 10 (TRACING_QUERY_FILTER_MAX_DEPTH)"},
		{"a value too deep", map[string]any{"conditions": []any{map[string]any{"field": "attributes", "key": "k", "value": nestedGroup(10)}}},
			"nesting depth 11 is over the limit of 10 (TRACING_QUERY_FILTER_MAX_DEPTH)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, path := range []string{"/api/spans/query", "/api/traces/query"} {
				r := s.doJSON(t, "POST", path, map[string]any{"filtering": tt.filter})
				require.Equal(t, http.StatusBadRequest, r.status, string(r.body))
				assert.Contains(t, r.json(t)["detail"], tt.detail)
			}
			r := s.doJSON(t, "POST", "/api/spans/analytics/query", map[string]any{"filter": tt.filter})
			require.Equal(t, http.StatusBadRequest, r.status, string(r.body))
			assert.Contains(t, r.json(t)["detail"], strings.Replace(tt.detail, "filtering", "filter", 1))
		})
	}
	t.Run("too many analytics specs", func(t *testing.T) {
		r := s.doJSON(t, "POST", "/api/spans/analytics/query", map[string]any{"specs": many(51, map[string]any{"type": "string", "path": "span_name"})})
		require.Equal(t, http.StatusBadRequest, r.status, string(r.body))
		assert.Contains(t, r.json(t)["detail"], "specs[50]: condition count 51 is over the limit of 50")
	})

	// The largest filters the limits allow fit ClickHouse's max_query_size
	// (TRACING_QUERY_MAX_QUERY_SIZE) and run: every byte in keys and values
	// that need escaping, in the conditions that name their key or value
	// the most often in the SQL.
	quotes := func(n int) string { return strings.Repeat(`'\`, n/2) }
	numbered := func(n int, f func(i int) any) []any {
		out := make([]any, n)
		for i := range out {
			out[i] = f(i)
		}
		return out
	}
	for name, filter := range map[string]any{
		"long keys, compared": map[string]any{"operator": "or", "conditions": numbered(50, func(i int) any {
			return map[string]any{"field": "attributes", "key": fmt.Sprintf("%02d", i) + quotes(1022), "operator": "btwn", "value": []any{1, 2}}
		})},
		"long keys, list elements": map[string]any{"conditions": numbered(50, func(i int) any {
			return map[string]any{"field": "attributes", "key": fmt.Sprintf("%02d", i) + quotes(1022), "operator": "in", "value": []any{quotes(4000)},
				"options": map[string]any{"all": true}}
		})},
		"long values in lists": map[string]any{"conditions": []any{cond(numbered(16, func(i int) any { return fmt.Sprintf("%02d", i) + quotes(16_000) }))}},
		"many values":          map[string]any{"conditions": []any{cond(numbered(1000, func(i int) any { return fmt.Sprintf("%04d", i) + quotes(258) }))}},
		"many long values, all": map[string]any{"conditions": []any{map[string]any{"field": "attributes", "key": "k", "operator": "in",
			"value": numbered(50, func(i int) any { return fmt.Sprintf("%02d", i) + quotes(5000) }), "options": map[string]any{"all": true}}}},
		"many list items": map[string]any{"conditions": []any{map[string]any{"field": "references", "operator": "in",
			"value": numbered(50, func(i int) any {
				return map[string]any{"id": fmt.Sprint(i), "slug": quotes(2000), "version": quotes(2000), "attributes": map[string]any{"key": quotes(1000)}}
			})}}},
		"long patterns": map[string]any{"operator": "or", "conditions": numbered(16, func(i int) any {
			return map[string]any{"field": "span_name", "operator": "contains", "value": fmt.Sprintf("%02d", i) + strings.Repeat(`%_\'`, 3990)}
		})},
		"many object leaves": map[string]any{"conditions": []any{map[string]any{"field": "attributes", "key": "k", "value": func() map[string]any {
			m := map[string]any{}
			for i := 0; i < 1000; i++ {
				m[fmt.Sprintf("%03d%s", i, quotes(60))] = quotes(60)
			}
			return m
		}()}}},
		"long object leaves": map[string]any{"conditions": []any{map[string]any{"field": "attributes", "key": "k", "value": func() map[string]any {
			m := map[string]any{}
			for i := 0; i < 50; i++ {
				m[fmt.Sprintf("%02d", i)] = quotes(5000)
			}
			return m
		}()}}},
	} {
		t.Run("at the limits: "+name, func(t *testing.T) {
			for _, path := range []string{"/api/spans/query", "/api/traces/query"} {
				r := s.doJSON(t, "POST", path, map[string]any{"filtering": filter, "windowing": map[string]any{"limit": 10}})
				require.Equal(t, http.StatusOK, r.status, "%.2000s", r.body)
			}
		})
	}
}

// TestQueryTextOverMaxQuerySizeIs400: should the SQL text still outgrow
// max_query_size (an operator lowered it below what the filter limits
// allow), the answer is a 400 naming TRACING_QUERY_MAX_QUERY_SIZE, not 503.
func TestQueryTextOverMaxQuerySizeIs400(t *testing.T) {
	s := newStack(t, func(o *options) { o.noWriter = true; o.queryLimits.MaxQuerySize = 4096 })
	r := s.doJSON(t, "POST", "/api/spans/query", map[string]any{"filtering": map[string]any{"conditions": []any{
		map[string]any{"field": "span_name", "value": strings.Repeat("x", 5000)}}}})
	require.Equal(t, http.StatusBadRequest, r.status, string(r.body))
	detail := r.json(t)["detail"].(map[string]any)
	assert.Equal(t, "TRACING_QUERY_MAX_QUERY_SIZE", detail["limit"])
	assert.Equal(t, 4096.0, detail["value"])
}

// TestWindowingIsValidated: windowing values that were silently clamped
// or ignored are 400s naming the field.
func TestWindowingIsValidated(t *testing.T) {
	s := newStack(t, func(o *options) { o.noWriter = true })
	now := time.Now().UTC()
	ts := func(d time.Duration) string { return now.Add(d).Format(time.RFC3339) }
	tests := []struct {
		path   string
		body   map[string]any
		detail string
	}{
		{"/api/spans/query", map[string]any{"windowing": map[string]any{"limit": -1}}, "windowing.limit: limit must be a positive number of items, got -1"},
		{"/api/spans/query", map[string]any{"windowing": map[string]any{"limit": 0}}, "windowing.limit"},
		{"/api/traces/query", map[string]any{"windowing": map[string]any{"limit": -5}}, "windowing.limit"},
		{"/api/spans/query", map[string]any{"windowing": map[string]any{"limit": 10001}}, "windowing.limit: 10001 is over the limit of 10000 (TRACING_QUERY_MAX_SPANS)"},
		{"/api/traces/query", map[string]any{"windowing": map[string]any{"limit": 10001}}, "windowing.limit: 10001 is over the limit of 10000"},
		{"/api/spans/query", map[string]any{"windowing": map[string]any{"next": "not-a-cursor", "newest": ts(0)}}, "windowing.next: the cursor is not a span id"},
		{"/api/traces/query", map[string]any{"windowing": map[string]any{"next": "not-a-cursor"}}, "windowing.next: the cursor is not a trace id"},
		{"/api/spans/query", map[string]any{"windowing": map[string]any{"next": "a000000000000001"}}, "windowing.next: a cursor needs windowing.newest"},
		{"/api/spans/query", map[string]any{"windowing": map[string]any{"next": "a000000000000001", "order": "ascending", "newest": ts(0)}}, "a cursor needs windowing.oldest"},
		{"/api/spans/query", map[string]any{"windowing": map[string]any{"oldest": ts(time.Hour), "newest": ts(0)}}, "windowing.oldest: oldest"},
		{"/api/spans/query", map[string]any{"windowing": map[string]any{"interval": -1}}, "windowing.interval"},
		{"/api/spans/query", map[string]any{"windowing": map[string]any{"rate": 2}}, "windowing.rate"},
		{"/api/spans/query", map[string]any{"windowing": map[string]any{"order": "sideways"}}, "windowing.order"},
		{"/api/spans/query", map[string]any{"windowing": map[string]any{"newest": "yesterday"}}, "windowing.newest"},
		{"/api/simple/traces/query", map[string]any{"windowing": map[string]any{"limit": -1}}, "windowing.limit"},
		{"/api/invocations/query", map[string]any{"windowing": map[string]any{"next": "zz", "newest": ts(0)}}, "windowing.next"},
		{"/api/tracing/sessions/query", map[string]any{"windowing": map[string]any{"limit": 0}}, "windowing.limit"},
		{"/api/spans/users/query", map[string]any{"windowing": map[string]any{"next": "a000000000000001"}}, "windowing.next: this query pages by windowing.newest"},
		{"/api/tracing/spans/query", map[string]any{"limit": -1}, "windowing.limit"},
		{"/api/tracing/spans/query", map[string]any{"limit": "ten"}, "limit"},
		{"/api/tracing/spans/query", map[string]any{"limit": 2.5}, "limit"},
		{"/api/tracing/spans/query", map[string]any{"rate": "half"}, "rate"},
		{"/api/tracing/spans/query", map[string]any{"focus": "span", "next": "nope", "newest": ts(0)}, "windowing.next"},
		{"/api/spans/analytics/query", map[string]any{"oldest": ts(time.Hour), "newest": ts(0)}, "windowing.oldest"},
		{"/api/spans/analytics/query", map[string]any{"rate": "half"}, "rate"},
	}
	for i, tt := range tests {
		t.Run(fmt.Sprint(i, tt.path), func(t *testing.T) {
			r := s.doJSON(t, "POST", tt.path, tt.body)
			require.Equal(t, http.StatusBadRequest, r.status, string(r.body))
			assert.Contains(t, fmt.Sprint(r.json(t)["detail"]), tt.detail)
		})
	}
	// Valid windowing still answers: a cursor with its edge, in either form.
	for _, w := range []map[string]any{
		{"limit": 1},
		{"limit": 10000},
		{"next": "a000000000000001", "newest": ts(0), "limit": 2},
		{"next": "00000000-0000-0000-a000-000000000001", "newest": ts(0)},
		{"next": "a000000000000001", "oldest": ts(-time.Hour), "order": "ascending"},
		{"oldest": ts(-time.Hour), "newest": ts(-time.Hour)},
	} {
		r := s.doJSON(t, "POST", "/api/spans/query", map[string]any{"windowing": w})
		require.Equal(t, http.StatusOK, r.status, "%v: %s", w, r.body)
	}
	r := s.doJSON(t, "POST", "/api/traces/query", map[string]any{"windowing": map[string]any{"next": "0af7651916cd43dd8448eb211c80319c", "limit": 3}})
	require.Equal(t, http.StatusOK, r.status, string(r.body))
}

// TestEmptyTimeListMatchesNothing: "start_time in []" bound an argument
// that had no placeholder, so every later placeholder took the argument
// of the one before: a wrong result, or (here) a type error and 503. Found
// by FuzzCompile (its corpus keeps the input).
func TestEmptyTimeListMatchesNothing(t *testing.T) {
	s := newStack(t, func(o *options) { o.noWriter = true })
	s.insert(t, batch(s.project, storedSpan(tidA, "a000000000000001", time.Now().Add(-time.Hour), `{}`)))
	for op, want := range map[string]float64{"in": 1, "not_in": 1} {
		r := s.doJSON(t, "POST", "/api/spans/query", map[string]any{"filtering": map[string]any{"operator": "or", "conditions": []any{
			map[string]any{"field": "start_time", "operator": op, "value": []any{}},
			map[string]any{"field": "span_name", "value": "root"}}}})
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		assert.Equal(t, want, r.json(t)["count"], op)
	}
	r := s.doJSON(t, "POST", "/api/spans/query", map[string]any{"filtering": map[string]any{"conditions": []any{
		map[string]any{"field": "start_time", "operator": "in", "value": []any{}},
		map[string]any{"field": "span_name", "value": "root"}}}})
	require.Equal(t, http.StatusOK, r.status, string(r.body))
	assert.Equal(t, 0.0, r.json(t)["count"])
}
