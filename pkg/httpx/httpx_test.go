package httpx_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/httpx"
	"github.com/assayhq/assay/pkg/logx"
	"github.com/assayhq/assay/pkg/natsx"
	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/pkg/testutil/natstest"
	"github.com/assayhq/assay/pkg/testutil/pgtest"
)

func TestCanonicalPath(t *testing.T) {
	for in, want := range map[string]string{
		"/api/keys/": "/keys", "/api/api/keys": "/keys", "/keys": "/keys", "/": "/", "/api": "/",
		"/api/": "/", "/apis/x": "/apis/x", "/services/a/v0/invoke/": "/services/a/v0/invoke", "/api/x//": "/api/x"[4:],
	} {
		assert.Equal(t, want, httpx.CanonicalPath(in), in)
	}
}

// serve runs s on a loopback port until the test ends and returns its base URL.
func serve(t *testing.T, s *httpx.Server) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	t.Cleanup(func() { cancel(); require.NoError(t, <-done) })
	return "http://" + ln.Addr().String()
}

// serveMetrics serves s's metrics as RunMetrics does, on a port of its own.
func serveMetrics(t *testing.T, s *httpx.Server) string {
	t.Helper()
	ts := httptest.NewServer(s.MetricsHandler())
	t.Cleanup(ts.Close)
	return ts.URL
}

// TestSharedMetrics: two servers of one process (tracing's API and OTLP
// ports) count their requests in one registry, told apart by the service
// label, and neither answers /metrics itself.
func TestSharedMetrics(t *testing.T) {
	api := newServer()
	log := logx.NewTo(io.Discard, logx.Config{Level: slog.LevelError})
	otlp := httpx.NewServer(httpx.Config{ShutdownTimeout: 5 * time.Second}, log, "test_otlp", httpx.SharedMetrics(api.Metrics))
	for _, s := range []*httpx.Server{api, otlp} {
		url := serve(t, s)
		status, _ := get(t, url+"/health")
		require.Equal(t, http.StatusOK, status)
		status, body := get(t, url+"/metrics")
		require.Equal(t, http.StatusNotFound, status, body)
	}
	_, metrics := get(t, serveMetrics(t, api)+"/metrics")
	for _, svc := range []string{"test", "test_otlp"} {
		require.Contains(t, metrics, `http_requests_total{code="200",method="GET",route="/health",service="`+svc+`"} 1`)
	}
	require.Contains(t, metrics, "go_goroutines ")
}

func newServer() *httpx.Server {
	log := logx.NewTo(io.Discard, logx.Config{Level: slog.LevelError})
	return httpx.NewServer(httpx.Config{ReadHeaderTimeout: time.Second, ShutdownTimeout: 5 * time.Second, BodyLimit: "1K"}, log, "test")
}

func get(t *testing.T, url string, header ...string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

func TestRequireInternal(t *testing.T) {
	s := newServer()
	s.Echo.Use(httpx.RequireInternal("internal-token-0123456789"))
	s.Echo.GET("/whoami", func(c echo.Context) error {
		sc, err := httpx.ProjectScope(c)
		if err != nil {
			return err
		}
		return c.String(http.StatusOK, sc.ProjectID.String()+" "+sc.UserID.String())
	})
	url := serve(t, s)
	project, user := "0192d3a0-0000-7000-8000-000000000001", "0192d3a0-0000-7000-8000-000000000002"

	for _, tc := range []struct {
		name    string
		headers []string
		status  int
	}{
		{"no token", []string{scope.HeaderProject, project}, http.StatusUnauthorized},
		{"wrong token", []string{scope.HeaderToken, "internal-token-0123456780", scope.HeaderProject, project}, http.StatusUnauthorized},
		{"bad project header", []string{scope.HeaderToken, "internal-token-0123456789", scope.HeaderProject, "x"}, http.StatusUnauthorized},
		{"token without project", []string{scope.HeaderToken, "internal-token-0123456789"}, http.StatusUnauthorized},
		{"token and scope", []string{scope.HeaderToken, "internal-token-0123456789", scope.HeaderProject, project, scope.HeaderUser, user}, http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body := get(t, url+"/api/whoami/", tc.headers...)
			require.Equal(t, tc.status, status, body)
			if status == http.StatusOK {
				assert.Equal(t, project+" "+user, body)
			} else {
				assert.JSONEq(t, `{"detail":{"message":"Unauthorized"}}`, body)
			}
		})
	}
	for _, p := range []string{"/health", "/ready"} {
		status, _ := get(t, url+p)
		assert.Equal(t, http.StatusOK, status, p)
	}
	// /metrics is served on the metrics listener only (RunMetrics): here it
	// is a route like any other, behind the token.
	status, body := get(t, url+"/metrics")
	assert.Equal(t, http.StatusUnauthorized, status, body)
}

