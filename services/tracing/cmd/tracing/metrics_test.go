package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/assayhq/assay/pkg/testutil/freeport"
	"github.com/assayhq/assay/pkg/testutil/platformtest"
	"github.com/assayhq/assay/pkg/testutil/svctest"
)

// metricNamesFile lists the series names the services export, for the
// chart's test that every alert and dashboard expression names one of them
// (deployments/helm/monitoring_test.go). UPDATE_METRIC_NAMES=1 rewrites it.
const metricNamesFile = "../../../../deployments/helm/testdata/metric-names.txt"

// TestMetricsOnlyOnMetricsPorts: every service answers /metrics on its
// metrics listener (<SERVICE>_METRICS_ADDR) and on no other: not on an API
// port, not on the OTLP ports, which may sit behind a public load balancer.
// OTLP exports are counted alike over HTTP and gRPC (the same names, the
// transport label), and the names every service exports are those of
// metricNamesFile.
func TestMetricsOnlyOnMetricsPorts(t *testing.T) {
	otlpHTTP, otlpGRPC := freeport.Addr(t), freeport.Addr(t)
	p := platformtest.Start(t, platformtest.Options{Tracing: []string{"TRACING_OTLP_HTTP_ADDR=" + otlpHTTP, "TRACING_OTLP_GRPC_ADDR=" + otlpGRPC}})
	console := svctest.Start(t, svctest.Options{Pkg: "services/console/cmd/console", AddrVar: "CONSOLE_ADDR", Env: []string{"CONSOLE_LOG_LEVEL=warn"}})
	key := "ApiKey " + p.Account(t, "metrics@example.com")

	services := map[string]*svctest.Service{"gateway": p.Gateway, "registry": p.Registry, "runtime": p.Runtime, "tracing": p.Tracing,
		"writer": p.Writer.Service, "console": console}
	listeners := map[string]string{"tracing OTLP/HTTP": "http://" + otlpHTTP, "tracing OTLP/gRPC": "http://" + otlpGRPC}
	for name, s := range services {
		listeners[name+" API"] = s.URL
	}
	for name, url := range listeners {
		resp, err := http.Get(url + "/metrics")
		if err != nil {
			continue // the gRPC port speaks HTTP/2 only
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK || strings.Contains(string(body), "_total") {
			t.Errorf("GET /metrics on the %s port answers %d with the metrics", name, resp.StatusCode)
		}
	}

	// Over HTTP, 2 spans stored; over gRPC, 3 stored and a request with a
	// wrong key refused.
	body, err := exportRequest(0xb1, 2).MarshalProto()
	require.NoError(t, err)
	req, err := http.NewRequest("POST", "http://"+otlpHTTP+"/v1/traces", bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", key)
	req.Header.Set("Content-Type", "application/x-protobuf")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	out, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, string(out))
	conn, err := grpc.NewClient(otlpGRPC, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	defer conn.Close()
	client := ptraceotlp.NewGRPCClient(conn)
	_, err = client.Export(metadata.AppendToOutgoingContext(context.Background(), "authorization", key), exportRequest(0xb2, 3))
	require.NoError(t, err)
	_, err = client.Export(metadata.AppendToOutgoingContext(context.Background(), "authorization", "ApiKey wrong"), exportRequest(0xb3, 1))
	require.Equal(t, codes.Unauthenticated, status.Code(err), "%v", err)

	// The counts are taken once the answer is sent: poll for them.
	want := []string{
		`otlp_export_requests_total{result="ok",transport="http"} 1`,
		`otlp_export_requests_total{result="ok",transport="grpc"} 1`,
		`otlp_export_requests_total{result="unauthenticated",transport="grpc"} 1`,
		`otlp_export_spans_total{outcome="accepted",transport="http"} 2`,
		`otlp_export_spans_total{outcome="accepted",transport="grpc"} 3`,
		`otlp_export_duration_seconds_count{transport="grpc"} 2`,
		`http_requests_total{code="200",method="POST",route="/v1/traces",service="tracing_otlp"} 1`,
	}
	var tracing string
	deadline := time.Now().Add(30 * time.Second)
	for {
		tracing = scrape(t, p.Tracing.MetricsURL)
		missing := slices.DeleteFunc(slices.Clone(want), func(s string) bool { return strings.Contains(tracing, s+"\n") })
		if len(missing) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("tracing's metrics lack %q:\n%s", missing, tracing)
		}
		time.Sleep(50 * time.Millisecond)
	}

	// Every name the services export, polled until those of the list are
	// all there (the backlog gauges appear once their consumers exist).
	golden := readNames(t)
	var names []string
	for {
		seen := map[string]bool{}
		for name, s := range services {
			page := scrape(t, s.MetricsURL)
			require.Contains(t, page, `http_requests_total{code="200",method="GET",route="/ready",service="`+name+`"}`)
			for _, n := range seriesNames(page) {
				seen[n] = true
			}
		}
		names = names[:0]
		for n := range seen {
			names = append(names, n)
		}
		slices.Sort(names)
		if !hasAll(names, golden) && time.Now().Before(deadline) {
			time.Sleep(100 * time.Millisecond)
			continue
		}
		break
	}
	if os.Getenv("UPDATE_METRIC_NAMES") != "" {
		writeNames(t, names)
		return
	}
	require.Equal(t, golden, names, "the series names the services export changed: run UPDATE_METRIC_NAMES=1 go test -run %s ./services/tracing/cmd/tracing/ and check the chart's alerts and dashboard", t.Name())
}

func exportRequest(tid byte, n int) ptraceotlp.ExportRequest {
	td := ptrace.NewTraces()
	spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	now := time.Now()
	for i := range n {
		sp := spans.AppendEmpty()
		sp.SetTraceID(pcommon.TraceID{tid, 1})
		sp.SetSpanID(pcommon.SpanID{tid, byte(i + 1)})
		sp.SetName(fmt.Sprintf("span-%d", i))
		sp.SetStartTimestamp(pcommon.NewTimestampFromTime(now))
		sp.SetEndTimestamp(pcommon.NewTimestampFromTime(now))
	}
	return ptraceotlp.NewExportRequestFromTraces(td)
}

func scrape(t *testing.T, base string) string {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(b))
	return string(b)
}

var seriesName = regexp.MustCompile(`(?m)^([a-zA-Z_:][a-zA-Z0-9_:]*)[{ ]`)

// seriesNames are the names of a page's series, those of the Go runtime
// (go_*, which change with the Go version) left out.
func seriesNames(page string) []string {
	var out []string
	for _, m := range seriesName.FindAllStringSubmatch(page, -1) {
		if !strings.HasPrefix(m[1], "go_") {
			out = append(out, m[1])
		}
	}
	return out
}

func hasAll(have, want []string) bool {
	for _, w := range want {
		if _, ok := slices.BinarySearch(have, w); !ok {
			return false
		}
	}
	return true
}

func readNames(t *testing.T) []string {
	b, err := os.ReadFile(metricNamesFile)
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out
}

func writeNames(t *testing.T, names []string) {
	head := "# The series names Assay's services export (go_* left out), one a line.\n" +
		"# Written by UPDATE_METRIC_NAMES=1 go test -run TestMetricsOnlyOnMetricsPorts ./services/tracing/cmd/tracing/;\n" +
		"# read by deployments/helm/monitoring_test.go: alerts and dashboard name only these.\n"
	require.NoError(t, os.MkdirAll(filepath.Dir(metricNamesFile), 0o755))
	require.NoError(t, os.WriteFile(metricNamesFile, []byte(head+strings.Join(names, "\n")+"\n"), 0o644))
}
