package evalreports

import (
	"math"
	"regexp"
	"sort"

	"gonum.org/v1/gonum/stat/distuv"
)

// The statistics of the run comparison (docs/decisions/0009-comparison-statistics.md
// says why these methods).
//
// Repeats: a testcase is the unit. A scenario's value is already the mean
// over its repeats (the worker's per-scenario metric); a run with several
// scenarios for one testcase is averaged over them first, so each
// testcase is one value per run however often it was sampled. The paired
// t over those testcase means is a cluster-level analysis: it stays valid
// whatever the correlation of a testcase's repeats, where a t over every
// output would count correlated repeats as independent evidence.
//
// Many metrics: every delta of a comparison (each metric of each run
// after the first) is one test of a family, corrected with Holm's
// step-down method at a family-wise error rate of Alpha. A verdict is
// improved or regressed only when its Holm-adjusted p-value is below
// Alpha, in the metric's better or worse direction; else inconclusive.
// Each delta's adjusted interval is drawn at the level Holm held that
// test to, so it excludes zero exactly when the verdict is not
// inconclusive.
//
// Student's t is exact for normal per-testcase values and a fair
// approximation otherwise (scores are means over repeats, rates are
// proportions).

// Interval is a confidence interval of a delta, with the method that made
// it and the sample it came from.
type Interval struct {
	Low    float64 `json:"low"`
	High   float64 `json:"high"`
	Level  float64 `json:"level"`
	Method string  `json:"method"` // paired-t or welch-t
	// N is the number of pairs of testcases (paired-t) or of the two
	// samples together (welch-t).
	N int `json:"n"`
}

// Interval methods.
const (
	MethodPaired = "paired-t"
	MethodWelch  = "welch-t"
)

// The comparison's error rates and its correction.
const (
	// Alpha is the family-wise error rate of a comparison's verdicts.
	Alpha = 0.05
	// PowerTarget is the power the sample sizes are computed for.
	PowerTarget = 0.8
	// CorrectionHolm names Holm's step-down correction.
	CorrectionHolm = "holm"
	// RateDifference is the difference a rate's sample size is computed
	// for (5 percentage points); other metrics use RelativeDifference of
	// the baseline's mean.
	RateDifference     = 0.05
	RelativeDifference = 0.05
)

// Verdicts of a delta.
const (
	VerdictImproved     = "improved"
	VerdictRegressed    = "regressed"
	VerdictInconclusive = "inconclusive"
)

// Directions: which way a metric is better.
const (
	HigherIsBetter = "higher"
	LowerIsBetter  = "lower"
)

// lowerBetter matches the metrics that go down when things get better:
// latency, cost, tokens and errors (the console's lowerIsBetter reads the
// same words).
var lowerBetter = regexp.MustCompile(`(^|\.)(duration|latency|costs?|tokens|errors?|error_rate)(\.|$)`)

// Direction is which way the metric at path is better.
func Direction(path string) string {
	if lowerBetter.MatchString(path) {
		return LowerIsBetter
	}
	return HigherIsBetter
}

// ComparePower is what a delta's spread says about sample size: how many
// testcases would detect Difference with probability Power at the
// family's strictest per-test level, and the smallest difference the
// compared testcases detect (normal approximation: n = ((z(1-α/2) +
// z(power))·σ/δ)², σ the spread of a testcase's difference).
type ComparePower struct {
	// Difference is the difference the sample size is for: 0.05 for a
	// rate, 5% of the baseline's mean for other metrics.
	Difference float64 `json:"difference"`
	// Testcases is how many testcases (per run for welch-t) would detect
	// Difference; absent when Difference is 0.
	Testcases *int `json:"testcases,omitempty"`
	// Detectable is the smallest difference the compared testcases
	// detect with that power.
	Detectable float64 `json:"detectable"`
	// Alpha is the per-test level used: the family's Alpha divided by
	// its number of tests (Holm's strictest step).
	Alpha float64 `json:"alpha"`
	Power float64 `json:"power"`
}

// estimate is a delta with what its tests need: its standard error and
// degrees of freedom, and the spread of one testcase's difference.
type estimate struct {
	delta, se, df, spread float64
	n                     int
	method                string
}

// meanVar is the mean and the sample variance (n-1) of xs.
func meanVar(xs []float64) (mean, variance float64) {
	n := float64(len(xs))
	for _, x := range xs {
		mean += x
	}
	mean /= n
	if len(xs) < 2 {
		return mean, 0
	}
	for _, x := range xs {
		variance += (x - mean) * (x - mean)
	}
	return mean, variance / (n - 1)
}

