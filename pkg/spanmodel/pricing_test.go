package spanmodel_test

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/pkg/spanmodel"
)

// chat is an OTel gen_ai chat span of model at start with the given usage.
func chat(model, provider string, start time.Time, usage map[string]any) spanmodel.Raw {
	attrs := map[string]any{"gen_ai.operation.name": "chat", "gen_ai.request.model": model}
	if provider != "" {
		attrs["gen_ai.provider.name"] = provider
	}
	for k, v := range usage {
		attrs["gen_ai.usage."+k] = v
	}
	return spanmodel.Raw{TraceID: "0af7651916cd43dd8448eb211c80319c", SpanID: "b7ad6b7169203331", Name: "chat " + model,
		Start: start, End: start.Add(time.Second), OTLP: true, Attributes: attrs}
}

func normalise(t *testing.T, overrides string, r spanmodel.Raw) *spanmodel.Span {
	t.Helper()
	prices, err := spanmodel.LoadPrices(overrides)
	require.NoError(t, err)
	spans, rejected := (&spanmodel.Normalizer{Prices: prices}).Batch([]spanmodel.Raw{r})
	require.Empty(t, rejected)
	return spans[0]
}

func cost(s *spanmodel.Span) float64 {
	v, _ := ag(s, "metrics", "costs", "incremental", "total").(float64)
	return v
}

// Model calls are priced with the vendored genai-prices table (provider,
// model, dated prices by the span's start, cache reads and writes at their
// own rates), and the span says which source priced it.
func TestPricingTable(t *testing.T) {
	june := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name     string
		raw      spanmodel.Raw
		want     float64
		input    float64
		provider string
	}{
		{"gpt-5-mini, missing from the old table", chat("gpt-5-mini", "openai", june, map[string]any{"input_tokens": 1000.0, "output_tokens": 500.0}),
			1000*0.25/1e6 + 500*2.0/1e6, 1000 * 0.25 / 1e6, "openai"},
		{"cache reads as part of the input", chat("gpt-4o-mini", "openai", june, map[string]any{"input_tokens": 1000.0, "cache_read.input_tokens": 200.0, "output_tokens": 100.0}),
			0.000195, 0.000135, "openai"},
		{"cache writes at their rate", chat("claude-sonnet-4-20250514", "anthropic", june, map[string]any{"input_tokens": 1000.0, "cache_creation.input_tokens": 400.0, "output_tokens": 50.0}),
			(600*3.0 + 400*3.75 + 50*15.0) / 1e6, (600*3.0 + 400*3.75) / 1e6, "anthropic"},
		{"long-context tier before the dated change", chat("claude-sonnet-4-6", "anthropic", time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), map[string]any{"input_tokens": 300000.0, "output_tokens": 1000.0}),
			1.8225, 1.8, "anthropic"},
		{"same call after it", chat("claude-sonnet-4-6", "anthropic", time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC), map[string]any{"input_tokens": 300000.0, "output_tokens": 1000.0}),
			0.915, 0.9, "anthropic"},
		{"provider from the model id", chat("gpt-4.1-nano", "", june, map[string]any{"input_tokens": 1000.0, "output_tokens": 100.0}),
			(1000*0.1 + 100*0.4) / 1e6, 1000 * 0.1 / 1e6, "openai"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := normalise(t, "", c.raw)
			assert.InDelta(t, c.want, cost(s), 1e-12, "costs.incremental.total")
			assert.InDelta(t, c.input, ag(s, "metrics", "costs", "incremental", "prompt"), 1e-12, "costs.incremental.prompt")
			assert.Equal(t, "genai-prices@0.1.8", ag(s, "meta", "pricing", "source"))
			assert.Equal(t, c.provider, ag(s, "meta", "pricing", "provider"))
			assert.Nil(t, ag(s, "meta", "pricing", "unpriced"))
		})
	}
}

// A model nobody has a price for is marked, so that the console can say
// why the span has no cost; TRACING_MODEL_PRICES overrides come first.
func TestPricingUnpricedAndOverrides(t *testing.T) {
	june := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	raw := chat("acme-llm-7", "openai", june, map[string]any{"input_tokens": 1000.0, "output_tokens": 100.0})
	s := normalise(t, "", raw)
	assert.Nil(t, ag(s, "metrics", "costs"), "no costs without a price")
	assert.Equal(t, true, ag(s, "meta", "pricing", "unpriced"))
	assert.Equal(t, "acme-llm-7", ag(s, "meta", "pricing", "model"))
	assert.Equal(t, 1100.0, ag(s, "metrics", "tokens", "incremental", "total"), "tokens are still counted")

	s = normalise(t, `{"acme-llm-7": {"input": 1, "output": 2, "cached_input": 0.5}}`, raw)
	assert.InDelta(t, (1000*1.0+100*2.0)/1e6, cost(s), 1e-12)
	assert.Equal(t, "override", ag(s, "meta", "pricing", "source"))
	assert.Nil(t, ag(s, "meta", "pricing", "unpriced"))

	// An override wins over the vendored price of the same model.
	s = normalise(t, `{"gpt-4o": {"input": 100, "output": 0, "cached_input": 0}}`, chat("gpt-4o-2024-08-06", "openai", june, map[string]any{"input_tokens": 1000.0}))
	assert.InDelta(t, 0.1, cost(s), 1e-12)
	assert.Equal(t, "override", ag(s, "meta", "pricing", "source"))

	// A span without a model is not a model call to price or mark.
	s = normalise(t, "", spanmodel.Raw{TraceID: "0af7651916cd43dd8448eb211c80319c", SpanID: "b7ad6b7169203331", Name: "step", Start: june, End: june.Add(time.Second), OTLP: true,
		Attributes: map[string]any{"gen_ai.operation.name": "chat", "gen_ai.usage.input_tokens": 5.0}})
	assert.Nil(t, ag(s, "meta", "pricing"))
	assert.False(t, math.IsNaN(cost(s)))
}

// BenchmarkPricedSpan normalises one priced chat span, the ingest path's
// unit of work (compare with and without -run to see pricing's share).
func BenchmarkPricedSpan(b *testing.B) {
	prices, err := spanmodel.LoadPrices("")
	require.NoError(b, err)
	n := &spanmodel.Normalizer{Prices: prices}
	start := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	b.ReportAllocs()
	for b.Loop() {
		r := chat("claude-sonnet-4-20250514", "anthropic", start, map[string]any{"input_tokens": 1200.0, "cache_read.input_tokens": 300.0, "output_tokens": 80.0})
		if spans, _ := n.Batch([]spanmodel.Raw{r}); len(spans) != 1 {
			b.Fatal("no span")
		}
	}
}
