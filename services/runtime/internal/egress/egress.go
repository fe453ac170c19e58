// Package egress is the runtime's one egress policy: every call to a URL
// a tenant or an operator chose (LLM providers, custom base URLs and judge
// models, webhook evaluators, hook applications, HTTPS evaluator handlers)
// goes through a client of this package. Rules: https, or plain http only
// to a destination the operator's allow-list admits; no URL credentials;
// no loopback, private, unique-local, link-local, CGNAT, reserved or
// multicast address, in any form (IPv4-mapped, NAT64, 6to4 included); no
// port of a well-known internal service nor below 1024 but 443; unless the
// allow-list (AllowList, RUNTIME_EGRESS_ALLOW) admits the destination or
// AllowPrivate turns the address rules off. The resolved IP is pinned for
// the connection (no DNS rebinding), every redirect is checked the same
// way and loses the caller's headers when it leaves the origin, and a
// time-out and a cap bound PostJSON's answer.
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
// reached. Plain http and TLS connections are dialled by different hooks
// of the transport (DialContext, DialTLSContext), so the dialer knows
// which one it opens without trusting anything the request carries.
//
// Redirects: 307 and 308, which keep the method and the body, are followed
// (at most maxRedirects), each target checked like the first URL; 301, 302
// and 303 would turn the POST into a GET without its body, which no
// webhook means, so they are returned as the status they are. A redirect
// to another origin (scheme, host and port) carries none of the caller's
// headers: a provider key or a tenant's extra header is sent only where it
// was meant to go.
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
	AllowPrivate bool          // no address or port rule at all, plain http anywhere (RUNTIME_ALLOW_PRIVATE_EGRESS)
	Allow        AllowList     // destinations admitted although private (RUNTIME_EGRESS_ALLOW)
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
		Proxy: nil, // never: see the package comment
		// Plain http only: https goes through DialTLSContext.
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			return c.dialContext(ctx, network, addr, true)
		},
		DialTLSContext:         c.dialTLS,
		TLSHandshakeTimeout:    cfg.DialTimeout,
		ForceAttemptHTTP2:      true,
		MaxIdleConns:           64,
		MaxIdleConnsPerHost:    32,
		IdleConnTimeout:        90 * time.Second,
		ResponseHeaderTimeout:  cfg.Timeout,
		MaxResponseHeaderBytes: 64 << 10,
	}
	c.http = &http.Client{Transport: tr, CheckRedirect: c.checkRedirect}
	return c
}

