package gate

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
)

// FuzzParseThreshold: any --fail-under text is a threshold or an error,
// never a panic, and what parses holds a finite number and a known
// operator.
func FuzzParseThreshold(f *testing.F) {
	for _, s := range []string{"exact_match.success>=0.9", "a.b < 1e-3", "x==-.5", "x>=", "", "≥", "a>=1e999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		th, err := ParseThreshold(s)
		if err != nil {
			return
		}
		switch th.Op {
		case ">=", ">", "<=", "<", "==":
		default:
			t.Fatalf("%q parsed with operator %q", s, th.Op)
		}
		if th.Name == "" {
			t.Fatalf("%q parsed without a name", s)
		}
		_ = th.holds(0)
	})
}

// FuzzFromData: a metric record of any shape reads without a panic, and
// gates and reports over it are written whole.
func FuzzFromData(f *testing.F) {
	f.Add([]byte(data))
	f.Add([]byte(`{"evaluator-x": {"attributes.ag.data.outputs.ok": {"type": "binary", "count": 2, "freq": [{"value": "true", "count": 1}]}}}`))
	f.Add([]byte(`{"e": {"p": {"count": "x", "freq": [1, null, {"count": -1}], "iqrs": {"p25-p75": "a", "-": 1}}}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var d map[string]any
		if json.Unmarshal(b, &d) != nil {
			return
		}
		ms := FromData(d, nil)
		th, _ := ParseThreshold("a.b>=0.5")
		cs := append(Thresholds(ms, []Threshold{th}), Baseline(ms, ms, "b", nil)...)
		for _, m := range ms {
			if m.HasValue && m.Type == "binary" && (m.Value < 0 || m.Value > 1) && !math.IsNaN(m.Value) {
				if _, ok := d[m.StepKey].(map[string]any)[m.Path].(map[string]any)["mean"]; !ok {
					t.Fatalf("a rate out of [0, 1]: %v", m.Value)
				}
			}
		}
		var buf bytes.Buffer
		if err := JUnit(&buf, "s", cs); err != nil {
			t.Fatal(err)
		}
		if err := Markdown(&buf, "t", nil, ms, cs); err != nil {
			t.Fatal(err)
		}
	})
}
