package admit_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
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

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

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
	"github.com/assayhq/assay/services/tracing/internal/admit"
	"github.com/assayhq/assay/services/tracing/internal/httpapi"
	"github.com/assayhq/assay/services/tracing/internal/ingest"
	"github.com/assayhq/assay/services/tracing/internal/otlpserver"
	"github.com/assayhq/assay/services/tracing/internal/query"
)

const (
	spansPerRequest = 40
	token           = "tok"
)

// outcome is what one request was answered: its trace, and whether it
// was accepted.
type outcome struct {
	via      string
	trace    string
	accepted bool
}

// TestOverloadLosesNothing overloads a tracing and a writer (real NATS,
// ClickHouse, PostgreSQL for the gRPC port's API key, real HTTP and gRPC)
// with an admission bound of about two requests, from many senders at once
// on the three ways in: OTLP/HTTP, native ingest and OTLP/gRPC. Every
// answer is an acceptance or a refusal that says when to retry (429 or 503
// with Retry-After; RESOURCE_EXHAUSTED or UNAVAILABLE with RetryInfo),
// never an error or a time-out; every accepted span is stored exactly once,
// and nothing of a refused request is stored.
func TestOverloadLosesNothing(t *testing.T) {
	ctx := context.Background()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))

	pool := pgtest.New(t)
	project, owner := pgtest.KeyOwner(t, pool)
	key := pgtest.Key(t, pool, project, owner, "")
	keys := apikey.NewVerifier(pool, apikey.Config{CacheTTL: time.Minute, CacheEntries: 100}, log)

	ns := natstest.New(t)
	conn, err := natsx.Connect(natsx.Config{URL: ns.URL(), PublishTimeout: 5 * time.Second}, "test", log)
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
	svc := ingest.NewService(ingest.NATSPublisher{P: natsx.NewPublisher(conn, natsx.Config{PublishTimeout: 5 * time.Second})}, &spanmodel.Normalizer{Prices: prices})
	h := &httpapi.Handler{Ingest: svc, Query: query.NewService(query.NewStore(ch, 10*time.Second), 1000),
		Limits: ingest.Limits{MaxBody: 10 << 20, MaxDecompressed: 10 << 20}, Log: log}

	body, err := otlpRequest("00", 1).MarshalProto()
	require.NoError(t, err)
	// About two requests at once; the senders below are many more.
	gate := admit.New(admit.Config{MaxBytes: int64(len(body)) * 5 / 2, ProjectShare: 0.5, UnknownSize: 1 << 20})
	srv := httpx.NewServer(httpx.Config{}, log, "tracing")
	srv.Echo.Use(httpx.RequireInternal(token))
	srv.Echo.Use(gate.Middleware())
	h.Register(srv.Echo)
	hs := httptest.NewServer(srv.Echo)
	t.Cleanup(hs.Close)

	grpcSrv := otlpserver.NewGRPC(svc, keys, 10<<20, log, gate.ServerOptions()...)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	gctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- grpcSrv.Serve(gctx, ln) }()
	t.Cleanup(func() { stop(); <-done })
	cc, err := grpc.NewClient(ln.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	t.Cleanup(func() { cc.Close() })
	grpcClient := ptraceotlp.NewGRPCClient(cc)

	client := &http.Client{Timeout: 30 * time.Second}
	post := func(path, contentType string, body []byte) (*http.Response, error) {
		req, _ := http.NewRequest("POST", hs.URL+path, bytes.NewReader(body))
		req.Header.Set("Content-Type", contentType)
		req.Header.Set("X-Assay-Internal-Token", token)
		req.Header.Set("X-Assay-Project-Id", project.String())
		return client.Do(req)
	}
	// send makes one request on one way in and checks its answer.
	send := func(via, trace string) (bool, error) {
		switch via {
		case "grpc":
			gctx := metadata.AppendToOutgoingContext(ctx, "authorization", "ApiKey "+key.String())
			gctx, cancel := context.WithTimeout(gctx, 30*time.Second)
			defer cancel()
			resp, err := grpcClient.Export(gctx, otlpRequest(trace, spansPerRequest))
			if err == nil {
				if r := resp.PartialSuccess().RejectedSpans(); r != 0 {
					return false, fmt.Errorf("grpc: %d spans rejected", r)
				}
				return true, nil
			}
			st := status.Convert(err)
			if st.Code() != codes.Unavailable && st.Code() != codes.ResourceExhausted {
				return false, fmt.Errorf("grpc: %s", st)
			}
			for _, d := range st.Details() {
				if ri, ok := d.(*errdetails.RetryInfo); ok && ri.RetryDelay.AsDuration() > 0 {
					return false, nil
				}
			}
			return false, fmt.Errorf("grpc: %s without RetryInfo", st.Code())
		default:
			var resp *http.Response
			var err error
			if via == "otlp" {
				b, _ := otlpRequest(trace, spansPerRequest).MarshalProto()
				resp, err = post("/api/otlp/v1/traces", "application/x-protobuf", b)
			} else {
				resp, err = post("/api/spans/ingest", "application/json", nativeRequest(trace, spansPerRequest))
			}
			if err != nil {
				return false, fmt.Errorf("%s: %w", via, err)
			}
			out, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			switch resp.StatusCode {
			case http.StatusOK, http.StatusAccepted:
				if via == "otlp" {
					er := ptraceotlp.NewExportResponse()
					if err := er.UnmarshalProto(out); err != nil || er.PartialSuccess().RejectedSpans() != 0 {
						return false, fmt.Errorf("otlp: accepted %x", out)
					}
				}
				if via == "native" {
					var r struct{ Count int }
					if err := json.Unmarshal(out, &r); err != nil || r.Count != spansPerRequest {
						return false, fmt.Errorf("native: accepted %s", out)
					}
				}
				return true, nil
			case http.StatusTooManyRequests, http.StatusServiceUnavailable:
				if resp.Header.Get("Retry-After") == "" {
					return false, fmt.Errorf("%s: %d without Retry-After", via, resp.StatusCode)
				}
				return false, nil
			}
			return false, fmt.Errorf("%s: %d %s", via, resp.StatusCode, out)
		}
	}

	// Six senders per way in, each sending new traces (no retries) until
	// its way in has seen enough of both answers, or 40 requests.
	var mu sync.Mutex
	var outcomes []outcome
	var failures []string
	taken, refused := map[string]int{}, map[string]int{}
	var wg sync.WaitGroup
	for s := 0; s < 18; s++ {
		via := []string{"otlp", "native", "grpc"}[s%3]
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 40; i++ {
				mu.Lock()
				enough := taken[via] >= 5 && refused[via] >= 5
				mu.Unlock()
				if enough {
					return
				}
				trace := fmt.Sprintf("%02x%02x", s+1, i) // never the invalid all-zero id
				ok, err := send(via, trace)
				mu.Lock()
				switch {
				case err != nil:
					failures = append(failures, err.Error())
				case ok:
					taken[via]++
				default:
					refused[via]++
				}
				if err == nil {
					outcomes = append(outcomes, outcome{via: via, trace: traceID(trace), accepted: ok})
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	require.Empty(t, failures, "every answer is an acceptance or a refusal with a retry delay")

	accepted := map[string]bool{}
	for _, o := range outcomes {
		if o.accepted {
			accepted[o.trace] = true
		}
	}
	t.Logf("accepted %v, refused %v (refusals: %d full, %d over share)", taken, refused, gate.Full.Load(), gate.OverShare.Load())
	for _, via := range []string{"otlp", "native", "grpc"} {
		require.Positive(t, taken[via], "%s: some requests get through", via)
		require.Positive(t, refused[via], "%s: the bound refuses some of this many at once", via)
	}
	assert.Zero(t, gate.InFlight(), "every admitted request released its bytes")

	// Every accepted span stored exactly once, nothing of a refused request.
	stored := func() map[string]uint64 {
		rows, err := ch.Query(ctx, `SELECT trace_id, count() FROM spans FINAL WHERE project_id = ? GROUP BY trace_id`, project.String())
		require.NoError(t, err)
		defer rows.Close()
		out := map[string]uint64{}
		for rows.Next() {
			var id string
			var n uint64
			require.NoError(t, rows.Scan(&id, &n))
			out[id] = n
		}
		return out
	}
	var got map[string]uint64
	deadline := time.Now().Add(90 * time.Second)
	for got = stored(); len(got) < len(accepted) && time.Now().Before(deadline); got = stored() {
		time.Sleep(200 * time.Millisecond)
	}
	// Let anything that should not be there have its chance to arrive.
	time.Sleep(time.Second)
	got = stored()
	for trace := range accepted {
		assert.EqualValues(t, spansPerRequest, got[trace], "trace %s: every accepted span once", trace)
	}
	for trace, n := range got {
		assert.True(t, accepted[trace], "trace %s (%d spans) was refused, yet stored", trace, n)
	}
	var uniq, all uint64
	require.NoError(t, ch.QueryRow(ctx, `SELECT uniqExact(trace_id, span_id), count() FROM spans FINAL WHERE project_id = ?`, project.String()).Scan(&uniq, &all))
	assert.Equal(t, uint64(len(accepted)*spansPerRequest), uniq)
	assert.Equal(t, uniq, all)
}

// traceID is the 32-hex trace id of a short test name.
func traceID(name string) string { return strings.Repeat("0", 32-len(name)) + name }

func idBytes(name string) (tid pcommon.TraceID) {
	b, _ := hex.DecodeString(traceID(name))
	copy(tid[:], b)
	return tid
}

// otlpRequest is one trace of n ~1 KB spans, one root.
func otlpRequest(name string, n int) ptraceotlp.ExportRequest {
	td := ptrace.NewTraces()
	spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	now := time.Now()
	for i := 0; i < n; i++ {
		sp := spans.AppendEmpty()
		sp.SetTraceID(idBytes(name))
		sp.SetSpanID(pcommon.SpanID{0, 0, 0, 0, 0, 0, 1, byte(i + 1)})
		if i > 0 {
			sp.SetParentSpanID(pcommon.SpanID{0, 0, 0, 0, 0, 0, 1, 1})
		}
		sp.SetName("llm.call")
		sp.SetStartTimestamp(pcommon.NewTimestampFromTime(now))
		sp.SetEndTimestamp(pcommon.NewTimestampFromTime(now.Add(time.Millisecond)))
		sp.Attributes().PutStr("gen_ai.request.model", "gpt-4o-mini")
		sp.Attributes().PutStr("input.value", strings.Repeat("lorem ipsum ", 80))
	}
	return ptraceotlp.NewExportRequestFromTraces(td)
}

// nativeRequest is the same trace as native flat spans.
func nativeRequest(name string, n int) []byte {
	t := time.Now().UTC().Format(time.RFC3339Nano)
	spans := make([]map[string]any, 0, n)
	for i := 0; i < n; i++ {
		s := map[string]any{"trace_id": traceID(name), "span_id": fmt.Sprintf("%016x", 0x100+i+1), "span_name": "llm.call",
			"start_time": t, "end_time": t, "attributes": map[string]any{"input": strings.Repeat("lorem ipsum ", 80)}}
		if i > 0 {
			s["parent_id"] = fmt.Sprintf("%016x", 0x101)
		}
		spans = append(spans, s)
	}
	b, _ := json.Marshal(map[string]any{"spans": spans})
	return b
}
