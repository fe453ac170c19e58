package httpapi_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/assayhq/assay/pkg/chspans"
)

const (
	tidA = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa1"
	tidB = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb2"
)

// seed ingests two traces in the flat and the nested form and waits until
// all five spans are stored.
func seed(t *testing.T, s *stack) time.Time {
	t.Helper()
	base := time.Now().Add(-time.Hour).UTC().Truncate(time.Second)
	ts := func(d time.Duration) string { return base.Add(d).Format(time.RFC3339Nano) }
	flat := map[string]any{"spans": []any{
		map[string]any{"trace_id": tidA, "span_id": "a000000000000001", "span_name": "root", "start_time": ts(0), "end_time": ts(time.Second),
			"attributes": map[string]any{"ag.type.span": "workflow", "ag.session.id": "sess-1", "ag.user.id": "user-1",
				"ag.data.inputs": map[string]any{"country": "France"}, "ag.meta.tags": []any{"x", "y"}, "env": "prod"}},
		map[string]any{"trace_id": tidA, "span_id": "a000000000000002", "parent_id": "a000000000000001", "span_name": "llm",
			"start_time": base.Add(100 * time.Millisecond).UnixMicro(), "end_time": base.Add(900 * time.Millisecond).UnixMilli(),
			"status_code": "STATUS_CODE_ERROR",
			"attributes": map[string]any{"ag": map[string]any{"type": map[string]any{"span": "chat"},
				"metrics": map[string]any{"tokens": map[string]any{"incremental": map[string]any{"prompt": 10, "completion": 5}}},
				"meta":    map[string]any{"response": map[string]any{"model": "gpt-4o"}}, "bogus": 1}}},
		"not a span",
	}}
	r := s.doJSON(t, "POST", "/api/tracing/spans/ingest", flat)
	require.Equal(t, http.StatusAccepted, r.status, string(r.body))
	body := r.json(t)
	assert.Equal(t, 2.0, body["count"])
	assert.Len(t, body["rejected"], 1)

	nested := map[string]any{"traces": map[string]any{tidB: map[string]any{"spans": map[string]any{
		"annotate": map[string]any{"span_id": "b000000000000001", "start_time": ts(2 * time.Second), "end_time": ts(3 * time.Second),
			"links":      []any{map[string]any{"trace_id": tidA, "span_id": "a000000000000001", "attributes": map[string]any{"key": "invocation"}}},
			"attributes": map[string]any{"ag": map[string]any{"references": map[string]any{"evaluator": map[string]any{"slug": "exact-match", "id": "0193e8a0-0000-7000-8000-000000000001"}}}},
			"spans": map[string]any{"step": []any{
				map[string]any{"span_id": "b000000000000002", "parent_id": "b000000000000001", "start_time": ts(2100 * time.Millisecond)},
				map[string]any{"span_id": "b000000000000003", "parent_id": "b000000000000001", "start_time": ts(2200 * time.Millisecond)},
			}},
		},
	}}}}
	r = s.doJSON(t, "POST", "/api/tracing/spans/ingest", nested)
	require.Equal(t, http.StatusAccepted, r.status, string(r.body))
	assert.Equal(t, 3.0, r.json(t)["count"])
	eventually(t, "five spans", func() bool {
		r := s.do(t, "GET", "/api/spans/?trace_ids="+tidA+","+tidB, nil, nil)
		return r.json(t)["count"] == 5.0
	})
	return base
}

