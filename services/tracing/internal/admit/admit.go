// Package admit is tracing's admission control: a bound on the request
// bytes that ingest holds at once. An ingest request holds memory (its
// body, the decoded spans, the encoded batch) and a JetStream publish
// waiting for its acknowledgement from the moment it is admitted until it
// is answered, so the one bound covers both the memory of the service and
// the backlog of publishes in flight. Past it, a request is refused at
// once, never queued, and never left to time out:
//
//   - 503 (gRPC UNAVAILABLE) when the service is full: any client may retry;
//   - 429 (gRPC RESOURCE_EXHAUSTED) when the caller's project (on the OTLP
//     gRPC port, its API key) would hold more than its share of the bound
//     (Config.ProjectShare) while another project holds bytes or was
//     refused in the last two Retry-After periods. One project alone may
//     use the whole bound; as soon as another one is waiting, each may
//     hold at most its share, so the one that floods is told to slow down
//     and the bytes it gives back go to the others.
//
// An HTTP request holds the bytes it has actually sent, not the ones its
// Content-Length announces: it is admitted with a first reservation of at
// most firstBytes, and each read past that takes more from the bound (and
// may be refused mid-body, with the same 503 or 429). A body must also
// arrive at Config.BodyMinRate after a grace period (Config.BodyGrace),
// enforced with the connection's read deadline; a slower one is cut off
// with 408. So a client that announces a large body and trickles it holds
// a few KiB for a few seconds, not the whole bound for the server's read
// timeout (see TestTrickleStallsNoOne).
//
// The bound in force adapts to how fast answers come (Config.TargetLatency),
// so a busy machine refuses rather than letting admitted requests time out.
//
// Both carry Retry-After (gRPC: a RetryInfo detail, which the OpenTelemetry
// exporters honour). A refused request was not stored: nothing of it is
// kept, and its retry is deduplicated as any retry is. A request is always
// admitted when nothing else is in flight, so one larger than the bound
// still passes alone (the body limits bound it).
//
// The stream behind ingest can be bounded by age too (Config.MaxLag):
// while the writer's oldest unstored batch is older than that, every new
// request is refused with 429 (tracing.backlog_behind), so what is accepted
// stays fresh instead of queueing behind minutes of backlog.
//
// The JetStream side has its own bound: the stream's byte limit with
// DiscardNew refuses a publish with 429 when the writer falls behind by
// more than TRACING_STREAM_MAX_BYTES (ingest.NATSPublisher).
package admit

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/assayhq/assay/pkg/errs"
)

// Config is the bound. Variables: TRACING_ADMIT_*.
type Config struct {
	MaxBytes     int64   `split_words:"true" default:"8388608" desc:"most request bytes (as received, not as announced) that ingest holds at once, on all ingest routes and both OTLP ports; past it a request is refused at once with 503 or 429 and Retry-After (gRPC UNAVAILABLE or RESOURCE_EXHAUSTED with RetryInfo). The heap ingest needs grows with it; 0 turns admission control off"`
	ProjectShare float64 `split_words:"true" default:"0.5" desc:"share of TRACING_ADMIT_MAX_BYTES one project (one API key on OTLP/gRPC) may hold while another project holds bytes or was refused in the last 2 s; past it the project's requests are refused with 429 (slow down), even mid-body. A project alone may use the whole bound"`
	UnknownSize  int64   `split_words:"true" default:"1048576" desc:"bytes a gRPC request of unknown size is counted as; HTTP requests hold the bytes they have sent (at most 64 KiB reserved before the first read)"`
	// A body's bytes are counted as they arrive, so a slow body holds
	// little of the bound; these bound how long it holds its connection
	// and its reservation.
	BodyGrace   time.Duration `split_words:"true" default:"10s" desc:"time an ingest request body may take before TRACING_ADMIT_BODY_MIN_RATE applies; with the rate it sets the body's read deadline (grace + bytes received / rate), and a body that misses it is cut off with 408"`
	BodyMinRate int64         `split_words:"true" default:"16384" desc:"least bytes per second an ingest request body must average after TRACING_ADMIT_BODY_GRACE (it replaces TRACING_HTTP_READ_TIMEOUT for ingest bodies); 0 turns the body deadline off"`
	// The byte bound alone does not keep answers quick: on slow or busy
	// cores the admitted requests queue for CPU and the JetStream
	// acknowledgement, and a client times out (10 s in the OpenTelemetry
	// exporters) on a request that was admitted. So the bound in force
	// adapts, as TCP's window does: it shrinks in proportion when an
	// answer took longer than the target (by target/took, at most by
	// half) and grows back by one request per bound's worth of quick
	// answers, never past MaxBytes.
	TargetLatency time.Duration `split_words:"true" default:"2s" desc:"longest an admitted ingest request should take to answer; slower answers shrink the bytes admitted at once (below TRACING_ADMIT_MAX_BYTES), quick ones grow it back, so overload is answered with refusals rather than time-outs; 0 keeps the bound fixed"`
	// The bytes in flight bound tracing; they do not bound the stream
	// behind it, which grows while the writer drains less than ingest
	// accepts. MaxLag trades a burst's buffering for fresh reads.
	MaxLag time.Duration `split_words:"true" desc:"longest the oldest span batch the writer has not stored yet may wait in the span stream before new ingest requests are refused with 429 and Retry-After (tracing.backlog_behind), so what is accepted becomes readable within about this time plus one write; empty or 0 (the default) accepts bursts into the stream up to TRACING_STREAM_MAX_BYTES whatever their age. Needs TRACING_ADMIT_MAX_BYTES"`
}

