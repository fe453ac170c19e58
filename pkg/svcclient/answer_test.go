package svcclient_test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/pkg/svcclient"
)

// TestCallMapsEveryAnswer: the one mapping of an answer to an error, on
// a real HTTP server: 2xx decodes, 404 is ErrNotFound, a 409 naming a
// closed run ErrClosed (another 409 is not), other statuses a StatusError
// with the route, the status and the start of the body, and no answer an
// UnreachableError; Transient holds for 5xx, 429 and no answer only.
func TestCallMapsEveryAnswer(t *testing.T) {
	var status int
	var body string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
	defer srv.Close()
	c := svcclient.New(srv.URL, "tok", 5*time.Second)
	sc := scope.Scope{ProjectID: uuid.New()}

	status, body = 201, `{"n":7}`
	var out struct{ N int }
	require.NoError(t, c.Call(t.Context(), sc, http.MethodPost, "/x", map[string]any{}, &out, 1<<10))
	assert.Equal(t, 7, out.N)

	status, body = 200, `not json`
	err := c.Call(t.Context(), sc, http.MethodGet, "/x", nil, &out, 1<<10)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "GET /x: unreadable answer")

	tests := []struct {
		status    int
		body      string
		notFound  bool
		closed    bool
		transient bool
	}{
		{status: 404, body: `{"detail":"not found"}`, notFound: true},
		{status: 409, body: `{"detail":{"message":"Cannot modify a closed evaluation."}}`, closed: true},
		{status: 409, body: `{"detail":"revision already exists"}`},
		{status: 422, body: `{"detail":[{"loc":["body","results"]}]}`},
		{status: 429, body: `slow down`, transient: true},
		{status: 500, body: strings.Repeat("x", 1000), transient: true},
		{status: 503, body: `{"detail":"down"}`, transient: true},
	}
	for _, tt := range tests {
		status, body = tt.status, tt.body
		err := c.Call(t.Context(), sc, http.MethodPost, "/a/b", map[string]any{}, nil, 1<<10)
		var se *svcclient.StatusError
		require.True(t, errors.As(err, &se), "%d", tt.status)
		assert.Equal(t, "POST /a/b", se.Route)
		assert.Equal(t, tt.status, se.Status)
		assert.Equal(t, tt.body[:min(len(tt.body), 300)], se.Body, "the start of the body")
		assert.Equal(t, tt.body, string(se.Answer))
		assert.Contains(t, err.Error(), fmt.Sprintf("POST /a/b answered %d: ", tt.status))
		assert.Equal(t, tt.notFound, errors.Is(err, svcclient.ErrNotFound), "%d not found", tt.status)
		assert.Equal(t, tt.closed, errors.Is(err, svcclient.ErrClosed), "%d closed", tt.status)
		assert.Equal(t, tt.transient, svcclient.Transient(err), "%d transient", tt.status)
	}

	srv.Close()
	err = c.Call(t.Context(), sc, http.MethodGet, "/x", nil, nil, 1<<10)
	var ue *svcclient.UnreachableError
	require.True(t, errors.As(err, &ue))
	assert.Equal(t, "GET /x", ue.Route)
	assert.True(t, svcclient.Transient(err), "a service that is down")
	assert.False(t, svcclient.Transient(nil))
}
