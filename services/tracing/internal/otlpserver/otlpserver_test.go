package otlpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.26.0"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	"github.com/assayhq/assay/pkg/apikey"
	"github.com/assayhq/assay/pkg/chspans"
	"github.com/assayhq/assay/pkg/chx"
	"github.com/assayhq/assay/pkg/httpx"
	"github.com/assayhq/assay/pkg/natsx"
	"github.com/assayhq/assay/pkg/spanmodel"
	"github.com/assayhq/assay/pkg/spanstream"
	"github.com/assayhq/assay/pkg/testutil/chtest"
	"github.com/assayhq/assay/pkg/testutil/natstest"
	"github.com/assayhq/assay/pkg/testutil/pgtest"
	"github.com/assayhq/assay/pkg/testutil/writertest"
	"github.com/assayhq/assay/services/tracing/internal/httpapi"
	"github.com/assayhq/assay/services/tracing/internal/ingest"
	"github.com/assayhq/assay/services/tracing/internal/otlpserver"
	"github.com/assayhq/assay/services/tracing/internal/query"
)

// otlpStack is the OTLP ports over real PostgreSQL (API keys), NATS,
// ClickHouse and the writer.
type otlpStack struct {
	h         *httpapi.Handler
	project   uuid.UUID
	key       string // "ApiKey ..."
	viewerKey string // a key whose role is viewer
	httpURL   string // the OTLP/HTTP server (port 4318's routes)
	grpcAddr  string
	metrics   *prometheus.Registry // both transports' export metrics
}

func newOTLPStack(t *testing.T) *otlpStack {
	ctx := context.Background()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))

	pool := pgtest.New(t)
	project, owner := pgtest.KeyOwner(t, pool)
	key := pgtest.Key(t, pool, project, owner, "")
	// A key with only the read permission, which the OTLP ports refuse.
	viewerKey := pgtest.Key(t, pool, project, owner, "viewer")
	keys := apikey.NewVerifier(pool, apikey.Config{CacheTTL: time.Minute, CacheEntries: 100}, log)

	ns := natstest.New(t)
	conn, err := natsx.Connect(natsx.Config{URL: ns.URL(), PublishTimeout: 2 * time.Second}, "test", log)
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Drain() })
	_, err = conn.EnsureStream(ctx, spanstream.StreamConfig(1<<30, time.Minute))
	require.NoError(t, err)
	chURL := chtest.NewURL(t)
	chCfg := chx.Config{URL: chURL, DialTimeout: 5 * time.Second}
	require.NoError(t, chspans.Migrate(ctx, chCfg, log))
	ch, err := chx.Open(ctx, chCfg)
	require.NoError(t, err)
	t.Cleanup(func() { ch.Close() })
	writertest.Start(t, ns.URL(), chURL)

	prices, _ := spanmodel.LoadPrices("")
	svc := ingest.NewService(ingest.NATSPublisher{P: natsx.NewPublisher(conn, natsx.Config{PublishTimeout: 2 * time.Second})}, &spanmodel.Normalizer{Prices: prices})
	h := &httpapi.Handler{Ingest: svc, Query: query.NewService(query.NewStore(ch, 10*time.Second), 1000),
		Limits: ingest.Limits{MaxBody: 10 << 20, MaxDecompressed: 10 << 20}, Log: log}

	otlpHTTP := httpx.NewServer(httpx.Config{}, log, "otlp")
	exports := otlpserver.NewMetrics(otlpHTTP.Metrics)
	otlpHTTP.Echo.Use(exports.HTTPMiddleware())
	otlpHTTP.Echo.Use(otlpserver.RequireAPIKey(keys))
	otlpserver.NewHTTP(svc, h.Limits).Register(otlpHTTP.Echo)
	hs := httptest.NewServer(otlpHTTP.Echo)
	t.Cleanup(hs.Close)

	grpcSrv := otlpserver.NewGRPC(svc, keys, 10<<20, log, exports.ServerOption())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	gctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- grpcSrv.Serve(gctx, ln) }()
	t.Cleanup(func() { stop(); <-done })
	return &otlpStack{h: h, project: project, key: "ApiKey " + key.String(), viewerKey: "ApiKey " + viewerKey.String(), httpURL: hs.URL, grpcAddr: ln.Addr().String(),
		metrics: otlpHTTP.Metrics}
}

