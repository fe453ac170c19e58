package httpx

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
	"github.com/labstack/gommon/bytes"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/logx"
)

// HeaderRequestID carries the request id between clients, the gateway and services.
const HeaderRequestID = "X-Request-Id"

// NormalizePath rewrites the request path to its canonical form before
// routing: any number of leading "/api" segments are removed and a trailing
// slash is dropped, so "/api/api/keys/" and "/keys" reach the same route and
// no request is ever redirected. Routes are registered in canonical form.
func NormalizePath(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		r.URL.Path = CanonicalPath(r.URL.Path)
		r.URL.RawPath = ""
		return next(c)
	}
}

// CanonicalPath strips leading "/api" segments and a trailing slash.
func CanonicalPath(p string) string {
	for p == "/api" || strings.HasPrefix(p, "/api/") {
		p = p[len("/api"):]
	}
	if len(p) > 1 {
		p = strings.TrimRight(p, "/")
	}
	if p == "" {
		p = "/"
	}
	return p
}

// nosniff marks every answer, errors included, as of the type it says: a
// browser tricked into loading a JSON or text answer as a script or a
// stylesheet must not guess otherwise and run it.
func nosniff(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		c.Response().Header().Set("X-Content-Type-Options", "nosniff")
		return next(c)
	}
}

func requestID(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		id := c.Request().Header.Get(HeaderRequestID)
		if id == "" || len(id) > 128 {
			id = uuid.NewString()
			c.Request().Header.Set(HeaderRequestID, id)
		}
		c.Response().Header().Set(HeaderRequestID, id)
		ctx := logx.With(c.Request().Context(), slog.String("request_id", id))
		c.SetRequest(c.Request().WithContext(ctx))
		return next(c)
	}
}

// recoverer turns a panic into a logged 500 instead of a dropped connection.
func recoverer(log *slog.Logger) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) (err error) {
			defer func() {
				if r := recover(); r != nil {
					if r == http.ErrAbortHandler {
						panic(r)
					}
					log.ErrorContext(c.Request().Context(), "panic in handler", "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
					err = fmt.Errorf("panic: %v", r)
				}
			}()
			return next(c)
		}
	}
}

func accessLog(log *slog.Logger) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if isOperational(c) {
				return next(c)
			}
			start := time.Now()
			err := next(c)
			if err != nil {
				c.Error(err) // render now so the logged status is the real one
			}
			req := c.Request()
			log.InfoContext(req.Context(), "request",
				"method", req.Method,
				"path", req.URL.Path,
				"route", c.Path(),
				"status", c.Response().Status,
				"bytes_out", c.Response().Size,
				"duration_ms", float64(time.Since(start).Microseconds())/1000,
			)
			return nil
		}
	}
}

func instrument(reg *prometheus.Registry, service string) echo.MiddlewareFunc {
	requests := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name:        "http_requests_total",
		Help:        "HTTP requests by route and status code.",
		ConstLabels: prometheus.Labels{"service": service},
	}, []string{"method", "route", "code"})
	duration := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:        "http_request_duration_seconds",
		Help:        "HTTP request latency by route.",
		ConstLabels: prometheus.Labels{"service": service},
		Buckets:     []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
	}, []string{"method", "route"})
	reg.MustRegister(requests, duration)
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			start := time.Now()
			err := next(c)
			if err != nil {
				c.Error(err)
			}
			route := c.Path()
			if route == "" {
				route = "unmatched"
			}
			m := c.Request().Method
			requests.WithLabelValues(m, route, strconv.Itoa(c.Response().Status)).Inc()
			duration.WithLabelValues(m, route).Observe(time.Since(start).Seconds())
			return nil
		}
	}
}

// bodyLimit rejects bodies over limit with a 413 that names the limit: up
// front when Content-Length says so, else when a read crosses it (chunked
// bodies). The read error is that same *errs.Error, so a handler that
// returns it, or the gateway's proxy that streams the body upstream,
// answers 413 and not 5xx. Unlike echo's BodyLimit the reader is not
// pooled: a proxy's transport may still read a body after the handler
// returned.
func bodyLimit(limit string) echo.MiddlewareFunc {
	n, err := bytes.Parse(limit)
	if err != nil {
		panic(fmt.Errorf("httpx: invalid body limit %q: %w", limit, err))
	}
	tooLarge := errs.Message(errs.TooLarge, "request.too_large", "request body is larger than the limit of "+limit, map[string]any{"limit": limit})
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if isOperational(c) {
				return next(c)
			}
			req := c.Request()
			if req.ContentLength > n {
				return tooLarge
			}
			if req.Body != nil && req.Body != http.NoBody {
				req.Body = &limitedBody{ReadCloser: req.Body, left: n, err: tooLarge}
			}
			// A handler may wrap the read error in its own (a 400 for an
			// unreadable body): the limit still decides the answer.
			err := next(c)
			if errors.Is(err, tooLarge) {
				return tooLarge
			}
			return err
		}
	}
}

// limitedBody fails every read once more than its limit has been read.
type limitedBody struct {
	io.ReadCloser
	left int64
	err  error
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left < 0 {
		return 0, b.err
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	if b.left < 0 {
		return n, b.err
	}
	return n, err
}

// StatusClientClosed is the status a request is logged and counted with
// when its client went away before it was answered (nginx's 499): a body
// that stopped arriving, a connection closed while the handler ran.
const StatusClientClosed = 499

// bodyWatchKey holds, in the request context, the *atomic.Bool that
// watchBody sets when reading the request body failed.
type bodyWatchKey struct{}

// watchBody notes when reading the request body fails (the connection
// closed or reset mid-body, a read deadline, broken chunking): however a
// handler then reports the read error, even flattened into a message of
// its own, the error renderer can tell the client's failure from the
// server's. Errors pass through unchanged.
func watchBody(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		if req.Body == nil || req.Body == http.NoBody {
			return next(c)
		}
		failed := &atomic.Bool{}
		req.Body = &watchedBody{ReadCloser: req.Body, failed: failed}
		c.SetRequest(req.WithContext(context.WithValue(req.Context(), bodyWatchKey{}, failed)))
		return next(c)
	}
}

type watchedBody struct {
	io.ReadCloser
	failed *atomic.Bool
}

func (b *watchedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && err != io.EOF {
		b.failed.Store(true)
	}
	return n, err
}

// clientGone reports whether the request failed because its client went
// away: its body could not be read to the end, or its context was
// cancelled (net/http does that when the connection closes).
func clientGone(c echo.Context) bool {
	ctx := c.Request().Context()
	if failed, ok := ctx.Value(bodyWatchKey{}).(*atomic.Bool); ok && failed.Load() {
		return true
	}
	return errors.Is(ctx.Err(), context.Canceled)
}
