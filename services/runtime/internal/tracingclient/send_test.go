package tracingclient_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/services/runtime/internal/tracingclient"
)

// TestSendRetriesWhatMayPass: a batch tracing did not take for a reason
// that may pass (a 503 while a replica restarts) is sent again, the same
// bytes with the runtime's scope and token; a refusal (400) is not.
func TestSendRetriesWhatMayPass(t *testing.T) {
	sc := scope.Scope{ProjectID: uuid.New(), UserID: uuid.New()}
	var calls atomic.Int32
	var refuse atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got, ok := scope.Parse(r.Header, "tok")
		switch n := calls.Add(1); {
		case r.URL.Path != "/internal/spans/batch" || !ok || got != sc || string(body) != "batch":
			w.WriteHeader(http.StatusUnauthorized)
		case refuse.Load():
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `{"detail":"body.project_id"}`)
		case n == 1:
			w.WriteHeader(http.StatusServiceUnavailable)
		default:
			w.WriteHeader(http.StatusNoContent)
		}
	}))
	t.Cleanup(srv.Close)
	sink := tracingclient.New(srv.URL, "tok", 5*time.Second)
	require.NoError(t, sink.Send(t.Context(), sc, []byte("batch")))
	assert.EqualValues(t, 2, calls.Load(), "the 503 was not retried")

	refuse.Store(true)
	calls.Store(0)
	err := sink.Send(t.Context(), sc, []byte("batch"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "400")
	assert.EqualValues(t, 1, calls.Load(), "a refusal was retried")
}
