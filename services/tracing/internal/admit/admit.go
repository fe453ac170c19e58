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
	MaxBytes     int64   `split_words:"true" default:"33554432" desc:"most request bytes (as sent, Content-Length) that ingest holds at once, on all ingest routes and both OTLP ports; past it a request is refused at once with 503 or 429 and Retry-After (gRPC UNAVAILABLE or RESOURCE_EXHAUSTED with RetryInfo). The heap ingest needs grows with it; 0 turns admission control off"`
	ProjectShare float64 `split_words:"true" default:"0.5" desc:"fair share of TRACING_ADMIT_MAX_BYTES for one project (one API key on OTLP/gRPC): a request refused while its project holds more than this fraction is answered 429 (slow down) rather than 503 (retry)"`
	UnknownSize  int64   `split_words:"true" default:"1048576" desc:"bytes reserved for an ingest request that announces no Content-Length (chunked)"`
}

// RetryAfter is the delay a refused client is asked to wait.
const RetryAfter = time.Second

// Gate counts the bytes in flight, in all and per tenant. The zero value
// and a nil *Gate admit everything.
type Gate struct {
	cfg      Config
	mu       sync.Mutex
	total    int64
	byTenant map[string]int64

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
	return &Gate{cfg: cfg, byTenant: map[string]int64{}}
}

// Validate checks the settings envconfig cannot.
func (c Config) Validate() error {
	if c.MaxBytes < 0 || c.UnknownSize < 0 {
		return fmt.Errorf("TRACING_ADMIT_MAX_BYTES and TRACING_ADMIT_UNKNOWN_SIZE must not be negative")
	}
	if c.ProjectShare <= 0 || c.ProjectShare > 1 {
		return fmt.Errorf("TRACING_ADMIT_PROJECT_SHARE must be in (0, 1], got %g", c.ProjectShare)
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
	if g.total > 0 && g.total+n > g.cfg.MaxBytes {
		mine := g.byTenant[tenant]
		g.mu.Unlock()
		if float64(mine+n) > g.cfg.ProjectShare*float64(g.cfg.MaxBytes) {
			g.OverShare.Add(1)
			return nil, ErrOverShare
		}
		g.Full.Add(1)
		return nil, ErrFull
	}
	g.total += n
	g.byTenant[tenant] += n
	g.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			g.mu.Lock()
			g.total -= n
			if g.byTenant[tenant] -= n; g.byTenant[tenant] == 0 {
				delete(g.byTenant, tenant)
			}
			g.mu.Unlock()
		})
	}, nil
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