// TestOTelSDKExporters sends traces with the real OpenTelemetry Go SDK
// exporters to the OTLP ports and reads them back through the query API,
// normalised.
func TestOTelSDKExporters(t *testing.T) {
	ctx := context.Background()
	st := newOTLPStack(t)
	auth := map[string]string{"Authorization": st.key}
	httpExp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(st.httpURL+"/v1/traces"), otlptracehttp.WithHeaders(auth))
	require.NoError(t, err)
	grpcExp, err := otlptracegrpc.New(ctx, otlptracegrpc.WithEndpoint(st.grpcAddr), otlptracegrpc.WithInsecure(),
		otlptracegrpc.WithHeaders(map[string]string{"authorization": st.key}))
	require.NoError(t, err)

	send := func(exp sdktrace.SpanExporter, name string) string {
		tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp),
			sdktrace.WithResource(resource.NewWithAttributes(semconv.SchemaURL, semconv.ServiceName("sdk-test"))))
		tr := tp.Tracer("assay-test")
		rctx, root := tr.Start(ctx, name)
		_, llm := tr.Start(rctx, "openai.chat")
		llm.SetAttributes(attribute.String("gen_ai.operation.name", "chat"), attribute.String("gen_ai.request.model", "gpt-4o"),
			attribute.Int("gen_ai.usage.input_tokens", 100), attribute.Int("gen_ai.usage.output_tokens", 20),
			attribute.String("ag.type.trace", "invocation"))
		llm.SetStatus(codes.Error, "rate limited")
		llm.End()
		root.End()
		require.NoError(t, tp.Shutdown(ctx))
		return root.SpanContext().TraceID().String()
	}
	ids := map[string]string{"http": send(httpExp, "via-http"), "grpc": send(grpcExp, "via-grpc")}

	for via, id := range ids {
		t.Run(via, func(t *testing.T) {
			var trace map[string]any
			require.Eventually(t, func() bool {
				trace = fetch(t, st.h, st.project, id)
				return trace != nil
			}, 30*time.Second, 50*time.Millisecond)
			root := trace["spans"].(map[string]any)["via-"+via].(map[string]any)
			ag := root["attributes"].(map[string]any)["ag"].(map[string]any)
			assert.Equal(t, map[string]any{"prompt": 100.0, "completion": 20.0, "total": 120.0}, ag["metrics"].(map[string]any)["tokens"].(map[string]any)["cumulative"])
			child := root["spans"].(map[string]any)["openai.chat"].(map[string]any)
			assert.Equal(t, "chat", child["span_type"])
			assert.Equal(t, "STATUS_CODE_ERROR", child["status_code"])
			assert.Equal(t, "rate limited", child["status_message"])
		})
	}

	// A wrong key is refused on both ports.
	req, _ := http.NewRequest("POST", st.httpURL+"/v1/traces", nil)
	req.Header.Set("Authorization", "ApiKey nope")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	badExp, err := otlptracegrpc.New(ctx, otlptracegrpc.WithEndpoint(st.grpcAddr), otlptracegrpc.WithInsecure(),
		otlptracegrpc.WithHeaders(map[string]string{"authorization": "ApiKey nope"}), otlptracegrpc.WithRetry(otlptracegrpc.RetryConfig{Enabled: false}))
	require.NoError(t, err)
	tp := sdktrace.NewTracerProvider()
	_, sp := tp.Tracer("x").Start(ctx, "x")
	sp.End()
	err = badExp.ExportSpans(ctx, []sdktrace.ReadOnlySpan{sp.(sdktrace.ReadOnlySpan)})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Unauthenticated")

	// A key without the write permission is refused with the roles 403,
	// in JSON and protobuf alike, and PermissionDenied over gRPC.
	for _, ct := range []string{"application/json", "application/x-protobuf"} {
		req, _ := http.NewRequest("POST", st.httpURL+"/v1/traces", strings.NewReader("{}"))
		req.Header.Set("Authorization", st.viewerKey)
		req.Header.Set("Content-Type", ct)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		assert.Equal(t, http.StatusForbidden, resp.StatusCode, ct)
		assert.JSONEq(t, `{"detail":{"message":"Your role (viewer) lacks the \"write\" permission.","permission":"write","role":"viewer"}}`, string(body), ct)
	}
	viewerExp, err := otlptracegrpc.New(ctx, otlptracegrpc.WithEndpoint(st.grpcAddr), otlptracegrpc.WithInsecure(),
		otlptracegrpc.WithHeaders(map[string]string{"authorization": st.viewerKey}), otlptracegrpc.WithRetry(otlptracegrpc.RetryConfig{Enabled: false}))
	require.NoError(t, err)
	err = viewerExp.ExportSpans(ctx, []sdktrace.ReadOnlySpan{sp.(sdktrace.ReadOnlySpan)})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "PermissionDenied")
	assert.Contains(t, err.Error(), `lacks the "write" permission`)
}

