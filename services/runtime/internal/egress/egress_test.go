package egress

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/assayhq/assay/pkg/errs"
)

// resolver answers from a script: each lookup of a host takes the next
// answer (the last one repeats), as a rebinding DNS server would.
type resolver struct {
	mu      sync.Mutex
	answers map[string][][]string
	calls   map[string]int
}

func newResolver(answers map[string][][]string) *resolver {
	return &resolver{answers: answers, calls: map[string]int{}}
}

func (r *resolver) LookupIPAddr(_ context.Context, host string) ([]net.IPAddr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	seq, ok := r.answers[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	i := min(r.calls[host], len(seq)-1)
	r.calls[host]++
	var out []net.IPAddr
	for _, s := range seq[i] {
		out = append(out, net.IPAddr{IP: net.ParseIP(s)})
	}
	return out, nil
}

func (r *resolver) count(host string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls[host]
}

func wantKind(t *testing.T, err error, kind errs.Kind, fragments ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error; want kind %d", kind)
	}
	e := errs.From(err)
	if e.Kind != kind {
		t.Fatalf("error %v has kind %d; want %d", err, e.Kind, kind)
	}
	for _, f := range fragments {
		if !strings.Contains(e.Msg, f) {
			t.Errorf("message %q lacks %q", e.Msg, f)
		}
	}
}

func TestCheckRefuses(t *testing.T) {
	c := New(Config{})
	for _, u := range []string{
		"http://example.com/hook",
		"ftp://example.com/",
		"file:///etc/passwd",
		"https://user:pass@example.com/",
		"https://user@example.com/",
		"https://10.1.2.3/", "https://172.16.0.1/", "https://172.31.255.255/", "https://192.168.1.1/",
		"https://127.0.0.1/", "https://127.8.9.10:8443/", "https://[::1]/",
		"https://169.254.169.254/latest/meta-data/", "https://0.0.0.0/", "https://[::]/",
		"https://[::ffff:127.0.0.1]/", "https://[::ffff:169.254.169.254]/", "https://[::ffff:10.0.0.1]/",
		"https://100.64.0.1/", "https://224.0.0.1/", "https://255.255.255.255/", "https://240.0.0.1/",
		"https://[fe80::1]/", "https://[fc00::1]/", "https://[fd12:3456::1]/", "https://[ff02::1]/",
		"https://[64:ff9b::7f00:1]/", "https://[2002:7f00:1::]/", "https://[::127.0.0.1]/",
		"https://192.0.2.1/", "https://198.18.0.1/", "https://203.0.113.9/",
		"https://2130706433/", "https://0x7f000001/", "https://017700000001/", "https://127.1/", "https://0x7f.1/",
		"https://localhost/", "https://LOCALHOST./", "https://api.localhost/",
		"https:///nohost", "https://example.com:0/", "https://example.com:99999/", "not a url\x7f",
	} {
		if err := c.Check(u); err == nil {
			t.Errorf("%q accepted", u)
		} else {
			wantKind(t, err, errs.Unprocessable, "refused")
		}
	}
}

func TestCheckNamesTheURLWithoutSecrets(t *testing.T) {
	err := New(Config{}).Check("https://bob:hunter2@example.com/hook?token=s3cret#f")
	wantKind(t, err, errs.Unprocessable, "https://example.com/hook", "credentials")
	if m := errs.From(err).Msg; strings.Contains(m, "hunter2") || strings.Contains(m, "s3cret") {
		t.Fatalf("message %q repeats a secret", m)
	}
}

// A URL net/url cannot parse (a control character, a space in the host)
// is refused naming it, without its credentials: the fuzzer found the raw
// text shown as it was.
func TestUnparsableURLIsNamedWithoutCredentials(t *testing.T) {
	for _, raw := range []string{
		"https://bob:hunter2@example.com/hook\x7f",
		"//bob:hunter2@exa mple.com/x",
		"bob:hunter2@example.com\x7f",
		"https://bob:hunter2@a@example.com\x00?q=s3cret",
	} {
		err := New(Config{}).Check(raw)
		wantKind(t, err, errs.Unprocessable, "refused")
		e := errs.From(err)
		shown, _ := e.Detail.(map[string]any)["url"].(string)
		if strings.Contains(e.Msg, "hunter2") || strings.Contains(shown, "hunter2") || strings.Contains(e.Msg, "s3cret") {
			t.Errorf("%q: message %q, url %q repeat a secret", raw, e.Msg, shown)
		}
		if !strings.Contains(shown, "mple.com") {
			t.Errorf("%q: url %q does not name the host", raw, shown)
		}
	}
}

