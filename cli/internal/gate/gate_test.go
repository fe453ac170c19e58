package gate

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// data is a global metric's data as the runtime stores it: tracing's
// analytics per step key and path. A binary output has freq, not mean.
const data = `{
 "evaluator-exact_match": {
  "attributes.ag.data.outputs.success": {"type": "binary", "count": 10,
    "freq": [{"value": true, "count": 9, "density": 0.9}, {"value": false, "count": 1, "density": 0.1}], "uniq": 2},
  "attributes.ag.metrics.duration.cumulative": {"type": "numeric/continuous", "count": 10, "sum": 5, "mean": 0.5, "min": 0.1, "max": 1,
    "iqrs": {"p25-p75": 0.2698}}
 },
 "evaluator-lev": {
  "attributes.ag.data.outputs.score": {"type": "numeric/continuous", "count": 4, "sum": 2, "mean": 0.5, "min": 0, "max": 1,
    "iqrs": {"p25-p75": 1.349, "p10-p90": 2}},
  "attributes.ag.data.outputs.label": {"type": "categorical/single", "count": 4, "freq": [{"value": "a", "count": 4}]}
 },
 "application-capitals": {
  "attributes.ag.metrics.costs.cumulative.total": {"type": "numeric/continuous", "count": 10, "mean": 0.001}
 }
}`

func metrics(t *testing.T, s string) []Metric {
	var d map[string]any
	require.NoError(t, json.Unmarshal([]byte(s), &d))
	return FromData(d, nil)
}

func TestFromData(t *testing.T) {
	ms := metrics(t, data)
	var names []string
	for _, m := range ms {
		names = append(names, m.Name)
	}
	assert.Equal(t, []string{"exact_match.success", "lev.label", "lev.score",
		"capitals.metrics.costs.cumulative.total", "exact_match.metrics.duration.cumulative"}, names, "outputs first, then the defaults")
	ok, _ := find(ms, "exact_match.success")
	assert.True(t, ok.HasValue && ok.Output)
	assert.InDelta(t, 0.9, ok.Value, 1e-12, "a binary's value is the share of true")
	assert.InDelta(t, 0.3, ok.SD, 1e-12)
	score, _ := find(ms, "lev.score")
	assert.Equal(t, 0.5, score.Value)
	assert.InDelta(t, 1.0, score.SD, 1e-12, "IQR / 1.349")
	require.NotNil(t, score.Min)
	label, _ := find(ms, "lev.label")
	assert.False(t, label.HasValue, "a categorical output has no single value")

	// The run's steps name the metrics: a step key made of a revision
	// slug reads as the evaluator's slug.
	var d map[string]any
	require.NoError(t, json.Unmarshal([]byte(`{"evaluator-bb8953d486f6": {"attributes.ag.data.outputs.success": {"type": "binary", "count": 1, "mean": 1}}}`), &d))
	assert.Equal(t, "exact_match.success", FromData(d, map[string]string{"evaluator-bb8953d486f6": "exact_match"})[0].Name)
	assert.Equal(t, "bb8953d486f6.success", FromData(d, nil)[0].Name)

	// A binary spec that stores a mean is read as it is.
	ms = metrics(t, `{"evaluator-x": {"attributes.ag.data.outputs.ok": {"type": "binary", "count": 4, "mean": 0.25}}}`)
	assert.Equal(t, 0.25, ms[0].Value)
	assert.InDelta(t, 0.4330, ms[0].SD, 1e-4)
	// String booleans count too.
	ms = metrics(t, `{"evaluator-x": {"attributes.ag.data.outputs.ok": {"type": "binary", "count": 2, "freq": [{"value": "true", "count": 1}, {"value": "false", "count": 1}]}}}`)
	assert.Equal(t, 0.5, ms[0].Value)
}

func TestThresholds(t *testing.T) {
	for _, bad := range []string{"", "x", "x>=", ">=1", "x=>1", "x >= 1 2", "x>>1"} {
		_, err := ParseThreshold(bad)
		assert.Error(t, err, bad)
	}
	ms := metrics(t, data)
	var ts []Threshold
	for _, s := range []string{"exact_match.success>=0.9", "exact_match.success > 0.9", "lev.score<=0.5", "lev.score<0.5",
		"exact_match.metrics.duration.cumulative<1", "missing.metric>=0", "lev.label>=0", "lev.score==0.5", "x.y>=-1e-3"} {
		th, err := ParseThreshold(s)
		require.NoError(t, err, s)
		ts = append(ts, th)
	}
	cs := Thresholds(ms, ts)
	var passed []bool
	for _, c := range cs {
		passed = append(passed, c.Passed)
	}
	assert.Equal(t, []bool{true, false, true, false, true, false, false, true, false}, passed)
	assert.Contains(t, cs[5].Message, "the run has no metric missing.metric (it has: exact_match.success, lev.label, lev.score)")
	assert.Contains(t, cs[1].Message, "exact_match.success = 0.9 (n=10), wanted > 0.9")
	assert.True(t, Failed(cs))
	assert.False(t, Failed(cs[:1]))
}

