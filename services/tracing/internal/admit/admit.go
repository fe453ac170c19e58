// Package admit is tracing's admission control (issue 16, point 6): a
// bound on the request bytes that ingest holds at once, checked before a
// request body is read. An ingest request holds memory (its body, the
// decoded spans, the encoded batch) and a JetStream publish waiting for its
// acknowledgement from the moment it is admitted until it is answered, so
// the one bound covers both the memory of the service and the backlog of
// publishes in flight. Past it, a request is refused at once, never queued,
// and never left to time out:
//
//   - 503 (gRPC UNAVAILABLE) when the service is full: any client may retry;
//   - 429 (gRPC RESOURCE_EXHAUSTED) when the full service is full because
//     of the caller: its project (on the OTLP gRPC port, its API key) holds
//     more than its fair share of the bound (Config.ProjectShare). The
//     tenant that floods is told to slow down, the others only to retry.
//
// The bound in force adapts to how fast answers come (Config.TargetLatency),
// so a busy machine refuses rather than letting admitted requests time out.
//
// Both carry Retry-After (gRPC: a RetryInfo detail, which the OpenTelemetry
// exporters honour). A refused request was not read: nothing of it is
// stored, and its retry is deduplicated as any retry is. A request is
// always admitted when nothing else is in flight, so one larger than the
// bound still passes alone (the body limits bound it).
//
// The JetStream side has its own bound: the stream's byte limit with
// DiscardNew refuses a publish with 429 when the writer falls behind by
// more than TRACING_STREAM_MAX_BYTES (ingest.NATSPublisher).
package admit

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/assayhq/assay/pkg/errs"
)

// Config is the bound. Variables: TRACING_ADMIT_*.
type Config struct {
	MaxBytes     int64   `split_words:"true" default:"8388608" desc:"most request bytes (as sent, Content-Length) that ingest holds at once, on all ingest routes and both OTLP ports; past it a request is refused at once with 503 or 429 and Retry-After (gRPC UNAVAILABLE or RESOURCE_EXHAUSTED with RetryInfo). The heap ingest needs grows with it; 0 turns admission control off"`
	ProjectShare float64 `split_words:"true" default:"0.5" desc:"fair share of TRACING_ADMIT_MAX_BYTES for one project (one API key on OTLP/gRPC): a request refused while its project holds more than this fraction is answered 429 (slow down) rather than 503 (retry)"`
	UnknownSize  int64   `split_words:"true" default:"1048576" desc:"bytes reserved for an ingest request that announces no Content-Length (chunked)"`
	// The byte bound alone does not keep answers quick: on slow or busy
	// cores the admitted requests queue for CPU and the JetStream
	// acknowledgement, and a client times out (10 s in the OpenTelemetry
	// exporters) on a request that was admitted. So the bound in force
	// adapts, as TCP's window does: it shrinks in proportion when an
	// answer took longer than the target (by target/took, at most by
	// half) and grows back by one request per bound's worth of quick
	// answers, never past MaxBytes.
	TargetLatency time.Duration `split_words:"true" default:"2s" desc:"longest an admitted ingest request should take to answer; slower answers shrink the bytes admitted at once (below TRACING_ADMIT_MAX_BYTES), quick ones grow it back, so overload is answered with refusals rather than time-outs; 0 keeps the bound fixed"`
}

// minLimit is the smallest adaptive bound: one request is always admitted
// alone anyway.
const minLimit = 256 << 10

// RetryAfter is the delay a refused client is asked to wait.
const RetryAfter = time.Second

// Gate counts the bytes in flight, in all and per tenant. The zero value
// and a nil *Gate admit everything.
type Gate struct {
	cfg      Config
	mu       sync.Mutex
	total    int64
	byTenant map[string]int64
	limit    int64     // the bound in force, <= cfg.MaxBytes
	shrunk   time.Time // when limit last shrank
	now      func() time.Time

	// Refused counts the refusals since start, by status (503, 429).
	Full, OverShare atomic.Int64
}

