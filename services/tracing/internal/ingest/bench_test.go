package ingest

import (
	"context"
	"encoding/binary"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/assayhq/assay/pkg/chspans"
	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/pkg/spanmodel"
	"github.com/assayhq/assay/pkg/spanstream"
)

// benchRequest is the load script's request: n ~1 KB GenAI spans.
func benchRequest(n int) []byte {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "loadgen")
	ss := rs.ScopeSpans().AppendEmpty()
	tid := pcommon.TraceID(uuid.New())
	now := time.Now()
	pad := strings.Repeat("lorem ipsum ", 60)
	for i := 0; i < n; i++ {
		sp := ss.Spans().AppendEmpty()
		sp.SetTraceID(tid)
		var sid pcommon.SpanID
		binary.BigEndian.PutUint64(sid[:], uint64(i)+1)
		sp.SetSpanID(sid)
		if i > 0 {
			sp.SetParentSpanID(pcommon.SpanID{0, 0, 0, 0, 0, 0, 0, 1})
		}
		sp.SetName("llm.call")
		sp.SetStartTimestamp(pcommon.NewTimestampFromTime(now))
		sp.SetEndTimestamp(pcommon.NewTimestampFromTime(now.Add(time.Millisecond)))
		a := sp.Attributes()
		a.PutStr("gen_ai.operation.name", "chat")
		a.PutStr("gen_ai.request.model", "gpt-4o-mini")
		a.PutInt("gen_ai.usage.input_tokens", 120)
		a.PutInt("gen_ai.usage.output_tokens", 40)
		a.PutStr("input.value", pad)
	}
	b, _ := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
	return b
}

type discardPublisher struct{ bytes int }

func (d *discardPublisher) Publish(_ context.Context, _ string, data []byte, _ string) error {
	d.bytes += len(data)
	return nil
}

// BenchmarkOTLPIngest is tracing's CPU per request of 500 spans: decode,
// normalise, encode, compress (publish is a no-op), at the service's GC
// target. Besides ns/op it
// reports per span: ns/span (wall time), cpu-ns/span (the process's CPU
// time, GC included: on a shared machine wall time also counts the time
// other processes held the cores), allocs/span and B/span.
func BenchmarkOTLPIngest(b *testing.B) {
	const n = 500
	body := benchRequest(n)
	pub := &discardPublisher{}
	svc := NewService(pub, &spanmodel.Normalizer{})
	sc := scope.Scope{ProjectID: uuid.New()}
	// The GC target the service runs with (TRACING_GC_PERCENT's default).
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	cpu0 := cpuTime()
	for b.Loop() {
		raws, err := DecodeOTLPProto(body) // what OTLP/HTTP protobuf takes
		if err != nil {
			b.Fatal(err)
		}
		res, err := svc.Ingest(context.Background(), sc, raws, body)
		if err != nil || len(res.Rejected) > 0 {
			b.Fatal(err, res.Rejected)
		}
	}
	cpu := cpuTime() - cpu0
	runtime.ReadMemStats(&m1)
	spans := float64(b.N * n)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/spans, "ns/span")
	b.ReportMetric(float64(cpu.Nanoseconds())/spans, "cpu-ns/span")
	b.ReportMetric(float64(m1.Mallocs-m0.Mallocs)/spans, "allocs/span")
	b.ReportMetric(float64(m1.TotalAlloc-m0.TotalAlloc)/spans, "B/span")
	b.ReportMetric(spans/b.Elapsed().Seconds(), "spans/s")
	b.ReportMetric(float64(pub.bytes)/spans, "msgB/span")
}

// cpuTime is the CPU time (user and system) this process used so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func TestBenchSpanShape(t *testing.T) {
	td, _ := DecodeOTLP(benchRequest(2), false)
	spans, rej := (&spanmodel.Normalizer{}).Batch(RawSpans(td))
	if len(rej) > 0 {
		t.Fatal(rej)
	}
	p := chspans.Proto(spans[1], time.Now(), "")
	t.Logf("attrs %d bytes: %s", len(p.AttributesJson), p.AttributesJson)
	t.Logf("keys %q", p.AttrKeys)
	sz := 0
	for _, v := range p.AttrValues {
		sz += len(v)
	}
	t.Logf("values %d bytes", sz)
	data, _ := spanstream.EncodeBatch(nil)
	_ = data
}

// BenchmarkOTLPDecode is the decoding alone of BenchmarkOTLPIngest's
// request into raw spans: pdata and RawSpans (OTLP/JSON's path, and every
// path before the wire decoder) against DecodeOTLPProto.
func BenchmarkOTLPDecode(b *testing.B) {
	const n = 500
	body := benchRequest(n)
	b.Run("pdata", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			td, err := DecodeOTLP(body, false)
			if err != nil {
				b.Fatal(err)
			}
			RawSpans(td)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/span")
	})
	b.Run("wire", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := DecodeOTLPProto(body); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/span")
	})
}
