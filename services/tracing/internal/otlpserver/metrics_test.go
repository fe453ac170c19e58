package otlpserver_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// TestExportMetricsOnBothTransports: the same request over OTLP/HTTP and
// OTLP/gRPC is counted alike, under the same names, told apart by the
// transport label: its result, the spans stored and those refused (a span
// without a trace id is refused alone: a partial success), its latency;
// a key without the write permission is counted as forbidden.
func TestExportMetricsOnBothTransports(t *testing.T) {
	st := newOTLPStack(t)
	request := func(tid byte) ptraceotlp.ExportRequest {
		td := ptrace.NewTraces()
		spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
		now := time.Now()
		for i, trace := range []pcommon.TraceID{{tid, 1}, {tid, 1}, {}} {
			sp := spans.AppendEmpty()
			sp.SetTraceID(trace)
			sp.SetSpanID(pcommon.SpanID{tid, byte(i + 1)})
			sp.SetName("s")
			sp.SetStartTimestamp(pcommon.NewTimestampFromTime(now))
			sp.SetEndTimestamp(pcommon.NewTimestampFromTime(now))
		}
		return ptraceotlp.NewExportRequestFromTraces(td)
	}
	post := func(key string, req ptraceotlp.ExportRequest) (int, ptraceotlp.ExportResponse) {
		body, err := req.MarshalProto()
		require.NoError(t, err)
		r, err := http.NewRequest("POST", st.httpURL+"/v1/traces", bytes.NewReader(body))
		require.NoError(t, err)
		r.Header.Set("Authorization", key)
		r.Header.Set("Content-Type", "application/x-protobuf")
		resp, err := http.DefaultClient.Do(r)
		require.NoError(t, err)
		out, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		res := ptraceotlp.NewExportResponse()
		if resp.StatusCode == http.StatusOK {
			require.NoError(t, res.UnmarshalProto(out))
		}
		return resp.StatusCode, res
	}
	code, res := post(st.key, request(0xc1))
	require.Equal(t, http.StatusOK, code)
	require.EqualValues(t, 1, res.PartialSuccess().RejectedSpans(), "the span without a trace id")
	code, _ = post(st.viewerKey, request(0xc2))
	require.Equal(t, http.StatusForbidden, code)

	conn, err := grpc.NewClient(st.grpcAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	defer conn.Close()
	client := ptraceotlp.NewGRPCClient(conn)
	res, err = client.Export(metadata.AppendToOutgoingContext(context.Background(), "authorization", st.key), request(0xc3))
	require.NoError(t, err)
	require.EqualValues(t, 1, res.PartialSuccess().RejectedSpans())
	_, err = client.Export(metadata.AppendToOutgoingContext(context.Background(), "authorization", st.viewerKey), request(0xc4))
	require.Equal(t, codes.PermissionDenied, status.Code(err), "%v", err)

	// The HTTP counts are taken once the answer is written: poll.
	want := map[string]float64{
		`otlp_export_requests_total{result="ok",transport="http"}`:        1,
		`otlp_export_requests_total{result="forbidden",transport="http"}`: 1,
		`otlp_export_requests_total{result="ok",transport="grpc"}`:        1,
		`otlp_export_requests_total{result="forbidden",transport="grpc"}`: 1,
		`otlp_export_spans_total{outcome="accepted",transport="http"}`:    2,
		`otlp_export_spans_total{outcome="refused",transport="http"}`:     1,
		`otlp_export_spans_total{outcome="accepted",transport="grpc"}`:    2,
		`otlp_export_spans_total{outcome="refused",transport="grpc"}`:     1,
		`otlp_export_duration_seconds_count{transport="http"}`:            2,
		`otlp_export_duration_seconds_count{transport="grpc"}`:            2,
	}
	var got map[string]float64
	deadline := time.Now().Add(10 * time.Second)
	for {
		got = values(t, st.metrics)
		ok := true
		for k, v := range want {
			ok = ok && got[k] == v
		}
		if ok || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	for k, v := range want {
		assert.Equal(t, v, got[k], k)
	}
}

// values are a registry's counters and histogram counts by their series,
// written as in the exposition format (labels in name order).
func values(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	families, err := reg.Gather()
	require.NoError(t, err)
	out := map[string]float64{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			labels := ""
			for i, l := range m.GetLabel() {
				if i > 0 {
					labels += ","
				}
				labels += l.GetName() + `="` + l.GetValue() + `"`
			}
			switch {
			case m.GetCounter() != nil:
				out[f.GetName()+"{"+labels+"}"] = m.GetCounter().GetValue()
			case m.GetHistogram() != nil:
				out[f.GetName()+"_count{"+labels+"}"] = float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return out
}
