package httpapi_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/pkg/httpx"
	"github.com/assayhq/assay/pkg/testutil/pgtest"
)

// TestNosniffOnEveryAnswer: every answer of the API, the gateway's own
// (success, 401, 404) and the proxied ones, whether the service behind
// sets the header or not, carries X-Content-Type-Options: nosniff once, so
// a browser never runs a JSON or text body it was tricked into loading as
// a script or a page.
func TestNosniffOnEveryAnswer(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	svc := httpx.NewServer(httpx.Config{}, log, "registry") // a service's real middleware
	svc.Echo.GET("/testsets/ok", func(c echo.Context) error { return c.JSON(http.StatusOK, map[string]any{"count": 0}) })
	svc.Echo.GET("/testsets/text", func(c echo.Context) error { return c.String(http.StatusOK, "<script>alert(1)</script>") })
	up := httptest.NewServer(svc.Echo)
	t.Cleanup(up.Close)
	s := startStackUpstream(t, pgtest.NewURL(t), nil, up.URL, "1M")
	a := s.account(t, "nosniff@example.com")
	bare := startStack(t, pgtest.NewURL(t)) // its services: a recorder that sets no such header
	b := bare.account(t, "nosniff2@example.com")

	for _, tc := range []struct {
		s          *stack
		path, auth string
		status     int
	}{
		{s, "/api/testsets/ok", a.auth(), http.StatusOK},
		{s, "/api/testsets/text", a.auth(), http.StatusOK},
		{s, "/api/testsets/missing", a.auth(), http.StatusNotFound},
		{s, "/api/keys", a.auth(), http.StatusOK},
		{s, "/api/keys", "", http.StatusUnauthorized},
		{s, "/api/nowhere", a.auth(), http.StatusNotFound},
		{s, "/health", "", http.StatusOK},
		{bare, "/api/testsets/x", b.auth(), http.StatusOK},
	} {
		r := tc.s.do(t, "GET", tc.path, tc.auth, nil)
		require.Equal(t, tc.status, r.status, "%s: %s", tc.path, r.body)
		require.Equal(t, []string{"nosniff"}, r.header.Values("X-Content-Type-Options"), tc.path)
	}
}
