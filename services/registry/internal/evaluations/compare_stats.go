package evaluations

import "math"

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
// freedom (df > 0, not necessarily whole: Welch's), found by bisection on
// the distribution function.
func tQuantile975(df float64) float64 {
	lo, hi := 0.0, 1.0
	for tCDF(hi, df) < 0.975 {
		hi *= 2
		if hi > 1e12 {
			return math.Inf(1)
		}
	}
	for range 200 {
		mid := (lo + hi) / 2
		if tCDF(mid, df) < 0.975 {
			lo = mid
		} else {
			hi = mid
		}
		if hi-lo < 1e-12 {
			break
		}
	}
	return (lo + hi) / 2
}

// tCDF is P(T <= t) for t >= 0: 1 - I_x(df/2, 1/2)/2 with x = df/(df+t²).
func tCDF(t, df float64) float64 {
	x := df / (df + t*t)
	return 1 - 0.5*regIncBeta(df/2, 0.5, x)
}

// regIncBeta is the regularized incomplete beta function I_x(a, b), by
// its continued fraction (Numerical Recipes, betacf), using the symmetry
// I_x(a,b) = 1 - I_{1-x}(b,a) where the fraction converges slowly.
func regIncBeta(a, b, x float64) float64 {
	if x <= 0 {
		return 0
	}
	if x >= 1 {
		return 1
	}
	la, _ := math.Lgamma(a + b)
	lb, _ := math.Lgamma(a)
	lc, _ := math.Lgamma(b)
	front := math.Exp(la - lb - lc + a*math.Log(x) + b*math.Log(1-x))
	if x < (a+1)/(a+b+2) {
		return front * betaCF(a, b, x) / a
	}
	return 1 - front*betaCF(b, a, 1-x)/b
}

func betaCF(a, b, x float64) float64 {
	const eps, tiny = 1e-15, 1e-300
	qab, qap, qam := a+b, a+1, a-1
	c, d := 1.0, 1-qab*x/qap
	if math.Abs(d) < tiny {
		d = tiny
	}
	d = 1 / d
	h := d
	for m := 1; m <= 300; m++ {
		fm := float64(m)
		aa := fm * (b - fm) * x / ((qam + 2*fm) * (a + 2*fm))
		d = 1 + aa*d
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = 1 + aa/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		h *= d * c
		aa = -(a + fm) * (qab + fm) * x / ((a + 2*fm) * (qap + 2*fm))
		d = 1 + aa*d
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = 1 + aa/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		del := d * c
		h *= del
		if math.Abs(del-1) < eps {
			break
		}
	}
	return h
}