// fetch reads a trace through the internal API as the gateway would.
func fetch(t *testing.T, h *httpapi.Handler, project uuid.UUID, id string) map[string]any {
	srv := httpx.NewServer(httpx.Config{}, slog.New(slog.NewTextHandler(io.Discard, nil)), "tracing")
	srv.Echo.Use(httpx.RequireInternal("tok"))
	h.Register(srv.Echo)
	req := httptest.NewRequest("GET", "/api/traces/"+id, nil)
	req.Header.Set("X-Assay-Internal-Token", "tok")
	req.Header.Set("X-Assay-Project-Id", project.String())
	rec := httptest.NewRecorder()
	srv.Echo.ServeHTTP(rec, req)
	var out map[string]any
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &out))
	if out["count"] != 1.0 {
		return nil
	}
	return out["trace"].(map[string]any)
}

// TestInvalidUTF8OnBothPorts: protobuf strings must be UTF-8, and a span
// name or attribute with invalid bytes failed the whole request (500 on
// HTTP, Internal on gRPC). The bytes are replaced with U+FFFD and every
// span of the request is stored.
func TestInvalidUTF8OnBothPorts(t *testing.T) {
	st := newOTLPStack(t)
	request := func(tid byte) ptraceotlp.ExportRequest {
		td := ptrace.NewTraces()
		spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
		now := time.Now()
		for i, name := range []string{"fine", "caf\xe9"} {
			sp := spans.AppendEmpty()
			sp.SetTraceID(pcommon.TraceID{tid, 1})
			sp.SetSpanID(pcommon.SpanID{tid, byte(i + 1)})
			sp.SetName(name)
			sp.Attributes().PutStr("note", "x\xffy")
			sp.SetStartTimestamp(pcommon.NewTimestampFromTime(now))
			sp.SetEndTimestamp(pcommon.NewTimestampFromTime(now))
		}
		return ptraceotlp.NewExportRequestFromTraces(td)
	}
	readBack := func(t *testing.T, tid byte) {
		var trace map[string]any
		require.Eventually(t, func() bool {
			trace = fetch(t, st.h, st.project, fmt.Sprintf("%02x01%028d", tid, 0))
			return trace != nil && len(trace["spans"].(map[string]any)) == 2
		}, 30*time.Second, 50*time.Millisecond)
		sp := trace["spans"].(map[string]any)["caf\ufffd"].(map[string]any)
		assert.Equal(t, "x\ufffdy", sp["attributes"].(map[string]any)["note"])
	}
	t.Run("http", func(t *testing.T) {
		body, err := request(0xa1).MarshalProto()
		require.NoError(t, err)
		req, err := http.NewRequest("POST", st.httpURL+"/v1/traces", bytes.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Authorization", st.key)
		req.Header.Set("Content-Type", "application/x-protobuf")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		out, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode, string(out))
		readBack(t, 0xa1)
	})
	t.Run("grpc", func(t *testing.T) {
		conn, err := grpc.NewClient(st.grpcAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
		require.NoError(t, err)
		defer conn.Close()
		ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", st.key)
		resp, err := ptraceotlp.NewGRPCClient(conn).Export(ctx, request(0xa2))
		require.NoError(t, err)
		assert.Equal(t, int64(0), resp.PartialSuccess().RejectedSpans())
		readBack(t, 0xa2)
	})
}