func TestErrorRendering(t *testing.T) {
	s := newServer()
	s.Echo.GET("/conflict", func(echo.Context) error {
		return errs.Message(errs.Conflict, "x.conflict", "taken", map[string]any{"slug": "a"})
	})
	s.Echo.GET("/plain", func(echo.Context) error { return errs.New(errs.Invalid, "x.bad", "bad input") })
	s.Echo.GET("/bug", func(echo.Context) error { return io.ErrUnexpectedEOF })
	s.Echo.GET("/panic", func(echo.Context) error { panic("boom") })
	s.Echo.GET("/down", func(echo.Context) error { return errs.New(errs.Unavailable, "x.down", "later") })
	s.Echo.POST("/echo", func(c echo.Context) error { _, err := io.ReadAll(c.Request().Body); return err })
	url := serve(t, s)

	for path, want := range map[string]struct {
		status int
		body   string
	}{
		"/conflict": {409, `{"detail":{"message":"taken","slug":"a"}}`},
		"/plain":    {400, `{"detail":"bad input"}`},
		"/bug":      {500, `{"detail":{"message":"An unexpected error occurred. Please try again later or contact support."}}`},
		"/panic":    {500, `{"detail":{"message":"An unexpected error occurred. Please try again later or contact support."}}`},
		"/down":     {503, `{"detail":"later"}`},
		"/nothing":  {404, `{"detail":"Not Found"}`},
	} {
		status, body := get(t, url+path)
		assert.Equal(t, want.status, status, path)
		assert.JSONEq(t, want.body, body, path)
	}
	res, err := http.Post(url+"/echo", "application/json", strings.NewReader(strings.Repeat("x", 2048)))
	require.NoError(t, err)
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	assert.Equal(t, http.StatusRequestEntityTooLarge, res.StatusCode)
	assert.JSONEq(t, `{"detail":{"message":"request body is larger than the limit of 1K","limit":"1K"}}`, string(b))
}

// TestReadinessFollowsNATS stops a real JetStream server under a service and
// starts it again: /ready answers 503 while it is down, then 200.
func TestReadinessFollowsNATS(t *testing.T) {
	ns := natstest.New(t)
	log := logx.NewTo(io.Discard, logx.Config{Level: slog.LevelError})
	nc, err := natsx.Connect(natsx.Config{URL: ns.URL(), PublishTimeout: time.Second}, "test", log)
	require.NoError(t, err)
	t.Cleanup(func() { _ = nc.Drain() })

	s := newServer()
	s.AddCheck("nats", nc.Check)
	url := serve(t, s)
	ready := func() int { status, _ := get(t, url+"/ready"); return status }

	require.Eventually(t, func() bool { return ready() == http.StatusOK }, 10*time.Second, 50*time.Millisecond)
	ns.Shutdown()
	require.Eventually(t, func() bool { return ready() == http.StatusServiceUnavailable }, 10*time.Second, 50*time.Millisecond)
	status, body := get(t, url+"/ready")
	assert.Equal(t, http.StatusServiceUnavailable, status)
	assert.Contains(t, body, `"nats"`, "the failing check is named")
	ns.Start()
	require.Eventually(t, func() bool { return ready() == http.StatusOK }, 10*time.Second, 50*time.Millisecond)
}