func TestNativeIngestAndQueries(t *testing.T) {
	s := newStack(t)
	base := seed(t, s)

	t.Run("trace tree with roll-up and parked fields", func(t *testing.T) {
		r := s.do(t, "GET", "/api/tracing/traces/"+tidA, nil, nil)
		require.Equal(t, 200, r.status)
		root := r.json(t)["traces"].(map[string]any)[tidA].(map[string]any)["spans"].(map[string]any)["root"].(map[string]any)
		assert.Equal(t, "workflow", root["span_type"])
		assert.Equal(t, "invocation", root["trace_type"])
		assert.Equal(t, "sess-1", root["session_id"])
		ag := root["attributes"].(map[string]any)["ag"].(map[string]any)
		assert.Equal(t, map[string]any{"prompt": 10.0, "completion": 5.0, "total": 15.0}, ag["metrics"].(map[string]any)["tokens"].(map[string]any)["cumulative"])
		assert.Equal(t, "prod", root["attributes"].(map[string]any)["env"])
		llm := root["spans"].(map[string]any)["llm"].(map[string]any)
		lag := llm["attributes"].(map[string]any)["ag"].(map[string]any)
		assert.Equal(t, map[string]any{"bogus": 1.0}, lag["unsupported"])
		assert.Equal(t, 1.0, lag["metrics"].(map[string]any)["errors"].(map[string]any)["incremental"])
	})

	t.Run("nested siblings become a list; links make an annotation", func(t *testing.T) {
		r := s.do(t, "GET", "/api/traces/"+tidB, nil, nil)
		tr := r.json(t)["trace"].(map[string]any)
		ann := tr["spans"].(map[string]any)["annotate"].(map[string]any)
		assert.Equal(t, "annotation", ann["trace_type"])
		assert.Len(t, ann["spans"].(map[string]any)["step"], 2)
		assert.Equal(t, []any{map[string]any{"id": "0193e8a0-0000-7000-8000-000000000001", "slug": "exact-match", "attributes": map[string]any{"key": "evaluator"}}}, ann["references"])
		assert.Len(t, ann["hashes"], 1)
	})

	queries := []struct {
		name   string
		filter any
		want   int
	}{
		{"attribute is", map[string]any{"conditions": []any{map[string]any{"field": "attributes", "key": "ag.data.inputs.country", "value": "France"}}}, 1},
		{"attribute dict containment", map[string]any{"conditions": []any{map[string]any{"field": "attributes", "key": "ag.data.inputs", "value": map[string]any{"country": "France"}}}}, 1},
		{"attribute numeric gt", map[string]any{"conditions": []any{map[string]any{"field": "attributes", "key": "ag.metrics.tokens.incremental.prompt", "operator": "gt", "value": 5}}}, 1},
		{"attribute in list", map[string]any{"conditions": []any{map[string]any{"field": "attributes", "key": "ag.meta.tags", "operator": "in", "value": []any{"y"}}}}, 1},
		{"attribute contains, case-insensitive", map[string]any{"conditions": []any{map[string]any{"field": "attributes", "key": "env", "operator": "contains", "value": "RO"}}}, 1},
		{"attribute exists (a dict)", map[string]any{"conditions": []any{map[string]any{"field": "attributes", "key": "ag.data", "operator": "exists"}}}, 1},
		{"span_type in", map[string]any{"conditions": []any{map[string]any{"field": "span_type", "operator": "in", "value": []any{"chat", "workflow"}}}}, 2},
		{"trace_type annotation", map[string]any{"conditions": []any{map[string]any{"field": "trace_type", "value": "annotation"}}}, 3},
		{"parent_id is null: roots", map[string]any{"conditions": []any{map[string]any{"field": "parent_id", "value": nil}}}, 2},
		{"or / not", map[string]any{"operator": "or", "conditions": []any{
			map[string]any{"field": "status_code", "value": "STATUS_CODE_ERROR"},
			map[string]any{"operator": "not", "conditions": []any{map[string]any{"field": "span_name", "operator": "startswith", "value": "s"}}}}}, 3},
		{"nor", map[string]any{"operator": "nor", "conditions": []any{map[string]any{"field": "trace_id", "value": tidA}}}, 3},
		{"links in", map[string]any{"conditions": []any{map[string]any{"field": "links", "operator": "in", "value": []any{map[string]any{"trace_id": tidA, "span_id": "a000000000000001"}}}}}, 1},
		{"references in by slug", map[string]any{"conditions": []any{map[string]any{"field": "references", "operator": "in", "value": []any{map[string]any{"slug": "exact-match"}}}}}, 1},
		{"content contains", map[string]any{"conditions": []any{map[string]any{"field": "content", "operator": "contains", "value": "france"}}}, 1},
		{"start_time window", map[string]any{"conditions": []any{map[string]any{"field": "start_time", "operator": "gte", "value": base.Add(2 * time.Second).Format(time.RFC3339)}}}, 3},
		{"session_id", map[string]any{"conditions": []any{map[string]any{"field": "session_id", "value": "sess-1"}}}, 1},
	}
	for _, q := range queries {
		t.Run("spans/query "+q.name, func(t *testing.T) {
			r := s.doJSON(t, "POST", "/api/spans/query", map[string]any{"filtering": q.filter})
			require.Equal(t, 200, r.status, string(r.body))
			assert.Equal(t, float64(q.want), r.json(t)["count"], string(r.body))
		})
	}

	t.Run("traces/query with paging", func(t *testing.T) {
		r := s.doJSON(t, "POST", "/api/traces/query", map[string]any{"windowing": map[string]any{"limit": 1}})
		require.Equal(t, 200, r.status, string(r.body))
		page := r.json(t)
		require.Equal(t, 1.0, page["count"])
		assert.Equal(t, tidB, page["traces"].([]any)[0].(map[string]any)["trace_id"])
		r = s.doJSON(t, "POST", "/api/traces/query", map[string]any{"windowing": page["windowing"]})
		page = r.json(t)
		require.Equal(t, 1.0, page["count"], string(r.body))
		assert.Equal(t, tidA, page["traces"].([]any)[0].(map[string]any)["trace_id"])
	})

	t.Run("span paging walks every span once", func(t *testing.T) {
		seen := map[string]bool{}
		var w any = map[string]any{"limit": 2}
		for i := 0; i < 5 && w != nil; i++ {
			r := s.doJSON(t, "POST", "/api/spans/query", map[string]any{"windowing": w})
			page := r.json(t)
			for _, sp := range page["spans"].([]any) {
				id := sp.(map[string]any)["span_id"].(string)
				assert.False(t, seen[id], "span %s returned twice", id)
				seen[id] = true
			}
			w = page["windowing"]
		}
		assert.Len(t, seen, 5)
	})

	t.Run("legacy flat query, filter as a JSON string", func(t *testing.T) {
		r := s.doJSON(t, "POST", "/api/tracing/spans/query", map[string]any{"focus": "span",
			"filter": `{"conditions":[{"field":"span_name","value":"llm"}]}`})
		require.Equal(t, 200, r.status, string(r.body))
		assert.Equal(t, 1.0, r.json(t)["count"])
		r = s.doJSON(t, "POST", "/api/tracing/spans/query", map[string]any{})
		traces := r.json(t)["traces"].(map[string]any)
		assert.Len(t, traces, 2)
	})

	t.Run("sessions and users", func(t *testing.T) {
		r := s.doJSON(t, "POST", "/api/tracing/sessions/query", map[string]any{})
		assert.Equal(t, []any{"sess-1"}, r.json(t)["session_ids"])
		r = s.doJSON(t, "POST", "/api/spans/users/query", map[string]any{"realtime": true})
		assert.Equal(t, []any{"user-1"}, r.json(t)["user_ids"])
	})

	t.Run("another project sees nothing", func(t *testing.T) {
		other := *s
		other.project[0] ^= 0xff
		r := other.do(t, "GET", "/api/traces/"+tidA, nil, nil)
		assert.Equal(t, map[string]any{"count": 0.0}, r.json(t))
	})
}

