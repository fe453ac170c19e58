package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// Model calls sent over OTLP are priced with the vendored genai-prices
// table: a model the old 29-model table lacked (gpt-5-mini) gets a cost,
// cache reads and writes are priced at their own rates, the stored span
// names the price source, and a model nobody prices is marked so the
// console can say so (rather than a silent cost of zero).
func TestOTLPModelCallsPricedFromTheVendoredTable(t *testing.T) {
	s := newStack(t)
	tid := [16]byte{0xab, 0x26, 8, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}
	td := otlpTraces(tid, 4, func(i int, sp ptrace.Span) {
		a := sp.Attributes()
		switch i {
		case 1:
			a.PutStr("gen_ai.operation.name", "chat")
			a.PutStr("gen_ai.provider.name", "openai")
			a.PutStr("gen_ai.request.model", "gpt-5-mini")
			a.PutInt("gen_ai.usage.input_tokens", 1000)
			a.PutInt("gen_ai.usage.output_tokens", 500)
		case 2:
			a.PutStr("gen_ai.operation.name", "chat")
			a.PutStr("gen_ai.system", "anthropic")
			a.PutStr("gen_ai.request.model", "claude-sonnet-4-20250514")
			a.PutInt("gen_ai.usage.input_tokens", 1000)
			a.PutInt("gen_ai.usage.cache_read.input_tokens", 200)
			a.PutInt("gen_ai.usage.cache_creation.input_tokens", 400)
			a.PutInt("gen_ai.usage.output_tokens", 50)
		case 3:
			a.PutStr("gen_ai.operation.name", "chat")
			a.PutStr("gen_ai.request.model", "acme-llm-7")
			a.PutInt("gen_ai.usage.input_tokens", 10)
		}
	})
	r := s.do(t, "POST", "/api/otlp/v1/traces", protoBody(t, td), map[string]string{"Content-Type": "application/x-protobuf"})
	require.Equal(t, http.StatusOK, r.status, string(r.body))

	var got map[string]any
	eventually(t, "the trace to be queryable", func() bool {
		got = s.trace(t, "ab260803040506070809"+"0a0b0c0d0e0f")
		return got["count"] == float64(1)
	})
	root := got["trace"].(map[string]any)["spans"].(map[string]any)["span-0"].(map[string]any)
	children := root["spans"].(map[string]any)
	require.Len(t, children, 3)
	ag := func(sp any) map[string]any {
		return sp.(map[string]any)["attributes"].(map[string]any)["ag"].(map[string]any)
	}
	costs := func(a map[string]any, which string) float64 {
		m, _ := a["metrics"].(map[string]any)
		c, _ := m["costs"].(map[string]any)
		w, _ := c[which].(map[string]any)
		v, _ := w["total"].(float64)
		return v
	}
	pricing := func(a map[string]any) any {
		m, _ := a["meta"].(map[string]any)
		return m["pricing"]
	}
	gpt := ag(children["span-1"])
	assert.InDelta(t, (1000*0.25+500*2.0)/1e6, costs(gpt, "incremental"), 1e-12, "gpt-5-mini")
	assert.Equal(t, map[string]any{"source": "genai-prices@0.1.8", "provider": "openai", "model": "gpt-5-mini"}, pricing(gpt))

	claude := ag(children["span-2"])
	want := (400*3.0 + 200*0.3 + 400*3.75 + 50*15.0) / 1e6 // uncached input, cache reads, cache writes, output
	assert.InDelta(t, want, costs(claude, "incremental"), 1e-12, "claude-sonnet-4 with cache reads and writes")
	assert.Equal(t, map[string]any{"source": "genai-prices@0.1.8", "provider": "anthropic", "model": "claude-sonnet-4-0"}, pricing(claude))

	acme := ag(children["span-3"])
	assert.Equal(t, map[string]any{"unpriced": true, "model": "acme-llm-7"}, pricing(acme))
	assert.Nil(t, acme["metrics"].(map[string]any)["costs"], "no cost without a price")

	assert.InDelta(t, (1000*0.25+500*2.0)/1e6+want, costs(ag(root), "cumulative"), 1e-12, "the root sums its priced calls")
}