func TestCheckAccepts(t *testing.T) {
	for _, u := range []string{
		"https://example.com/hook", "https://hooks.example.com:8443/a?b=c", "https://93.184.216.34/",
		"https://[2606:2800:220:1:248:1893:25c8:1946]/", "https://8.8.8.8/", "https://1password.com/",
	} {
		if err := New(Config{}).Check(u); err != nil {
			t.Errorf("%q refused: %v", u, err)
		}
	}
	for _, u := range []string{"http://localhost:8080/hook", "http://10.0.0.1/", "https://127.0.0.1/"} {
		if err := New(Config{AllowPrivate: true}).Check(u); err != nil {
			t.Errorf("%q refused with AllowPrivate: %v", u, err)
		}
	}
}

// tlsServer is an https server for example.com (httptest's certificate
// covers that name and 127.0.0.1) recording what it saw.
type seen struct {
	mu        sync.Mutex
	host, sni string
	body      string
}

func tlsServer(t *testing.T, h http.HandlerFunc) (*httptest.Server, *seen) {
	s := &seen{}
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.host, s.body = r.Host, string(b)
		if r.TLS != nil {
			s.sni = r.TLS.ServerName
		}
		s.mu.Unlock()
		r.Body = io.NopCloser(strings.NewReader(string(b)))
		if h != nil {
			h(w, r)
			return
		}
		w.Write([]byte(`{"ok":true}`))
	}))
	t.Cleanup(srv.Close)
	return srv, s
}

func port(srv *httptest.Server) string {
	_, p, _ := net.SplitHostPort(srv.Listener.Addr().String())
	return p
}

// TestPinnedAddress: a name resolved through the client's resolver is
// dialled at the address the resolver gave, with the name as Host and SNI
// (the name is example.com, whose real address is elsewhere: reaching the
// local server proves the dial used the resolved, pinned IP).
func TestPinnedAddress(t *testing.T) {
	srv, s := tlsServer(t, nil)
	res := newResolver(map[string][][]string{"example.com": {{"127.0.0.1"}}})
	c := New(Config{AllowPrivate: true, Resolver: res, RootCAs: srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs})
	status, answer, err := c.PostJSON(context.Background(), "https://example.com:"+port(srv)+"/hook", http.Header{"X-A": {"1"}}, map[string]any{"x": 1})
	if err != nil {
		t.Fatal(err)
	}
	if status != 200 || string(answer) != `{"ok":true}` {
		t.Fatalf("status %d answer %s", status, answer)
	}
	if s.sni != "example.com" || s.host != "example.com:"+port(srv) || s.body != `{"x":1}` {
		t.Fatalf("server saw sni %q host %q body %q", s.sni, s.host, s.body)
	}
	if res.count("example.com") != 1 {
		t.Fatalf("%d lookups", res.count("example.com"))
	}
}

// TestDNSRebinding: the resolver answers a public address first and a
// loopback one after. The connection goes to the public address it checked
// (the dial hook sees it) and a later lookup that answers loopback is
// refused: no second lookup stands between the check and the connect.
func TestDNSRebinding(t *testing.T) {
	srv, s := tlsServer(t, nil)
	res := newResolver(map[string][][]string{"example.com": {{"93.184.216.34"}, {"127.0.0.1"}}})
	var mu sync.Mutex
	var dialled []string
	c := New(Config{Resolver: res, RootCAs: srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs,
		dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
			mu.Lock()
			dialled = append(dialled, addr)
			mu.Unlock()
			// The "public" host is this test's server.
			var d net.Dialer
			return d.DialContext(ctx, network, srv.Listener.Addr().String())
		}})
	u := "https://example.com:" + port(srv) + "/hook"
	if _, _, err := c.PostJSON(context.Background(), u, nil, 1); err != nil {
		t.Fatal(err)
	}
	if len(dialled) != 1 || dialled[0] != "93.184.216.34:"+port(srv) || s.sni != "example.com" {
		t.Fatalf("dialled %v, sni %q", dialled, s.sni)
	}
	c.http.CloseIdleConnections() // the next call resolves again
	_, _, err := c.PostJSON(context.Background(), u, nil, 1)
	wantKind(t, err, errs.Unprocessable, "example.com", "127.0.0.1", "loopback")
	if len(dialled) != 1 {
		t.Fatalf("dialled %v after a refused lookup", dialled)
	}
}

