package main

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/assayhq/assay/pkg/spanmodel"
	"github.com/assayhq/assay/services/tracing/internal/ingest"
)

var testBase = time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)

func decode(t testing.TB, body []byte) ptrace.Traces {
	req := ptraceotlp.NewExportRequest()
	require.NoError(t, req.UnmarshalProto(body))
	return req.Traces()
}

// texts are the string attribute values of at least 10 bytes of td.
func texts(td ptrace.Traces) []string {
	var out []string
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		sss := rss.At(i).ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			spans := sss.At(j).Spans()
			for k := 0; k < spans.Len(); k++ {
				spans.At(k).Attributes().Range(func(_ string, v pcommon.Value) bool {
					if v.Type() == pcommon.ValueTypeStr && len(v.Str()) >= 10 {
						out = append(out, v.Str())
					}
					return true
				})
			}
		}
	}
	return out
}

func TestCorpusDeterministic(t *testing.T) {
	a, b := newPool(7, 2000, testBase), newPool(7, 2000, testBase)
	require.Equal(t, len(a.spans), len(b.spans))
	for i := range a.spans {
		require.Equal(t, a.spans[i].b, b.spans[i].b, "span %d", i)
	}
	c := newPool(8, 2000, testBase)
	assert.NotEqual(t, a.spans[0].b, c.spans[0].b, "another seed, other spans")
}

func TestCorpusVaries(t *testing.T) {
	p := newPool(1, 5000, testBase)
	td := decode(t, p.request(1, len(p.spans)))
	all := texts(td)
	require.NotEmpty(t, all)

	// Distinct texts: values repeat only where real traces repeat them (the
	// question on the root and on the model call, an application's system
	// prompt, model names), not one text everywhere.
	distinct := map[string]bool{}
	var long []int
	for _, s := range all {
		distinct[s] = true
		if len(s) >= 100 {
			long = append(long, len(s))
		}
	}
	t.Logf("%d text values, %d distinct", len(all), len(distinct))
	assert.Greater(t, float64(len(distinct)), 0.4*float64(len(all)), "distinct texts")

	// Lengths: tens of characters to several thousand, with a long tail.
	sort.Ints(long)
	p50, p90, p99, maxLen := long[len(long)/2], long[len(long)*9/10], long[len(long)*99/100], long[len(long)-1]
	t.Logf("texts of 100 bytes or more: %d; p50 %d, p90 %d, p99 %d, max %d bytes", len(long), p50, p90, p99, maxLen)
	assert.Less(t, p50, 1500, "most texts are short")
	assert.Greater(t, p99, 4*p50, "a long tail")
	assert.Greater(t, maxLen, 5000, "some texts of several thousand characters")

	// The spans' texts together: more compressible than the generated
	// prose alone (TestCorpusCompresses), as a trace repeats its question,
	// documents and system prompt, but nowhere near one repeated text.
	ratio := gzipRatio(t, all)
	t.Logf("spans' texts: gzip %.2f×", ratio)
	assert.Greater(t, ratio, 2.0)
	assert.Less(t, ratio, 12.0)
}

// TestCorpusCompresses: the generated prose compresses as natural text
// does. Natural English gzips 2.3× (testdata/corpus.txt, 11 KB), 2.6×
// (docs/benchmarks.md, 40 KB), 3.2× (a public-domain book, 570 KB); one
// repeated text (the fixed corpus) hundreds of times, random bytes 1×.
// 1 MB of generated text: 3.8× (seed 1).
func TestCorpusCompresses(t *testing.T) {
	g := newGen(1, testBase)
	var texts []string
	for n := 0; n < 1<<20; {
		s := g.text(2000, 0.5, 100, 8000)
		texts = append(texts, s)
		n += len(s)
	}
	ratio := gzipRatio(t, texts)
	t.Logf("1 MB of generated text: gzip %.2f×", ratio)
	assert.Greater(t, ratio, 2.0)
	assert.Less(t, ratio, 6.0)

	// The same measure tells the fixed corpus apart.
	fixed := texts[:0:0]
	for range 1000 {
		fixed = append(fixed, pad)
	}
	assert.Greater(t, gzipRatio(t, fixed), 50.0, "one repeated text")
}

