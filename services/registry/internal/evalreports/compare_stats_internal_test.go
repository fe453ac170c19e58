package evalreports

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTQuantile975 against the t table's two-sided 95% column.
func TestTQuantile975(t *testing.T) {
	for df, want := range map[float64]float64{1: 12.7062, 2: 4.3027, 3: 3.1824, 5: 2.5706, 10: 2.2281, 30: 2.0423, 100: 1.9840, 1e7: 1.9600} {
		assert.InDelta(t, want, tQuantile975(df), 1e-4, "df %v", df)
	}
	assert.InDelta(t, 2.7764, tQuantile975(4), 1e-4)
	// Welch's degrees of freedom are not whole: between its neighbours.
	q := tQuantile975(4.5)
	assert.True(t, q < tQuantile975(4) && q > tQuantile975(5), "%v", q)
}

// TestHolm against R's p.adjust(c(0.012, 0.02, 0.2), "holm") = 0.036,
// 0.04, 0.2: Holm rejects the first two at 0.05 where Bonferroni (0.05/3
// = 0.0167) would reject only the first.
func TestHolm(t *testing.T) {
	adj, levels := holm([]float64{0.2, 0.012, 0.02}, 0.05)
	assert.InDeltaSlice(t, []float64{0.2, 0.036, 0.04}, adj, 1e-12)
	// The steps: 0.012 < 0.05/3, 0.02 < 0.05/2, 0.2 ≥ 0.05/1 stops there.
	assert.InDeltaSlice(t, []float64{0.05, 0.05 / 3, 0.025}, levels, 1e-12)
	// The step that stops holds every later test to its level.
	adj, levels = holm([]float64{0.04, 0.03, 0.001}, 0.05)
	assert.InDeltaSlice(t, []float64{0.06, 0.06, 0.003}, adj, 1e-12)
	assert.InDeltaSlice(t, []float64{0.025, 0.025, 0.05 / 3}, levels, 1e-12)
	for i, a := range adj {
		assert.Equal(t, a < 0.05, []float64{0.04, 0.03, 0.001}[i] < levels[i], "rejected by the adjusted p-value exactly when below its level (%d)", i)
	}
}

// TestPairedEstimate: the differences 0.5, 0, 0.5, 0 (TestCompare's
// score) have t = 0.25/0.144338 = √3 on 3 degrees of freedom, and the
// t(3) distribution function F(x) = 1/2 + (x/(√3(1+x²/3)) + atan(x/√3))/π
// gives F(√3) = 1/2 + (1/2 + π/4)/π, so p = 2(1 - F(√3)) = 0.181690.
func TestPairedEstimate(t *testing.T) {
	e := pairedEstimate([]float64{0.5, 0, 0.5, 0})
	assert.InDelta(t, 0.25, e.delta, 1e-12)
	assert.InDelta(t, 0.144338, e.se, 1e-6)
	assert.InDelta(t, 0.181690, e.pValue(), 1e-6)
	iv := e.interval(0.95)
	assert.InDelta(t, -0.209347, iv.Low, 1e-5)
	assert.InDelta(t, 0.709347, iv.High, 1e-5)
	// A Holm level of 0.05/4 widens it: t(0.99375, 3) lies between the
	// table's t(0.99, 3) = 4.5407 and t(0.995, 3) = 5.8409.
	wide := e.interval(1 - 0.05/4)
	q := (0.25 - wide.Low) / e.se
	assert.True(t, q > 4.5407 && q < 5.8409, "%v", q)
	assert.InDelta(t, 0.9875, wide.Level, 1e-12)

	// Without spread a delta is certain either way.
	assert.Equal(t, 1.0, pairedEstimate([]float64{0, 0, 0}).pValue())
	assert.Equal(t, 0.0, pairedEstimate([]float64{1, 1, 1}).pValue())
}

// TestPower: n = ((z(1-α/2) + z(0.8))·σ/δ)² with z(0.975) = 1.959964 and
// z(0.8) = 0.841621 (sum 2.801585): σ = 0.5 (the differences 0, 0, 1, 0
// of TestCompare's rate: variance (3·0.0625 + 0.5625)/3 = 0.25), δ =
// 0.05 gives (28.01585)² = 784.9, so 785 testcases; four testcases detect
// 2.801585·0.5/√4 = 0.700396.
func TestPower(t *testing.T) {
	e := pairedEstimate([]float64{0, 0, 1, 0})
	assert.InDelta(t, 0.5, e.spread, 1e-12)
	p := e.power(0.05, 0.05, 4)
	require.NotNil(t, p.Testcases)
	assert.Equal(t, 785, *p.Testcases)
	assert.InDelta(t, 0.700396, p.Detectable, 1e-5)
	assert.Equal(t, 0.8, p.Power)
	// At a Bonferroni level of 0.05/10: z(0.9975) = 2.807034, sum
	// 3.648655, n = (36.48655)² = 1331.3 → 1332.
	assert.Equal(t, 1332, *e.power(0.05, 0.005, 4).Testcases)
	assert.Nil(t, e.power(0, 0.05, 4).Testcases, "no difference to detect")
}

// TestVerdict is direction-aware: lower latency is better.
func TestVerdict(t *testing.T) {
	assert.Equal(t, LowerIsBetter, Direction("attributes.ag.metrics.duration.cumulative"))
	assert.Equal(t, LowerIsBetter, Direction("attributes.ag.metrics.costs.cumulative.total"))
	assert.Equal(t, LowerIsBetter, Direction("attributes.ag.data.outputs.error_rate"))
	assert.Equal(t, HigherIsBetter, Direction("attributes.ag.data.outputs.success"))
	assert.Equal(t, VerdictImproved, verdictOf(-10, 0.01, LowerIsBetter))
	assert.Equal(t, VerdictRegressed, verdictOf(10, 0.01, LowerIsBetter))
	assert.Equal(t, VerdictImproved, verdictOf(0.1, 0.01, HigherIsBetter))
	assert.Equal(t, VerdictRegressed, verdictOf(-0.1, 0.049, HigherIsBetter))
	assert.Equal(t, VerdictInconclusive, verdictOf(-0.1, 0.05, HigherIsBetter))
}
