package httpapi_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDeleteIsVisibleWhenItAnswers: on every delete route, a GET of the
// same id right after the DELETE answers gives count 0 (the trace once came
// back for about a second, until the writer had stored the
// tombstone). The tombstone also goes through the stream: the writer's copy
// lands beside the synchronous one, and the trace stays deleted.
func TestDeleteIsVisibleWhenItAnswers(t *testing.T) {
	s := newStack(t)
	link := map[string]any{"trace_id": tidA, "span_id": "a000000000000001"}
	start := time.Now().Add(-time.Minute).UTC().Format(time.RFC3339Nano)

	type route struct {
		name   string
		create func(t *testing.T) string // returns the trace id
		get    string                    // GET prefix, the id appended
		delete string                    // DELETE prefix, the id appended
		status int                       // of the DELETE
	}
	createTrace := func(tid string) func(t *testing.T) string {
		return func(t *testing.T) string {
			r := s.doJSON(t, "POST", "/api/tracing/spans/ingest", map[string]any{"spans": []any{
				map[string]any{"trace_id": tid, "span_id": tid[:16], "span_name": "root", "start_time": start},
				map[string]any{"trace_id": tid, "span_id": tid[16:], "parent_id": tid[:16], "span_name": "child", "start_time": start},
			}})
			require.Equal(t, http.StatusAccepted, r.status, string(r.body))
			return tid
		}
	}
	createSimple := func(path, item string, body map[string]any) func(t *testing.T) string {
		return func(t *testing.T) string {
			r := s.doJSON(t, "POST", path, map[string]any{item: body})
			require.Contains(t, []int{http.StatusOK, http.StatusAccepted}, r.status, string(r.body))
			return r.json(t)[item].(map[string]any)["trace_id"].(string)
		}
	}
	routes := []route{
		{name: "traces", create: createTrace("e1e1e1e1e1e1e1e1e1e1e1e1e1e1e101"), get: "/api/traces/", delete: "/api/traces/", status: http.StatusAccepted},
		{name: "tracing/traces", create: createTrace("e2e2e2e2e2e2e2e2e2e2e2e2e2e2e202"), get: "/api/tracing/traces/", delete: "/api/tracing/traces/", status: http.StatusAccepted},
		{name: "simple/traces", create: createSimple("/api/simple/traces/", "trace", map[string]any{
			"data": map[string]any{"outputs": map[string]any{"score": 0.9}}, "links": map[string]any{"invocation": link}}),
			get: "/api/simple/traces/", delete: "/api/simple/traces/", status: http.StatusOK},
		{name: "annotations", create: createSimple("/api/annotations/", "annotation", map[string]any{
			"data": map[string]any{"outputs": map[string]any{"ok": true}}, "references": map[string]any{"evaluator": map[string]any{"slug": "judge"}},
			"links": map[string]any{"invocation": link}}),
			get: "/api/annotations/", delete: "/api/annotations/", status: http.StatusOK},
		{name: "invocations", create: createSimple("/api/invocations/", "invocation", map[string]any{
			"data": map[string]any{"outputs": "hi"}, "references": map[string]any{"application": map[string]any{"slug": "app"}}}),
			get: "/api/invocations/", delete: "/api/invocations/", status: http.StatusOK},
	}
	for _, rt := range routes {
		t.Run(rt.name, func(t *testing.T) {
			tid := rt.create(t)
			eventually(t, "stored", func() bool { return s.do(t, "GET", rt.get+tid, nil, nil).json(t)["count"] == 1.0 })

			seq := streamLastSeq(t, s)
			r := s.do(t, "DELETE", rt.delete+tid, nil, nil)
			require.Equal(t, rt.status, r.status, string(r.body))
			require.NotEqual(t, 0.0, r.json(t)["count"], "the delete found the trace")
			r = s.do(t, "GET", rt.get+tid, nil, nil)
			require.Equal(t, http.StatusOK, r.status, string(r.body))
			assert.Equal(t, map[string]any{"count": 0.0}, r.json(t), "read right after the delete answered")
			r = s.doJSON(t, "POST", "/api/spans/query", map[string]any{
				"windowing": map[string]any{"oldest": time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)},
				"filtering": map[string]any{"conditions": []any{map[string]any{"field": "trace_id", "value": tid}}}})
			require.Equal(t, http.StatusOK, r.status, string(r.body))
			assert.Equal(t, 0.0, r.json(t)["count"], "a windowed query right after the delete")

			// The tombstones also went through the stream (durable through
			// the pipeline): one more message.
			assert.Equal(t, seq+1, streamLastSeq(t, s), "the tombstones were published")
			time.Sleep(500 * time.Millisecond) // the writer's copy lands (flush interval 200ms) and changes nothing
			assert.Equal(t, map[string]any{"count": 0.0}, s.do(t, "GET", rt.get+tid, nil, nil).json(t))
		})
	}
}

// streamLastSeq is the sequence of the last message published to SPANS:
// the writer acks (and the work queue removes) messages, so the count of
// messages cannot tell what was published.
func streamLastSeq(t *testing.T, s *stack) uint64 {
	t.Helper()
	st, err := s.conn.JS.Stream(t.Context(), "SPANS")
	require.NoError(t, err)
	info, err := st.Info(t.Context())
	require.NoError(t, err)
	return info.State.LastSeq
}