func TestInvalidFiltersAre400NamingTheCondition(t *testing.T) {
	s := newStack(t, func(o *options) { o.noWriter = true })
	tests := []struct {
		filter any
		detail string
	}{
		{map[string]any{"conditions": []any{map[string]any{"field": "span_name", "operator": "has"}}}, `filtering.conditions[0]: operator "has" is not valid for field "span_name"`},
		{map[string]any{"conditions": []any{map[string]any{"field": "nope", "value": 1}}}, `filtering.conditions[0]: unknown field "nope"`},
		{map[string]any{"operator": "or", "conditions": []any{map[string]any{"field": "span_type"}, map[string]any{"field": "span_type", "value": "robot"}}}, `filtering.conditions[0]: a value is required`},
		{map[string]any{"conditions": []any{map[string]any{"operator": "not", "conditions": []any{map[string]any{"field": "span_name", "value": "a"}, map[string]any{"field": "span_name", "value": "b"}}}}}, `filtering.conditions[0]: operator "not" needs exactly one condition`},
		{map[string]any{"operator": "xor"}, `filtering: operator "xor"`},
		{map[string]any{"conditions": []any{map[string]any{"field": "attributes", "value": 1}}}, `needs a key`},
		{map[string]any{"conditions": []any{map[string]any{"field": "trace_id", "value": "zz"}}}, `trace_id "zz"`},
		{map[string]any{"conditions": []any{map[string]any{"field": "status_code", "value": "BAD"}}}, `not one of STATUS_CODE_UNSET`},
	}
	for i, tt := range tests {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			r := s.doJSON(t, "POST", "/api/spans/query", map[string]any{"filtering": tt.filter})
			require.Equal(t, http.StatusBadRequest, r.status, string(r.body))
			assert.Contains(t, r.json(t)["detail"], tt.detail)
		})
	}
	r := s.doJSON(t, "POST", "/api/spans/query", map[string]any{"filtering": map[string]any{}, "extra": 1})
	assert.Equal(t, http.StatusBadRequest, r.status)
	r = s.doJSON(t, "POST", "/api/tracing/spans/query", map[string]any{"filtre": "{}"})
	assert.Equal(t, http.StatusBadRequest, r.status)
	assert.Contains(t, r.json(t)["detail"], "filtre")
	r = s.doJSON(t, "POST", "/api/spans/query", map[string]any{"windowing": map[string]any{"newest": 12345}})
	assert.Equal(t, http.StatusBadRequest, r.status)
	assert.Contains(t, r.json(t)["detail"], "windowing.newest")
}

