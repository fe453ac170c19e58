package throttle

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestClientAddr: the forwarded header counts only from a trusted proxy,
// read from the right past the trusted hops.
func TestClientAddr(t *testing.T) {
	ps, err := ParseProxies(" 10.0.0.0/8, 192.0.2.1 ")
	require.NoError(t, err)
	req := func(remote string, xff ...string) *http.Request {
		r := &http.Request{RemoteAddr: remote, Header: http.Header{}}
		for _, x := range xff {
			r.Header.Add("X-Forwarded-For", x)
		}
		return r
	}
	assert.Equal(t, "198.51.100.7", ps.ClientAddr(req("198.51.100.7:5555", "1.2.3.4")), "untrusted peer: header ignored")
	assert.Equal(t, "1.2.3.4", ps.ClientAddr(req("10.1.2.3:5555", "1.2.3.4")))
	assert.Equal(t, "1.2.3.4", ps.ClientAddr(req("192.0.2.1:5555", "6.6.6.6, 1.2.3.4, 10.9.9.9")), "the client's own entries prove nothing")
	assert.Equal(t, "10.1.2.3", ps.ClientAddr(req("10.1.2.3:5555")), "no header: the proxy itself")
	var none Proxies
	assert.Equal(t, "127.0.0.1", none.ClientAddr(req("127.0.0.1:1", "1.2.3.4")))
	_, err = ParseProxies("10.0.0.0/33")
	assert.Error(t, err)
	_, err = ParseProxies("proxy.example.com")
	assert.Error(t, err)
}

// TestWindow: failures past the limit refuse until the window ends, then
// the count starts again; successes and malformed attempts never count.
func TestWindow(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	l := New(Config{AccountFailures: 3, AddressFailures: 100, Window: time.Minute})
	l.now = func() time.Time { return now }
	for i := 0; i < 50; i++ {
		require.NoError(t, l.Attempt("a@example.com", "1.1.1.1"))
		l.Done("a@example.com", "1.1.1.1", false, true)
	}
	for i := 0; i < 3; i++ {
		require.NoError(t, l.Attempt("A@example.com", "1.1.1.1"))
		l.Done("A@example.com", "1.1.1.1", true, false)
	}
	err := l.Attempt("a@example.com", "2.2.2.2")
	var r *Refused
	require.ErrorAs(t, err, &r)
	assert.Equal(t, 60, r.RetryAfter)
	require.NoError(t, l.Attempt("b@example.com", "1.1.1.1"), "another account from the same address")
	now = now.Add(time.Minute)
	require.NoError(t, l.Attempt("a@example.com", "1.1.1.1"), "a new window")
}
