package main

// Overload, for scripts/bench/overload.sh: OTLP/HTTP
// requests offered at -rate (twice what the pipeline sustains) by many
// senders that do not retry, each answer classified. The promise under
// test: every answer is 200 or a refusal with Retry-After (429 or 503),
// never a time-out or another error; every accepted span is stored exactly
// once. Memory (tracing's and the writer's peak RSS) is read by the script.

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/google/uuid"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
)

var overload = flag.Bool("overload", false, "instead of a load: offer -rate spans/s with -workers senders that never retry and classify every answer (200, 429/503 with Retry-After, anything else); then check every accepted span is stored once")

func overloadRun(url, token, chURL string, rate, workers, batch int, dur time.Duration) {
	ctx := context.Background()
	opts, err := clickhouse.ParseDSN(chURL)
	if err != nil {
		log.Fatal(err)
	}
	ch, err := clickhouse.Open(opts)
	if err != nil {
		log.Fatal(err)
	}
	project := uuid.NewString()
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 256}}
	var accepted, refused429, refused503, noRetryAfter, failed, timeouts atomic.Int64
	var mu sync.Mutex
	var okLat, refusedLat []time.Duration
	var seq atomic.Int64
	perWorker := float64(rate) / float64(workers) / float64(batch)
	deadline := time.Now().Add(dur)
	start := time.Now()
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			next := time.Now()
			for time.Now().Before(deadline) {
				if perWorker > 0 {
					if d := time.Until(next); d > 0 {
						time.Sleep(d)
					}
					next = next.Add(time.Duration(float64(time.Second) / perWorker))
				}
				req, _ := http.NewRequest("POST", url+"/api/otlp/v1/traces", bytes.NewReader(request(seq.Add(1), batch)))
				req.Header.Set("Content-Type", "application/x-protobuf")
				req.Header.Set("X-Assay-Internal-Token", token)
				req.Header.Set("X-Assay-Project-Id", project)
				t0 := time.Now()
				resp, err := client.Do(req)
				if err != nil {
					if e, ok := err.(interface{ Timeout() bool }); ok && e.Timeout() {
						timeouts.Add(1)
					} else {
						failed.Add(1)
					}
					continue
				}
				out, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				d := time.Since(t0)
				switch resp.StatusCode {
				case http.StatusOK:
					n := batch
					er := ptraceotlp.NewExportResponse()
					if er.UnmarshalProto(out) == nil {
						n -= int(er.PartialSuccess().RejectedSpans())
					}
					accepted.Add(int64(n))
					mu.Lock()
					okLat = append(okLat, d)
					mu.Unlock()
				case http.StatusTooManyRequests, http.StatusServiceUnavailable:
					if resp.StatusCode == http.StatusTooManyRequests {
						refused429.Add(1)
					} else {
						refused503.Add(1)
					}
					if resp.Header.Get("Retry-After") == "" {
						noRetryAfter.Add(1)
					}
					mu.Lock()
					refusedLat = append(refusedLat, d)
					mu.Unlock()
				default:
					failed.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	sendTime := time.Since(start)
	want := uint64(accepted.Load())
	var stored, distinct uint64
	for time.Since(start) < dur+2*time.Minute {
		_ = ch.QueryRow(ctx, "SELECT count() FROM spans WHERE project_id = ?", project).Scan(&stored)
		if stored >= want {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	total := time.Since(start)
	_ = ch.QueryRow(ctx, "SELECT uniqExact(trace_id, span_id) FROM spans WHERE project_id = ?", project).Scan(&distinct)
	requests := int64(len(okLat)) + refused429.Load() + refused503.Load() + failed.Load() + timeouts.Load()
	fmt.Printf("overload: offered %d spans/s (%d senders, %d spans/request, never retrying) for %.1fs: %d requests\n",
		rate, workers, batch, sendTime.Seconds(), requests)
	fmt.Printf("overload: accepted %d requests (%d spans, %.0f spans/s), p50 %s p99 %s\n",
		len(okLat), want, float64(want)/sendTime.Seconds(), pct(okLat, 50), pct(okLat, 99))
	fmt.Printf("overload: refused %d with 429, %d with 503 (%d of them without Retry-After), answered in p50 %s p99 %s\n",
		refused429.Load(), refused503.Load(), noRetryAfter.Load(), pct(refusedLat, 50), pct(refusedLat, 99))
	fmt.Printf("overload: time-outs (10 s) %d, other errors %d\n", timeouts.Load(), failed.Load())
	fmt.Printf("overload: accepted spans stored %d distinct of %d (missing %d, duplicate rows %d), all stored after %.1fs\n",
		distinct, want, int64(want)-int64(distinct), int64(stored)-int64(distinct), total.Seconds())
	if timeouts.Load()+failed.Load()+noRetryAfter.Load() > 0 || distinct != want {
		fmt.Println("overload: FAIL (a time-out, an error, a refusal without Retry-After, or an accepted span not stored)")
	} else {
		fmt.Println("overload: ok (every answer 200 or a refusal with Retry-After; every accepted span stored)")
	}
}
