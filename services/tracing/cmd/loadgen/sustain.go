package main

// Sustain, for scripts/bench/load.sh sustain: a steady rate for minutes
// rather than a burst, watched every -sample: the spans accepted but not
// yet stored (accepted − count() in ClickHouse) and, with -writer-metrics,
// the writer's own backlog gauges (JetStream messages not yet delivered,
// age of the oldest unacknowledged one). At the end, per minute, what was
// offered, stored and how fresh, and the verdict: does the backlog grow?

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
)

var (
	sampleEvery   = flag.Duration("sample", 0, "sample the backlog (accepted − stored, and the writer's gauges with -writer-metrics) this often and judge whether it grows (scripts/bench/load.sh sustain: 10s); 0: off")
	writerMetrics = flag.String("writer-metrics", "", "the writer's Prometheus /metrics URL (WRITER_METRICS_ADDR), read with -sample")
)

// growthShare is the verdict's threshold: the backlog grows when its
// least-squares slope exceeds this share of the accepted rate, i.e. when
// the pipeline stores less than 99 % of what it accepts. Below it, the
// slope is noise: the writer stores in batches of up to 20,000 rows, so
// the backlog swings by that much between samples, which over 5 minutes of
// 10-s samples makes a slope of about ±20 spans/s.
const growthShare = 0.01

// warmup is left out of the slope: the backlog rises from 0 to its steady
// level as the first batches fill.
const warmup = 30 * time.Second

type backlogSample struct {
	at               time.Duration // since the start of the run
	accepted, stored int64
	pending, oldest  float64 // the writer's gauges; -1 when not read
}

type backlogSampler struct {
	ch       clickhouse.Conn
	project  string
	accepted *atomic.Int64
	url      string
	start    time.Time
	client   *http.Client
	stopc    chan struct{}
	wg       sync.WaitGroup
	samples  []backlogSample
}

func startBacklog(ch clickhouse.Conn, project string, accepted *atomic.Int64, metricsURL string, every time.Duration, start time.Time) *backlogSampler {
	s := &backlogSampler{ch: ch, project: project, accepted: accepted, url: metricsURL, start: start,
		client: &http.Client{Timeout: 5 * time.Second}, stopc: make(chan struct{})}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-s.stopc:
				return
			case <-t.C:
				s.sample()
			}
		}
	}()
	return s
}

func (s *backlogSampler) sample() {
	b := backlogSample{at: time.Since(s.start), accepted: s.accepted.Load(), pending: -1, oldest: -1}
	var stored uint64
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.ch.QueryRow(ctx, "SELECT count() FROM spans WHERE project_id = ?", s.project).Scan(&stored); err != nil {
		return
	}
	b.stored = int64(stored)
	if s.url != "" {
		b.pending, b.oldest = s.gauges()
	}
	s.samples = append(s.samples, b)
}

// gauges reads the writer's backlog gauges (pkg/natsx/backlog.go), summed
// over their labels; -1 each when the writer does not answer.
func (s *backlogSampler) gauges() (pending, oldest float64) {
	pending, oldest = -1, -1
	resp, err := s.client.Get(s.url)
	if err != nil {
		return
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		for _, m := range [...]struct {
			name string
			to   *float64
		}{{"writer_backlog_pending_messages", &pending}, {"writer_backlog_oldest_unacked_age_seconds", &oldest}} {
			rest, ok := strings.CutPrefix(line, m.name)
			if !ok || (rest != "" && rest[0] != ' ' && rest[0] != '{') {
				continue
			}
			f := strings.Fields(rest[strings.LastIndexByte(rest, '}')+1:])
			if len(f) == 0 {
				continue
			}
			if v, err := strconv.ParseFloat(f[0], 64); err == nil {
				*m.to = max(*m.to, 0) + v
			}
		}
	}
	return
}

func (s *backlogSampler) stop() []backlogSample {
	close(s.stopc)
	s.wg.Wait()
	return s.samples
}

