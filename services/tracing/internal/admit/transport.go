package admit

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/stats"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/assayhq/assay/pkg/apikey"
	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/httpx"
	"github.com/assayhq/assay/pkg/scope"
)

// ingestPaths are the routes that take spans: OTLP/HTTP on its own port
// and behind the gateway, and the native ingest routes.
var ingestPaths = []string{"/v1/traces", "/spans/ingest", "/traces/ingest"}

// IsIngest tells whether r sends spans.
func IsIngest(r *http.Request) bool {
	if r.Method != http.MethodPost {
		return false
	}
	for _, p := range ingestPaths {
		if strings.HasSuffix(r.URL.Path, p) {
			return true
		}
	}
	return false
}

// Middleware admits each ingest request as its body arrives: a first
// reservation of at most firstBytes before the handler runs (refused at
// once when the service is full), then every byte read past it, under the
// body's read deadline (Config.BodyGrace, Config.BodyMinRate). A refusal
// mid-body answers 503 or 429, a body too slow 408, whatever the handler
// made of its failed read. It must run after the middleware that puts the
// caller's scope in the context (the tenant is the scope's project).
// Other routes pass untouched.
func (g *Gate) Middleware() echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		if g == nil {
			return next
		}
		return func(c echo.Context) error {
			r := c.Request()
			if !IsIngest(r) {
				return next(c)
			}
			tenant := ""
			if sc, ok := scope.From(r.Context()); ok {
				tenant = sc.ProjectID.String()
			}
			first := r.ContentLength
			if first < 0 {
				first = g.cfg.UnknownSize
			}
			first = min(first, firstBytes)
			h, err := g.hold(tenant, first)
			if err != nil {
				return refuse(c, err)
			}
			defer h.Release()
			b := &body{rc: r.Body, hold: h, reserved: first, want: r.ContentLength, ctl: http.NewResponseController(c.Response()),
				start: time.Now(), grace: g.cfg.BodyGrace, rate: g.cfg.BodyMinRate}
			r.Body = b
			err = next(c)
			if b.failed != nil && !c.Response().Committed {
				return refuse(c, b.failed)
			}
			return err
		}
	}
}

// refuse answers a refusal here rather than through the error handler,
// which logs every 5xx: under overload that is thousands of lines a second
// about an expected state.
func refuse(c echo.Context, err error) error {
	e := errs.From(err)
	status := httpx.Status(e.Kind)
	if errors.Is(err, ErrSlowBody) {
		status = http.StatusRequestTimeout
		c.Response().Header().Set("Connection", "close") // the rest of the body is not read
	} else {
		c.Response().Header().Set("Retry-After", strconv.Itoa(int(RetryAfter.Seconds())))
	}
	return c.JSON(status, httpx.ErrorBody{Detail: e.Msg})
}

// body counts a request body's bytes into its hold as they arrive, and
// keeps the connection's read deadline at grace + received/rate from the
// start, so a body must keep coming at rate or be cut off.
type body struct {
	rc       io.ReadCloser
	hold     *Hold
	reserved int64 // bytes held: the first reservation, then what arrived
	got      int64
	want     int64 // the announced length, -1 when unknown
	ctl      *http.ResponseController
	start    time.Time
	grace    time.Duration
	rate     int64
	deadline time.Time // the read deadline last set
	failed   error     // ErrFull, ErrOverShare or ErrSlowBody, once
}

