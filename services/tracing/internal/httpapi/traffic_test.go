package httpapi_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// production is the filter the console puts on its traces, sessions and
// analytics views by default (services/console/web/src/lib/traffic.ts):
// root spans of invocations that reference no testcase (an evaluation's
// application call) and no evaluator (an evaluator run).
var production = map[string]any{"operator": "and", "conditions": []any{
	map[string]any{"field": "parent_id", "operator": "is", "value": nil},
	map[string]any{"field": "trace_type", "operator": "is", "value": "invocation"},
	map[string]any{"field": "references", "operator": "not_in", "value": []any{
		map[string]any{"attributes": map[string]any{"key": "testcase"}},
		map[string]any{"attributes": map[string]any{"key": "evaluator"}}}},
}}

// seedTraffic ingests a production call, an evaluation's application call
// (it references the testcase it ran), an evaluator run that judged it
// (linked: an annotation) and an evaluator try-out (evaluator references,
// no link), each in its own session.
func seedTraffic(t *testing.T, s *stack) {
	t.Helper()
	at := time.Now().Add(-time.Minute).UTC().Format(time.RFC3339Nano)
	root := func(tid, sid, name, session string, ag map[string]any) map[string]any {
		ag["session"] = map[string]any{"id": session}
		return map[string]any{"trace_id": tid, "span_id": sid, "span_name": name, "start_time": at, "end_time": at,
			"attributes": map[string]any{"ag": ag}}
	}
	spans := []any{
		root("c0000000000000000000000000000001", "c000000000000001", "chat", "sess-prod", map[string]any{
			"references": map[string]any{"application": map[string]any{"slug": "support"}}}),
		// The production call's model span: no session of its own, no references.
		map[string]any{"trace_id": "c0000000000000000000000000000001", "span_id": "c000000000000002", "parent_id": "c000000000000001",
			"span_name": "llm", "start_time": at, "end_time": at},
		root("c0000000000000000000000000000002", "c000000000000003", "completion", "sess-eval-app", map[string]any{
			"references": map[string]any{"application": map[string]any{"slug": "support"},
				"testcase": map[string]any{"id": "0193e8a0-0000-7000-8000-0000000000aa"}}}),
		root("c0000000000000000000000000000004", "c000000000000005", "auto_exact_match", "sess-try", map[string]any{
			"references": map[string]any{"evaluator": map[string]any{"slug": "exact-match"}}}),
	}
	judge := root("c0000000000000000000000000000003", "c000000000000004", "auto_exact_match", "sess-eval-judge", map[string]any{
		"references": map[string]any{"evaluator": map[string]any{"slug": "exact-match"}}})
	judge["links"] = []any{map[string]any{"trace_id": "c0000000000000000000000000000002", "span_id": "c000000000000003", "attributes": map[string]any{"key": "invocation"}}}
	spans = append(spans, judge)
	r := s.doJSON(t, "POST", "/api/spans/ingest", map[string]any{"spans": spans})
	require.Equal(t, http.StatusAccepted, r.status, string(r.body))
	eventually(t, "five spans", func() bool {
		r := s.doJSON(t, "POST", "/api/spans/query", map[string]any{})
		return r.json(t)["count"] == 5.0
	})
}

// TestProductionTraffic: the console's production filter keeps the
// production call only, in the span query and in the sessions query, which
// takes a filtering like the span query (and without one still lists every
// session, as compatible clients expect).
func TestProductionTraffic(t *testing.T) {
	s := newStack(t)
	seedTraffic(t, s)

	r := s.doJSON(t, "POST", "/api/spans/query", map[string]any{"filtering": production})
	require.Equal(t, http.StatusOK, r.status, string(r.body))
	spans := r.json(t)["spans"].([]any)
	require.Len(t, spans, 1, string(r.body))
	assert.Equal(t, "chat", spans[0].(map[string]any)["span_name"])

	r = s.doJSON(t, "POST", "/api/tracing/sessions/query", map[string]any{})
	require.Equal(t, http.StatusOK, r.status, string(r.body))
	assert.ElementsMatch(t, []any{"sess-prod", "sess-eval-app", "sess-eval-judge", "sess-try"}, r.json(t)["session_ids"])

	for _, path := range []string{"/api/tracing/sessions/query", "/api/spans/sessions/query"} {
		r = s.doJSON(t, "POST", path, map[string]any{"filtering": production, "realtime": true})
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		assert.Equal(t, []any{"sess-prod"}, r.json(t)["session_ids"], path)
	}

	r = s.doJSON(t, "POST", "/api/tracing/sessions/query", map[string]any{"filtering": map[string]any{"conditions": []any{
		map[string]any{"field": "nope", "value": 1}}}})
	require.Equal(t, http.StatusBadRequest, r.status, string(r.body))
	assert.Contains(t, string(r.body), `filtering.conditions[0]: unknown field \"nope\"`)
}