// TestShutdownDrains checks that a request in flight when shutdown starts
// completes, and that /ready reports draining meanwhile.
func TestShutdownDrains(t *testing.T) {
	s := newServer()
	started := make(chan struct{})
	s.Echo.GET("/slow", func(c echo.Context) error {
		close(started)
		time.Sleep(300 * time.Millisecond)
		return c.String(http.StatusOK, "done")
	})
	ctx, cancel := context.WithCancel(context.Background())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	url := "http://" + ln.Addr().String()

	result := make(chan string, 1)
	go func() { _, body := get(t, url+"/slow"); result <- body }()
	<-started
	cancel()
	assert.Equal(t, "done", <-result)
	require.NoError(t, <-done)
}

// TestChunkedBodyOverLimit reads a chunked body past the limit: the read
// fails with the 413 naming the limit, also when a handler wraps that
// read error in its own 400.
func TestChunkedBodyOverLimit(t *testing.T) {
	s := newServer()
	s.Echo.POST("/plain", func(c echo.Context) error { _, err := io.ReadAll(c.Request().Body); return err })
	s.Echo.POST("/wrapped", func(c echo.Context) error {
		if _, err := io.ReadAll(c.Request().Body); err != nil {
			return errs.Wrap(errs.Invalid, "x.unreadable", err)
		}
		return nil
	})
	url := serve(t, s)
	for _, path := range []string{"/plain", "/wrapped"} {
		// A reader of unknown length is sent chunked.
		res, err := http.Post(url+path, "application/json", io.MultiReader(strings.NewReader(strings.Repeat("x", 4096))))
		require.NoError(t, err)
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		assert.Equal(t, http.StatusRequestEntityTooLarge, res.StatusCode, path)
		assert.JSONEq(t, `{"detail":{"message":"request body is larger than the limit of 1K","limit":"1K"}}`, string(b), path)
	}
}

// TestDatabaseRefusalIsA422 returns real PostgreSQL errors caused by the
// values sent (a NUL in text, \u0000 in jsonb, an index row over its
// maximum) from a handler: each is a 422 naming the SQLSTATE, never a 500;
// other database errors stay 500.
func TestDatabaseRefusalIsA422(t *testing.T) {
	pool := pgtest.New(t)
	_, err := pool.Exec(context.Background(), `CREATE TABLE slugs (slug text PRIMARY KEY)`)
	require.NoError(t, err)
	s := newServer()
	s.Echo.GET("/:case", func(c echo.Context) error {
		ctx := c.Request().Context()
		var err error
		switch c.Param("case") {
		case "nul":
			_, err = pool.Exec(ctx, `SELECT $1::text`, "a\x00b")
		case "jsonb":
			_, err = pool.Exec(ctx, `SELECT $1::jsonb`, `{"a":"\u0000"}`)
		case "index":
			var long strings.Builder
			for long.Len() < 20000 { // random, so compression cannot shrink it under the index row maximum
				long.WriteString(uuid.NewString())
			}
			_, err = pool.Exec(ctx, `INSERT INTO slugs VALUES ($1)`, long.String())
		case "bug":
			_, err = pool.Exec(ctx, `SELECT * FROM no_such_table`)
		}
		return fmt.Errorf("store: %w", err)
	})
	url := serve(t, s)
	for path, want := range map[string]struct {
		status int
		state  string
	}{"/nul": {422, "22021"}, "/jsonb": {422, "22P05"}, "/index": {422, "54000"}, "/bug": {500, ""}} {
		status, body := get(t, url+path)
		assert.Equal(t, want.status, status, path+": "+body)
		if want.state != "" {
			assert.Contains(t, body, `"sqlstate":"`+want.state+`"`, path)
		}
	}
}

