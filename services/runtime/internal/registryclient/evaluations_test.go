package registryclient_test

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

	"github.com/assayhq/assay/pkg/evaluation"
	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/pkg/svcclient"
	"github.com/assayhq/assay/services/runtime/internal/registryclient"
)

// TestCallsCarryTheJobScopeAndMapRefusals: every call carries the token
// and the job's project and user; 404 is svcclient.ErrNotFound, the closed-run 409
// svcclient.ErrClosed, a 5xx a transient StatusError naming the route, a 4xx a
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
	c := registryclient.New(srv.URL, "tok", 5*time.Second, 0)

	status, body = 200, `{"count":1,"run":{"id":"r1","status":"running","flags":{"is_active":true},"data":{"repeats":3}}}`
	run, err := c.Run(t.Context(), sc, "r1")
	require.NoError(t, err)
	assert.True(t, run.Flags.IsActive)
	assert.Equal(t, 3, run.Data.RepeatCount())

	status, body = 200, `{"count":0}`
	_, err = c.Run(t.Context(), sc, "r1")
	assert.ErrorIs(t, err, svcclient.ErrNotFound, "an envelope without the run")

	status, body = 404, `{"detail":"not found"}`
	_, err = c.Run(t.Context(), sc, "r1")
	assert.ErrorIs(t, err, svcclient.ErrNotFound)
	assert.False(t, svcclient.Transient(err))

	status, body = 409, `{"detail":{"message":"Cannot modify a closed evaluation.","run_id":"r1"}}`
	err = c.WriteResults(t.Context(), sc, []evaluation.Result{{RunID: "r1"}})
	assert.ErrorIs(t, err, svcclient.ErrClosed)

	status, body = 503, `{"detail":"down"}`
	_, err = c.Settle(t.Context(), sc, "r1")
	var se *svcclient.StatusError
	require.True(t, errors.As(err, &se))
	assert.Equal(t, 503, se.Status)
	assert.Contains(t, se.Error(), "/internal/evaluations/runs/r1/settle")
	assert.True(t, svcclient.Transient(err))

	status, body = 422, `{"detail":[{"loc":["body","results"]}]}`
	err = c.WriteResults(t.Context(), sc, []evaluation.Result{{RunID: "r1"}})
	assert.False(t, svcclient.Transient(err), "a refusal does not pass on a retry")

	srv.Close()
	_, err = c.Run(t.Context(), sc, "r1")
	assert.True(t, svcclient.Transient(err), "a service that is down")
}

// TestWritesAreBatched: a large write goes in WriteBatch-sized requests.
func TestWritesAreBatched(t *testing.T) {
	var sizes []int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b struct {
			Results []evaluation.Result `json:"results"`
		}
		_ = json.NewDecoder(r.Body).Decode(&b)
		sizes = append(sizes, len(b.Results))
		_, _ = io.WriteString(w, `{"count":0}`)
	}))
	defer srv.Close()
	c := registryclient.New(srv.URL, "tok", 5*time.Second, 0)
	require.NoError(t, c.WriteResults(t.Context(), scope.Scope{ProjectID: uuid.New()}, make([]evaluation.Result, registryclient.WriteBatch*2+1)))
	assert.Equal(t, []int{registryclient.WriteBatch, registryclient.WriteBatch, 1}, sizes)
}