// HTTPClient is an *http.Client under the client's rules (addresses,
// redirects, the response-header time-out) but without PostJSON's overall
// time-out and answer cap: for the LLM provider client, which streams
// answers and sets a time-out per request. It shares the client's
// connections.
func (c *Client) HTTPClient() *http.Client {
	return &http.Client{Transport: c.http.Transport, CheckRedirect: c.checkRedirect}
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
	if u.Scheme != "https" && u.Scheme != "http" {
		return nil, refused(rawURL, "is not https")
	}
	if u.User != nil {
		return nil, refused(rawURL, "carries credentials")
	}
	host := u.Hostname()
	if host == "" {
		return nil, refused(rawURL, "has no host")
	}
	port, err := urlPort(u)
	if err != nil {
		return nil, refused(rawURL, "has an invalid port")
	}
	if c.cfg.AllowPrivate {
		return u, nil
	}
	allow := c.cfg.Allow
	if allow.admitsName(host, port) {
		return u, nil
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		if allow.admitsAddr(ip, port) {
			return u, nil
		}
		if why := refusedAddr(ip); why != "" {
			return nil, refused(rawURL, fmt.Sprintf("host %s is %s", host, why))
		}
		if u.Scheme == "http" {
			return nil, refused(rawURL, "is not https (plain http only to a destination in RUNTIME_EGRESS_ALLOW)")
		}
		if why := refusedPort(port); why != "" {
			return nil, refused(rawURL, fmt.Sprintf("port %d is %s", port, why))
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
	// A name may still resolve into an address entry of the allow-list:
	// then the dialer decides, with the address in hand.
	if !allow.hasAddrs() {
		if u.Scheme == "http" {
			return nil, refused(rawURL, "is not https (plain http only to a destination in RUNTIME_EGRESS_ALLOW)")
		}
		if why := refusedPort(port); why != "" {
			return nil, refused(rawURL, fmt.Sprintf("port %d is %s", port, why))
		}
	}
	return u, nil
}

// urlPort is u's port, or its scheme's.
func urlPort(u *url.URL) (int, error) {
	p := u.Port()
	if p == "" {
		if u.Scheme == "http" {
			return 80, nil
		}
		return 443, nil
	}
	n, err := strconv.Atoi(p)
	if err != nil || n < 1 || n > 65535 {
		return 0, fmt.Errorf("invalid port %q", p)
	}
	return n, nil
}

// internalPorts are ports of services that are never a model provider nor
// a webhook, whatever address answers them: this platform's own defaults
// and common infrastructure (databases, queues, caches, cluster APIs).
// On a public address they are most likely the runtime's own host or a
// neighbour's, reached from outside.
var internalPorts = map[int]string{
	2375: "Docker", 2376: "Docker", 2379: "etcd", 2380: "etcd", 3306: "MySQL", 4222: "NATS",
	5432: "PostgreSQL", 5672: "AMQP", 6222: "NATS", 6379: "Redis", 6443: "Kubernetes",
	8080: "Assay", 8081: "Assay", 8082: "Assay", 8083: "Assay", 8084: "Assay", 8085: "Assay",
	8123: "ClickHouse", 8222: "NATS", 9000: "ClickHouse", 9009: "ClickHouse", 9090: "Prometheus",
	9092: "Kafka", 9200: "Elasticsearch", 9300: "Elasticsearch", 10250: "kubelet", 10255: "kubelet",
	11211: "memcached", 27017: "MongoDB",
}

// refusedPort says why port may not be reached on an address the
// allow-list does not admit, or "" when it may.
func refusedPort(port int) string {
	if port < 1024 && port != 443 {
		return "a system port other than 443"
	}
	if name, ok := internalPorts[port]; ok {
		return "the port of an internal service (" + name + ")"
	}
	return ""
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
	nat64l    = netip.MustParsePrefix("64:ff9b:1::/48") // local-use NAT64 (RFC 8215): the network's own translator
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
	if ip.Is6() && nat64l.Contains(ip) {
		return "a local NAT64 address"
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
// plain is a connection for http, which only an admitted destination gets.
func (c *Client) dialContext(ctx context.Context, network, addr string, plain bool) (net.Conn, error) {
	host, portText, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	port, err := strconv.Atoi(portText)
	if err != nil || port < 1 || port > 65535 {
		return nil, errs.New(errs.Unprocessable, "runtime.egress_refused", "port "+portText+" refused: it is not a port")
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
	byName := c.cfg.Allow.admitsName(host, port)
	for _, ip := range ips {
		if why := c.refusedDest(ip, port, byName, plain); why != "" {
			return nil, errs.Message(errs.Unprocessable, "runtime.egress_refused",
				fmt.Sprintf("host %s refused: it resolves to %s, which is %s", host, ip, why),
				map[string]any{"host": host, "address": ip.String()})
		}
	}
	dial := c.cfg.dial
	if dial == nil {
		d := &net.Dialer{Timeout: c.cfg.DialTimeout, Control: c.control(byName, plain)}
		dial = d.DialContext
	}
	var firstErr error
	for _, ip := range ips {
		conn, err := dial(ctx, network, net.JoinHostPort(ip.String(), portText))
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

// dialTLS is dialContext for https, then the handshake with the URL's host
// as the name the certificate must carry.
func (c *Client) dialTLS(ctx context.Context, network, addr string) (net.Conn, error) {
	conn, err := c.dialContext(ctx, network, addr, false)
	if err != nil {
		return nil, err
	}
	host, _, _ := net.SplitHostPort(addr)
	tc := tls.Client(conn, &tls.Config{ServerName: host, RootCAs: c.cfg.RootCAs, MinVersion: tls.VersionTLS12,
		NextProtos: []string{"h2", "http/1.1"}})
	hctx, cancel := context.WithTimeout(ctx, c.cfg.DialTimeout)
	defer cancel()
	if err := tc.HandshakeContext(hctx); err != nil {
		conn.Close()
		return nil, err
	}
	return tc, nil
}

// refusedDest says why a connection to ip:port may not be opened, or "".
// byName: the allow-list admits the host name the URL gave; plain: the
// connection is for http.
func (c *Client) refusedDest(ip netip.Addr, port int, byName, plain bool) string {
	if c.cfg.AllowPrivate || byName || c.cfg.Allow.admitsAddr(ip, port) {
		return ""
	}
	if plain {
		return "not in RUNTIME_EGRESS_ALLOW, and plain http goes nowhere else"
	}
	if why := refusedAddr(ip); why != "" {
		return why
	}
	if why := refusedPort(port); why != "" {
		return fmt.Sprintf("port %d, %s", port, why)
	}
	return ""
}

// control is the last check, on the socket address itself.
func (c *Client) control(byName, plain bool) func(network, address string, _ syscall.RawConn) error {
	return func(network, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return fmt.Errorf("egress: unexpected socket address %q", address)
		}
		if why := c.refusedDest(ap.Addr(), int(ap.Port()), byName, plain); why != "" {
			return errs.Message(errs.Unprocessable, "runtime.egress_refused",
				fmt.Sprintf("address %s refused: it is %s", ap.Addr(), why), map[string]any{"address": ap.Addr().String()})
		}
		return nil
	}
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
	if origin(req.URL) != origin(via[0].URL) {
		// The caller's headers were meant for the first origin: a key, an
		// api-key or a tenant's extra header must not follow a redirect to
		// another host (net/http drops only Authorization and cookies).
		for k := range req.Header {
			if !neutralHeaders[http.CanonicalHeaderKey(k)] {
				req.Header.Del(k)
			}
		}
	}
	return nil
}

// neutralHeaders are what a redirect to another origin keeps.
var neutralHeaders = map[string]bool{"Content-Type": true, "Accept": true, "Accept-Encoding": true, "User-Agent": true}

// origin is scheme://host:port, the port explicit.
func origin(u *url.URL) string {
	p, _ := urlPort(u)
	return u.Scheme + "://" + strings.ToLower(u.Hostname()) + ":" + strconv.Itoa(p)
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