// pairedEstimate is the paired t estimate of the differences ds (at
// least two): mean(d), se s/√n, n-1 degrees of freedom.
func pairedEstimate(ds []float64) estimate {
	m, v := meanVar(ds)
	n := float64(len(ds))
	return estimate{delta: m, se: math.Sqrt(v / n), df: n - 1, spread: math.Sqrt(v), n: len(ds), method: MethodPaired}
}

// welchEstimate is Welch's estimate of mean(b) - mean(a) (each at least
// two values), with the Welch–Satterthwaite degrees of freedom.
func welchEstimate(a, b []float64) estimate {
	ma, va := meanVar(a)
	mb, vb := meanVar(b)
	na, nb := float64(len(a)), float64(len(b))
	qa, qb := va/na, vb/nb
	se2 := qa + qb
	df := na + nb - 2
	if se2 > 0 {
		df = se2 * se2 / (qa*qa/(na-1) + qb*qb/(nb-1))
	}
	return estimate{delta: mb - ma, se: math.Sqrt(se2), df: df, spread: math.Sqrt(va + vb), n: len(a) + len(b), method: MethodWelch}
}

// interval is the estimate's two-sided interval at level.
func (e estimate) interval(level float64) Interval {
	half := 0.0
	if e.se > 0 {
		half = tQuantile(1-(1-level)/2, e.df) * e.se
	}
	return Interval{Low: e.delta - half, High: e.delta + half, Level: level, Method: e.method, N: e.n}
}

// pValue is the two-sided p-value of "no difference". A delta without
// spread is certain: 1 when it is zero, 0 when it is not.
func (e estimate) pValue() float64 {
	if e.se == 0 {
		if e.delta == 0 {
			return 1
		}
		return 0
	}
	return 2 * distuv.StudentsT{Mu: 0, Sigma: 1, Nu: e.df}.Survival(math.Abs(e.delta)/e.se)
}

// power is the estimate's sample-size figures for difference at the
// per-test level alpha; perCase is the number of testcases compared (per
// run for welch-t).
func (e estimate) power(difference, alpha float64, perCase int) ComparePower {
	z := distuv.UnitNormal.Quantile(1-alpha/2) + distuv.UnitNormal.Quantile(PowerTarget)
	p := ComparePower{Difference: difference, Alpha: alpha, Power: PowerTarget}
	if perCase > 0 {
		p.Detectable = z * e.spread / math.Sqrt(float64(perCase))
	}
	if difference > 0 {
		n := int(math.Ceil(math.Pow(z*e.spread/difference, 2)))
		if n < 2 {
			n = 2 // a t interval needs two
		}
		p.Testcases = &n
	}
	return p
}

// holm is Holm's step-down method over ps at family-wise level alpha:
// each test's adjusted p-value (max over the steps up to it of (m-j+1)·p(j),
// at most 1) and the per-test level it was held to: α/(m-k+1) for the
// k-th smallest p-value while the steps reject, and the level of the step
// that stopped for every test from there on.
func holm(ps []float64, alpha float64) (adjusted, levels []float64) {
	m := len(ps)
	order := make([]int, m)
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(i, j int) bool { return ps[order[i]] < ps[order[j]] })
	adjusted, levels = make([]float64, m), make([]float64, m)
	running, stopped, stopLevel := 0.0, false, 0.0
	for rank, i := range order {
		step := float64(m - rank)
		running = math.Max(running, math.Min(1, step*ps[i]))
		adjusted[i] = running
		level := alpha / step
		if !stopped && ps[i] >= level {
			stopped, stopLevel = true, level
		}
		if stopped {
			level = stopLevel
		}
		levels[i] = level
	}
	return adjusted, levels
}

// verdictOf reads an adjusted p-value in the metric's direction.
func verdictOf(delta, adjusted float64, direction string) string {
	if adjusted >= Alpha || delta == 0 {
		return VerdictInconclusive
	}
	if (delta > 0) == (direction == HigherIsBetter) {
		return VerdictImproved
	}
	return VerdictRegressed
}

// tQuantile is the p quantile of Student's t with df degrees of freedom
// (df > 0, not necessarily whole: Welch's).
func tQuantile(p, df float64) float64 {
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Quantile(p)
}

// tQuantile975 is the 0.975 quantile: the half width of a 95% interval.
func tQuantile975(df float64) float64 { return tQuantile(0.975, df) }