func TestTraceCRUD(t *testing.T) {
	s := newStack(t)
	tid := "cccccccccccccccccccccccccccccc03"
	trace := map[string]any{"trace_id": tid, "spans": map[string]any{"root": map[string]any{"span_id": "c000000000000001",
		"spans": map[string]any{"child": map[string]any{"span_id": "c000000000000002", "parent_id": "c000000000000001"}}}}}
	r := s.doJSON(t, "POST", "/api/traces/", map[string]any{"trace": trace})
	require.Equal(t, http.StatusAccepted, r.status, string(r.body))
	assert.Equal(t, map[string]any{"count": 2.0, "trace_id": tid}, r.json(t))
	eventually(t, "trace stored", func() bool { return s.trace(t, tid)["count"] == 1.0 })

	for _, bad := range []struct {
		body   any
		detail string
	}{
		{map[string]any{"trace": map[string]any{"trace_id": tid, "spans": map[string]any{}}}, "Missing spans"},
		{map[string]any{"trace": map[string]any{"trace_id": tid, "spans": map[string]any{"a": map[string]any{"span_id": "c000000000000009"}, "b": map[string]any{"span_id": "c000000000000008"}}}}, "Too many root spans"},
		{map[string]any{"trace": map[string]any{"trace_id": tid, "spans": map[string]any{"a": map[string]any{"span_id": "c000000000000009", "parent_id": "c000000000000001"}}}}, "Missing root span"},
	} {
		r := s.doJSON(t, "POST", "/api/traces/", bad.body)
		require.Equal(t, http.StatusBadRequest, r.status, string(r.body))
		assert.Contains(t, r.json(t)["detail"], bad.detail)
	}
	r = s.doJSON(t, "PUT", "/api/traces/"+tidA, map[string]any{"trace": trace})
	assert.Equal(t, http.StatusBadRequest, r.status)

	r = s.do(t, "GET", "/api/traces/query", nil, nil)
	assert.Equal(t, http.StatusMethodNotAllowed, r.status)

	r = s.do(t, "DELETE", "/api/tracing/traces/"+tid, nil, nil)
	require.Equal(t, http.StatusAccepted, r.status)
	assert.Equal(t, 2.0, r.json(t)["count"])
	eventually(t, "trace deleted", func() bool { return s.trace(t, tid)["count"] == 0.0 })
	r = s.do(t, "DELETE", "/api/traces/"+tid, nil, nil)
	assert.Equal(t, map[string]any{"count": 0.0}, r.json(t))

	// Re-ingest after delete brings the trace back: the newer version wins.
	r = s.doJSON(t, "PUT", "/api/traces/"+tid, map[string]any{"trace": trace})
	require.Equal(t, http.StatusAccepted, r.status, string(r.body))
	eventually(t, "trace back", func() bool { return s.trace(t, tid)["count"] == 1.0 })
}