func TestBaseline(t *testing.T) {
	run := func(p float64, n int) []Metric {
		return []Metric{{Name: "e.success", Output: true, HasValue: true, Value: p, Count: n, SD: sqrt(p * (1 - p))},
			{Name: "e.metrics.duration.cumulative", HasValue: true, Value: 100, Count: n, SD: 1}}
	}
	// 0.8 vs 0.9 over 10 each: the 95% interval of the difference is ±0.31,
	// so the drop is noise; over 1,000 each it is ±0.031 and fails.
	cs := Baseline(run(0.8, 10), run(0.9, 10), "b", nil)
	require.Len(t, cs, 1, "only evaluator outputs are compared")
	assert.True(t, cs[0].Passed, cs[0].Message)
	assert.Contains(t, cs[0].Message, "95% CI ±0.3")
	cs = Baseline(run(0.8, 1000), run(0.9, 1000), "b", nil)
	assert.False(t, cs[0].Passed, cs[0].Message)
	assert.Contains(t, cs[0].Message, "Δ -0.1000")
	// Better is never a failure; lower-is-better flips the direction.
	assert.True(t, Baseline(run(0.95, 1000), run(0.9, 1000), "b", nil)[0].Passed)
	assert.False(t, Baseline(run(0.95, 1000), run(0.9, 1000), "b", map[string]bool{"e.success": true})[0].Passed)
	// Both certain (SD 0): any drop fails.
	assert.False(t, Baseline(run(0, 10), run(1, 10), "b", nil)[0].Passed)
	assert.True(t, Baseline(run(1, 10), run(1, 10), "b", nil)[0].Passed)
	// A metric the baseline lacks is not compared.
	assert.Empty(t, Baseline(run(1, 10), nil, "b", nil))
}

func sqrt(x float64) float64 { return math.Sqrt(x) }

func TestReports(t *testing.T) {
	cs := []Check{{Name: "a>=1", Kind: "threshold", Passed: true, Message: "a = 1"},
		{Name: "b vs baseline r", Kind: "baseline", Message: "b = 0 & <worse>"}}
	var buf bytes.Buffer
	require.NoError(t, JUnit(&buf, "assay eval x", cs))
	assert.True(t, strings.HasPrefix(buf.String(), `<?xml version="1.0" encoding="UTF-8"?>`))
	var suite struct {
		Name     string `xml:"name,attr"`
		Tests    int    `xml:"tests,attr"`
		Failures int    `xml:"failures,attr"`
		Cases    []struct {
			Name, ClassName string
			Failure         *struct {
				Message string `xml:"message,attr"`
			} `xml:"failure"`
		} `xml:"testcase"`
	}
	require.NoError(t, xml.Unmarshal(buf.Bytes(), &suite), buf.String())
	assert.Equal(t, "assay eval x", suite.Name)
	assert.Equal(t, 2, suite.Tests)
	assert.Equal(t, 1, suite.Failures)
	assert.Nil(t, suite.Cases[0].Failure)
	require.NotNil(t, suite.Cases[1].Failure)
	assert.Equal(t, "b = 0 & <worse>", suite.Cases[1].Failure.Message, "escaped and read back whole")

	buf.Reset()
	min := 0.25
	require.NoError(t, Markdown(&buf, "T", [][2]string{{"run", "r1"}},
		[]Metric{{Name: "e.s", Type: "binary", Count: 3, Value: 2.0 / 3, HasValue: true, Min: &min}}, cs))
	md := buf.String()
	assert.Contains(t, md, "## T\n\n- **run:** r1\n")
	assert.Contains(t, md, "| `e.s` | binary | 3 | 0.6667 | 0.25 | – |")
	assert.Contains(t, md, "| `a>=1` | ✅ pass | a = 1 |")
	assert.Contains(t, md, "| `b vs baseline r` | ❌ fail |")
}

func TestRateIgnoresWhatIsNotACount(t *testing.T) {
	ms := metrics(t, `{"evaluator-x": {"attributes.ag.data.outputs.ok": {"type": "binary", "count": 3,
	  "freq": [{"value": true, "count": 2}, {"value": false, "count": -1}, {"value": false, "count": "x"}, {"value": false, "count": 2}]}}}`)
	assert.Equal(t, 0.5, ms[0].Value)
}
