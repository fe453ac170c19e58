package tracingclient_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/services/registry/internal/tracingclient"
)

// stand-in for the tracing service: this test covers only the client's
// request and response mapping; the end-to-end call waits for tracing.
func fake(t *testing.T, status int, answer string, got *map[string]any, path *string, sc *scope.Scope) *tracingclient.Client {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		*path = r.URL.Path
		s, ok := scope.Parse(r.Header, "tok")
		require.True(t, ok, "internal token and scope headers are sent")
		*sc = s
		raw, _ := io.ReadAll(r.Body)
		require.NoError(t, json.Unmarshal(raw, got))
		w.WriteHeader(status)
		_, _ = w.Write([]byte(answer))
	}))
	t.Cleanup(srv.Close)
	return tracingclient.New(srv.URL+"/", "tok", 5*time.Second)
}

func TestTraceFocusMapping(t *testing.T) {
	var body map[string]any
	var path string
	var sc scope.Scope
	c := fake(t, 200, `{"count":2,"traces":[
		{"trace_id":"aa","spans":{"root":{"span_id":"1","trace_id":"aa","spans":{"child":[{"span_id":"2","trace_id":"aa"},{"span_id":"3","trace_id":"aa"}]}}}},
		{"trace_id":"bb","spans":{"root":{"span_id":"4","trace_id":"bb"}}}]}`, &body, &path, &sc)
	want := scope.Scope{ProjectID: uuid.New(), UserID: uuid.New()}
	res, err := c.Run(context.Background(), want, tracingclient.Query{Focus: "trace", Format: "agenta",
		Filtering: json.RawMessage(`{"operator":"and","conditions":[]}`), Windowing: json.RawMessage(`{"limit":2}`)})
	require.NoError(t, err)
	assert.Equal(t, "/traces/query", path)
	assert.Equal(t, want.ProjectID, sc.ProjectID)
	assert.Equal(t, map[string]any{"filtering": map[string]any{"operator": "and", "conditions": []any{}}, "windowing": map[string]any{"limit": float64(2)}}, body)
	assert.Equal(t, []string{"aa", "bb"}, res.TraceIDs)
	require.Len(t, res.Traces, 2)
	assert.Len(t, res.Traces[0].Spans, 3, "the nested tree is flattened by span id")
	assert.NotContains(t, string(res.Traces[0].Spans["1"]), "child", "children are not repeated inside their parent")
}

func TestSpanFocusMapping(t *testing.T) {
	var body map[string]any
	var path string
	var sc scope.Scope
	c := fake(t, 200, `{"count":3,"spans":[{"trace_id":"bb","span_id":"1"},{"trace_id":"aa","span_id":"2"},{"trace_id":"bb","span_id":"3"}]}`, &body, &path, &sc)
	res, err := c.Run(context.Background(), scope.Scope{ProjectID: uuid.New()}, tracingclient.Query{Focus: "span", Format: "opentelemetry",
		Filtering: json.RawMessage(`{"conditions":[]}`), Windowing: json.RawMessage(`{"limit":3,"oldest":"2026-01-01T00:00:00Z","next":"x"}`)})
	require.NoError(t, err)
	assert.Equal(t, "/tracing/spans/query", path)
	assert.Equal(t, map[string]any{"focus": "span", "format": "opentelemetry", "filter": map[string]any{"conditions": []any{}},
		"limit": float64(3), "oldest": "2026-01-01T00:00:00Z"}, body)
	assert.Equal(t, []string{"bb", "aa"}, res.TraceIDs, "first-seen order")
	assert.Len(t, res.Traces[0].Spans, 2)
}

func TestErrorsMapping(t *testing.T) {
	var body map[string]any
	var path string
	var sc scope.Scope
	c := fake(t, 400, `{"detail":"bad filter"}`, &body, &path, &sc)
	_, err := c.Run(context.Background(), scope.Scope{ProjectID: uuid.New()}, tracingclient.Query{})
	assert.Equal(t, errs.Invalid, errs.KindOf(err))
	c = fake(t, 503, `{}`, &body, &path, &sc)
	_, err = c.Run(context.Background(), scope.Scope{ProjectID: uuid.New()}, tracingclient.Query{})
	assert.Equal(t, errs.Unavailable, errs.KindOf(err))
	down := tracingclient.New("http://127.0.0.1:1", "tok", time.Second)
	_, err = down.Run(context.Background(), scope.Scope{ProjectID: uuid.New()}, tracingclient.Query{})
	assert.Equal(t, errs.Unavailable, errs.KindOf(err))
}