// TestFilterSeesOnlyTheLatestVersion: a filtered span query matches a
// span's latest version only, before ClickHouse has merged the old one
// away, and not at all once it is deleted (the query's first phase reads
// unmerged rows; the second keeps a key only if its latest version matched).
func TestFilterSeesOnlyTheLatestVersion(t *testing.T) {
	s := newStack(t)
	tid := "dddddddddddddddddddddddddddddd04"
	start := time.Now().Add(-time.Minute).UTC().Truncate(time.Millisecond)
	ingest := func(env string) {
		r := s.doJSON(t, "POST", "/api/tracing/spans/ingest", map[string]any{"spans": []any{map[string]any{
			"trace_id": tid, "span_id": "d000000000000001", "span_name": "root", "start_time": start.Format(time.RFC3339Nano),
			"attributes": map[string]any{"env": env}}}})
		require.Equal(t, http.StatusAccepted, r.status, string(r.body))
	}
	count := func(env string) float64 {
		r := s.doJSON(t, "POST", "/api/spans/query", map[string]any{
			"windowing": map[string]any{"oldest": start.Add(-time.Hour).Format(time.RFC3339), "limit": 10},
			"filtering": map[string]any{"conditions": []any{
				map[string]any{"field": "trace_id", "operator": "in", "value": []any{tid, tidA}},
				map[string]any{"field": "attributes", "key": "env", "value": env}}}})
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		return r.json(t)["count"].(float64)
	}
	ingest("old")
	eventually(t, "first version", func() bool { return count("old") == 1 })
	ingest("new")
	eventually(t, "second version", func() bool { return count("new") == 1 })
	assert.Equal(t, 0.0, count("old"), "the replaced version does not match any more")
	r := s.do(t, "DELETE", "/api/tracing/traces/"+tid, nil, nil)
	require.Equal(t, http.StatusAccepted, r.status)
	eventually(t, "deleted", func() bool { return count("new") == 0 })
	assert.Equal(t, 0.0, count("old"))
}

