package evaluations

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// Confidence intervals of a difference of means, for the run comparison.
// Student's t is exact for normal per-scenario values and a fair
// approximation otherwise (scores are means over repeats, rates are
// proportions); the interval is what a reader checks first, "does it
// cross zero", so the method is named on every interval.

// Interval is a 95% confidence interval of a delta, with the method that
// made it and the sample it came from.
type Interval struct {
	Low    float64 `json:"low"`
	High   float64 `json:"high"`
	Level  float64 `json:"level"`
	Method string  `json:"method"` // paired-t or welch-t
	// N is the number of pairs (paired-t) or of the two samples together
	// (welch-t).
	N int `json:"n"`
}

// Interval methods.
const (
	MethodPaired = "paired-t"
	MethodWelch  = "welch-t"
)

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

// pairedInterval is the paired t interval of the differences ds (at least
// two): mean ± t(0.975, n-1) · s/√n.
func pairedInterval(ds []float64) (delta float64, iv Interval) {
	m, v := meanVar(ds)
	n := float64(len(ds))
	half := tQuantile975(n-1) * math.Sqrt(v/n)
	return m, Interval{Low: m - half, High: m + half, Level: 0.95, Method: MethodPaired, N: len(ds)}
}

// welchInterval is Welch's t interval of mean(b) - mean(a) (each at least
// two values), with the Welch–Satterthwaite degrees of freedom.
func welchInterval(a, b []float64) (delta float64, iv Interval) {
	ma, va := meanVar(a)
	mb, vb := meanVar(b)
	na, nb := float64(len(a)), float64(len(b))
	delta = mb - ma
	qa, qb := va/na, vb/nb
	se2 := qa + qb
	half := 0.0
	if se2 > 0 {
		df := se2 * se2 / (qa*qa/(na-1) + qb*qb/(nb-1))
		half = tQuantile975(df) * math.Sqrt(se2)
	}
	return delta, Interval{Low: delta - half, High: delta + half, Level: 0.95, Method: MethodWelch, N: len(a) + len(b)}
}

// tQuantile975 is the 0.975 quantile of Student's t with df degrees of
// freedom (df > 0, not necessarily whole: Welch's).
func tQuantile975(df float64) float64 {
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Quantile(0.975)
}