// syncBuffer is a log sink a test reads while the server writes to it.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestAbandonedUploadIsNotAServerError: a client that announces a body and
// hangs up halfway through is no failure of the server. Whatever the
// handler makes of the read error (returned as is, as the registry's JSON
// bodies did, or with its cause flattened into text), the request is
// logged as closed by the client (499, not at ERROR) and counted so.
func TestAbandonedUploadIsNotAServerError(t *testing.T) {
	logs := &syncBuffer{}
	log := logx.NewTo(logs, logx.Config{Level: slog.LevelDebug})
	s := httpx.NewServer(httpx.Config{ReadHeaderTimeout: time.Second, ShutdownTimeout: 5 * time.Second, BodyLimit: "1M"}, log, "test")
	s.Echo.POST("/raw", func(c echo.Context) error {
		_, err := io.ReadAll(c.Request().Body)
		return err
	})
	s.Echo.POST("/flattened", func(c echo.Context) error {
		if _, err := io.ReadAll(c.Request().Body); err != nil {
			return fmt.Errorf("import the file: %v", err)
		}
		return nil
	})
	base := serve(t, s)
	for _, route := range []string{"/raw", "/flattened"} {
		conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
		require.NoError(t, err)
		_, err = fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: text/csv\r\nContent-Length: 100000\r\n\r\na,b\n1,2\n", route)
		require.NoError(t, err)
		require.NoError(t, conn.Close())
		require.Eventually(t, func() bool { return strings.Contains(logs.String(), `"route":"`+route+`"`) },
			10*time.Second, 10*time.Millisecond, "no access log line for %s", route)
	}
	out := logs.String()
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		require.NotContains(t, line, `"level":"ERROR"`, "an abandoned upload logged as a server error")
		if strings.Contains(line, `"msg":"request"`) {
			require.Contains(t, line, `"status":499`, line)
		}
	}
	require.Contains(t, out, "client closed the request")
	_, metrics := get(t, serveMetrics(t, s)+"/metrics")
	require.Contains(t, metrics, `http_requests_total{code="499",method="POST",route="/raw",service="test"} 1`)
}

// TestRequireCallers: a service called by several others admits each with
// the token of its own pair, knows which one called, and refuses any other
// token; a set in which two callers share a token, or none has one, is
// refused before it can serve.
func TestRequireCallers(t *testing.T) {
	s := newServer()
	s.Echo.Use(httpx.RequireCallers(httpx.Callers{"gateway": "gateway-to-registry-0123", "runtime": "runtime-to-registry-0123", "tracing": ""}))
	s.Echo.GET("/whoami", func(c echo.Context) error {
		return c.String(http.StatusOK, scope.CallerFrom(c.Request().Context()))
	})
	url := serve(t, s)
	project := "0192d3a0-0000-7000-8000-000000000001"
	for token, want := range map[string]string{"gateway-to-registry-0123": "gateway", "runtime-to-registry-0123": "runtime"} {
		status, body := get(t, url+"/api/whoami/", scope.HeaderToken, token, scope.HeaderProject, project)
		require.Equal(t, http.StatusOK, status, body)
		assert.Equal(t, want, body)
	}
	for _, token := range []string{"runtime-to-tracing-0123", "", "gateway-to-registry-012"} {
		status, _ := get(t, url+"/api/whoami/", scope.HeaderToken, token, scope.HeaderProject, project)
		assert.Equal(t, http.StatusUnauthorized, status, "token %q", token)
	}

	err := httpx.Callers{"gateway": "same-token-0123456789", "runtime": "same-token-0123456789"}.Validate("REGISTRY")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "REGISTRY_TOKEN_FROM_GATEWAY and REGISTRY_TOKEN_FROM_RUNTIME are the same")
	err = httpx.Callers{"gateway": "", "runtime": ""}.Validate("TRACING")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "TRACING_TOKEN_FROM_<CALLER>")
	assert.NoError(t, httpx.Callers{"gateway": "a-token-0123456789", "runtime": ""}.Validate("TRACING"))
}