func gzipRatio(t *testing.T, texts []string) float64 {
	var raw bytes.Buffer
	for _, s := range texts {
		raw.WriteString(s)
		raw.WriteByte('\n')
	}
	var z bytes.Buffer
	w, err := gzip.NewWriterLevel(&z, gzip.DefaultCompression)
	require.NoError(t, err)
	_, _ = w.Write(raw.Bytes())
	require.NoError(t, w.Close())
	return float64(raw.Len()) / float64(z.Len())
}

func TestRequest(t *testing.T) {
	p := newPool(1, 3000, testBase)
	before := time.Now()
	td := decode(t, p.request(42, 500))
	assert.Equal(t, 500, td.SpanCount())
	ids := map[pcommon.TraceID]bool{}
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		spans := rss.At(i).ScopeSpans().At(0).Spans()
		for k := 0; k < spans.Len(); k++ {
			sp := spans.At(k)
			tid := sp.TraceID()
			assert.Equal(t, uint64(42), binary.BigEndian.Uint64(tid[8:]), "trace id carries the request id")
			assert.Equal(t, uint16(i), binary.BigEndian.Uint16(tid[6:8]), "trace id carries the trace's index")
			ids[tid] = true
			assert.WithinDuration(t, before, sp.EndTimestamp().AsTime(), time.Minute, "the spans end about now")
			assert.False(t, sp.StartTimestamp().AsTime().After(sp.EndTimestamp().AsTime()))
		}
	}
	assert.Greater(t, len(ids), 50, "several traces in one request")

	// The next request carries the next spans of the pool, not the same:
	// of their long texts, only the applications' system prompts recur.
	long := func(td ptrace.Traces) map[string]bool {
		m := map[string]bool{}
		for _, s := range texts(td) {
			if len(s) >= 300 {
				m[s] = true
			}
		}
		return m
	}
	first, next := long(td), long(decode(t, p.request(43, 500)))
	same := 0
	for s := range next {
		if first[s] {
			same++
		}
	}
	t.Logf("distinct long texts: %d, then %d, %d in both", len(first), len(next), same)
	assert.LessOrEqual(t, same, 2*len(appSpecs), "consecutive requests share only system prompts")

	// The freshness probe: one root span whose trace id is the request id.
	probe := decode(t, p.request(7, 1))
	require.Equal(t, 1, probe.SpanCount())
	sp := probe.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0)
	assert.True(t, sp.ParentSpanID().IsEmpty(), "the probe is a root")
	var want pcommon.TraceID
	binary.BigEndian.PutUint64(want[8:], 7)
	assert.Equal(t, want, sp.TraceID())
}

// TestRequestNormalises runs the spans through tracing's decoder and the
// normaliser: all accepted, of the span types an LLM application has.
func TestRequestNormalises(t *testing.T) {
	p := newPool(1, 3000, testBase)
	td, err := ingest.DecodeOTLP(p.request(1, 2000), false)
	require.NoError(t, err)
	spans, rejected := (&spanmodel.Normalizer{}).Batch(ingest.RawSpans(td))
	assert.Empty(t, rejected)
	assert.Len(t, spans, 2000)
	types := map[string]int{}
	for _, s := range spans {
		types[s.SpanType]++
	}
	t.Logf("span types: %v", types)
	for _, want := range []string{"chain", "embedding", "query", "chat", "tool", "agent", "workflow", "task"} {
		assert.Positive(t, types[want], want)
	}
}

// BenchmarkRequest is loadgen's own cost of a request of the realistic
// corpus (100 spans, load.sh's run 2), per span: it must stay far below
// what the pipeline spends on a span (tens of µs) so as not to limit the
// rate on shared cores.
func BenchmarkRequest(b *testing.B) {
	p := newPool(1, 20000, time.Now())
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_ = p.request(int64(i), 100)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*100), "ns/span")
}

// BenchmarkRequestFixed is the same for the fixed span (-corpus fixed).
func BenchmarkRequestFixed(b *testing.B) {
	_ = fixedRequest(1, 100)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_ = fixedRequest(int64(i), 100)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*100), "ns/span")
}

// BenchmarkPool is the one-off cost of generating the pool, per span.
func BenchmarkPool(b *testing.B) {
	for i := 0; i < b.N; i++ {
		_ = newPool(uint64(i), 5000, time.Now())
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*5000), "ns/span")
}
