package llm

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/assayhq/assay/pkg/testutil/llmtest"
	"github.com/assayhq/assay/services/runtime/internal/prompt"
)

// TestRateLimitedCallsQueue: 16 concurrent calls to a provider that
// answers 429 above 2 requests at once all succeed when they may queue
// (RateLimitWait): the provider key's concurrency halves and the calls
// wait, so few requests are refused; without queueing they fail.
func TestRateLimitedCallsQueue(t *testing.T) {
	srv := llmtest.New(t)
	srv.SetDelay(30 * time.Millisecond)
	srv.LimitConcurrency(2, 0)
	c := newClient(srv, openaiEnv)
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		failed []error
		waits  int
	)
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := c.Chat(context.Background(), Secrets{}, Request{Config: prompt.LLMConfig{Model: "gpt-4o-mini"}, Messages: user("q" + string(rune('a'+i))),
				RateLimitWait: 30 * time.Second, OnWait: func(string, time.Time) { mu.Lock(); waits++; mu.Unlock() }})
			if err != nil {
				mu.Lock()
				failed = append(failed, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(failed) > 0 {
		t.Fatalf("%d of 16 calls failed behind the limit: %v", len(failed), failed[0])
	}
	_, refused := srv.Concurrency()
	t.Logf("16 calls: %d requests, %d refused, %d waits heard", len(srv.Requests()), refused, waits)
	if refused > 8 {
		t.Errorf("%d requests refused for 16 calls: the client kept exceeding the provider's limit", refused)
	}
	if waits == 0 {
		t.Error("no wait on the provider's limit was reported")
	}

	// Without RateLimitWait a 429 fails the call as before (a direct
	// invocation answers at once).
	srv.LimitConcurrency(0, 0)
	srv.FailNext(http.StatusTooManyRequests, 1)
	if _, err := c.Chat(context.Background(), Secrets{}, Request{Config: prompt.LLMConfig{Model: "gpt-4o-mini"}, Messages: user("direct")}); err == nil {
		t.Error("a direct call's 429 must fail it")
	}
}

func TestRetryAfter(t *testing.T) {
	for _, tc := range []struct {
		h    http.Header
		want time.Duration
	}{
		{http.Header{"Retry-After": {"2"}}, 2 * time.Second},
		{http.Header{"Retry-After": {"0.5"}}, 500 * time.Millisecond},
		{http.Header{"Retry-After-Ms": {"150"}}, 150 * time.Millisecond},
		{http.Header{"Retry-After": {"soon"}}, 0},
		{nil, 0},
	} {
		if got := retryAfter(tc.h); got != tc.want {
			t.Errorf("retryAfter(%v) = %v, want %v", tc.h, got, tc.want)
		}
	}
}

// TestLimiterHalvesOncePerBurstAndGrowsBack: the 429s of calls started
// before a halving do not halve again; successes grow the limit slowly.
func TestLimiterHalvesOncePerBurstAndGrowsBack(t *testing.T) {
	l := newLimiter(16)
	l.limit = 16
	ctx := context.Background()
	var starts []time.Time
	for range 8 {
		s, err := l.acquire(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		starts = append(starts, s)
	}
	for _, s := range starts {
		l.release(s, true, false, time.Millisecond)
	}
	if l.limit != 4 {
		t.Fatalf("limit after one burst of 429s at 8 in flight = %v, want 4", l.limit)
	}
	time.Sleep(2 * time.Millisecond)
	for range 8 {
		s, _ := l.acquire(ctx, nil)
		l.release(s, false, true, 0)
	}
	if l.limit <= 4 || l.limit > 6 {
		t.Fatalf("limit after 8 successes = %v, want a little above 4", l.limit)
	}

	// Before any 429 the limit starts low and grows a slot per success.
	l = newLimiter(64)
	for range 10 {
		s, _ := l.acquire(ctx, nil)
		l.release(s, false, true, 0)
	}
	if l.limit != initialConcurrency+10 {
		t.Fatalf("slow start: limit after 10 successes = %v, want %d", l.limit, initialConcurrency+10)
	}
}