// A long text is stored once, in attr_values: the attributes JSON points
// to it, a later copy is a pointer to the first (docs/decisions/0012-span-text-stored-once.md).
// Filters, the content filter, analytics and the span and trace reads see
// the text, for rows of this form and for a row written before it (its
// JSON whole, a repeat an @ pointer into it).
func TestLongLeafStoredOnceStillFilters(t *testing.T) {
	s := newStack(t)
	long := "needle " + strings.Repeat("lorem ipsum ", 40)
	messages := []any{map[string]any{"role": "user", "content": long + "haystack"}, map[string]any{"role": "assistant", "content": "short"}}
	marked := "\uffff\x00#1 " + strings.Repeat("marked ", 50)
	base := time.Now().Add(-time.Hour).UTC().Truncate(time.Second)
	r := s.doJSON(t, "POST", "/api/tracing/spans/ingest", map[string]any{"spans": []any{
		map[string]any{"trace_id": tidA, "span_id": "a000000000000001", "span_name": "root", "start_time": base.Format(time.RFC3339Nano),
			"attributes": map[string]any{"input.value": long, "ag.data.inputs": long, "tags": []any{"x", long}, "other": "short",
				"messages": messages, "marked": marked, "nul": "a\x00" + long}},
		map[string]any{"trace_id": tidA, "span_id": "a000000000000002", "parent_id": "a000000000000001", "span_name": "child", "start_time": base.Format(time.RFC3339Nano),
			"attributes": map[string]any{"input.value": "short", "ag.data.inputs": "short"}},
	}})
	require.Equal(t, http.StatusAccepted, r.status, string(r.body))
	eventually(t, "two spans", func() bool {
		return s.do(t, "GET", "/api/spans/?trace_ids="+tidA, nil, nil).json(t)["count"] == 2.0
	})
	r = s.do(t, "GET", "/api/spans/"+tidA+"/a000000000000001", nil, nil)
	attrs := r.json(t)["span"].(map[string]any)["attributes"].(map[string]any)
	assert.Equal(t, long, attrs["input"].(map[string]any)["value"])
	assert.Equal(t, map[string]any{"data": map[string]any{"inputs": long}}, attrs["ag"].(map[string]any)["unsupported"])
	assert.Equal(t, []any{"x", long}, attrs["tags"])
	assert.Equal(t, messages, attrs["messages"])
	assert.Equal(t, marked, attrs["marked"])
	assert.Equal(t, "a\x00"+long, attrs["nul"])
	for _, q := range []struct {
		name string
		cond map[string]any
	}{
		{"parked copy contains", map[string]any{"field": "attributes", "key": "ag.unsupported.data.inputs", "operator": "contains", "value": "NEEDLE"}},
		{"parked copy is", map[string]any{"field": "attributes", "key": "ag.unsupported.data.inputs", "value": long}},
		{"parked copy startswith", map[string]any{"field": "attributes", "key": "ag.unsupported.data.inputs", "operator": "startswith", "value": "needle"}},
		{"raw is", map[string]any{"field": "attributes", "key": "input.value", "operator": "eq", "value": long}},
		{"raw contains", map[string]any{"field": "attributes", "key": "input.value", "operator": "contains", "value": "ipsum lorem"}},
		{"NUL is", map[string]any{"field": "attributes", "key": "nul", "value": "a\x00" + long}},
		{"list of objects is", map[string]any{"field": "attributes", "key": "messages", "value": messages}},
		{"list element's member is", map[string]any{"field": "attributes", "key": "messages.0.content", "value": long + "haystack"}},
		{"list element in", map[string]any{"field": "attributes", "key": "tags", "operator": "in", "value": []any{long}}},
	} {
		t.Run(q.name, func(t *testing.T) {
			r := s.doJSON(t, "POST", "/api/spans/query", map[string]any{"filtering": map[string]any{"conditions": []any{q.cond}}})
			require.Equal(t, 200, r.status, string(r.body))
			body := r.json(t)
			require.Equal(t, 1.0, body["count"], string(r.body))
			assert.Equal(t, "a000000000000001", body["spans"].([]any)[0].(map[string]any)["span_id"])
		})
	}
	// A row written before long text moved to attr_values: the JSON whole,
	// a repeat an @ pointer to the first copy's token.
	oldJSON := `{"ag":{"type":{"trace":"invocation"}},"input":{"value":"old ` + long + `"},"output":{"value":"` + "\uffff" + `\u0000@55"}}`
	require.Equal(t, `"old `, oldJSON[55:60])
	old := storedSpan(tidB, "b000000000000001", base, oldJSON)
	old.AttrKeys = []string{"ag.type.trace", "input.value", "output.value"}
	old.AttrValues = []string{"invocation", "old " + long, chspans.PointerMark + "2"}
	s.store(t, s.project, old)
	r = s.do(t, "GET", "/api/spans/"+tidB+"/b000000000000001", nil, nil)
	require.Equal(t, http.StatusOK, r.status, string(r.body))
	attrs = r.json(t)["span"].(map[string]any)["attributes"].(map[string]any)
	assert.Equal(t, "old "+long, attrs["input"].(map[string]any)["value"])
	assert.Equal(t, "old "+long, attrs["output"].(map[string]any)["value"])
	for _, path := range []string{"/api/traces/" + tidA, "/api/tracing/traces/" + tidA, "/api/spans/?trace_ids=" + tidA} {
		r := s.do(t, "GET", path, nil, nil)
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		assert.Contains(t, string(r.body), long+"haystack", path)
		assert.NotContains(t, string(r.body), "\ufffd", path)
	}
	for _, q := range []struct {
		name  string
		value string
		want  []any
	}{
		{"content in a long string", "NEEDLE LOREM", []any{"a000000000000001", "b000000000000001"}},
		{"content in a long list", "ipsum haystack", []any{"a000000000000001"}},
		{"content in an old row", "old needle", []any{"b000000000000001"}},
		{"content in a short string", "short", []any{"a000000000000001", "a000000000000002"}},
	} {
		t.Run(q.name, func(t *testing.T) {
			r := s.doJSON(t, "POST", "/api/spans/query", map[string]any{"filtering": map[string]any{"conditions": []any{
				map[string]any{"field": "content", "operator": "contains", "value": q.value}}}})
			require.Equal(t, 200, r.status, string(r.body))
			var ids []any
			for _, sp := range r.json(t)["spans"].([]any) {
				ids = append(ids, sp.(map[string]any)["span_id"])
			}
			assert.ElementsMatch(t, q.want, ids, string(r.body))
		})
	}
	t.Run("analytics and groups read the long text", func(t *testing.T) {
		specs := []any{map[string]any{"type": "categorical/single", "path": "attributes.input.value"},
			map[string]any{"type": "categorical/multiple", "path": "attributes.tags"}}
		r := s.doJSON(t, "POST", "/internal/analytics/groups", map[string]any{"specs": specs, "groups": map[string]any{"a": []string{tidA}}})
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		m := r.json(t)["groups"].(map[string]any)["a"].(map[string]any)["metrics"].(map[string]any)
		values := func(spec string) []any {
			var out []any
			for _, f := range m[spec].(map[string]any)["freq"].([]any) {
				out = append(out, f.(map[string]any)["value"])
			}
			return out
		}
		assert.Equal(t, []any{long}, values("attributes.input.value"))
		assert.ElementsMatch(t, []any{long, "x"}, values("attributes.tags"))
	})
}

