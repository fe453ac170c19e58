package chspans_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/assayhq/assay/pkg/chspans"
	"github.com/assayhq/assay/pkg/spanmodel"
)

// allocatedBytes is what one call of f allocates on average.
func allocatedBytes(f func()) uint64 {
	const runs = 20
	f() // warm up
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range runs {
		f()
	}
	runtime.ReadMemStats(&after)
	return (after.TotalAlloc - before.TotalAlloc) / runs
}

// TestEncodingCostRecoversAfterAnOutlier: the encoder sizes its buffers
// from the spans before it. One wide span with long keys (within the
// limits) made the key-arena hint grow for good, so every later ordinary
// span paid for the outlier's size (1.3 s per 100-span request after one
// 17,000-deep span). After an outlier, an ordinary span must cost what it
// cost before.
func TestEncodingCostRecoversAfterAnOutlier(t *testing.T) {
	now := time.Now()
	ordinary := &spanmodel.Span{TraceID: "0af7651916cd43dd8448eb211c80319c", SpanID: "b7ad6b7169203331", Attributes: map[string]any{
		"ag":     map[string]any{"data": map[string]any{"inputs": map[string]any{"q": "hello"}, "outputs": "hi"}, "type": map[string]any{"span": "chat"}},
		"gen_ai": map[string]any{"request": map[string]any{"model": "gpt-4o-mini"}},
	}}
	outlierAttrs := map[string]any{}
	for i := range 1000 {
		outlierAttrs[fmt.Sprintf("%04d%s", i, strings.Repeat("k", 1000))] = "v"
	}
	outlier := &spanmodel.Span{TraceID: ordinary.TraceID, SpanID: ordinary.SpanID, Attributes: outlierAttrs}

	encode := func(s *spanmodel.Span) func() { return func() { chspans.Proto(s, now, "") } }
	before := allocatedBytes(encode(ordinary))
	encode(outlier)()
	encode(ordinary)() // the first span after the outlier may still pay a capped hint
	after := allocatedBytes(encode(ordinary))
	t.Logf("ordinary span: %d B before the outlier, %d B after", before, after)
	assert.LessOrEqual(t, after, 2*before, "an outlier must not inflate the cost of later spans")
}
