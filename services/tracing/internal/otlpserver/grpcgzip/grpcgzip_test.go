// Package grpcgzip_test checks that the OTLP/gRPC port accepts gzip, as
// exporters configured with OTEL_EXPORTER_OTLP_COMPRESSION=gzip send it.
//
// It is a package of its own because otlpserver's tests import the
// OpenTelemetry SDK exporters, which register gRPC's gzip codec for the
// whole test binary and would hide a server that does not register it. The
// client here compresses through its own per-connection compressor, which
// registers nothing, so only the server under test can make gzip work.
package grpcgzip_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/assayhq/assay/pkg/apikey"
	"github.com/assayhq/assay/pkg/natsx"
	"github.com/assayhq/assay/pkg/spanmodel"
	"github.com/assayhq/assay/pkg/spanstream"
	"github.com/assayhq/assay/pkg/testutil/natstest"
	"github.com/assayhq/assay/pkg/testutil/pgtest"
	"github.com/assayhq/assay/services/tracing/internal/ingest"
	"github.com/assayhq/assay/services/tracing/internal/otlpserver"
)

// maxBytes is the server's message bound, decompressed.
const maxBytes = 1 << 20

func TestGRPCAcceptsGzipWithinTheDecompressedLimit(t *testing.T) {
	ctx := context.Background()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	pool := pgtest.New(t)
	project, owner := pgtest.KeyOwner(t, pool)
	key := pgtest.Key(t, pool, project, owner, "")
	keys := apikey.NewVerifier(pool, apikey.Config{CacheTTL: time.Minute, CacheEntries: 100}, log)

	ns := natstest.New(t)
	conn, err := natsx.Connect(natsx.Config{URL: ns.URL(), PublishTimeout: 2 * time.Second}, "test", log)
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Drain() })
	_, err = conn.EnsureStream(ctx, spanstream.StreamConfig(1<<30, time.Minute))
	require.NoError(t, err)
	prices, _ := spanmodel.LoadPrices("")
	svc := ingest.NewService(ingest.NATSPublisher{P: natsx.NewPublisher(conn, natsx.Config{PublishTimeout: 2 * time.Second})}, &spanmodel.Normalizer{Prices: prices})

	srv := otlpserver.NewGRPC(svc, keys, maxBytes, log)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	gctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(gctx, ln) }()
	t.Cleanup(func() { stop(); <-done })

	//lint:ignore SA1019 the legacy compressor is per connection and registers nothing (see the package comment)
	cc, err := grpc.NewClient(ln.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithCompressor(grpc.NewGZIPCompressor())) //nolint:staticcheck
	require.NoError(t, err)
	t.Cleanup(func() { _ = cc.Close() })
	client := ptraceotlp.NewGRPCClient(cc)
	actx := metadata.AppendToOutgoingContext(ctx, "authorization", "ApiKey "+key.String())

	request := func(attr string) ptraceotlp.ExportRequest {
		td := ptrace.NewTraces()
		sp := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
		sp.SetTraceID(pcommon.TraceID{0xc1, 1})
		sp.SetSpanID(pcommon.SpanID{0xc1, 1})
		sp.SetName("gzipped")
		sp.Attributes().PutStr("note", attr)
		now := time.Now()
		sp.SetStartTimestamp(pcommon.NewTimestampFromTime(now))
		sp.SetEndTimestamp(pcommon.NewTimestampFromTime(now))
		return ptraceotlp.NewExportRequestFromTraces(td)
	}

	t.Run("a gzipped export is ingested", func(t *testing.T) {
		resp, err := client.Export(actx, request("hello"))
		require.NoError(t, err)
		require.Equal(t, int64(0), resp.PartialSuccess().RejectedSpans())
	})

	t.Run("a gzip bomb is refused by its decompressed size", func(t *testing.T) {
		// 4 MiB of one letter compresses to a few KiB: small on the wire,
		// four times the bound once inflated.
		req := request(strings.Repeat("a", 4*maxBytes))
		raw, err := req.MarshalProto()
		require.NoError(t, err)
		var wire bytes.Buffer
		require.NoError(t, grpc.NewGZIPCompressor().Do(&wire, raw)) //nolint:staticcheck
		require.Less(t, wire.Len(), maxBytes/4, "the compressed message is well under the bound")
		_, err = client.Export(actx, req)
		require.Error(t, err)
		require.Equal(t, codes.ResourceExhausted, status.Code(err), err.Error())
	})
}