// TestResolvedPrivate: a public-looking name whose answers include a
// private address is refused before any connect, whichever answer is first.
func TestResolvedPrivate(t *testing.T) {
	for _, answer := range [][]string{{"10.0.0.5"}, {"93.184.216.34", "169.254.169.254"}, {"::ffff:192.168.0.1"}, {"fd00::1"}} {
		res := newResolver(map[string][][]string{"hook.example.com": {answer}})
		c := New(Config{Resolver: res, dial: func(context.Context, string, string) (net.Conn, error) {
			t.Fatal("dialled")
			return nil, nil
		}})
		_, _, err := c.PostJSON(context.Background(), "https://hook.example.com/x", nil, nil)
		wantKind(t, err, errs.Unprocessable, "hook.example.com", "resolves to")
	}
}

func TestRedirects(t *testing.T) {
	var target string
	srv, _ := tlsServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/307":
			http.Redirect(w, r, target, http.StatusTemporaryRedirect)
		case "/302":
			http.Redirect(w, r, "/final", http.StatusFound)
		case "/loop":
			http.Redirect(w, r, "/loop", http.StatusPermanentRedirect)
		case "/final":
			b, _ := io.ReadAll(r.Body)
			fmt.Fprintf(w, `{"method":%q,"body":%q}`, r.Method, b)
		}
	})
	res := newResolver(map[string][][]string{
		"example.com":        {{"93.184.216.34"}},
		"inside.example.com": {{"10.9.8.7"}},
	})
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, srv.Listener.Addr().String())
	}
	c := New(Config{Resolver: res, RootCAs: srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs, dial: dial})
	base := "https://example.com:" + port(srv)

	// A 307 to a checked address keeps the method and the body.
	target = base + "/final"
	status, answer, err := c.PostJSON(context.Background(), base+"/307", nil, "b")
	if err != nil || status != 200 || string(answer) != `{"method":"POST","body":"\"b\""}` {
		t.Fatalf("status %d answer %s err %v", status, answer, err)
	}
	// To private addresses, literal or resolved, and to plain http: refused.
	for _, to := range []string{"https://127.0.0.1:" + port(srv) + "/final", "https://169.254.169.254/", "https://inside.example.com/", "http://example.com/", "https://[::ffff:10.0.0.1]/"} {
		target = to
		_, _, err := c.PostJSON(context.Background(), base+"/307", nil, "b")
		wantKind(t, err, errs.Unprocessable, "refused")
	}
	// 302 would turn the POST into a GET: returned as it is.
	status, _, err = c.PostJSON(context.Background(), base+"/302", nil, "b")
	if err != nil || status != http.StatusFound {
		t.Fatalf("status %d err %v", status, err)
	}
	_, _, err = c.PostJSON(context.Background(), base+"/loop", nil, "b")
	wantKind(t, err, errs.FailedDependency, "redirects")
}

func TestAllowPrivatePlainHTTP(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Content-Type") != "application/json" || r.Header.Get("X-Key") != "k" {
			w.WriteHeader(400)
			return
		}
		w.WriteHeader(201)
		w.Write([]byte(`0.5`))
	}))
	defer srv.Close()
	status, answer, err := New(Config{AllowPrivate: true}).PostJSON(context.Background(), srv.URL, http.Header{"X-Key": {"k"}}, map[string]any{})
	if err != nil || status != 201 || string(answer) != "0.5" {
		t.Fatalf("status %d answer %q err %v", status, answer, err)
	}
	// The same server without AllowPrivate: http and loopback both refused.
	_, _, err = New(Config{}).PostJSON(context.Background(), srv.URL, nil, nil)
	wantKind(t, err, errs.Unprocessable, "refused")
	_, _, err = New(Config{}).PostJSON(context.Background(), strings.Replace(srv.URL, "http:", "https:", 1), nil, nil)
	wantKind(t, err, errs.Unprocessable, "127.0.0.1", "loopback")
}

