package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/assayhq/assay/cli/internal/api"
	"github.com/assayhq/assay/cli/internal/gate"
	"github.com/assayhq/assay/cli/internal/output"
)

// comparison is the answer of POST /api/evaluations/runs/compare (lane
// eval-metrics): per metric of each compared step, each run's mean over
// its testcases and, from the second run on, the delta to the first with
// a 95% interval (paired over the shared testcases, else Welch's), and
// its test in the comparison's Holm-corrected family: a verdict
// (improved, regressed, inconclusive, by the metric's direction), the
// adjusted p-value and interval, and the testcases a difference needs.
type comparison struct {
	RunIDs            []string        `json:"run_ids"`
	TestsetRevisionID string          `json:"testset_revision_id"`
	Metrics           []compareMetric `json:"metrics"`
	Statistics        *struct {
		Correction string  `json:"correction"`
		Tests      int     `json:"tests"`
		Alpha      float64 `json:"alpha"`
	} `json:"statistics"`
	// Costs is each run's traced cost (USD); absent from a registry
	// that does not add them up.
	Costs []struct {
		RunID     string  `json:"run_id"`
		Cost      float64 `json:"cost"`
		Scenarios int     `json:"scenarios"`
	} `json:"costs"`
}

type compareInterval struct {
	Low    float64 `json:"low"`
	High   float64 `json:"high"`
	Level  float64 `json:"level"`
	Method string  `json:"method"`
	N      int     `json:"n"`
}

type compareMetric struct {
	Step      string `json:"step"`
	Kind      string `json:"kind"`
	Path      string `json:"path"`
	Type      string `json:"type"`
	Direction string `json:"direction"` // higher or lower: which way is better
	Runs      []struct {
		RunID      string           `json:"run_id"`
		StepKey    string           `json:"step_key"`
		Count      int              `json:"count"`
		Mean       *float64         `json:"mean"`
		Delta      *float64         `json:"delta"`
		CI         *compareInterval `json:"ci"`
		Verdict    string           `json:"verdict"`
		PAdjusted  *float64         `json:"p_adjusted"`
		AdjustedCI *compareInterval `json:"adjusted_ci"`
		// CostPerPoint is the run's cost ÷ this score's mean.
		CostPerPoint *float64 `json:"cost_per_point"`
		Power        *struct {
			Difference float64 `json:"difference"`
			Testcases  *int    `json:"testcases"`
		} `json:"power"`
	} `json:"runs"`
}

// compare calls the comparison route; raw is the whole answer, for json.
func compare(ctx context.Context, cl *api.Client, runIDs []string) (*comparison, obj, error) {
	var raw obj
	if err := cl.JSON(ctx, "POST", "/api/evaluations/runs/compare", obj{"run_ids": runIDs}, &raw); err != nil {
		return nil, nil, err
	}
	body := raw
	if c := sub(raw, "comparison"); c != nil {
		body = c
	}
	b, _ := json.Marshal(body)
	var c comparison
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, raw, fmt.Errorf("the comparison is not the shape expected: %v", err)
	}
	return &c, raw, nil
}

// metricName names a compared metric as the gates do.
func metricName(m compareMetric, names map[string]string) string {
	ms := gate.FromData(map[string]any{m.Step: map[string]any{m.Path: map[string]any{"type": m.Type}}}, names)
	if len(ms) == 1 {
		return ms[0].Name
	}
	return m.Step + "." + m.Path
}

