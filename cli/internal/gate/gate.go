// Package gate turns an evaluation run's global metrics into named values
// (exact_match.success = 0.92), checks them against thresholds
// (--fail-under 'exact_match.success>=0.9') and a baseline run (worse than
// the baseline beyond the confidence interval of the difference), and
// writes the outcome as JUnit XML and Markdown for CI systems.
package gate

import (
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// OutputsPrefix is where an evaluator's outputs sit in a metric path.
const OutputsPrefix = "attributes.ag.data.outputs."

// Metric is one value of a run: a rate for a binary output (the share of
// true), a mean for a number.
type Metric struct {
	Name     string  // <step slug>.<output leaf>, or <step slug>.<path after attributes.ag.>
	StepKey  string  // evaluator-exact_match
	Path     string  // attributes.ag.data.outputs.success
	Type     string  // binary, numeric/continuous, …
	Count    int     // values counted
	Value    float64 // the rate or the mean
	HasValue bool
	Min, Max *float64
	// SD is the standard deviation of one value (for a rate, sqrt(p(1-p));
	// for numbers, estimated from the interquartile range), used for the
	// baseline's confidence interval.
	SD float64
	// Output is true for an evaluator's outputs (the scores a gate is
	// about), false for the default duration, cost, token and error sums.
	Output bool
}

// FromData reads a global metric's data ({step_key: {path: stats}}).
// names maps a step key to the name its metrics take (the evaluator's or
// application's slug, from the run's steps); a step it lacks is named by
// its key without the kind prefix (evaluator-x → x).
func FromData(data map[string]any, names map[string]string) []Metric {
	var out []Metric
	for stepKey, v := range data {
		paths, ok := v.(map[string]any)
		if !ok {
			continue
		}
		slug := StepName(stepKey, names)
		for path, sv := range paths {
			stats, ok := sv.(map[string]any)
			if !ok {
				continue
			}
			m := Metric{StepKey: stepKey, Path: path, Type: fmt.Sprint(stats["type"])}
			if leaf, ok := strings.CutPrefix(path, OutputsPrefix); ok {
				m.Name, m.Output = slug+"."+leaf, true
			} else {
				m.Name = slug + "." + strings.TrimPrefix(path, "attributes.ag.")
			}
			m.Count = int(num(stats["count"]))
			read(&m, stats)
			out = append(out, m)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Output != out[j].Output {
			return out[i].Output
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// StepName is the name of a step's metrics: names[key], else the key
// without its kind prefix.
func StepName(key string, names map[string]string) string {
	if n := names[key]; n != "" {
		return n
	}
	if _, rest, ok := strings.Cut(key, "-"); ok {
		return rest
	}
	return key
}

// read takes the value of stats: "mean" when present (numbers, and a
// binary spec that stores one), else the frequency of true among "freq"
// (what tracing's analytics give a binary spec).
func read(m *Metric, stats map[string]any) {
	if v, ok := stats["mean"].(float64); ok {
		m.Value, m.HasValue = v, true
		if x, ok := stats["min"].(float64); ok {
			m.Min = &x
		}
		if x, ok := stats["max"].(float64); ok {
			m.Max = &x
		}
		m.SD = sdFromIQR(stats)
		if m.Type == "binary" {
			m.SD = math.Sqrt(v * (1 - v))
		}
		return
	}
	freq, ok := stats["freq"].([]any)
	if !ok || m.Count == 0 {
		return
	}
	trues, total := 0.0, 0.0
	for _, f := range freq {
		e, _ := f.(map[string]any)
		n := num(e["count"])
		if n <= 0 || math.IsInf(n, 0) {
			continue // not a count: ignored rather than making a rate outside [0, 1]
		}
		total += n
		if isTrue(e["value"]) {
			trues += n
		}
	}
	if total == 0 {
		return
	}
	if m.Type != "binary" && !allBool(freq) {
		return // categorical: no single value to gate on
	}
	p := trues / total
	m.Value, m.HasValue, m.SD = p, true, math.Sqrt(p*(1-p))
}

func isTrue(v any) bool {
	switch x := v.(type) {
	case bool:
		return x
	case string:
		return x == "true"
	case float64:
		return x == 1
	}
	return false
}

func allBool(freq []any) bool {
	for _, f := range freq {
		e, _ := f.(map[string]any)
		switch v := e["value"].(type) {
		case bool:
		case string:
			if v != "true" && v != "false" {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// sdFromIQR estimates a standard deviation from the interquartile range
// (IQR / 1.349 for a normal distribution): the analytics keep percentiles,
// not the variance.
func sdFromIQR(stats map[string]any) float64 {
	iqrs, _ := stats["iqrs"].(map[string]any)
	for k, v := range iqrs {
		a, b, ok := strings.Cut(k, "-")
		if !ok {
			continue
		}
		if pct(a) == 25 && pct(b) == 75 {
			return num(v) / 1.349
		}
	}
	return 0
}

func pct(s string) float64 {
	f, _ := strconv.ParseFloat(strings.TrimLeft(s, "p"), 64)
	return f
}

func num(v any) float64 {
	f, _ := v.(float64)
	return f
}

// Threshold is one --fail-under condition: NAME OP VALUE.
type Threshold struct {
	Name  string
	Op    string
	Value float64
	Text  string
}

var thresholdRE = regexp.MustCompile(`^\s*([A-Za-z0-9_.\-]+)\s*(>=|<=|>|<|==)\s*(-?[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*$`)

// ParseThreshold reads 'exact_match.success>=0.9'.
func ParseThreshold(s string) (Threshold, error) {
	m := thresholdRE.FindStringSubmatch(s)
	if m == nil {
		return Threshold{}, fmt.Errorf("%q is not METRIC OP NUMBER (e.g. exact_match.success>=0.9; OP one of >= > <= < ==)", s)
	}
	v, _ := strconv.ParseFloat(m[3], 64)
	return Threshold{Name: m[1], Op: m[2], Value: v, Text: strings.TrimSpace(s)}, nil
}

func (t Threshold) holds(x float64) bool {
	switch t.Op {
	case ">=":
		return x >= t.Value
	case ">":
		return x > t.Value
	case "<=":
		return x <= t.Value
	case "<":
		return x < t.Value
	}
	return x == t.Value
}

// Check is one gate's outcome.
type Check struct {
	Name    string // JUnit test case name
	Kind    string // threshold or baseline
	Passed  bool
	Message string
}

// Thresholds checks each threshold against the metrics; a metric the run
// does not have fails its gate (a typo must not pass a build).
func Thresholds(ms []Metric, ts []Threshold) []Check {
	var out []Check
	for _, t := range ts {
		c := Check{Name: t.Text, Kind: "threshold"}
		m, ok := find(ms, t.Name)
		switch {
		case !ok:
			c.Message = fmt.Sprintf("the run has no metric %s (it has: %s)", t.Name, names(ms))
		case !m.HasValue:
			c.Message = fmt.Sprintf("%s has no value (%d values counted)", t.Name, m.Count)
		default:
			c.Passed = t.holds(m.Value)
			c.Message = fmt.Sprintf("%s = %s (n=%d), wanted %s %s", t.Name, fmtF(m.Value), m.Count, t.Op, fmtF(t.Value))
		}
		out = append(out, c)
	}
	return out
}

// Z is the two-sided 95% normal quantile.
const Z = 1.959964

// Baseline compares every evaluator output metric the run and the baseline
// share: the run fails when its value is worse than the baseline's by more
// than the 95% confidence interval of the difference (normal
// approximation, sqrt(sd1²/n1 + sd2²/n2)). Higher is better, except for
// metrics named in lowerBetter (those gated with < or <=).
func Baseline(run, base []Metric, baseID string, lowerBetter map[string]bool) []Check {
	var out []Check
	for _, m := range run {
		if !m.Output || !m.HasValue {
			continue
		}
		b, ok := find(base, m.Name)
		if !ok || !b.HasValue {
			continue
		}
		delta := m.Value - b.Value
		half := ciHalf(m, b)
		worse := delta < -half
		dir := "higher is better"
		if lowerBetter[m.Name] {
			worse, dir = delta > half, "lower is better"
		}
		out = append(out, Check{Name: m.Name + " vs baseline " + baseID, Kind: "baseline", Passed: !worse,
			Message: fmt.Sprintf("%s = %s (n=%d) vs baseline %s (n=%d): Δ %+.4f, 95%% CI ±%.4f, %s", m.Name, fmtF(m.Value), m.Count,
				fmtF(b.Value), b.Count, delta, half, dir)})
	}
	return out
}

func ciHalf(a, b Metric) float64 {
	v := 0.0
	if a.Count > 0 {
		v += a.SD * a.SD / float64(a.Count)
	}
	if b.Count > 0 {
		v += b.SD * b.SD / float64(b.Count)
	}
	return Z * math.Sqrt(v)
}

func find(ms []Metric, name string) (Metric, bool) {
	for _, m := range ms {
		if m.Name == name {
			return m, true
		}
	}
	return Metric{}, false
}

func names(ms []Metric) string {
	var n []string
	for _, m := range ms {
		if m.Output {
			n = append(n, m.Name)
		}
	}
	if len(n) == 0 {
		return "no evaluator outputs"
	}
	return strings.Join(n, ", ")
}

func fmtF(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }

// Failed reports whether any check failed.
func Failed(cs []Check) bool {
	for _, c := range cs {
		if !c.Passed {
			return true
		}
	}
	return false
}

// JUnit writes the checks as one JUnit test suite (one test case each, a
// <failure> for a failed one), the format CI systems read test reports in.
func JUnit(w io.Writer, suite string, cs []Check) error {
	type failure struct {
		Message string `xml:"message,attr"`
		Type    string `xml:"type,attr"`
		Text    string `xml:",chardata"`
	}
	type tc struct {
		Name      string   `xml:"name,attr"`
		ClassName string   `xml:"classname,attr"`
		Time      string   `xml:"time,attr"`
		Failure   *failure `xml:"failure,omitempty"`
		SystemOut string   `xml:"system-out,omitempty"`
	}
	type ts struct {
		XMLName  xml.Name `xml:"testsuite"`
		Name     string   `xml:"name,attr"`
		Tests    int      `xml:"tests,attr"`
		Failures int      `xml:"failures,attr"`
		Errors   int      `xml:"errors,attr"`
		Time     string   `xml:"time,attr"`
		Cases    []tc     `xml:"testcase"`
	}
	s := ts{Name: suite, Tests: len(cs), Time: "0"}
	for _, c := range cs {
		t := tc{Name: c.Name, ClassName: "assay." + c.Kind, Time: "0", SystemOut: c.Message}
		if !c.Passed {
			s.Failures++
			t.Failure = &failure{Message: c.Message, Type: c.Kind, Text: c.Message}
		}
		s.Cases = append(s.Cases, t)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(s); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// Markdown writes a summary for a CI job page (GitHub's step summary): the
// run, its metrics and the gates.
func Markdown(w io.Writer, title string, facts [][2]string, ms []Metric, cs []Check) error {
	var b strings.Builder
	fmt.Fprintf(&b, "## %s\n\n", title)
	for _, f := range facts {
		fmt.Fprintf(&b, "- **%s:** %s\n", f[0], f[1])
	}
	b.WriteString("\n| metric | type | n | value | min | max |\n|---|---|---:|---:|---:|---:|\n")
	for _, m := range ms {
		val := "–"
		if m.HasValue {
			val = fmtF(round(m.Value))
		}
		fmt.Fprintf(&b, "| `%s` | %s | %d | %s | %s | %s |\n", m.Name, m.Type, m.Count, val, opt(m.Min), opt(m.Max))
	}
	if len(cs) > 0 {
		b.WriteString("\n| gate | result | detail |\n|---|---|---|\n")
		for _, c := range cs {
			r := "✅ pass"
			if !c.Passed {
				r = "❌ fail"
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s |\n", c.Name, r, strings.ReplaceAll(c.Message, "|", "\\|"))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func opt(p *float64) string {
	if p == nil {
		return "–"
	}
	return fmtF(round(*p))
}

func round(x float64) float64 { return math.Round(x*1e4) / 1e4 }