func TestSocketCheck(t *testing.T) {
	allow, err := ParseAllowList("10.9.0.0/16,127.0.0.1:11434")
	if err != nil {
		t.Fatal(err)
	}
	c := New(Config{Allow: allow})
	tlsCheck, plainCheck := c.control(false, false), c.control(false, true)
	for _, a := range []string{"127.0.0.1:443", "[::1]:443", "10.0.0.1:443", "[::ffff:169.254.169.254]:443",
		"[64:ff9b::a00:1]:443", "[64:ff9b:1::1]:443", "127.0.0.1:11435", "93.184.216.34:5432", "93.184.216.34:22"} {
		wantKind(t, tlsCheck("tcp", a, nil), errs.Unprocessable, "refused")
	}
	for _, a := range []string{"93.184.216.34:443", "93.184.216.34:8443", "10.9.3.4:8000", "127.0.0.1:11434", "[::ffff:10.9.0.1]:80"} {
		if err := tlsCheck("tcp", a, nil); err != nil {
			t.Errorf("%s: %v", a, err)
		}
	}
	// Plain http goes to admitted destinations only.
	wantKind(t, plainCheck("tcp", "93.184.216.34:80", nil), errs.Unprocessable, "RUNTIME_EGRESS_ALLOW")
	if err := plainCheck("tcp", "10.9.3.4:8000", nil); err != nil {
		t.Fatal(err)
	}
	// A name entry admits the address its name resolved to.
	if err := c.control(true, true)("tcp", "127.0.0.1:1", nil); err != nil {
		t.Fatal(err)
	}
}

func TestParseAllowList(t *testing.T) {
	l, err := ParseAllowList(" 10.0.0.0/8, 192.168.1.5 ,[fd00::1]:8000,ollama.internal:11434,VLLM.Internal., ::ffff:172.16.0.0/108")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		ip   string
		port int
		want bool
	}{
		{"10.1.2.3", 1, true}, {"::ffff:10.1.2.3", 443, true}, {"192.168.1.5", 80, true}, {"192.168.1.6", 80, false},
		{"fd00::1", 8000, true}, {"fd00::1", 8001, false}, {"172.16.9.9", 5, true}, {"127.0.0.1", 80, false},
	} {
		if got := l.admitsAddr(netip.MustParseAddr(tc.ip), tc.port); got != tc.want {
			t.Errorf("%s:%d admitted %v", tc.ip, tc.port, got)
		}
	}
	if !l.admitsName("Ollama.Internal", 11434) || l.admitsName("ollama.internal", 80) || !l.admitsName("vllm.internal.", 9) {
		t.Error("name entries")
	}
	for _, bad := range []string{"10.0.0.0/33", "10.0.0.1:0", "host:99999", "fe80::1%eth0", "127.1", "a b", "[::1]"} {
		if _, err := ParseAllowList(bad); err == nil || !strings.Contains(err.Error(), bad) {
			t.Errorf("%q: %v", bad, err)
		}
	}
	if l, err := ParseAllowList(""); err != nil || !l.Empty() {
		t.Fatalf("empty: %v %v", l, err)
	}
}

// TestAllowListAdmits: a server on loopback, refused by default, is
// reached over plain http once the allow-list names it, by address or by
// name; another port of the same address stays refused.
func TestAllowListAdmits(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(`1`)) }))
	defer srv.Close()
	addr := srv.Listener.Addr().String()
	_, _, err := New(Config{}).PostJSON(context.Background(), srv.URL, nil, nil)
	wantKind(t, err, errs.Unprocessable, "refused")
	for _, entry := range []string{addr, "127.0.0.0/8", "model.test:" + port(srv)} {
		allow, err := ParseAllowList(entry)
		if err != nil {
			t.Fatal(err)
		}
		res := newResolver(map[string][][]string{"model.test": {{"127.0.0.1"}}})
		c := New(Config{Allow: allow, Resolver: res})
		u := srv.URL
		if strings.HasPrefix(entry, "model.test") {
			u = "http://model.test:" + port(srv)
		}
		if status, _, err := c.PostJSON(context.Background(), u, nil, nil); err != nil || status != 200 {
			t.Fatalf("%s: %d %v", entry, status, err)
		}
	}
	allow, _ := ParseAllowList("127.0.0.1:1")
	_, _, err = New(Config{Allow: allow}).PostJSON(context.Background(), srv.URL, nil, nil)
	wantKind(t, err, errs.Unprocessable, "refused")
	// An allowed name does not admit another name that resolves inside.
	allow, _ = ParseAllowList("model.test")
	res := newResolver(map[string][][]string{"evil.test": {{"127.0.0.1"}}})
	_, _, err = New(Config{Allow: allow, Resolver: res}).PostJSON(context.Background(), "https://evil.test:"+port(srv), nil, nil)
	wantKind(t, err, errs.Unprocessable, "evil.test", "loopback")
}

