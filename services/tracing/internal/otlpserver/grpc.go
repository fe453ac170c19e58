package otlpserver

import (
	"context"
	"log/slog"
	"net"

	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	// gzip, as exporters send it with OTEL_EXPORTER_OTLP_COMPRESSION=gzip.
	// grpc-go bounds the inflated message by MaxRecvMsgSize (the
	// decompressed limit given to NewGRPC), so a small gzip bomb is refused
	// with RESOURCE_EXHAUSTED without being inflated past it.
	_ "google.golang.org/grpc/encoding/gzip"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/services/tracing/internal/admit"
	"github.com/assayhq/assay/services/tracing/internal/ingest"
)

// GRPC is the OTLP trace service over gRPC.
type GRPC struct {
	ptraceotlp.UnimplementedGRPCServer
	ingest *ingest.Service
	keys   Verifier
	log    *slog.Logger
	srv    *grpc.Server
}

// NewGRPC returns the gRPC server; messages are bounded by maxBytes, after
// decompression (identity or gzip). opts
// add server options (Metrics.ServerOption first, then admission control:
// admit.Gate.ServerOptions).
func NewGRPC(svc *ingest.Service, keys Verifier, maxBytes int, log *slog.Logger, opts ...grpc.ServerOption) *GRPC {
	g := &GRPC{ingest: svc, keys: keys, log: log}
	g.srv = grpc.NewServer(append(append(newBodyKeys().serverOptions(), grpc.MaxRecvMsgSize(maxBytes)), opts...)...)
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
	body := bodyKey(ctx)
	if body == nil { // not through the server's codec: the request's bytes again
		if body, err = req.MarshalProto(); err != nil {
			return ptraceotlp.NewExportResponse(), status.Error(codes.Internal, "re-encode request")
		}
	}
	raws, ok := bodyRaws(ctx)
	if !ok {
		raws = ingest.RawSpans(req.Traces())
	}
	rec := grpcExport(ctx)
	rec.decode(len(raws))
	res, err := g.ingest.Ingest(ctx, sc, raws, body)
	if err != nil {
		return ptraceotlp.NewExportResponse(), grpcError(err)
	}
	rec.reject(len(res.Rejected))
	resp := ptraceotlp.NewExportResponse()
	if len(res.Rejected) > 0 {
		out, _ := ingest.Response(res.Rejected, false)
		_ = resp.UnmarshalProto(out)
	}
	return resp, nil
}

// grpcError maps an error kind to the status code OTLP exporters act on:
// Unavailable and ResourceExhausted are retried (both carry RetryInfo), the
// rest are not.
func grpcError(err error) error {
	e := errs.From(err)
	code := map[errs.Kind]codes.Code{
		errs.Invalid: codes.InvalidArgument, errs.Unauthenticated: codes.Unauthenticated, errs.Forbidden: codes.PermissionDenied,
		errs.TooLarge: codes.InvalidArgument, errs.TooManyRequests: codes.ResourceExhausted,
		errs.Unavailable: codes.Unavailable,
	}[e.Kind]
	if code == codes.OK {
		code = codes.Internal
	}
	if code == codes.Unavailable || code == codes.ResourceExhausted {
		// With a retry delay: the exporters retry RESOURCE_EXHAUSTED
		// (a full span backlog) only when told when.
		return admit.RetryStatus(code, e.Msg)
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
