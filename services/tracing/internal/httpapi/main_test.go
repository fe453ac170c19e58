package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/pkg/chspans"
	"github.com/assayhq/assay/pkg/chx"
	"github.com/assayhq/assay/pkg/httpx"
	"github.com/assayhq/assay/pkg/natsx"
	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/pkg/spanmodel"
	"github.com/assayhq/assay/pkg/spanstream"
	"github.com/assayhq/assay/pkg/testutil/chtest"
	"github.com/assayhq/assay/pkg/testutil/natstest"
	"github.com/assayhq/assay/pkg/testutil/writertest"
	"github.com/assayhq/assay/services/tracing/internal/dedup"
	"github.com/assayhq/assay/services/tracing/internal/httpapi"
	"github.com/assayhq/assay/services/tracing/internal/ingest"
	"github.com/assayhq/assay/services/tracing/internal/query"
)

const token = "test-internal-token"

// stack is the tracing API over real NATS and ClickHouse, with the real
// writer process moving spans between them.
type stack struct {
	url     string
	project uuid.UUID
	nats    *natstest.Server
	conn    *natsx.Conn
	chURL   string
	writer  *writertest.Writer
	handler *httpapi.Handler
}

type options struct {
	noWriter    bool
	streamBytes int64
	limits      ingest.Limits
	queryLimits query.Limits // zero fields take the defaults
	// runtimeToken, when set, admits the runtime as a second caller with
	// this token (as cmd/tracing's per-pair tokens do).
	runtimeToken string
}

func newStack(t testing.TB, opts ...func(*options)) *stack {
	t.Helper()
	o := options{streamBytes: 1 << 30, limits: ingest.Limits{MaxBody: 10 << 20, MaxDecompressed: 10 << 20}}
	for _, f := range opts {
		f(&o)
	}
	ctx := context.Background()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	ns := natstest.New(t)
	conn, err := natsx.Connect(natsx.Config{URL: ns.URL(), PublishTimeout: 2 * time.Second}, "test", log)
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Drain() })
	_, err = conn.EnsureStream(ctx, spanstream.StreamConfig(o.streamBytes, time.Minute))
	require.NoError(t, err)
	_, err = conn.EnsureStream(ctx, spanstream.DeadLetterStreamConfig())
	require.NoError(t, err)

	chURL := chtest.NewURL(t)
	chCfg := chx.Config{URL: chURL, DialTimeout: 5 * time.Second, Migrate: true}
	require.NoError(t, chspans.Migrate(ctx, chCfg, log))
	ch, err := chx.Open(ctx, chCfg)
	require.NoError(t, err)
	t.Cleanup(func() { ch.Close() })

	prices, err := spanmodel.LoadPrices("")
	require.NoError(t, err)
	deletes, err := dedup.Open(t.Context(), conn.JS, time.Minute)
	require.NoError(t, err)
	h := &httpapi.Handler{
		Ingest: ingest.NewService(dedup.Publisher{P: ingest.NATSPublisher{P: natsx.NewPublisher(conn, natsx.Config{PublishTimeout: 2 * time.Second})}, Epochs: deletes},
			&spanmodel.Normalizer{Prices: prices}),
		Deletes: deletes,
		Query:   query.NewService(query.NewStore(ch, 10*time.Second, o.queryLimits), 10000),
		Limits:  o.limits,
		Log:     log,
	}
	h.Ingest.Direct = ingest.ClickHouseRows{Conn: ch} // as cmd/tracing wires it
	srv := httpx.NewServer(httpx.Config{BodyLimit: "64M"}, log, "tracing")
	callers := httpx.Callers{"gateway": token}
	if o.runtimeToken != "" {
		callers["runtime"] = o.runtimeToken
	}
	srv.Echo.Use(httpx.RequireCallers(callers))
	h.Register(srv.Echo)
	ts := httptest.NewServer(srv.Echo)
	t.Cleanup(ts.Close)

	s := &stack{url: ts.URL, project: uuid.New(), nats: ns, conn: conn, chURL: chURL, handler: h}
	if !o.noWriter {
		s.writer = writertest.Start(t, ns.URL(), chURL)
	}
	return s
}

type response struct {
	status int
	header http.Header
	body   []byte
}

func (r response) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(r.body, &m), string(r.body))
	return m
}

func (s *stack) do(t *testing.T, method, path string, body []byte, header map[string]string) response {
	t.Helper()
	req, err := http.NewRequest(method, s.url+path, bytes.NewReader(body))
	require.NoError(t, err)
	scope.Set(req.Header, token, scope.Scope{ProjectID: s.project})
	if body != nil && header["Content-Type"] == "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return response{status: resp.StatusCode, header: resp.Header, body: b}
}

func (s *stack) doJSON(t *testing.T, method, path string, body any) response {
	t.Helper()
	var b []byte
	if body != nil {
		var err error
		b, err = json.Marshal(body)
		require.NoError(t, err)
	}
	return s.do(t, method, path, b, nil)
}

// eventually polls a query until cond holds: ingest is asynchronous by
// contract, so tests wait for the writer, never for a fixed time.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if cond() {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s", what)
}
