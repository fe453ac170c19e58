package admit_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/pkg/httpx"
	"github.com/assayhq/assay/pkg/natsx"
	"github.com/assayhq/assay/pkg/spanmodel"
	"github.com/assayhq/assay/pkg/spanstream"
	"github.com/assayhq/assay/pkg/testutil/natstest"
	"github.com/assayhq/assay/services/tracing/internal/admit"
	"github.com/assayhq/assay/services/tracing/internal/httpapi"
	"github.com/assayhq/assay/services/tracing/internal/ingest"
	"github.com/assayhq/assay/services/tracing/internal/query"
)

// trickleConfig is the bound of the slow-client tests: 1 MiB, with short
// body deadlines so that the test takes about a second.
var trickleConfig = admit.Config{MaxBytes: 1 << 20, ProjectShare: 0.5, UnknownSize: 1 << 20,
	BodyGrace: 500 * time.Millisecond, BodyMinRate: 4 << 10}

// ingestServer is tracing's internal API (real HTTP, real NATS) behind
// gate; nothing here reads ClickHouse.
func ingestServer(t *testing.T, gate *admit.Gate) *httptest.Server {
	t.Helper()
	hs, _, _ := ingestStack(t, gate)
	return hs
}

// ingestStack is ingestServer with its NATS: the connection ingest
// publishes on, and the server's URL (for a writer).
func ingestStack(t *testing.T, gate *admit.Gate) (*httptest.Server, *natsx.Conn, string) {
	t.Helper()
	ctx := context.Background()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	ns := natstest.New(t)
	conn, err := natsx.Connect(natsx.Config{URL: ns.URL(), PublishTimeout: 5 * time.Second}, "test", log)
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Drain() })
	_, err = conn.EnsureStream(ctx, spanstream.StreamConfig(1<<30, time.Minute))
	require.NoError(t, err)
	prices, _ := spanmodel.LoadPrices("")
	svc := ingest.NewService(ingest.NATSPublisher{P: natsx.NewPublisher(conn, natsx.Config{PublishTimeout: 5 * time.Second})}, &spanmodel.Normalizer{Prices: prices})
	h := &httpapi.Handler{Ingest: svc, Query: query.NewService(nil, 1000),
		Limits: ingest.Limits{MaxBody: 10 << 20, MaxDecompressed: 10 << 20}, Log: log}
	srv := httpx.NewServer(httpx.Config{}, log, "tracing")
	srv.Echo.Use(httpx.RequireInternal(token))
	srv.Echo.Use(gate.Middleware())
	h.Register(srv.Echo)
	hs := httptest.NewServer(srv.Echo)
	t.Cleanup(hs.Close)
	return hs, conn, ns.URL()
}

// trickle opens a native ingest request of project that announces an
// 8 MB body and sends 16 bytes every 100 ms, until it is answered (its
// status) or 5 s have passed (0).
func trickle(t *testing.T, addr string, project uuid.UUID, started chan<- struct{}) int {
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer c.Close()
	fmt.Fprintf(c, "POST /api/spans/ingest HTTP/1.1\r\nHost: tracing\r\nContent-Type: application/json\r\n"+
		"X-Assay-Internal-Token: %s\r\nX-Assay-Project-Id: %s\r\nContent-Length: %d\r\n\r\n", token, project, 8<<20)
	_, err = c.Write([]byte(`{"spans": [`))
	require.NoError(t, err)
	answered := make(chan int, 1)
	go func() {
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			answered <- -1
			return
		}
		resp.Body.Close()
		answered <- resp.StatusCode
	}()
	close(started)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	giveUp := time.After(5 * time.Second)
	for {
		select {
		case code := <-answered:
			return code
		case <-giveUp:
			return 0
		case <-tick.C:
			_, _ = c.Write(bytes.Repeat([]byte(" "), 16)) // fails once the server hung up
		}
	}
}

// TestTrickleStallsNoOne: a client that announces an 8 MB body (past the
// whole bound) and trickles it holds only the bytes it sent, and is cut
// off with 408 once it falls under the minimum rate; meanwhile another
// project's exporter, sending at a steady rate, is never refused.
func TestTrickleStallsNoOne(t *testing.T) {
	gate := admit.New(trickleConfig)
	hs := ingestServer(t, gate)
	attacker, exporter := uuid.New(), uuid.New()

	started := make(chan struct{})
	var trickled int
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); trickled = trickle(t, hs.Listener.Addr().String(), attacker, started) }()
	<-started
	time.Sleep(50 * time.Millisecond) // the trickler's headers are in

	client := &http.Client{Timeout: 10 * time.Second}
	var codes []int
	for i := range 12 { // one 40-span request every 100 ms
		req, _ := http.NewRequest("POST", hs.URL+"/api/spans/ingest", bytes.NewReader(nativeRequest(fmt.Sprintf("%04x", 0x100+i), spansPerRequest)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Assay-Internal-Token", token)
		req.Header.Set("X-Assay-Project-Id", exporter.String())
		resp, err := client.Do(req)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		codes = append(codes, resp.StatusCode)
		time.Sleep(100 * time.Millisecond)
	}
	wg.Wait()
	for i, code := range codes {
		assert.Equal(t, http.StatusAccepted, code, "exporter request %d", i)
	}
	assert.Equal(t, http.StatusRequestTimeout, trickled, "the trickler is cut off under the minimum rate")
	assert.Zero(t, gate.InFlight(), "every byte held is released")
}
