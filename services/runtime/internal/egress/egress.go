// Package egress is the only way the runtime calls a URL a user chose
// (webhook evaluators, hook applications, HTTPS evaluator handlers): https
// only, no URL credentials, no private, loopback, link-local, reserved or
// multicast address unless allowed, the resolved IP pinned for the
// connection (no DNS rebinding), every redirect checked the same way, a
// time-out and a cap on the answer.
//
// How the address is pinned: the client's dialer resolves the host once,
// checks every address the resolver returned (one refused address refuses
// the host: a name that answers both a public and a private address is
// hostile or misconfigured), and dials the checked IP itself; TLS keeps the
// URL's host as ServerName and the request keeps it as Host. There is no
// second lookup a rebinding DNS server could answer differently, and a
// socket-level check (net.Dialer.Control) refuses any connect to an
// address the rules refuse whatever path led to it. Environment proxies
// are ignored: through a proxy the checked address would not be the one
// reached.
//
// Redirects: 307 and 308, which keep the method and the body, are followed
// (at most maxRedirects), each target checked like the first URL; 301, 302
// and 303 would turn the POST into a GET without its body, which no
// webhook means, so they are returned as the status they are.
package egress

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/assayhq/assay/pkg/errs"
)

// Defaults of a Config's zero fields.
const (
	DefaultTimeout     = 10 * time.Second
	DefaultDialTimeout = 5 * time.Second
	DefaultMaxBytes    = 1 << 20
	maxRedirects       = 5
)

// Resolver looks a host name up; *net.Resolver implements it. Tests inject
// one to play a rebinding DNS server or a public name pointing inside.
type Resolver interface {
	LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error)
}

// Config sets the rules of one client.
type Config struct {
	AllowPrivate bool          // let self-hosters reach their own network (and plain http)
	Timeout      time.Duration // the whole call; default 10s
	MaxBytes     int64         // answer cap; more is an error; default 1 MiB

	DialTimeout time.Duration                                                     // connecting, within Timeout; default 5s
	Resolver    Resolver                                                          // default net.DefaultResolver
	RootCAs     *x509.CertPool                                                    // TLS roots; nil is the system's (tests trust their own server)
	UserAgent   string                                                            // default "assay-runtime"
	dial        func(ctx context.Context, network, addr string) (net.Conn, error) // tests: where a checked address is dialled
}

// Client posts JSON to user-chosen URLs under its Config. It is safe for
// concurrent use and keeps connections to checked addresses alive.
type Client struct {
	cfg  Config
	http *http.Client
}

// New returns a client for cfg.
func New(cfg Config) *Client {
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.DialTimeout <= 0 {
		cfg.DialTimeout = DefaultDialTimeout
	}
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = DefaultMaxBytes
	}
	if cfg.Resolver == nil {
		cfg.Resolver = net.DefaultResolver
	}
	if cfg.UserAgent == "" {
		cfg.UserAgent = "assay-runtime"
	}
	c := &Client{cfg: cfg}
	tr := &http.Transport{
		Proxy:                  nil, // never: see the package comment
		DialContext:            c.dialContext,
		TLSClientConfig:        &tls.Config{RootCAs: cfg.RootCAs, MinVersion: tls.VersionTLS12},
		TLSHandshakeTimeout:    cfg.DialTimeout,
		ForceAttemptHTTP2:      true,
		MaxIdleConns:           64,
		MaxIdleConnsPerHost:    4,
		IdleConnTimeout:        90 * time.Second,
		MaxResponseHeaderBytes: 64 << 10,
	}
	c.http = &http.Client{Transport: tr, CheckRedirect: c.checkRedirect}
	return c
}

// Check applies the rules that need no lookup to rawURL: scheme, no
// credentials, a host, no "localhost" name, and a literal IP address's
// range. A parameter (a webhook_url) can be refused when it is saved or
// bound, before any call; PostJSON applies it again along with the
// address checks. A refusal is errs.Unprocessable naming the URL.
func (c *Client) Check(rawURL string) error {
	_, err := c.check(rawURL)
	return err
}

