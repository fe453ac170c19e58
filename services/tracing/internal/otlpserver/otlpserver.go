// Package otlpserver serves OTLP on the standard ports (gRPC 4317, HTTP
// 4318) so exporters reach tracing without the gateway hop. Here tracing
// checks API keys itself, with the same cached verifier the gateway uses.
package otlpserver

import (
	"context"
	"errors"
	"log/slog"
	"net"

	"github.com/labstack/echo/v4"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/assayhq/assay/pkg/apikey"
	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/httpx"
	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/services/tracing/internal/ingest"
)

// Verifier resolves an API key to its project; apikey.Verifier implements it.
type Verifier interface {
	Verify(ctx context.Context, raw string) (scope.Scope, error)
}

func authenticate(ctx context.Context, v Verifier, header string) (scope.Scope, error) {
	raw, ok := apikey.FromAuthorization(header)
	if !ok {
		return scope.Scope{}, httpx.ErrUnauthorized
	}
	sc, err := v.Verify(ctx, raw)
	if errors.Is(err, apikey.ErrInvalid) {
		return scope.Scope{}, httpx.ErrUnauthorized
	}
	if err != nil {
		return scope.Scope{}, errs.Wrap(errs.Unavailable, "tracing.key_lookup", err)
	}
	return sc, nil
}

// RequireAPIKey authenticates HTTP requests by their Authorization header
// and puts the key's project into the request context.
func RequireAPIKey(v Verifier) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			switch c.Request().URL.Path {
			case "/health", "/ready", "/metrics":
				return next(c)
			}
			sc, err := authenticate(c.Request().Context(), v, c.Request().Header.Get("Authorization"))
			if err != nil {
				return err
			}
			c.SetRequest(c.Request().WithContext(scope.With(c.Request().Context(), sc)))
			return next(c)
		}
	}
}

// GRPC is the OTLP trace service over gRPC.
type GRPC struct {
	ptraceotlp.UnimplementedGRPCServer
	ingest *ingest.Service
	keys   Verifier
	log    *slog.Logger
	srv    *grpc.Server
}

// NewGRPC returns the gRPC server; messages are bounded by maxBytes.
func NewGRPC(svc *ingest.Service, keys Verifier, maxBytes int, log *slog.Logger) *GRPC {
	g := &GRPC{ingest: svc, keys: keys, log: log}
	g.srv = grpc.NewServer(grpc.MaxRecvMsgSize(maxBytes))
	ptraceotlp.RegisterGRPCServer(g.srv, g)
	return g
}

// Export ingests one request. The API key comes in the "authorization"
// metadata, as OTLP exporters send headers.
func (g *GRPC) Export(ctx context.Context, req ptraceotlp.ExportRequest) (ptraceotlp.ExportResponse, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	auth := ""
	if v := md.Get("authorization"); len(v) > 0 {
		auth = v[0]
	}
	sc, err := authenticate(ctx, g.keys, auth)
	if err != nil {
		return ptraceotlp.NewExportResponse(), grpcError(err)
	}
	body, err := req.MarshalProto()
	if err != nil {
		return ptraceotlp.NewExportResponse(), status.Error(codes.Internal, "re-encode request")
	}
	res, err := g.ingest.Ingest(ctx, sc, ingest.RawSpans(req.Traces()), body)
	if err != nil {
		return ptraceotlp.NewExportResponse(), grpcError(err)
	}
	resp := ptraceotlp.NewExportResponse()
	if len(res.Rejected) > 0 {
		out, _ := ingest.Response(res.Rejected, false)
		_ = resp.UnmarshalProto(out)
	}
	return resp, nil
}

// grpcError maps an error kind to the status code OTLP exporters act on:
// Unavailable and ResourceExhausted are retried, the rest are not.
func grpcError(err error) error {
	e := errs.From(err)
	code := map[errs.Kind]codes.Code{
		errs.Invalid: codes.InvalidArgument, errs.Unauthenticated: codes.Unauthenticated,
		errs.TooLarge: codes.InvalidArgument, errs.TooManyRequests: codes.ResourceExhausted,
		errs.Unavailable: codes.Unavailable,
	}[e.Kind]
	if code == codes.OK {
		code = codes.Internal
	}
	return status.Error(code, e.Msg)
}

// Serve serves gRPC on ln until ctx is done, then stops gracefully.
func (g *GRPC) Serve(ctx context.Context, ln net.Listener) error {
	errc := make(chan error, 1)
	go func() { errc <- g.srv.Serve(ln) }()
	g.log.Info("otlp grpc listening", "addr", ln.Addr().String())
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		g.srv.GracefulStop()
		return nil
	}
}

// Run listens on addr and serves.
func (g *GRPC) Run(ctx context.Context, addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return g.Serve(ctx, ln)
}
