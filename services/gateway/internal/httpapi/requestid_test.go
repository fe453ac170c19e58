package httpapi_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/pkg/httpx"
	"github.com/assayhq/assay/pkg/testutil/pgtest"
)

// TestRequestIDOnceOnProxiedResponses: the gateway and the service behind
// it both stamp X-Request-Id on their answers (the same id: the gateway
// passes it on); a client must see it once, on success and on errors, with
// or without an id of its own.
func TestRequestIDOnceOnProxiedResponses(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	svc := httpx.NewServer(httpx.Config{}, log, "registry") // a service's real middleware
	svc.Echo.GET("/testsets/ok", func(c echo.Context) error { return c.JSON(http.StatusOK, map[string]any{"count": 0}) })
	up := httptest.NewServer(svc.Echo)
	t.Cleanup(up.Close)
	s := startStackUpstream(t, pgtest.NewURL(t), nil, up.URL, "1M")
	a := s.account(t, "rid@example.com")

	for _, tc := range []struct {
		path   string
		status int
	}{{"/api/testsets/ok", http.StatusOK}, {"/api/testsets/missing", http.StatusNotFound}} {
		r := s.do(t, "GET", tc.path, a.auth(), nil, "X-Request-Id", "req-abc")
		require.Equal(t, tc.status, r.status, string(r.body))
		assert.Equal(t, []string{"req-abc"}, r.header.Values("X-Request-Id"), tc.path)

		r = s.do(t, "GET", tc.path, a.auth(), nil)
		require.Equal(t, tc.status, r.status)
		ids := r.header.Values("X-Request-Id")
		require.Len(t, ids, 1, "%s: %v", tc.path, ids)
		assert.NotEmpty(t, ids[0])
	}
	// The gateway's own answers carry it once too.
	r := s.do(t, "GET", "/api/profile", a.auth(), nil)
	assert.Len(t, r.header.Values("X-Request-Id"), 1)
}
