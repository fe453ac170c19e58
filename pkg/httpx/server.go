// Package httpx is the echo server every service runs: middleware, the single
// error renderer, /health, /ready, a draining shutdown, and /metrics on a
// listener of its own (RunMetrics).
package httpx

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/assayhq/assay/pkg/app"
)

// Config is the HTTP server's configuration. Variables: <PREFIX>_HTTP_*.
// The listen address is each service's own <PREFIX>_ADDR, since its default
// differs per service.
type Config struct {
	ReadHeaderTimeout time.Duration `split_words:"true" default:"10s" desc:"time allowed to read request headers"`
	ReadTimeout       time.Duration `split_words:"true" default:"60s" desc:"time allowed to read a whole request, body included"`
	WriteTimeout      time.Duration `split_words:"true" default:"300s" desc:"time allowed to write a response (long for LLM calls and streams)"`
	IdleTimeout       time.Duration `split_words:"true" default:"120s" desc:"keep-alive idle timeout"`
	ShutdownTimeout   time.Duration `split_words:"true" default:"20s" desc:"how long shutdown waits for in-flight requests to drain"`
	BodyLimit         string        `split_words:"true" default:"128M" desc:"largest request body accepted (echo size syntax: 10M, 1G)"`
}

// MaxHeaderBytes bounds a request's header block (net/http's default, made
// explicit so the 431 answer can name it).
const MaxHeaderBytes = http.DefaultMaxHeaderBytes

// Check reports whether one dependency is usable; it must honour ctx.
type Check func(ctx context.Context) error

// Server is an echo instance with the shared middleware and operational routes.
type Server struct {
	Echo    *echo.Echo
	Metrics *prometheus.Registry // services register their own collectors here

	cfg      Config
	log      *slog.Logger
	mu       sync.Mutex
	checks   map[string]Check
	draining atomic.Bool
	addr     chan string
}

// Option changes how NewServer builds a server.
type Option func(*options)

type options struct{ metrics *prometheus.Registry }

// SharedMetrics registers the server's request metrics on reg, the registry
// of another server of the same process (tracing's OTLP/HTTP port shares
// its API server's), so that one metrics listener shows both. The series
// differ by their service label.
func SharedMetrics(reg *prometheus.Registry) Option { return func(o *options) { o.metrics = reg } }

// NewServer builds a server for the named service. Routes are added to
// s.Echo; readiness checks with AddCheck. /metrics is not one of its
// routes: RunMetrics serves it on a listener of its own, since an API port
// (or an OTLP port behind a public load balancer) must not show per-route
// request counts to anyone who asks.
func NewServer(cfg Config, log *slog.Logger, service string, opts ...Option) *Server {
	var o options
	for _, f := range opts {
		f(&o)
	}
	s := &Server{
		Echo:    echo.New(),
		Metrics: o.metrics,
		cfg:     cfg,
		log:     log,
		checks:  map[string]Check{},
		addr:    make(chan string, 1),
	}
	if s.Metrics == nil {
		s.Metrics = prometheus.NewRegistry()
		s.Metrics.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}
	e := s.Echo
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = ErrorHandler(log)
	e.Pre(NormalizePath)
	e.Use(nosniff, recoverer(log), requestID, accessLog(log), instrument(s.Metrics, service), watchBody)
	if cfg.BodyLimit != "" {
		e.Use(bodyLimit(cfg.BodyLimit))
	}
	e.GET("/health", func(c echo.Context) error {
		return c.JSON(http.StatusOK, map[string]string{"status": "ok"})
	})
	e.GET("/ready", s.ready)
	return s
}

// MetricsHandler serves the server's registry in the Prometheus format.
func (s *Server) MetricsHandler() http.Handler {
	return promhttp.HandlerFor(s.Metrics, promhttp.HandlerOpts{})
}