// compareTable is one row per metric and run: its mean, and for the runs
// after the first the delta, its 95% interval, its verdict with the
// Holm-adjusted p-value and interval, and the testcases needed to detect
// the difference the registry names (needed_for).
func compareTable(c *comparison, raw obj, names map[string]string) output.Table {
	t := output.Table{Header: []string{"metric", "type", "run_id", "n", "mean", "delta", "ci_low", "ci_high", "method",
		"verdict", "p_adjusted", "adj_ci_low", "adj_ci_high", "testcases_needed", "needed_for"}, Raw: raw}
	for _, m := range c.Metrics {
		name := metricName(m, names)
		for _, r := range m.Runs {
			row := []string{name, m.Type, r.RunID, fmt.Sprint(r.Count), optNum(r.Mean), optNum(r.Delta), "", "", "", r.Verdict, optNum(r.PAdjusted), "", "", "", ""}
			if r.CI != nil {
				row[6], row[7], row[8] = output.Num(r.CI.Low), output.Num(r.CI.High), r.CI.Method
			}
			if r.AdjustedCI != nil {
				row[11], row[12] = output.Num(r.AdjustedCI.Low), output.Num(r.AdjustedCI.High)
			}
			if r.Power != nil && r.Power.Testcases != nil {
				row[13], row[14] = fmt.Sprint(*r.Power.Testcases), "Δ "+output.Num(r.Power.Difference)
			}
			if r.StepKey == "" {
				row[3] = "–"
			}
			t.Rows = append(t.Rows, row)
		}
	}
	// Then what each run cost, and what a point of each score cost: the
	// run's cost ÷ the score's mean (the mean column holds the amount).
	for _, rc := range c.Costs {
		if rc.Scenarios > 0 {
			t.Rows = append(t.Rows, []string{"cost (USD)", "cost", rc.RunID, fmt.Sprint(rc.Scenarios), output.Num(rc.Cost), "", "", "", "", "", "", "", "", "", ""})
		}
	}
	for _, m := range c.Metrics {
		for _, r := range m.Runs {
			if r.CostPerPoint != nil {
				t.Rows = append(t.Rows, []string{metricName(m, names) + " cost per point (USD)", "cost", r.RunID, fmt.Sprint(r.Count),
					output.Num(*r.CostPerPoint), "", "", "", "", "", "", "", "", "", ""})
			}
		}
	}
	return t
}

func optNum(p *float64) string {
	if p == nil {
		return ""
	}
	return output.Num(*p)
}

// baselineFromComparison gates the run (second in the comparison) against
// the baseline (first) with the comparison's own verdicts: it fails on
// "regressed", which the registry gives when the Holm-adjusted p-value of
// the delta is below 0.05 on the metric's bad side (its adjusted interval
// is then wholly on that side of zero), so gating a dozen outputs at once
// does not fail one in two clean runs by chance. A metric gated with < or
// <= is lower-is-better whatever the registry's direction. Against a
// registry without verdicts the 95% interval decides as before. Only
// evaluator outputs are gated; a metric without an interval (fewer than
// two values) falls back to the normal approximation over the global
// metrics.
func baselineFromComparison(c *comparison, baseID string, run, base []gate.Metric, names map[string]string, lowerBetter map[string]bool) []gate.Check {
	var out []gate.Check
	done := map[string]bool{}
	for _, m := range c.Metrics {
		if m.Kind != "annotation" || !strings.HasPrefix(m.Path, gate.OutputsPrefix) || len(m.Runs) < 2 {
			continue
		}
		name := metricName(m, names)
		side := m.Runs[1]
		if side.Delta == nil || side.CI == nil {
			continue
		}
		done[name] = true
		// Lower is better where the registry says so (latency, cost,
		// tokens, errors) or a gate on the metric is written with <.
		lower := lowerBetter[name] || m.Direction == "lower"
		worse, dir := side.CI.High < 0, "higher is better"
		if lower {
			worse, dir = side.CI.Low > 0, "lower is better"
		}
		msg := fmt.Sprintf("%s = %s vs baseline %s over %d testcases: Δ %+.4f, 95%% CI [%.4f, %.4f] (%s), %s", name,
			optNum(side.Mean), optNum(m.Runs[0].Mean), side.CI.N, *side.Delta, side.CI.Low, side.CI.High, side.CI.Method, dir)
		if side.Verdict != "" && side.AdjustedCI != nil && side.PAdjusted != nil {
			verdict := side.Verdict
			// A gate written with < makes lower better where the
			// registry read higher: the verdict turns round.
			if lower != (m.Direction == "lower") && verdict != "inconclusive" {
				verdict = map[string]string{"improved": "regressed", "regressed": "improved"}[verdict]
			}
			worse = verdict == "regressed"
			correction := "holm"
			if c.Statistics != nil {
				correction = fmt.Sprintf("%s over %d tests", c.Statistics.Correction, c.Statistics.Tests)
			}
			msg += fmt.Sprintf("; %s (%s: p=%.4g, CI [%.4f, %.4f] at %.4g%%)", verdict, correction, *side.PAdjusted,
				side.AdjustedCI.Low, side.AdjustedCI.High, 100*side.AdjustedCI.Level)
		}
		out = append(out, gate.Check{Name: name + " vs baseline " + baseID, Kind: "baseline", Passed: !worse, Message: msg})
	}
	var rest []gate.Metric
	for _, m := range run {
		if !done[m.Name] {
			rest = append(rest, m)
		}
	}
	return append(out, gate.Baseline(rest, base, baseID, lowerBetter)...)
}
