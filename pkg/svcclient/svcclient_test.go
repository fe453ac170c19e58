package svcclient_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/pkg/svcclient"
)

// TestGetCarriesScopeAndBoundsTheAnswer: a GET has no body, carries the
// token and scope the receiving service checks, and reads at most limit
// bytes; a service that is down is an error, a refusal a status.
func TestGetCarriesScopeAndBoundsTheAnswer(t *testing.T) {
	sc := scope.Scope{ProjectID: uuid.New(), UserID: uuid.New()}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, ok := scope.Parse(r.Header, "tok")
		body, _ := io.ReadAll(r.Body)
		switch {
		case r.Method != http.MethodGet || len(body) != 0:
			w.WriteHeader(http.StatusMethodNotAllowed)
		case !ok || got != sc:
			w.WriteHeader(http.StatusUnauthorized)
		default:
			_, _ = w.Write([]byte("0123456789"))
		}
	}))
	c := svcclient.New(srv.URL+"/", "tok", 5*time.Second)
	status, answer, err := c.Get(t.Context(), sc, "/x", 4)
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, status)
	assert.Equal(t, "0123", string(answer))

	status, _, err = svcclient.New(srv.URL, "other", time.Second).Get(t.Context(), sc, "/x", 10)
	require.NoError(t, err)
	assert.Equal(t, http.StatusUnauthorized, status)

	srv.Close()
	_, _, err = c.Get(t.Context(), sc, "/x", 10)
	assert.Error(t, err)
}