// New returns a gate for cfg (nil when cfg.MaxBytes is 0: no bound).
func New(cfg Config) *Gate {
	if cfg.MaxBytes <= 0 {
		return nil
	}
	if cfg.ProjectShare <= 0 || cfg.ProjectShare > 1 {
		cfg.ProjectShare = 1
	}
	if cfg.UnknownSize <= 0 {
		cfg.UnknownSize = 1 << 20
	}
	return &Gate{cfg: cfg, byTenant: map[string]int64{}, limit: cfg.MaxBytes, now: time.Now}
}

// Validate checks the settings envconfig cannot.
func (c Config) Validate() error {
	if c.MaxBytes < 0 || c.UnknownSize < 0 {
		return fmt.Errorf("TRACING_ADMIT_MAX_BYTES and TRACING_ADMIT_UNKNOWN_SIZE must not be negative")
	}
	if c.ProjectShare <= 0 || c.ProjectShare > 1 {
		return fmt.Errorf("TRACING_ADMIT_PROJECT_SHARE must be in (0, 1], got %g", c.ProjectShare)
	}
	if c.TargetLatency < 0 {
		return fmt.Errorf("TRACING_ADMIT_TARGET_LATENCY must not be negative")
	}
	return nil
}

var (
	// ErrFull is the 503 of a full service.
	ErrFull = errs.New(errs.Unavailable, "tracing.overloaded",
		"tracing holds as many ingest bytes as it may (TRACING_ADMIT_MAX_BYTES); retry after the Retry-After delay")
	// ErrOverShare is the 429 of a tenant over its fair share.
	ErrOverShare = errs.New(errs.TooManyRequests, "tracing.project_over_share",
		"this project holds more than its share of tracing's ingest bytes (TRACING_ADMIT_PROJECT_SHARE); slow down and retry after the Retry-After delay")
)

// Acquire admits n bytes for tenant, or refuses with ErrFull or
// ErrOverShare. A negative n (unknown size) reserves Config.UnknownSize.
// release must be called once when the request is answered.
func (g *Gate) Acquire(tenant string, n int64) (release func(), err error) {
	if g == nil {
		return func() {}, nil
	}
	if n < 0 {
		n = g.cfg.UnknownSize
	}
	g.mu.Lock()
	if g.total > 0 && g.total+n > g.limit {
		mine := g.byTenant[tenant]
		share := g.cfg.ProjectShare * float64(g.limit)
		g.mu.Unlock()
		if float64(mine+n) > share {
			g.OverShare.Add(1)
			return nil, ErrOverShare
		}
		g.Full.Add(1)
		return nil, ErrFull
	}
	g.total += n
	g.byTenant[tenant] += n
	g.mu.Unlock()
	start := g.now()
	var once sync.Once
	return func() {
		once.Do(func() {
			g.mu.Lock()
			g.total -= n
			if g.byTenant[tenant] -= n; g.byTenant[tenant] == 0 {
				delete(g.byTenant, tenant)
			}
			g.adapt(n, g.now().Sub(start))
			g.mu.Unlock()
		})
	}, nil
}

// adapt moves the bound after an answer of n bytes that took d: down to
// limit·target/d (at most by half) when d is over the target, once per
// target period (the requests of one slow wave count once); n·n/limit up
// otherwise (one request more per bound's worth of quick answers). Called
// with mu held.
func (g *Gate) adapt(n int64, d time.Duration) {
	target := g.cfg.TargetLatency
	if target <= 0 {
		return
	}
	if d > target {
		if now := g.now(); now.Sub(g.shrunk) >= target {
			g.limit = max(int64(float64(g.limit)*max(float64(target)/float64(d), 0.5)), minLimit)
			g.shrunk = now
		}
		return
	}
	g.limit = min(g.limit+max(n*n/g.limit, 1), g.cfg.MaxBytes)
}

// Limit is the bound in force.
func (g *Gate) Limit() int64 {
	if g == nil {
		return 0
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.limit
}

// InFlight is the bytes admitted and not yet answered.
func (g *Gate) InFlight() int64 {
	if g == nil {
		return 0
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.total
}