func (c *Client) check(rawURL string) (*url.URL, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, refused(rawURL, "is not a URL")
	}
	switch u.Scheme {
	case "https":
	case "http":
		if !c.cfg.AllowPrivate {
			return nil, refused(rawURL, "is not https")
		}
	default:
		return nil, refused(rawURL, "is not https")
	}
	if u.User != nil {
		return nil, refused(rawURL, "carries credentials")
	}
	host := u.Hostname()
	if host == "" {
		return nil, refused(rawURL, "has no host")
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return nil, refused(rawURL, "has an invalid port")
		}
	}
	if c.cfg.AllowPrivate {
		return u, nil
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		if why := refusedAddr(ip); why != "" {
			return nil, refused(rawURL, fmt.Sprintf("host %s is %s", host, why))
		}
		return u, nil
	}
	name := strings.TrimSuffix(strings.ToLower(host), ".")
	if name == "localhost" || strings.HasSuffix(name, ".localhost") {
		return nil, refused(rawURL, fmt.Sprintf("host %s is a loopback name", host))
	}
	if numericHost(name) {
		// 2130706433, 0x7f.1, 017700000001, 127.1: IPv4 in forms only
		// some resolvers read; a name whose last label is a number is
		// never a DNS name (WHATWG URL), so it is refused, not guessed.
		return nil, refused(rawURL, fmt.Sprintf("host %s is a numeric address in a non-canonical form", host))
	}
	return u, nil
}

// numericHost reports whether host's last label is numeric (decimal, octal
// or 0x hex), the WHATWG rule for an IPv4 host.
func numericHost(host string) bool {
	labels := strings.Split(host, ".")
	last := labels[len(labels)-1]
	if last == "" {
		return false
	}
	if strings.HasPrefix(last, "0x") {
		last = last[2:]
		for _, r := range last {
			if !strings.ContainsRune("0123456789abcdef", r) {
				return false
			}
		}
		return true
	}
	for _, r := range last {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// refused is the 422 of a URL the rules refuse. The URL is named without
// its query, fragment or credentials, which may hold secrets.
func refused(rawURL, why string) error {
	shown := redactText(rawURL)
	if u, err := url.Parse(rawURL); err == nil {
		u.User, u.RawQuery, u.Fragment, u.ForceQuery = nil, "", "", false
		shown = u.String()
		if u.Host == "" {
			// Without a host, a path like //p@ would read back as
			// credentials: show its @ escaped.
			shown = strings.ReplaceAll(shown, "@", "%40")
		}
	}
	if len(shown) > 200 {
		shown = shown[:200] + "…"
	}
	return errs.Message(errs.Unprocessable, "runtime.egress_refused",
		fmt.Sprintf("URL %s refused: it %s", shown, why), map[string]any{"url": shown})
}

// special lists the ranges refused besides what netip classifies:
// "this network", CGNAT, IETF protocol assignments, documentation,
// benchmarking, reserved (and broadcast), IPv6 discard, ORCHID,
// documentation and site-local, the deprecated IPv4-compatible range.
var special = func() []netip.Prefix {
	var ps []netip.Prefix
	for _, s := range []string{
		"0.0.0.0/8", "100.64.0.0/10", "192.0.0.0/24", "192.0.2.0/24", "198.18.0.0/15",
		"198.51.100.0/24", "203.0.113.0/24", "240.0.0.0/4",
		"::/96", "100::/64", "2001::/23", "2001:db8::/32", "fec0::/10",
	} {
		ps = append(ps, netip.MustParsePrefix(s))
	}
	return ps
}()

var (
	nat64     = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour = netip.MustParsePrefix("2002::/16")
)

// refusedAddr says why ip may not be reached, or "" when it may.
func refusedAddr(ip netip.Addr) string {
	if ip.Zone() != "" {
		return "a scoped address"
	}
	ip = ip.Unmap() // ::ffff:127.0.0.1 is 127.0.0.1
	switch {
	case ip.IsUnspecified():
		return "unspecified"
	case ip.IsLoopback():
		return "loopback"
	case ip.IsPrivate():
		return "private"
	case ip.IsLinkLocalUnicast():
		return "link-local"
	case ip.IsMulticast():
		return "multicast"
	}
	// Addresses that embed an IPv4 one are judged by it.
	if ip.Is6() && nat64.Contains(ip) {
		b := ip.As16()
		return refusedAddr(netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}))
	}
	if ip.Is6() && sixToFour.Contains(ip) {
		b := ip.As16()
		return refusedAddr(netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]}))
	}
	for _, p := range special {
		if p.Contains(ip) {
			return "reserved (" + p.String() + ")"
		}
	}
	return ""
}

