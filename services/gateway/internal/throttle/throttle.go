// Package throttle limits password guessing: it counts failed sign-ins
// per account and per client address in a fixed window and refuses
// further attempts on either key until the window ends. Only failures
// count, so a person who signs in correctly, however often (the console's
// end-to-end tests do it hundreds of times), is never throttled, while a
// guesser is stopped after a handful of tries whichever addresses they
// claim. The counters live in this replica's memory: with N gateway
// replicas behind a balancer a guesser gets at most N times the budget,
// which still turns millions of tries into dozens.
package throttle

import (
	"fmt"
	"math"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/assayhq/assay/pkg/errs"
)

// Config is the sign-in throttle's configuration (GATEWAY_SIGNIN_*).
type Config struct {
	AccountFailures int           `split_words:"true" default:"10" desc:"failed sign-ins per account in one window before that account's sign-in answers 429 until the window ends"`
	AddressFailures int           `split_words:"true" default:"30" desc:"failed sign-ins per client address (see GATEWAY_TRUSTED_PROXIES) in one window before that address's sign-ins answer 429"`
	Window          time.Duration `split_words:"true" default:"15m" desc:"the sign-in throttle's window; Retry-After counts down to its end"`
}

// maxEntries bounds the counters kept; past it the expired ones are
// dropped first, then the oldest windows.
const maxEntries = 100_000

type counter struct {
	start    time.Time
	failures int
}

// Limiter counts failures per key.
type Limiter struct {
	cfg Config
	now func() time.Time
	mu  sync.Mutex
	m   map[string]*counter
}

// New returns a limiter; a zero limit or window takes the default.
func New(cfg Config) *Limiter {
	if cfg.AccountFailures <= 0 {
		cfg.AccountFailures = 10
	}
	if cfg.AddressFailures <= 0 {
		cfg.AddressFailures = 30
	}
	if cfg.Window <= 0 {
		cfg.Window = 15 * time.Minute
	}
	return &Limiter{cfg: cfg, now: time.Now, m: map[string]*counter{}}
}

func accountKey(email string) string { return "a:" + strings.ToLower(strings.TrimSpace(email)) }
func addressKey(addr string) string  { return "ip:" + addr }

// Attempt counts a sign-in attempt on the account and the address before
// the password is checked, so parallel guesses cannot all slip past the
// check together; it refuses (*Refused) when either has used its
// failures in the current window. The caller calls Done with the outcome.
func (l *Limiter) Attempt(email, addr string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	type keyed struct {
		key   string
		limit int
	}
	keys := []keyed{{addressKey(addr), l.cfg.AddressFailures}}
	if email != "" { // "" counts the address only (a password reset request)
		keys = append(keys, keyed{accountKey(email), l.cfg.AccountFailures})
	}
	wait := time.Duration(0)
	for _, k := range keys {
		c := l.m[k.key]
		if c == nil || now.Sub(c.start) >= l.cfg.Window || c.failures < k.limit {
			continue
		}
		if w := c.start.Add(l.cfg.Window).Sub(now); w > wait {
			wait = w
		}
	}
	if wait > 0 {
		return &Refused{RetryAfter: int(math.Ceil(wait.Seconds()))}
	}
	if len(l.m) >= maxEntries {
		l.prune(now)
	}
	for _, k := range keys {
		c := l.m[k.key]
		if c == nil || now.Sub(c.start) >= l.cfg.Window {
			c = &counter{start: now}
			l.m[k.key] = c
		}
		c.failures++
	}
	return nil
}

// Done settles an attempt: a failed password keeps its count; anything
// else (a success, a malformed request, a database error) takes it back,
// and a success also forgets the account's earlier failures.
func (l *Limiter) Done(email, addr string, wrongPassword, success bool) {
	if wrongPassword {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, k := range []string{accountKey(email), addressKey(addr)} {
		if c := l.m[k]; c != nil && c.failures > 0 {
			c.failures--
		}
	}
	if success {
		delete(l.m, accountKey(email))
	}
}

func (l *Limiter) prune(now time.Time) {
	var oldest string
	for k, c := range l.m {
		if now.Sub(c.start) >= l.cfg.Window {
			delete(l.m, k)
		} else if oldest == "" || c.start.Before(l.m[oldest].start) {
			oldest = k
		}
	}
	if len(l.m) >= maxEntries && oldest != "" {
		delete(l.m, oldest)
	}
}

// Refused is the 429 of a throttled sign-in.
type Refused struct{ RetryAfter int }

func (r *Refused) Error() string {
	return fmt.Sprintf("Too many failed sign-ins: try again in %d seconds.", r.RetryAfter)
}

// Err is r as the API's error body.
func (r *Refused) Err() error {
	return errs.Message(errs.TooManyRequests, "auth.throttled", r.Error(), map[string]any{"retry_after": r.RetryAfter})
}

// Proxies is the list of proxies whose X-Forwarded-For is believed
// (GATEWAY_TRUSTED_PROXIES, comma-separated CIDRs or addresses).
type Proxies []netip.Prefix

// ParseProxies reads a comma-separated list of CIDRs or addresses; "" is
// none: no forwarded header is believed.
func ParseProxies(s string) (Proxies, error) {
	var out Proxies
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if !strings.Contains(f, "/") {
			a, err := netip.ParseAddr(f)
			if err != nil {
				return nil, fmt.Errorf("trusted proxy %q: not an address or CIDR", f)
			}
			out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
			continue
		}
		p, err := netip.ParsePrefix(f)
		if err != nil {
			return nil, fmt.Errorf("trusted proxy %q: not an address or CIDR", f)
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

func (ps Proxies) trusted(a netip.Addr) bool {
	a = a.Unmap()
	for _, p := range ps {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// ClientAddr is the address a request came from: the peer's, unless the
// peer is a trusted proxy, in which case X-Forwarded-For is read from the
// right, skipping trusted proxies, and its first untrusted entry is the
// client (entries to its left were written by the client and prove
// nothing). A header from an untrusted peer is ignored, so rotating it
// does not change the address.
func (ps Proxies) ClientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	peer, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	peer = peer.Unmap()
	if !ps.trusted(peer) {
		return peer.String()
	}
	var hops []string
	for _, h := range r.Header.Values("X-Forwarded-For") {
		hops = append(hops, strings.Split(h, ",")...)
	}
	client := peer
	for i := len(hops) - 1; i >= 0; i-- {
		a, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			break
		}
		client = a.Unmap()
		if !ps.trusted(client) {
			break
		}
	}
	return client.String()
}
