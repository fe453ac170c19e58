package ingest

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/pkg/spanmodel"
)

// otlpSpan is an OTLP request of one span whose attributes set puts.
func otlpSpan(set func(pcommon.Map)) []byte {
	td := ptrace.NewTraces()
	sp := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	sp.SetTraceID(pcommon.TraceID{1, 2, 3})
	sp.SetSpanID(pcommon.SpanID{4, 5, 6})
	sp.SetName("hostile")
	now := time.Now()
	sp.SetStartTimestamp(pcommon.NewTimestampFromTime(now))
	sp.SetEndTimestamp(pcommon.NewTimestampFromTime(now.Add(time.Millisecond)))
	set(sp.Attributes())
	b, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
	if err != nil {
		panic(err)
	}
	return b
}

func deepOTLP(depth int) []byte {
	return otlpSpan(func(m pcommon.Map) {
		v := m.PutEmptySlice("deep")
		for i := 1; i < depth; i++ {
			v = v.AppendEmpty().SetEmptySlice()
		}
		v.AppendEmpty().SetStr("bottom")
	})
}

func wideOTLP(width int) []byte {
	return otlpSpan(func(m pcommon.Map) {
		for i := range width {
			m.PutStr(fmt.Sprintf("attr.%05d", i), "value")
		}
	})
}

func nativeBody(attrs string) []byte {
	return []byte(`{"spans":[{"trace_id":"0102030000000000000000000000000f","span_id":"0405060000000001","span_name":"hostile",
		"start_time":"2026-01-02T03:04:05Z","attributes":` + attrs + `}]}`)
}

func deepNative(depth int) []byte {
	return nativeBody(`{"deep":` + strings.Repeat("[", depth) + `"bottom"` + strings.Repeat("]", depth) + `}`)
}

func wideNative(width int) []byte {
	m := map[string]string{}
	for i := range width {
		m[fmt.Sprintf("attr.%05d", i)] = "value"
	}
	b, _ := json.Marshal(m)
	return nativeBody(string(b))
}

// pipeline is everything ingest does with a body but the publish.
type pipeline func(t testing.TB, svc *Service, body []byte) Result

func otlpPipeline(t testing.TB, svc *Service, body []byte) Result {
	td, err := DecodeOTLP(body, false)
	require.NoError(t, err)
	res, err := svc.Ingest(context.Background(), scope.Scope{ProjectID: uuid.New()}, RawSpans(td), body)
	require.NoError(t, err)
	return res
}

func nativePipeline(t testing.TB, svc *Service, body []byte) Result {
	m, err := DecodeJSON(body)
	require.NoError(t, err)
	raws, rejected, err := NativeSpans(m)
	require.NoError(t, err)
	require.Empty(t, rejected)
	res, err := svc.Ingest(context.Background(), scope.Scope{ProjectID: uuid.New()}, raws, body)
	require.NoError(t, err)
	return res
}

type cost struct{ bytes, allocs uint64 }

func measure(f func()) cost {
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return cost{after.TotalAlloc - before.TotalAlloc, after.Mallocs - before.Mallocs}
}

// TestWorkIsLinearInTheInput feeds growing depths and widths, below and
// above the span limits, through the OTLP and the native path and checks
// that allocated bytes and allocations per input byte stay within a small
// factor of the smallest input's: a quadratic step (such as storing the
// dotted path and the JSON of every nested level) makes them grow with the
// input, eightfold over these sizes. Time is not asserted: it follows
// allocations, and wall time on a shared machine is noise.
func TestWorkIsLinearInTheInput(t *testing.T) {
	svc := NewService(&discardPublisher{}, &spanmodel.Normalizer{})
	for _, tt := range []struct {
		name  string
		sizes []int
		body  func(int) []byte
		run   pipeline
	}{
		{"OTLP depth", []int{1000, 2000, 4000, 8000}, deepOTLP, otlpPipeline},
		{"OTLP width", []int{256, 512, 1024, 2048, 4096, 8192}, wideOTLP, otlpPipeline},
		{"native depth", []int{1000, 2000, 4000, 8000}, deepNative, nativePipeline},
		{"native width", []int{256, 512, 1024, 2048, 4096, 8192}, wideNative, nativePipeline},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var first struct{ bytes, allocs float64 }
			for i, n := range tt.sizes {
				body := tt.body(n)
				// Warm the encoder's size hints, and every zstd encoder of
				// spanstream's: they take turns, and each allocates its
				// history (megabytes) on its first batch over 16 KiB,
				// once per process, whatever the batch.
				for range runtime.GOMAXPROCS(0) + 1 {
					tt.run(t, svc, body)
				}
				c := measure(func() {
					res := tt.run(t, svc, body)
					require.Len(t, res.Links, 1, "the span is trimmed, not rejected: %v", res.Rejected)
				})
				perByte, allocsPerByte := float64(c.bytes)/float64(len(body)), float64(c.allocs)/float64(len(body))
				t.Logf("%s %d: %d bytes in, %d B and %d allocations (%.0f B and %.2f allocations per byte in)",
					tt.name, n, len(body), c.bytes, c.allocs, perByte, allocsPerByte)
				if i == 0 {
					first.bytes, first.allocs = perByte, allocsPerByte
					continue
				}
				// Trimming at a limit may cost a second encoding pass: a
				// constant factor, not a growing one.
				assert.LessOrEqual(t, perByte, 3*first.bytes, "bytes per input byte at %d", n)
				assert.LessOrEqual(t, allocsPerByte, 3*first.allocs, "allocations per input byte at %d", n)
			}
		})
	}
}

// TestHundredThousandDeepAttribute is the request that took the service to
// 22 GB: one span whose attribute is a list nested 100,000 deep (a 794 KB
// body). It is now trimmed at the depth limit with bounded memory.
func TestHundredThousandDeepAttribute(t *testing.T) {
	svc := NewService(&discardPublisher{}, &spanmodel.Normalizer{})
	body := deepOTLP(100_000)
	t.Logf("body: %d bytes", len(body))
	var res Result
	c := measure(func() { res = otlpPipeline(t, svc, body) })
	t.Logf("%d B allocated, %d allocations", c.bytes, c.allocs)
	require.Len(t, res.Links, 1, "%v", res.Rejected)
	assert.Less(t, c.bytes, uint64(100<<20), "bounded memory: a small multiple of the body")
}
