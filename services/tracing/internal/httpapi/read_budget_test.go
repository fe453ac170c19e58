package httpapi_test

import (
	"fmt"
	"net/http"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/pkg/genproto/spanspb"
)

// TestReadsAreBoundedInMemory: span reads hold at most their budget of
// row bytes, per query and per project. Eight 1 MiB spans of one project;
// a read of all of them is over the per-query budget (5 MiB) and answers
// 422 naming the limit, a read of two passes (its page, and the page's
// traces read again for the metric roll-up: 4 MiB), and six concurrent reads
// of all eight keep the budget's high-water mark within the project's budget
// and give every byte back. The heap growth is logged, not asserted: in one
// process with the test's client and ClickHouse decoding it varies with the
// machine's load (36-64 MiB with budgets, 73-107 MiB without, in runs where
// each was measured), too close to tell apart reliably; the statuses and the
// budget's high-water mark are what fail without the budgets.
func TestReadsAreBoundedInMemory(t *testing.T) {
	s := newStack(t, func(o *options) {
		o.noWriter = true
		o.queryLimits.MaxReadBytes = 5 << 20
		o.queryLimits.ProjectReadBytes = 10 << 20
		o.queryLimits.TotalReadBytes = 20 << 20
	})
	start := time.Now().Add(-time.Hour).UTC().Truncate(time.Millisecond)
	var spans []*spanspb.Span
	for i := range 8 {
		big := fmt.Sprintf(`{"big":"%s"}`, strings.Repeat(string(rune('a'+i)), 1<<20))
		spans = append(spans, storedSpan(fmt.Sprintf("cccccccccccccccccccccccccccccc%02d", i), fmt.Sprintf("c0000000000000%02d", i), start.Add(time.Duration(i)*time.Millisecond), big))
	}
	s.insert(t, batch(s.project, spans...))

	r := s.doJSON(t, "POST", "/api/spans/query", map[string]any{"windowing": map[string]any{"limit": 2}})
	require.Equal(t, http.StatusOK, r.status, string(r.body))
	assert.Equal(t, 2.0, r.json(t)["count"])

	r = s.doJSON(t, "POST", "/api/spans/query", map[string]any{})
	require.Equal(t, http.StatusUnprocessableEntity, r.status, "a read of 8 MiB of rows: over the 5 MiB budget")
	detail := r.json(t)["detail"].(map[string]any)
	assert.Equal(t, "TRACING_QUERY_MAX_READ_BYTES", detail["limit"])
	assert.Equal(t, float64(5<<20), detail["value"])
	assert.Contains(t, detail["message"], "windowing.limit", "the answer says how to page")

	statuses, grew := sixReads(t, s)
	t.Logf("answers %v; heap grew by %d MiB at most", statuses, grew>>20)
	for i, st := range statuses {
		if i%2 == 0 {
			// Over its own budget (422), or stopped earlier by the project's (429).
			assert.Contains(t, []int{http.StatusUnprocessableEntity, http.StatusTooManyRequests}, st, "read %d asks for 8 MiB", i)
		} else {
			assert.Contains(t, []int{http.StatusOK, http.StatusTooManyRequests}, st, "read %d: within its budget, or told to retry", i)
		}
	}
	assert.LessOrEqual(t, s.handler.Query.Reads().Peak(), int64(10<<20), "the project never held more than its budget")
	assert.Zero(t, s.handler.Query.Reads().InUse(), "every read gave its bytes back")
}

// sixReads runs six span reads at once on s, half of them of everything and
// half of two spans, and returns their statuses and how far the process's
// heap grew at most meanwhile. A low GC target keeps the heap near what is
// live, so the figure is the reads' memory, not how far the collector lagged.
func sixReads(t *testing.T, s *stack) ([]int, int64) {
	t.Helper()
	defer debug.SetGCPercent(debug.SetGCPercent(10))
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	var peak atomic.Uint64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		var m runtime.MemStats
		for {
			select {
			case <-stop:
				return
			default:
			}
			runtime.ReadMemStats(&m)
			if m.HeapAlloc > peak.Load() {
				peak.Store(m.HeapAlloc)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	var wg sync.WaitGroup
	statuses := make([]int, 6)
	for i := range statuses {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body := map[string]any{}
			if i%2 == 1 { // half of them within the per-query budget
				body = map[string]any{"windowing": map[string]any{"limit": 2}}
			}
			statuses[i] = s.doJSON(t, "POST", "/api/spans/query", body).status
		}()
	}
	wg.Wait()
	close(stop)
	<-sampled
	return statuses, int64(peak.Load()) - int64(before.HeapAlloc)
}
