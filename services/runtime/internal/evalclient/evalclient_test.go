package evalclient

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/pkg/scope"
)

// TestCallsCarryTheJobScopeAndMapRefusals: every call carries the token
// and the job's project and user; 404 is ErrNotFound, the closed-run 409
// ErrClosed, a 5xx a transient StatusError naming the route, a 4xx a
// permanent one.
func TestCallsCarryTheJobScopeAndMapRefusals(t *testing.T) {
	sc := scope.Scope{ProjectID: uuid.New(), UserID: uuid.New()}
	var status int
	var body string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, ok := scope.Parse(r.Header, "tok")
		if !ok || got != sc {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
	defer srv.Close()
	c := New(srv.URL, "tok", srv.URL, "tok", 5*time.Second)

	status, body = 200, `{"count":1,"run":{"id":"r1","status":"running","flags":{"is_active":true},"data":{"repeats":3}}}`
	run, err := c.Run(t.Context(), sc, "r1")
	require.NoError(t, err)
	assert.True(t, run.Flags.IsActive)
	assert.Equal(t, 3, run.Repeats())

	status, body = 200, `{"count":0}`
	_, err = c.Run(t.Context(), sc, "r1")
	assert.ErrorIs(t, err, ErrNotFound, "an envelope without the run")

	status, body = 404, `{"detail":"not found"}`
	_, err = c.Run(t.Context(), sc, "r1")
	assert.ErrorIs(t, err, ErrNotFound)
	assert.False(t, Transient(err))

	status, body = 409, `{"detail":{"message":"Cannot modify a closed evaluation.","run_id":"r1"}}`
	err = c.WriteResults(t.Context(), sc, []Result{{RunID: "r1"}})
	assert.ErrorIs(t, err, ErrClosed)

	status, body = 503, `{"detail":"down"}`
	_, err = c.Settle(t.Context(), sc, "r1")
	var se *StatusError
	require.True(t, errors.As(err, &se))
	assert.Equal(t, 503, se.Status)
	assert.Contains(t, se.Error(), "/internal/evaluations/runs/r1/settle")
	assert.True(t, Transient(err))

	status, body = 422, `{"detail":[{"loc":["body","results"]}]}`
	err = c.WriteResults(t.Context(), sc, []Result{{RunID: "r1"}})
	assert.False(t, Transient(err), "a refusal does not pass on a retry")

	srv.Close()
	_, err = c.Run(t.Context(), sc, "r1")
	assert.True(t, Transient(err), "a service that is down")
}

// TestWritesAreBatched: a large write goes in WriteBatch-sized requests.
func TestWritesAreBatched(t *testing.T) {
	var sizes []int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b struct {
			Results []Result `json:"results"`
		}
		_ = json.NewDecoder(r.Body).Decode(&b)
		sizes = append(sizes, len(b.Results))
		_, _ = io.WriteString(w, `{"count":0}`)
	}))
	defer srv.Close()
	c := New(srv.URL, "tok", srv.URL, "tok", 5*time.Second)
	require.NoError(t, c.WriteResults(t.Context(), scope.Scope{ProjectID: uuid.New()}, make([]Result, WriteBatch*2+1)))
	assert.Equal(t, []int{WriteBatch, WriteBatch, 1}, sizes)
}

// TestRootOfATraceTree: the root is the parentless top-level node, also
// when two top-level spans share a name (a list).
func TestRootOfATraceTree(t *testing.T) {
	root, ok := rootOf(json.RawMessage(`{"orphan":{"trace_id":"t","span_id":"b","parent_id":"x"},
		"app":[{"trace_id":"t","span_id":"c","parent_id":"y"},{"trace_id":"t","span_id":"a","attributes":{"ag":{"data":{"outputs":"hi"}}},"spans":{"chat":{"span_id":"d"}}}]}`))
	require.True(t, ok)
	assert.Equal(t, "a", root.SpanID)
	assert.Equal(t, "hi", root.Ag("data", "outputs"))
	_, ok = rootOf(json.RawMessage(`{}`))
	assert.False(t, ok)
}
