package main

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/assayhq/assay/pkg/testutil/freeport"
	"github.com/assayhq/assay/pkg/testutil/pgtest"
	"github.com/assayhq/assay/pkg/testutil/platformtest"
	"github.com/assayhq/assay/pkg/testutil/svctest"
)

// TestShutdownDelayKeepsServing replays what a load balancer sees when a
// service is told to stop: during GATEWAY_SHUTDOWN_DELAY /ready answers 503
// (it takes the instance out) while new requests, on the API and the
// metrics port, are still served; then the listeners close and a request
// already in flight is answered before the process exits. Every service
// runs the same app.Main and httpx.Server.
func TestShutdownDelayKeepsServing(t *testing.T) {
	metrics := freeport.Addr(t)
	// A delay longer than the test: its end is the second SIGTERM, which
	// skips it, so nothing here waits on a clock.
	gw := svctest.Start(t, svctest.Options{Pkg: "services/gateway/cmd/gateway", AddrVar: "GATEWAY_ADDR",
		Env: append(platformtest.TokenEnv("gateway"), "GATEWAY_POSTGRES_URL="+pgtest.NewURL(t), "GATEWAY_ADMIN_KEY=test-admin-key-0123456789",
			"GATEWAY_CONSOLE_URL=", "GATEWAY_METRICS_ADDR="+metrics, "GATEWAY_SHUTDOWN_DELAY=10m", "GATEWAY_HTTP_SHUTDOWN_TIMEOUT=1m")})
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	get := func(url string) (int, error) {
		res, err := client.Get(url)
		if err != nil {
			return 0, err
		}
		res.Body.Close()
		return res.StatusCode, nil
	}

	// In flight: an admin request whose body is half sent; its handler is
	// reading it when the listener closes.
	body := `{"accounts":[]}`
	inflight, err := net.Dial("tcp", gw.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer inflight.Close()
	fmt.Fprintf(inflight, "POST /api/admin/simple/accounts HTTP/1.1\r\nHost: gateway\r\nAuthorization: Access test-admin-key-0123456789\r\n"+
		"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body[:5])

	gw.Signal(syscall.SIGTERM)
	poll(t, "/ready to answer 503 while draining", func() bool {
		code, err := get(gw.URL + "/ready")
		if err != nil {
			t.Fatalf("GET /ready during the shutdown delay: %v (the listener closed at SIGTERM)", err)
		}
		return code == http.StatusServiceUnavailable
	})
	for _, url := range []string{gw.URL + "/health", "http://" + metrics + "/metrics"} {
		if code, err := get(url); err != nil || code != http.StatusOK {
			t.Fatalf("GET %s during the shutdown delay: %d, %v; want 200", url, code, err)
		}
	}
	select {
	case <-gw.Exited():
		t.Fatal("the process exited during the shutdown delay")
	default:
	}

	// A second signal ends the delay: the listener closes, the in-flight
	// request holds the process until it is answered.
	gw.Signal(syscall.SIGTERM)
	poll(t, "the API listener to close", func() bool {
		c, err := net.DialTimeout("tcp", gw.Addr, time.Second)
		if err != nil {
			return true
		}
		c.Close()
		return false
	})
	select {
	case <-gw.Exited():
		t.Fatal("the process exited with a request in flight")
	default:
	}
	if _, err := inflight.Write([]byte(body[5:])); err != nil {
		t.Fatal(err)
	}
	_ = inflight.SetReadDeadline(time.Now().Add(10 * time.Second))
	line, err := bufio.NewReader(inflight).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "HTTP/1.1 ") || strings.HasPrefix(line, "HTTP/1.1 5") {
		t.Fatalf("the in-flight request's answer: %q, %v; want its answer, not a 5xx", line, err)
	}
	select {
	case <-gw.Exited():
	case <-time.After(10 * time.Second):
		t.Fatalf("the process did not exit after the drain:\n%s", gw.Log())
	}
	if !strings.Contains(gw.Log(), "http server stopped") {
		t.Fatalf("no clean stop in the log:\n%s", gw.Log())
	}
}

// poll calls ok until it is true, failing the test after 10 s.
func poll(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if ok() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}
