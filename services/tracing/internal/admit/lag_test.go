package admit_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/pkg/chspans"
	"github.com/assayhq/assay/pkg/chx"
	"github.com/assayhq/assay/pkg/spanstream"
	"github.com/assayhq/assay/pkg/testutil/chtest"
	"github.com/assayhq/assay/pkg/testutil/writertest"
	"github.com/assayhq/assay/services/tracing/internal/admit"
)

// TestBacklogBehindRefusesUntilTheWriterCatchesUp: with
// TRACING_ADMIT_MAX_LAG, ingest (real NATS, real HTTP) accepts while the
// span stream is fresh; once the oldest batch the writer has not stored is
// older than the bound (no writer runs yet), every new request is refused
// with 429, Retry-After and a message naming the variable, and nothing of
// it is stored; once a writer drains the stream, requests are accepted
// again, and every accepted span is in ClickHouse.
func TestBacklogBehindRefusesUntilTheWriterCatchesUp(t *testing.T) {
	ctx := context.Background()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	const maxLag = time.Second
	gate := admit.New(admit.Config{MaxBytes: 8 << 20, ProjectShare: 1, MaxLag: maxLag})
	hs, conn, natsURL := ingestStack(t, gate)
	reg := prometheus.NewRegistry()
	wctx, stop := context.WithCancel(ctx)
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		gate.WatchLag(wctx, func(ctx context.Context) (time.Duration, error) { return spanstream.Lag(ctx, conn.JS) }, reg, log)
	}()
	t.Cleanup(func() { stop(); <-watched })
	chURL := chtest.NewURL(t)
	chCfg := chx.Config{URL: chURL, DialTimeout: 5 * time.Second}
	require.NoError(t, chspans.Migrate(ctx, chCfg, log))
	ch, err := chx.Open(ctx, chCfg)
	require.NoError(t, err)
	t.Cleanup(func() { ch.Close() })

	project := "0190f0a0-0000-7000-8000-00000000aa01"
	type answer struct {
		status     int
		retryAfter string
		body       string
	}
	send := func(trace string) answer {
		b, err := otlpRequest(trace, spansPerRequest).MarshalProto()
		require.NoError(t, err)
		req, _ := http.NewRequest("POST", hs.URL+"/api/otlp/v1/traces", bytes.NewReader(b))
		req.Header.Set("Content-Type", "application/x-protobuf")
		req.Header.Set("X-Assay-Internal-Token", token)
		req.Header.Set("X-Assay-Project-Id", project)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		return answer{resp.StatusCode, resp.Header.Get("Retry-After"), string(out)}
	}
	// waitFor sends new traces until one is answered with status.
	accepted := map[string]bool{}
	n := 0
	waitFor := func(status int, within time.Duration) answer {
		t.Helper()
		deadline := time.Now().Add(within)
		for {
			n++
			trace := fmt.Sprintf("%04x", 0xb000+n)
			a := send(trace)
			if a.status == http.StatusOK {
				accepted[traceID(trace)] = true
			}
			if a.status == status {
				return a
			}
			require.True(t, time.Now().Before(deadline), "no %d within %s; last answer %d %s", status, within, a.status, a.body)
			time.Sleep(100 * time.Millisecond)
		}
	}

	first := waitFor(http.StatusOK, 5*time.Second)
	assert.Equal(t, http.StatusOK, first.status, "a fresh stream accepts")
	refused := waitFor(http.StatusTooManyRequests, 10*time.Second)
	assert.Equal(t, "1", refused.retryAfter)
	assert.Contains(t, refused.body, "TRACING_ADMIT_MAX_LAG")
	assert.Positive(t, gate.Behind.Load())
	assert.Greater(t, lagGauge(t, reg), maxLag.Seconds(), "the gauge shows the age")
	assert.Zero(t, gate.InFlight(), "a refusal holds nothing")

	writertest.Start(t, natsURL, chURL)
	waitFor(http.StatusOK, 60*time.Second)

	stored := map[string]bool{}
	deadline := time.Now().Add(60 * time.Second)
	for len(stored) < len(accepted) && time.Now().Before(deadline) {
		rows, err := ch.Query(ctx, `SELECT DISTINCT trace_id FROM spans WHERE project_id = ?`, project)
		require.NoError(t, err)
		stored = map[string]bool{}
		for rows.Next() {
			var id string
			require.NoError(t, rows.Scan(&id))
			stored[id] = true
		}
		rows.Close()
		time.Sleep(200 * time.Millisecond)
	}
	assert.Equal(t, accepted, stored, "every accepted trace is stored, no refused one")
}

// lagGauge is the value of tracing_ingest_backlog_lag_seconds on reg.
func lagGauge(t *testing.T, reg *prometheus.Registry) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() == "tracing_ingest_backlog_lag_seconds" {
			return mf.GetMetric()[0].GetGauge().GetValue()
		}
	}
	t.Fatal("no tracing_ingest_backlog_lag_seconds")
	return 0
}