// dialContext resolves host once, checks every address and dials the
// checked ones in order; the connection is to an address it checked.
func (c *Client) dialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	var ips []netip.Addr
	if ip, err := netip.ParseAddr(host); err == nil {
		ips = []netip.Addr{ip}
	} else {
		lctx, cancel := context.WithTimeout(ctx, c.cfg.DialTimeout)
		answers, err := c.cfg.Resolver.LookupIPAddr(lctx, host)
		cancel()
		if err != nil {
			return nil, errs.Wrap(errs.FailedDependency, "runtime.egress_dns", fmt.Errorf("resolving %s: %w", host, err))
		}
		for _, a := range answers {
			if ip, ok := netip.AddrFromSlice(a.IP); ok {
				ips = append(ips, ip.Unmap().WithZone(a.Zone))
			}
		}
		if len(ips) == 0 {
			return nil, errs.New(errs.FailedDependency, "runtime.egress_dns", "resolving "+host+": no address")
		}
	}
	if !c.cfg.AllowPrivate {
		for _, ip := range ips {
			if why := refusedAddr(ip); why != "" {
				return nil, errs.Message(errs.Unprocessable, "runtime.egress_refused",
					fmt.Sprintf("host %s refused: it resolves to %s, which is %s", host, ip, why),
					map[string]any{"host": host, "address": ip.String()})
			}
		}
	}
	dial := c.cfg.dial
	if dial == nil {
		d := &net.Dialer{Timeout: c.cfg.DialTimeout, Control: c.control}
		dial = d.DialContext
	}
	var firstErr error
	for _, ip := range ips {
		conn, err := dial(ctx, network, net.JoinHostPort(ip.String(), port))
		if err == nil {
			return conn, nil
		}
		if firstErr == nil {
			firstErr = err
		}
		if ctx.Err() != nil {
			break
		}
	}
	return nil, firstErr
}

// control is the last check, on the socket address itself.
func (c *Client) control(network, address string, _ syscall.RawConn) error {
	if c.cfg.AllowPrivate {
		return nil
	}
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("egress: unexpected socket address %q", address)
	}
	if why := refusedAddr(ap.Addr()); why != "" {
		return errs.Message(errs.Unprocessable, "runtime.egress_refused",
			fmt.Sprintf("address %s refused: it is %s", ap.Addr(), why), map[string]any{"address": ap.Addr().String()})
	}
	return nil
}

func (c *Client) checkRedirect(req *http.Request, via []*http.Request) error {
	if req.Response != nil && req.Response.StatusCode != http.StatusTemporaryRedirect && req.Response.StatusCode != http.StatusPermanentRedirect {
		return http.ErrUseLastResponse
	}
	if len(via) > maxRedirects {
		return errs.New(errs.FailedDependency, "runtime.egress_redirects", fmt.Sprintf("more than %d redirects", maxRedirects))
	}
	if _, err := c.check(req.URL.String()); err != nil {
		return err
	}
	return nil
}

