package llm

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// DefaultConcurrency bounds the calls in flight per provider key when
// Config.Concurrency is not set.
const DefaultConcurrency = 64

const (
	// defaultPause is how long calls to a provider wait after a 429 that
	// says nothing of when to come back.
	defaultPause = 250 * time.Millisecond
	// initialConcurrency is where a provider key starts: it doubles each
	// window of successes (slow start) up to the maximum, until its first
	// 429, so an unknown limit is found with a few refusals, not a burst.
	initialConcurrency = 4
	// throttleShown is how long after a 429 a call queued for a slot is
	// reported as waiting on the provider's limit.
	throttleShown = 10 * time.Second
)

// limiter is the adaptive concurrency of one provider key: calls take a
// slot; a 429 halves the slots (to half of what was in flight) and pauses
// new calls for the provider's Retry-After; each success grows the slots
// back by half a slot per window of calls, up to max (before the first 429,
// a slot per success: the slow start). Only a 429 of a call
// started after the last halving halves again: the calls of one burst all
// met the old limit, and their 429s say nothing of the new one.
type limiter struct {
	mu        sync.Mutex
	limit     float64
	max       float64
	inflight  int
	pause     time.Time // no call starts before
	limitedAt time.Time // the last 429
	cut       time.Time // the last halving
	slowStart bool      // no 429 yet
	wake      chan struct{}
}

func newLimiter(max int) *limiter {
	return &limiter{limit: float64(min(max, initialConcurrency)), max: float64(max), slowStart: true, wake: make(chan struct{})}
}

// acquire waits for a slot and returns when the call starts; onWait (when
// set) hears of a wait caused by the provider's limit, with when it should
// end.
func (l *limiter) acquire(ctx context.Context, onWait func(until time.Time)) (time.Time, error) {
	if l == nil {
		return time.Now(), nil // no limiter: the call is not limited
	}
	for {
		l.mu.Lock()
		now := time.Now()
		if now.Before(l.pause) {
			until := l.pause
			l.mu.Unlock()
			if onWait != nil {
				onWait(until)
			}
			t := time.NewTimer(until.Sub(now))
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return time.Time{}, ctx.Err()
			}
			continue
		}
		if l.inflight < max(int(l.limit), 1) {
			l.inflight++
			l.mu.Unlock()
			return now, nil
		}
		wake, throttled := l.wake, now.Sub(l.limitedAt) < throttleShown
		l.mu.Unlock()
		if throttled && onWait != nil {
			onWait(now.Add(time.Second))
		}
		select {
		case <-wake:
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		}
	}
}

// release gives the slot back with the call's outcome: limited for a 429
// (retryAfter is its Retry-After, 0 when it had none), else a success or a
// failure that says nothing of the provider's capacity (grown only on
// success).
func (l *limiter) release(started time.Time, limited, ok bool, retryAfter time.Duration) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now()
	switch {
	case limited:
		l.limitedAt, l.slowStart = now, false
		if started.After(l.cut) {
			l.limit = max(1, min(l.limit, float64(l.inflight))/2)
			l.cut = now
		}
		if retryAfter <= 0 {
			retryAfter = defaultPause
		}
		if p := now.Add(min(retryAfter, maxRetryDelay)); p.After(l.pause) {
			l.pause = p
		}
	case ok && l.slowStart:
		l.limit = min(l.max, l.limit+1)
	case ok:
		l.limit = min(l.max, l.limit+0.5/max(l.limit, 1))
	}
	l.inflight--
	close(l.wake)
	l.wake = make(chan struct{})
}

// limiters are the client's limiters by provider key.
type limiters struct {
	mu  sync.Mutex
	max int
	m   map[string]*limiter
}

// of is the limiter of t's provider key: its endpoint and its key (a
// digest), so two projects' keys of one provider are limited apart, as
// the provider limits them.
func (ls *limiters) of(t target) *limiter {
	h := sha256.Sum256([]byte(t.Label + "\x00" + t.BaseURL + "\x00" + secretOf(t)))
	k := hex.EncodeToString(h[:12])
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.m == nil {
		ls.m = map[string]*limiter{}
	}
	l, ok := ls.m[k]
	if !ok {
		if len(ls.m) >= maxLimiters {
			// Keys come and go (rotations, deleted projects): start over
			// rather than grow without bound; idle limiters hold no state
			// worth keeping.
			for k2, l2 := range ls.m {
				if l2.idle() {
					delete(ls.m, k2)
				}
			}
		}
		l = newLimiter(ls.max)
		ls.m[k] = l
	}
	return l
}

const maxLimiters = 10000

func (l *limiter) idle() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.inflight == 0 && time.Now().After(l.pause)
}

// retryAfter reads a 429's Retry-After (seconds or an HTTP date) or
// retry-after-ms, as OpenAI and others send it; 0 when absent.
func retryAfter(h http.Header) time.Duration {
	if h == nil {
		return 0
	}
	if v := h.Get("retry-after-ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := h.Get("Retry-After")
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s <= 0 {
			return 0
		}
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(time.Until(t), 0)
	}
	return 0
}
