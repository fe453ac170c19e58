package httpapi_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A trace whose spans arrive in three requests, children first (as an OTel
// batch processor sends them): filters, span reads and trace reads all see
// the cumulative metrics of the whole stored tree.
func TestCumulativeMetricsAcrossRequests(t *testing.T) {
	s := newStack(t)
	const tid = "eeeeeeeeeeeeeeeeeeeeeeeeeeeeee01"
	base := time.Now().Add(-time.Hour).UTC().Truncate(time.Second)
	at := func(ms int) string { return base.Add(time.Duration(ms) * time.Millisecond).Format(time.RFC3339Nano) }
	tokens := func(p, c float64) map[string]any {
		return map[string]any{"ag.metrics.tokens.incremental": map[string]any{"prompt": p, "completion": c, "total": p + c}}
	}
	span := func(id, parent, name string, start int, attrs map[string]any) map[string]any {
		m := map[string]any{"trace_id": tid, "span_id": id, "span_name": name, "start_time": at(start), "end_time": at(start + 10), "attributes": attrs}
		if parent != "" {
			m["parent_id"] = parent
		}
		return m
	}
	const root, a, b, c = "e000000000000001", "e000000000000002", "e000000000000003", "e000000000000004"
	bSpan := span(b, root, "b", 30, tokens(1, 1))
	bSpan["events"] = []any{map[string]any{"name": "exception", "timestamp": at(35), "attributes": map[string]any{"exception.message": "boom"}}}
	for _, req := range [][]any{
		{span(a, root, "a", 10, tokens(10, 5))},
		{span(c, a, "c", 20, tokens(100, 0)), bSpan},
		{span(root, "", "root", 0, map[string]any{})},
	} {
		r := s.doJSON(t, "POST", "/api/tracing/spans/ingest", map[string]any{"spans": req})
		require.Equal(t, http.StatusAccepted, r.status, string(r.body))
	}
	eventually(t, "four spans", func() bool { return s.do(t, "GET", "/api/spans/?trace_id="+tid, nil, nil).json(t)["count"] == 4.0 })

	query := func(path string, conds ...any) map[string]any {
		r := s.doJSON(t, "POST", path, map[string]any{"filtering": map[string]any{"conditions": conds}})
		require.Equal(t, 200, r.status, string(r.body))
		return r.json(t)
	}
	cond := func(key, op string, v any) map[string]any {
		return map[string]any{"field": "attributes", "key": key, "operator": op, "value": v}
	}
	names := func(body map[string]any) []string {
		out := []string{}
		for _, sp := range body["spans"].([]any) {
			out = append(out, sp.(map[string]any)["span_name"].(string))
		}
		return out
	}
	cumTotal := func(sp any) any {
		ag := sp.(map[string]any)["attributes"].(map[string]any)["ag"].(map[string]any)
		return ag["metrics"].(map[string]any)["tokens"].(map[string]any)["cumulative"].(map[string]any)["total"]
	}

	body := query("/api/spans/query", cond("ag.metrics.tokens.cumulative.total", "gt", 116.0))
	assert.Equal(t, []string{"root"}, names(body), "the root sums the whole tree: 15 + 2 + 100")
	assert.Equal(t, 117.0, cumTotal(body["spans"].([]any)[0]), "a span read shows the whole tree's roll-up")

	body = query("/api/spans/query", cond("ag.metrics.tokens.cumulative.total", "eq", 115.0))
	assert.Equal(t, []string{"a"}, names(body), "a and its child c, sent in different requests")

	body = query("/api/spans/query", cond("ag.metrics.tokens.cumulative", "is", map[string]any{"prompt": 111.0, "completion": 6.0}))
	assert.Equal(t, []string{"root"}, names(body))

	body = query("/api/spans/query", cond("ag.metrics.errors.cumulative", "exists", nil))
	assert.ElementsMatch(t, []string{"root", "b"}, names(body))

	body = query("/api/spans/query", cond("ag.metrics.tokens.cumulative.total", "btwn", []any{100.0, 100.0}))
	assert.Equal(t, []string{"c"}, names(body))

	body = query("/api/traces/query", cond("ag.metrics.tokens.cumulative.total", "gte", 117.0), map[string]any{"field": "span_name", "value": "root"})
	require.Equal(t, 1.0, body["count"])
	rootNode := body["traces"].([]any)[0].(map[string]any)["spans"].(map[string]any)["root"]
	assert.Equal(t, 117.0, cumTotal(rootNode))

	r := s.doJSON(t, "POST", "/api/spans/query", map[string]any{
		"filtering": map[string]any{"conditions": []any{cond("ag.metrics.tokens.cumulative.total", "gt", 116.0)}},
		"windowing": map[string]any{"oldest": base.Add(-time.Minute).Format(time.RFC3339), "newest": base.Add(time.Minute).Format(time.RFC3339), "limit": 10}})
	require.Equal(t, 200, r.status, string(r.body))
	assert.Equal(t, []string{"root"}, names(r.json(t)), "with a window, the roll-up is limited to the window's traces")

	r = s.doJSON(t, "POST", "/api/tracing/analytics/query", map[string]any{"specs": []any{
		map[string]any{"type": "numeric/continuous", "path": "attributes.ag.metrics.tokens.cumulative.total"},
		map[string]any{"type": "numeric/continuous", "path": "attributes.ag.metrics.errors.cumulative"}}})
	require.Equal(t, 200, r.status, string(r.body))
	m := r.json(t)["buckets"].([]any)[0].(map[string]any)["metrics"].(map[string]any)
	assert.Equal(t, 117.0, m["attributes.ag.metrics.tokens.cumulative.total"].(map[string]any)["sum"], "analytics read the roll-up too")
	assert.Equal(t, 1.0, m["attributes.ag.metrics.errors.cumulative"].(map[string]any)["sum"])
}
