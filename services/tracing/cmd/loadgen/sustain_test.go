package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestSlope(t *testing.T) {
	assert.InDelta(t, 3.0, slope([]float64{0, 1, 2, 3}, []float64{1, 4, 7, 10}), 1e-9)
	assert.InDelta(t, 0.0, slope([]float64{0, 1, 2, 3}, []float64{5, 6, 5, 6}), 0.5)
	assert.Equal(t, 0.0, slope([]float64{1}, []float64{1}))
}

// TestVerdict: a backlog that swings with the writer's batches but stays
// level is not growing; one that gains 5 % of the accepted rate is.
func TestVerdict(t *testing.T) {
	run := func(lag func(i int) int64) string {
		var samples []backlogSample
		for i := 1; i <= 30; i++ {
			acc := int64(i) * 100000 // 10,000/s, every 10 s
			samples = append(samples, backlogSample{at: time.Duration(i) * 10 * time.Second, accepted: acc, stored: acc - lag(i), pending: -1, oldest: -1})
		}
		return reportSustain(samples, nil, nil, 300*time.Second, 10*time.Second)
	}
	assert.Contains(t, run(func(i int) int64 { return int64(i%2) * 20000 }), "grows=no")
	assert.Contains(t, run(func(i int) int64 { return int64(i) * 5000 }), "grows=yes")
}

func TestWriterGauges(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `# HELP writer_backlog_pending_messages Messages not yet delivered.
# TYPE writer_backlog_pending_messages gauge
writer_backlog_pending_messages{consumer="writer",stream="SPANS"} 42
writer_backlog_pending_messages_other 7
writer_backlog_unacked_messages 3
writer_backlog_oldest_unacked_age_seconds 1.5
`)
	}))
	defer srv.Close()
	s := &backlogSampler{url: srv.URL, client: srv.Client()}
	pending, oldest := s.gauges()
	assert.Equal(t, 42.0, pending)
	assert.Equal(t, 1.5, oldest)

	s.url = "http://127.0.0.1:1/metrics"
	pending, oldest = s.gauges()
	assert.Equal(t, -1.0, pending, "no writer: unknown")
	assert.Equal(t, -1.0, oldest)
}