// TestOTLPLongTextRoundTrip: long text sent over OTLP (repeated, with NULs,
// starting with U+FFFF NUL, in a list and in a map) reads back as sent,
// from the attr_values it is stored in (docs/decisions/0012-span-text-stored-once.md).
func TestOTLPLongTextRoundTrip(t *testing.T) {
	s := newStack(t)
	long := "an answer " + strings.Repeat("of some length ", 30)
	marked := "\uffff\x00#1 " + long
	td := otlpTraces([16]byte{0x10, 0x12}, 1, func(_ int, sp ptrace.Span) {
		a := sp.Attributes()
		a.PutStr("app.input", long)
		a.PutStr("app.copy", long)
		a.PutStr("app.marked", marked)
		a.PutStr("app.nul", "a\x00b"+long)
		l := a.PutEmptySlice("app.list")
		l.AppendEmpty().SetStr(long)
		l.AppendEmpty().SetStr("short")
		l.AppendEmpty().SetDouble(1.5)
		a.PutEmptyMap("app.map").PutStr("inner", long+"!")
	})
	r := s.do(t, "POST", "/api/otlp/v1/traces", protoBody(t, td), map[string]string{"Content-Type": "application/x-protobuf"})
	require.Equal(t, http.StatusOK, r.status, string(r.body))
	const tid = "10120000000000000000000000000000"
	var spans []any
	eventually(t, "the span stored", func() bool {
		spans = s.spans(t, tid)
		return len(spans) == 1
	})
	app := spans[0].(map[string]any)["attributes"].(map[string]any)["app"].(map[string]any)
	assert.Equal(t, map[string]any{"input": long, "copy": long, "marked": marked, "nul": "a\x00b" + long,
		"list": []any{long, "short", 1.5}, "map": map[string]any{"inner": long + "!"}}, app)
}
