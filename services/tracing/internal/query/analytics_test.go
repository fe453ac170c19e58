package query

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestAnalyticsWindow(t *testing.T) {
	now := time.Date(2026, 3, 10, 15, 4, 5, 0, time.UTC)
	oldest, newest, iv := AnalyticsRequest{}.window(now)
	assert.Equal(t, time.Date(2026, 3, 11, 0, 0, 0, 0, time.UTC), newest, "ends at the next UTC midnight")
	assert.Equal(t, 30*24*time.Hour, newest.Sub(oldest))
	assert.Equal(t, 30*24*60, iv, "no interval: one bucket over the window")

	_, _, iv = AnalyticsRequest{Interval: 1}.window(now)
	assert.Equal(t, 60, iv, "43,200 one-minute buckets are too many; 1h is the first that fits 1024")
	_, _, iv = AnalyticsRequest{Interval: 1440}.window(now)
	assert.Equal(t, 1440, iv)
}

func TestQuantileAndHist(t *testing.T) {
	xs := []float64{1, 2, 3, 4}
	assert.Equal(t, 2.5, quantile(xs, 0.5))
	assert.Equal(t, 1.0, quantile(xs, 0))
	h := hist(MetricSpec{Bins: ptr(2)}, xs)
	assert.Equal(t, 2, h[0]["count"])
	assert.Equal(t, 2, h[1]["count"], "the top edge belongs to the last bin")
}

func ptr[T any](v T) *T { return &v }