// slope is the least-squares slope of y over x.
func slope(x, y []float64) float64 {
	n := float64(len(x))
	if n < 2 {
		return 0
	}
	var sx, sy, sxx, sxy float64
	for i := range x {
		sx, sy, sxx, sxy = sx+x[i], sy+y[i], sxx+x[i]*x[i], sxy+x[i]*y[i]
	}
	d := n*sxx - sx*sx
	if d == 0 {
		return 0
	}
	return (n*sxy - sx*sy) / d
}

// reportSustain prints the samples, a line per minute and the verdict, and
// returns the summary fields (key=value ...).
func reportSustain(samples []backlogSample, freshAt, fresh []time.Duration, sendTime time.Duration, every time.Duration) string {
	fmt.Printf("backlog every %s (accepted − stored in ClickHouse; the writer's JetStream messages not yet delivered, oldest unacknowledged):\n", every)
	fmt.Printf("  %8s %10s %10s %9s %8s %8s\n", "t", "accepted", "stored", "backlog", "pending", "oldest")
	for _, b := range samples {
		gauge := func(v float64, f string) string {
			if v < 0 {
				return "?"
			}
			return fmt.Sprintf(f, v)
		}
		fmt.Printf("  %7.0fs %10d %10d %9d %8s %8s\n", b.at.Seconds(), b.accepted, b.stored, b.accepted-b.stored,
			gauge(b.pending, "%.0f"), gauge(b.oldest, "%.1fs"))
	}
	// Per minute: rates from the samples at the minute's ends, freshness of
	// the probes sent in it.
	fmt.Println("per minute:")
	var prev backlogSample
	for m := 1; ; m++ {
		end := time.Duration(m) * time.Minute
		var last *backlogSample
		for i := range samples {
			if samples[i].at <= end+time.Second {
				last = &samples[i]
			}
		}
		if last == nil || last.at <= prev.at {
			break
		}
		var f []time.Duration
		for i, at := range freshAt {
			if at >= end-time.Minute && at < end {
				f = append(f, fresh[i])
			}
		}
		dt := (last.at - prev.at).Seconds()
		fmt.Printf("  minute %d (to %.0fs): accepted %.0f/s, stored %.0f/s, backlog %d at the end; freshness p50 %s p99 %s (n=%d)\n",
			m, last.at.Seconds(), float64(last.accepted-prev.accepted)/dt, float64(last.stored-prev.stored)/dt,
			last.accepted-last.stored, pct(f, 50), pct(f, 99), len(f))
		prev = *last
	}
	var x, y, yAge []float64
	hasAge := true
	for _, b := range samples {
		if sendTime >= 4*warmup && b.at < warmup {
			continue
		}
		x, y = append(x, b.at.Seconds()), append(y, float64(b.accepted-b.stored))
		yAge = append(yAge, b.oldest)
		hasAge = hasAge && b.oldest >= 0
	}
	accRate := 0.0
	if len(samples) > 0 {
		last := samples[len(samples)-1]
		accRate = float64(last.accepted) / last.at.Seconds()
	}
	sl := slope(x, y)
	threshold := growthShare * accRate
	verdict := "no"
	if sl > threshold {
		verdict = "yes"
	}
	from := "all samples"
	if sendTime >= 4*warmup {
		from = fmt.Sprintf("samples after the first %s", warmup)
	}
	fmt.Printf("backlog slope: %+.0f spans/s (least squares over %d %s; the backlog grows above %.0f/s, %.0f %% of the accepted %.0f/s)\n",
		sl, len(x), from, threshold, growthShare*100, accRate)
	if hasAge && len(yAge) > 1 {
		fmt.Printf("oldest unacknowledged message: %+.3f s/s (0: steady; 1: the writer falls behind by every second)\n", slope(x, yAge))
	}
	if len(x) < 6 {
		fmt.Printf("backlog grows: %s (fewer than 6 samples: too short a run to tell)\n", verdict)
	} else {
		fmt.Printf("backlog grows: %s\n", verdict)
	}
	fmt.Printf("freshness over the whole window: p50 %s p99 %s max %s (n=%d probes)\n", pct(fresh, 50), pct(fresh, 99), pct(fresh, 100), len(fresh))
	return fmt.Sprintf("backlog_slope=%.0f grows=%s", sl, verdict)
}