func (b *body) Read(p []byte) (int, error) {
	if b.failed != nil {
		return 0, b.failed
	}
	if b.rate > 0 {
		due := b.start.Add(b.grace + time.Duration(float64(b.got)/float64(b.rate)*float64(time.Second)))
		if !due.After(time.Now()) {
			b.failed = ErrSlowBody
			return 0, b.failed
		}
		// The deadline only moves later; setting it again for less than
		// 100 ms more is not worth a call on every small read.
		if b.deadline.IsZero() || due.Sub(b.deadline) > 100*time.Millisecond {
			if b.ctl.SetReadDeadline(due) == nil {
				b.deadline = due
			}
		}
	}
	n, err := b.rc.Read(p)
	b.got += int64(n)
	if more := b.got - b.reserved; more > 0 {
		if gerr := b.hold.Grow(more); gerr != nil {
			b.failed = gerr
			return n, gerr
		}
		b.reserved = b.got
	}
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded):
		b.failed = ErrSlowBody
		return n, b.failed
	case (err != nil || b.want >= 0 && b.got >= b.want) && !b.deadline.IsZero():
		// At the end of the body (its error, or all the bytes announced:
		// a reader that stops there never sees EOF) the deadline is
		// lifted: the server's
		// background read that watches for a closed connection while the
		// handler works would otherwise cancel the request when it fires.
		_ = b.ctl.SetReadDeadline(time.Time{})
		b.deadline = time.Time{}
	}
	return n, err
}

func (b *body) Close() error { return b.rc.Close() }

// sizeKey holds, in a gRPC call's context, the size of its request message
// as StatsHandler saw it decoded.
type sizeKey struct{}

// StatsHandler records each gRPC request message's size for
// UnaryInterceptor: gRPC reports it (stats.InPayload) after decoding the
// message and before calling the interceptor, in the same context.
type StatsHandler struct{}

// TagRPC gives the call a place for its size.
func (StatsHandler) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context {
	return context.WithValue(ctx, sizeKey{}, new(atomic.Int64))
}

// HandleRPC records the request message's uncompressed size.
func (StatsHandler) HandleRPC(ctx context.Context, s stats.RPCStats) {
	if in, ok := s.(*stats.InPayload); ok {
		if p, ok := ctx.Value(sizeKey{}).(*atomic.Int64); ok {
			p.Add(int64(in.Length))
		}
	}
}

// TagConn is a no-op.
func (StatsHandler) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context { return ctx }

// HandleConn is a no-op.
func (StatsHandler) HandleConn(context.Context, stats.ConnStats) {}

// ServerOptions are the gRPC server options that put the gate in front of
// every unary call: the size recorder and the interceptor. The tenant on
// the OTLP gRPC port is the API key's prefix (a key belongs to one
// project; the key is checked after admission, by the service).
func (g *Gate) ServerOptions() []grpc.ServerOption {
	if g == nil {
		return nil
	}
	return []grpc.ServerOption{grpc.StatsHandler(StatsHandler{}), grpc.ChainUnaryInterceptor(g.unary)}
}

func (g *Gate) unary(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	n := int64(-1)
	if p, ok := ctx.Value(sizeKey{}).(*atomic.Int64); ok {
		n = p.Load()
	}
	tenant := ""
	if md, ok := metadata.FromIncomingContext(ctx); ok {
		if v := md.Get("authorization"); len(v) > 0 {
			if raw, ok := apikey.FromAuthorization(v[0]); ok {
				if k, ok := apikey.Parse(raw); ok {
					tenant = k.Prefix
				}
			}
		}
	}
	release, err := g.Acquire(tenant, n)
	if err != nil {
		return nil, GRPCStatus(err)
	}
	defer release()
	return handler(ctx, req)
}

// GRPCStatus is a refusal as gRPC status: UNAVAILABLE for a full service,
// RESOURCE_EXHAUSTED for a tenant over its share, both with a retry delay.
func GRPCStatus(err error) error {
	code := codes.Unavailable
	if errs.From(err).Kind == errs.TooManyRequests {
		code = codes.ResourceExhausted
	}
	return RetryStatus(code, errs.From(err).Msg)
}

// RetryStatus is a gRPC status with a RetryInfo detail of RetryAfter: the
// OTLP exporters retry RESOURCE_EXHAUSTED only when it carries one.
func RetryStatus(code codes.Code, msg string) error {
	st := status.New(code, msg)
	if d, err := st.WithDetails(&errdetails.RetryInfo{RetryDelay: durationpb.New(RetryAfter)}); err == nil {
		st = d
	}
	return st.Err()
}