// PostJSON posts body as JSON to url with headers and returns the status and
// the answer. A refused URL or address (the first or a redirect's) is
// errs.Unprocessable naming it; a time-out is errs.Timeout; an answer over
// MaxBytes is errs.TooLarge; a failure to reach the server (DNS, refused
// connection, TLS) is errs.FailedDependency. A status is returned as it is,
// whatever it is: the caller decides what a non-200 means.
func (c *Client) PostJSON(ctx context.Context, url string, headers http.Header, body any) (status int, answer []byte, err error) {
	if _, err := c.check(url); err != nil {
		return 0, nil, err
	}
	payload, err := json.Marshal(body)
	if err != nil {
		return 0, nil, errs.Wrap(errs.Unprocessable, "runtime.egress_body", fmt.Errorf("the body is not JSON: %w", err))
	}
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(payload))
	if err != nil {
		return 0, nil, refused(url, "is not a URL")
	}
	for k, vs := range headers {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", c.cfg.UserAgent)
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, nil, c.callError(ctx, url, err)
	}
	defer resp.Body.Close()
	if resp.ContentLength > c.cfg.MaxBytes {
		return resp.StatusCode, nil, c.tooLarge(url)
	}
	answer, err = io.ReadAll(io.LimitReader(resp.Body, c.cfg.MaxBytes+1))
	if err != nil {
		return resp.StatusCode, nil, c.callError(ctx, url, err)
	}
	if int64(len(answer)) > c.cfg.MaxBytes {
		return resp.StatusCode, nil, c.tooLarge(url)
	}
	return resp.StatusCode, answer, nil
}

func (c *Client) tooLarge(url string) error {
	return errs.Message(errs.TooLarge, "runtime.egress_too_large",
		fmt.Sprintf("the answer of %s is over %d bytes", shownURL(url), c.cfg.MaxBytes), map[string]any{"limit_bytes": c.cfg.MaxBytes})
}

// callError classifies a failed call: our refusal, the time-out, or the
// server out of reach.
func (c *Client) callError(ctx context.Context, url string, err error) error {
	var e *errs.Error
	if errors.As(err, &e) {
		return e
	}
	if errors.Is(err, context.DeadlineExceeded) || ctx.Err() == context.DeadlineExceeded {
		return errs.Wrap(errs.Timeout, "runtime.egress_timeout",
			fmt.Errorf("%s did not answer within %s", shownURL(url), c.cfg.Timeout))
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return errs.Wrap(errs.Timeout, "runtime.egress_timeout", fmt.Errorf("%s: %w", shownURL(url), err))
	}
	if errors.Is(err, context.Canceled) {
		return err
	}
	return errs.Wrap(errs.FailedDependency, "runtime.egress_failed", fmt.Errorf("calling %s: %w", shownURL(url), err))
}

func shownURL(raw string) string {
	if u, err := url.Parse(raw); err == nil {
		u.User, u.RawQuery, u.Fragment = nil, "", ""
		return u.String()
	}
	return redactText(raw)
}

// redactText is a URL that net/url cannot parse, as an error may show it:
// without what could be credentials (the authority's text up to its last
// @), query or fragment, and with any other @ escaped, so that it does
// not read back as credentials either.
func redactText(raw string) string {
	start := 0
	if i := strings.Index(raw, "//"); i >= 0 {
		start = i + 2
	}
	if j := strings.IndexAny(raw[start:], "?#"); j >= 0 {
		raw = raw[:start+j]
	}
	end := len(raw)
	if j := strings.IndexByte(raw[start:], '/'); j >= 0 {
		end = start + j
	}
	if k := strings.LastIndexByte(raw[start:end], '@'); k >= 0 {
		raw = raw[:start] + raw[start+k+1:]
	}
	return strings.ReplaceAll(raw, "@", "%40")
}