// firstBytes is the most an HTTP request reserves before its first read:
// enough for a typical export, small enough that announcing a large body
// holds nothing more until the bytes arrive.
const firstBytes = 64 << 10

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
	// refusedAt is when each tenant was last refused: a tenant refused
	// less than waitWindow ago is waiting, and the others are held to
	// their share meanwhile. Entries older than that are dropped.
	refusedAt map[string]time.Time

	// lag is the span stream's age in nanoseconds, as WatchLag last saw it.
	lag atomic.Int64

	// Refused counts the refusals since start, by cause.
	Full, OverShare, Behind atomic.Int64
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
	return &Gate{cfg: cfg, byTenant: map[string]int64{}, refusedAt: map[string]time.Time{}, limit: cfg.MaxBytes, now: time.Now}
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
	if c.MaxLag < 0 || c.MaxLag > 0 && c.MaxBytes == 0 {
		return fmt.Errorf("TRACING_ADMIT_MAX_LAG must not be negative, and needs TRACING_ADMIT_MAX_BYTES above 0")
	}
	if c.BodyGrace < 0 || c.BodyMinRate < 0 {
		return fmt.Errorf("TRACING_ADMIT_BODY_GRACE and TRACING_ADMIT_BODY_MIN_RATE must not be negative")
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

// ErrBehind is the 429 of every ingest request while the span stream's
// oldest batch is older than Config.MaxLag.
var ErrBehind = errs.New(errs.TooManyRequests, "tracing.backlog_behind",
	"the spans accepted so far wait longer than TRACING_ADMIT_MAX_LAG to be stored; slow down and retry after the Retry-After delay")

// ErrSlowBody is the 408 of a body that arrives slower than
// TRACING_ADMIT_BODY_MIN_RATE.
var ErrSlowBody = errs.New(errs.Timeout, "tracing.body_too_slow",
	"the request body arrived too slowly (TRACING_ADMIT_BODY_GRACE, then TRACING_ADMIT_BODY_MIN_RATE bytes per second); send it faster or in smaller requests")

// waitWindow is how long a refused tenant counts as waiting: its client
// retries after RetryAfter, so twice that covers one retry.
const waitWindow = 2 * RetryAfter

// Hold is one request's bytes in the bound.
type Hold struct {
	g      *Gate
	tenant string
	n      int64
	start  time.Time
	once   sync.Once
}

// Acquire admits n bytes for tenant, or refuses with ErrFull or
// ErrOverShare. A negative n (unknown size) reserves Config.UnknownSize.
// release must be called once when the request is answered.
func (g *Gate) Acquire(tenant string, n int64) (release func(), err error) {
	if g == nil {
		return func() {}, nil
	}
	h, err := g.hold(tenant, n)
	if err != nil {
		return nil, err
	}
	return h.Release, nil
}

func (g *Gate) hold(tenant string, n int64) (*Hold, error) {
	if n < 0 {
		n = g.cfg.UnknownSize
	}
	if g.cfg.MaxLag > 0 && time.Duration(g.lag.Load()) > g.cfg.MaxLag {
		g.Behind.Add(1)
		return nil, ErrBehind
	}
	h := &Hold{g: g, tenant: tenant}
	if err := h.Grow(n); err != nil {
		return nil, err
	}
	h.start = g.now()
	return h, nil
}

// Grow takes n more bytes for the request, or refuses with ErrFull or
// ErrOverShare (and then holds what it held).
func (h *Hold) Grow(n int64) error {
	g := h.g
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := g.check(h.tenant, h.n, n); err != nil {
		g.refusedAt[h.tenant] = g.now()
		return err
	}
	g.total += n
	g.byTenant[h.tenant] += n
	h.n += n
	return nil
}

// check tells whether tenant may take n more bytes for a request that
// holds held already. Alone (nothing else in flight) it always may; else
// it is held to its share while another tenant holds bytes or waits, and
// everyone to the bound. Called with mu held.
func (g *Gate) check(tenant string, held, n int64) error {
	if g.total-held <= 0 {
		return nil
	}
	mine := g.byTenant[tenant]
	over := float64(mine+n) > g.cfg.ProjectShare*float64(g.limit)
	if over && (g.total-mine > 0 || g.othersWaiting(tenant)) {
		g.OverShare.Add(1)
		return ErrOverShare
	}
	if g.total+n > g.limit {
		if over {
			g.OverShare.Add(1)
			return ErrOverShare
		}
		g.Full.Add(1)
		return ErrFull
	}
	return nil
}

// othersWaiting tells whether a tenant other than this one was refused
// within waitWindow, and forgets the refusals older than that. Called
// with mu held.
func (g *Gate) othersWaiting(tenant string) bool {
	now := g.now()
	waiting := false
	for t, at := range g.refusedAt {
		if now.Sub(at) >= waitWindow {
			delete(g.refusedAt, t)
		} else if t != tenant {
			waiting = true
		}
	}
	return waiting
}

// Release gives the request's bytes back; only the first call counts.
func (h *Hold) Release() {
	h.once.Do(func() {
		g := h.g
		g.mu.Lock()
		g.total -= h.n
		if g.byTenant[h.tenant] -= h.n; g.byTenant[h.tenant] == 0 {
			delete(g.byTenant, h.tenant)
		}
		g.adapt(h.n, g.now().Sub(h.start))
		g.mu.Unlock()
	})
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

// WatchLag keeps the span stream's age, as lag answers it, for the
// admission of new requests (Config.MaxLag), and exports it as the gauge
// tracing_ingest_backlog_lag_seconds on reg; it polls a few times within
// MaxLag (every MaxLag/4, between 100 ms and 1 s) until ctx ends. A probe
// that fails leaves the age at 0: a stream that cannot be asked refuses
// publishes itself (503), and an unknown age refuses nothing. Without
// MaxLag, or on a nil Gate, it returns at once.
func (g *Gate) WatchLag(ctx context.Context, lag func(context.Context) (time.Duration, error), reg prometheus.Registerer, log *slog.Logger) {
	if g == nil || g.cfg.MaxLag <= 0 {
		return
	}
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "tracing_ingest_backlog_lag_seconds",
		Help: "age of the span stream's oldest batch not yet stored, as ingest admission last saw it (TRACING_ADMIT_MAX_LAG)"},
		func() float64 { return time.Duration(g.lag.Load()).Seconds() }))
	every := min(max(g.cfg.MaxLag/4, 100*time.Millisecond), time.Second)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		pctx, cancel := context.WithTimeout(ctx, every)
		d, err := lag(pctx)
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			log.Debug("span stream age unknown", "err", err)
			d = 0
		}
		g.lag.Store(int64(d))
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
