package main

import (
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/pkg/config"
	"github.com/assayhq/assay/pkg/testutil/freeport"
	"github.com/assayhq/assay/pkg/testutil/pgtest"
	"github.com/assayhq/assay/pkg/testutil/platformtest"
	"github.com/assayhq/assay/pkg/testutil/svctest"
)

// TestListensOnLoopbackByDefault: make up prints http://127.0.0.1:8080, so
// a gateway started without GATEWAY_ADDR must not answer on every
// interface of the machine; containers set 0.0.0.0:8080 themselves.
func TestListensOnLoopbackByDefault(t *testing.T) {
	t.Setenv("GATEWAY_ADMIN_KEY", "test-admin-key-0123456789")
	for _, kv := range platformtest.TokenEnv("gateway") {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	for _, v := range []string{"GATEWAY_ADDR", "GATEWAY_METRICS_ADDR"} {
		t.Setenv(v, "") // restored at the end, unset meanwhile: the default applies
		require.NoError(t, os.Unsetenv(v))
	}
	var cfg Config
	require.NoError(t, config.Load("GATEWAY", &cfg))
	for name, addr := range map[string]string{"GATEWAY_ADDR": cfg.Addr} {
		host, _, err := net.SplitHostPort(addr)
		require.NoError(t, err, name)
		ip := net.ParseIP(host)
		require.True(t, ip != nil && ip.IsLoopback(), "%s defaults to %q, not a loopback address", name, addr)
	}
}

// TestMetricsAreNotOnThePublicPort: the real binary answers /metrics (with
// per-route counts) only on GATEWAY_METRICS_ADDR, never on its API port.
func TestMetricsAreNotOnThePublicPort(t *testing.T) {
	metrics := freeport.Addr(t)
	gw := svctest.Start(t, svctest.Options{Pkg: "services/gateway/cmd/gateway", AddrVar: "GATEWAY_ADDR",
		Env: append(platformtest.TokenEnv("gateway"), "GATEWAY_POSTGRES_URL="+pgtest.NewURL(t), "GATEWAY_ADMIN_KEY=test-admin-key-0123456789",
			"GATEWAY_CONSOLE_URL=", "GATEWAY_LOG_LEVEL=warn", "GATEWAY_METRICS_ADDR="+metrics)})
	get := func(url string) (int, string) {
		t.Helper()
		resp, err := http.Get(url)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, string(b)
	}
	get(gw.URL + "/api/openapi.json") // one counted request
	for _, p := range []string{"/metrics", "/api/metrics", "/metrics/"} {
		status, body := get(gw.URL + p)
		require.False(t, strings.Contains(body, "http_requests_total"), "GET %s on the API port shows the request counts", p)
		require.GreaterOrEqual(t, status, 400, "GET %s on the API port: %s", p, body)
		require.Less(t, status, 500, "GET %s on the API port: %s", p, body)
	}
	status, body := get("http://" + metrics + "/metrics")
	require.Equal(t, http.StatusOK, status)
	require.True(t, strings.Contains(body, `http_requests_total{code="200",method="GET",route="/openapi.json",service="gateway"}`), body)
}