// TestRedirectDropsHeadersAcrossOrigins: a 307 to another origin carries
// none of the caller's headers (a key, a tenant's extra header); one on
// the same origin keeps them.
func TestRedirectDropsHeadersAcrossOrigins(t *testing.T) {
	var got http.Header
	final := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Clone()
		w.Write([]byte(`1`))
	}))
	defer final.Close()
	hop := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/same" {
			http.Redirect(w, r, "/final", http.StatusTemporaryRedirect)
			return
		}
		if r.URL.Path == "/final" {
			got = r.Header.Clone()
			w.Write([]byte(`1`))
			return
		}
		http.Redirect(w, r, final.URL+"/x", http.StatusTemporaryRedirect)
	}))
	defer hop.Close()
	allow, _ := ParseAllowList("127.0.0.1")
	c := New(Config{Allow: allow})
	h := http.Header{"Authorization": {"Bearer k"}, "Api-Key": {"ak"}, "X-Tenant": {"t"}}
	if _, _, err := c.PostJSON(context.Background(), hop.URL+"/other", h, 1); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"Authorization", "Api-Key", "X-Tenant"} {
		if got.Get(k) != "" {
			t.Errorf("%s followed the redirect to another origin", k)
		}
	}
	if got.Get("Content-Type") != "application/json" {
		t.Errorf("content type %q", got.Get("Content-Type"))
	}
	if _, _, err := c.PostJSON(context.Background(), hop.URL+"/same", h, 1); err != nil {
		t.Fatal(err)
	}
	if got.Get("X-Tenant") != "t" || got.Get("Api-Key") != "ak" {
		t.Errorf("same origin: headers %v", got)
	}
}

func TestCheckPorts(t *testing.T) {
	c := New(Config{})
	for _, u := range []string{"https://93.184.216.34:22/", "https://example.com:5432/", "https://example.com:8123/", "https://example.com:80/"} {
		wantKind(t, c.Check(u), errs.Unprocessable, "port")
	}
	for _, u := range []string{"https://example.com/", "https://example.com:8443/", "https://93.184.216.34:11434/"} {
		if err := c.Check(u); err != nil {
			t.Errorf("%s: %v", u, err)
		}
	}
}

func TestAnswerCap(t *testing.T) {
	for name, h := range map[string]http.HandlerFunc{
		"content-length": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "2000")
			w.Write(make([]byte, 2000))
		},
		"chunked": func(w http.ResponseWriter, r *http.Request) {
			for range 20 {
				w.Write(make([]byte, 100))
				w.(http.Flusher).Flush()
			}
		},
	} {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(h)
			defer srv.Close()
			_, _, err := New(Config{AllowPrivate: true, MaxBytes: 1000}).PostJSON(context.Background(), srv.URL, nil, nil)
			wantKind(t, err, errs.TooLarge, "1000 bytes")
		})
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(make([]byte, 1000)) }))
	defer srv.Close()
	if _, a, err := New(Config{AllowPrivate: true, MaxBytes: 1000}).PostJSON(context.Background(), srv.URL, nil, nil); err != nil || len(a) != 1000 {
		t.Fatalf("an answer at the cap: %d bytes, %v", len(a), err)
	}
}

func TestTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	start := time.Now()
	_, _, err := New(Config{AllowPrivate: true, Timeout: 200 * time.Millisecond}).PostJSON(context.Background(), srv.URL, nil, nil)
	wantKind(t, err, errs.Timeout, "200ms")
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("returned after %s", d)
	}
}

func TestUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	_, _, err = New(Config{AllowPrivate: true}).PostJSON(context.Background(), "http://"+addr+"/", nil, nil)
	wantKind(t, err, errs.FailedDependency)
	res := newResolver(nil)
	_, _, err = New(Config{Resolver: res}).PostJSON(context.Background(), "https://nowhere.example.com/", nil, nil)
	wantKind(t, err, errs.FailedDependency, "nowhere.example.com")
	// A certificate for another name is a failed TLS handshake, not a pass.
	srv, _ := tlsServer(t, nil)
	res = newResolver(map[string][][]string{"other.test": {{"127.0.0.1"}}})
	_, _, err = New(Config{AllowPrivate: true, Resolver: res, RootCAs: srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs}).
		PostJSON(context.Background(), "https://other.test:"+port(srv)+"/", nil, nil)
	wantKind(t, err, errs.FailedDependency)
	var ce *tls.CertificateVerificationError
	if !errors.As(err, &ce) {
		t.Fatalf("%v is not a certificate error", err)
	}
}

func BenchmarkPostJSON(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Write([]byte(`0.9`))
	}))
	defer srv.Close()
	c := New(Config{AllowPrivate: true})
	body := map[string]any{"inputs": map[string]any{"country": "France", "correct_answer": "Paris"}, "output": "Paris"}
	for b.Loop() {
		if _, _, err := c.PostJSON(context.Background(), srv.URL, nil, body); err != nil {
			b.Fatal(err)
		}
	}
}
