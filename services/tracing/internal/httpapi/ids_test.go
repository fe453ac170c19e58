package httpapi_test

import (
	"net/http"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// traceIDsOf lists the trace ids of a {count, traces: [{trace_id}]} answer.
func traceIDsOf(t *testing.T, body map[string]any) []string {
	t.Helper()
	var ids []string
	list, _ := body["traces"].([]any)
	for _, tr := range list {
		ids = append(ids, tr.(map[string]any)["trace_id"].(string))
	}
	sort.Strings(ids)
	return ids
}

// spanIDsOf lists the span ids of a {count, spans: [{span_id}]} answer.
func spanIDsOf(t *testing.T, body map[string]any) []string {
	t.Helper()
	var ids []string
	list, _ := body["spans"].([]any)
	for _, sp := range list {
		ids = append(ids, sp.(map[string]any)["span_id"].(string))
	}
	sort.Strings(ids)
	return ids
}

// TestIDsInTheQueryStringRepeatedOrCommaSeparated: every route that takes
// ids in the query string reads a repeated parameter and a comma list
// alike, under the singular and the plural name (a repeated trace_id once
// returned one trace).
func TestIDsInTheQueryStringRepeatedOrCommaSeparated(t *testing.T) {
	s := newStack(t)
	seed(t, s)
	both := []string{tidA, tidB}

	for _, q := range []string{
		"trace_id=" + tidA + "&trace_id=" + tidB,
		"trace_id=" + tidA + "," + tidB,
		"trace_ids=" + tidA + "&trace_ids=" + tidB,
		"trace_ids=" + tidA + "," + tidB,
		"trace_id=" + tidA + "&trace_ids=" + tidB,
	} {
		r := s.do(t, "GET", "/api/traces/?"+q, nil, nil)
		require.Equal(t, http.StatusOK, r.status, q+": "+string(r.body))
		assert.Equal(t, both, traceIDsOf(t, r.json(t)), q)

		r = s.do(t, "GET", "/api/spans/?"+q, nil, nil)
		require.Equal(t, http.StatusOK, r.status, q+": "+string(r.body))
		assert.Equal(t, 5.0, r.json(t)["count"], q)
	}

	wantSpans := []string{"a000000000000002", "b000000000000003"}
	for _, q := range []string{
		"span_id=a000000000000002&span_id=b000000000000003",
		"span_id=a000000000000002,b000000000000003",
		"span_ids=a000000000000002&span_ids=b000000000000003",
	} {
		r := s.do(t, "GET", "/api/spans/?"+q, nil, nil)
		require.Equal(t, http.StatusOK, r.status, q+": "+string(r.body))
		assert.Equal(t, wantSpans, spanIDsOf(t, r.json(t)), q)
	}

	// A bad id among good ones is still a 400 naming it.
	r := s.do(t, "GET", "/api/traces/?trace_id="+tidA+"&trace_id=nothex", nil, nil)
	assert.Equal(t, http.StatusBadRequest, r.status, string(r.body))
	assert.Contains(t, string(r.body), "nothex")
}

// TestTracingTracesQuery: POST /tracing/traces/query answers as POST
// /traces/query does, body and answer (it was once a 405).
func TestTracingTracesQuery(t *testing.T) {
	s := newStack(t)
	seed(t, s)
	body := map[string]any{"filtering": map[string]any{"conditions": []any{
		map[string]any{"field": "trace_id", "operator": "in", "value": []any{tidA, tidB}}}}}
	want := s.doJSON(t, "POST", "/api/traces/query", body)
	require.Equal(t, http.StatusOK, want.status, string(want.body))
	got := s.doJSON(t, "POST", "/api/tracing/traces/query", body)
	require.Equal(t, http.StatusOK, got.status, string(got.body))
	assert.JSONEq(t, string(want.body), string(got.body))
	assert.Equal(t, []string{tidA, tidB}, traceIDsOf(t, got.json(t)))

	bad := s.doJSON(t, "POST", "/api/tracing/traces/query", map[string]any{"windowing": map[string]any{"newest": 12345}})
	assert.Equal(t, http.StatusBadRequest, bad.status)
	assert.Contains(t, bad.json(t)["detail"], "windowing.newest")

	r := s.do(t, "GET", "/api/tracing/traces/query", nil, nil)
	assert.Equal(t, http.StatusMethodNotAllowed, r.status)
}
