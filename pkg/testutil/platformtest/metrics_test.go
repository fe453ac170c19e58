package platformtest_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/assayhq/assay/pkg/testutil/freeport"
	"github.com/assayhq/assay/pkg/testutil/platformtest"
)

// TestMetricsOnlyOnMetricsPorts: Prometheus metrics (per-route request
// counts) are answered on each service's metrics listener only, never on an
// API port nor on the OTLP/HTTP port exporters reach through a load
// balancer.
func TestMetricsOnlyOnMetricsPorts(t *testing.T) {
	otlpHTTP := freeport.Addr(t)
	p := platformtest.Start(t, platformtest.Options{Tracing: []string{"TRACING_OTLP_HTTP_ADDR=" + otlpHTTP}})
	for name, url := range map[string]string{
		"gateway": p.Gateway.URL, "registry": p.Registry.URL, "runtime": p.Runtime.URL, "tracing": p.Tracing.URL,
		"writer": p.Writer.URL, "tracing OTLP/HTTP": "http://" + otlpHTTP,
	} {
		status, body := get(t, url+"/metrics")
		if status == http.StatusOK || strings.Contains(body, "http_requests_total") {
			t.Errorf("GET /metrics on the %s API port answers %d with the metrics", name, status)
		}
	}
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