// RunMetrics serves GET /metrics alone on addr (each service's
// <SERVICE>_METRICS_ADDR) until ctx is done. An empty addr serves nothing
// and returns when ctx is done.
func (s *Server) RunMetrics(ctx context.Context, addr string) error {
	if addr == "" {
		<-ctx.Done()
		return nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s (metrics): %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", s.MetricsHandler())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second,
		WriteTimeout: 30 * time.Second, ErrorLog: slog.NewLogLogger(s.log.Handler(), slog.LevelWarn)}
	s.log.Info("metrics listening", "addr", ln.Addr().String())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve metrics: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(sctx)
	return nil
}

// AddCheck registers a readiness check; /ready answers 503 while any fails.
func (s *Server) AddCheck(name string, c Check) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.checks[name] = c
}

func (s *Server) ready(c echo.Context) error {
	if s.draining.Load() {
		return c.JSON(http.StatusServiceUnavailable, map[string]any{"status": "draining"})
	}
	s.mu.Lock()
	checks := make(map[string]Check, len(s.checks))
	for k, v := range s.checks {
		checks[k] = v
	}
	s.mu.Unlock()

	ctx, cancel := context.WithTimeout(c.Request().Context(), 2*time.Second)
	defer cancel()
	type result struct {
		name string
		err  error
	}
	results := make(chan result, len(checks))
	for name, check := range checks {
		go func() { results <- result{name, check(ctx)} }()
	}
	status, failed := http.StatusOK, map[string]string{}
	for range checks {
		r := <-results
		if r.err != nil {
			status = http.StatusServiceUnavailable
			failed[r.name] = r.err.Error()
		}
	}
	if status != http.StatusOK {
		s.log.WarnContext(c.Request().Context(), "not ready", "failed", failed)
		return c.JSON(status, map[string]any{"status": "unavailable", "failed": failed})
	}
	return c.JSON(status, map[string]any{"status": "ready"})
}

// Addr returns the address the server listens on once Run has bound it.
// Tests that listen on port 0 use it.
func (s *Server) Addr(ctx context.Context) (string, error) {
	select {
	case a := <-s.addr:
		s.addr <- a
		return a, nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// Run listens on addr and serves until ctx is done, then stops reporting
// ready and drains in-flight requests for at most ShutdownTimeout. When
// app.Draining(ctx) closes first, /ready answers 503 from then on while
// requests are still served.
func (s *Server) Run(ctx context.Context, addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	return s.Serve(ctx, ln)
}

// Serve is Run on an existing listener.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{
		Handler:           s.Echo,
		ReadHeaderTimeout: s.cfg.ReadHeaderTimeout,
		ReadTimeout:       s.cfg.ReadTimeout,
		WriteTimeout:      s.cfg.WriteTimeout,
		IdleTimeout:       s.cfg.IdleTimeout,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
		MaxHeaderBytes:    MaxHeaderBytes,
		ConnState:         connState,
	}
	// net/http's own answers to unparseable requests become JSON (rawerrors.go).
	ln = jsonListener{Listener: ln, headerLimit: MaxHeaderBytes}
	s.addr <- ln.Addr().String()
	s.log.Info("http server listening", "addr", ln.Addr().String())

	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	// From the signal (app.Draining) until ctx ends, /ready answers 503 and
	// the listener still accepts: load balancers take the instance out
	// before its port closes.
	drain := app.Draining(ctx)
	for {
		select {
		case err := <-errc:
			return fmt.Errorf("serve http: %w", err)
		case <-drain:
			s.draining.Store(true)
			drain = nil
			continue
		case <-ctx.Done():
		}
		break
	}
	s.draining.Store(true)
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.ShutdownTimeout)
	defer cancel()
	s.log.Info("http server draining", "timeout", s.cfg.ShutdownTimeout.String())
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("drain http: %w", err)
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve http: %w", err)
	}
	s.log.Info("http server stopped")
	return nil
}

// isOperational is true for the routes that skip auth, body limits and logs.
func isOperational(c echo.Context) bool {
	switch c.Request().URL.Path {
	case "/health", "/ready":
		return true
	}
	return false
}
