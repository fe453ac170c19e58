package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/assayhq/assay/cli/internal/api"
	"github.com/assayhq/assay/cli/internal/api/gen"
	"github.com/assayhq/assay/cli/internal/gate"
	"github.com/assayhq/assay/cli/internal/output"
)

// compare calls the comparison route (lane eval-metrics) and reads its
// answer as the OpenAPI document describes it (gen.Comparison, generated
// from the registry's Comparison in
// services/registry/internal/evaluations/compare.go): per metric of each
// compared step, each run's mean over its testcases and, from the second
// run on, the delta to the first with a 95% interval (paired over the
// shared testcases, else Welch's), and its test in the comparison's
// Holm-corrected family: a verdict (improved, regressed, inconclusive, by
// the metric's direction), the adjusted p-value and interval, and the
// testcases a difference needs. raw is the whole answer, for json.
func compare(ctx context.Context, cl *api.Client, runIDs []string) (*gen.Comparison, obj, error) {
	req := gen.PostEvaluationsRunsCompareReq{RunIds: make([]uuid.UUID, 0, len(runIDs))}
	for _, id := range runIDs {
		u, err := uuid.Parse(id)
		if err != nil {
			return nil, nil, api.Errorf(api.ExitUsage, "run id %q is not a UUID", id)
		}
		req.RunIds = append(req.RunIds, u)
	}
	var b json.RawMessage
	if err := cl.JSON(ctx, "POST", "/api/evaluations/runs/compare", &req, &b); err != nil {
		return nil, nil, err
	}
	return decodeComparison(b)
}

// decodeComparison reads the compare route's answer.
func decodeComparison(b []byte) (*gen.Comparison, obj, error) {
	var raw obj
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, nil, fmt.Errorf("the comparison is not JSON: %v", err)
	}
	var ans gen.PostEvaluationsRunsCompareOK
	if err := ans.UnmarshalJSON(b); err != nil {
		return nil, raw, fmt.Errorf("the comparison is not the shape expected: %v", err)
	}
	c, ok := ans.Comparison.Get()
	if !ok {
		return nil, raw, fmt.Errorf("the answer has no comparison")
	}
	return &c, raw, nil
}

// metricName names a compared metric as the gates do.
func metricName(m gen.CompareMetric, names map[string]string) string {
	step, path := m.Step.Or(""), m.Path.Or("")
	ms := gate.FromData(map[string]any{step: map[string]any{path: map[string]any{"type": m.Type.Or("")}}}, names)
	if len(ms) == 1 {
		return ms[0].Name
	}
	return step + "." + path
}

// compareTable is one row per metric and run: its mean, and for the runs
// after the first the delta, its 95% interval, its verdict with the
// Holm-adjusted p-value and interval, and the testcases needed to detect
// the difference the registry names (needed_for).
func compareTable(c *gen.Comparison, raw obj, names map[string]string) output.Table {
	t := output.Table{Header: []string{"metric", "type", "run_id", "n", "mean", "delta", "ci_low", "ci_high", "method",
		"verdict", "p_adjusted", "adj_ci_low", "adj_ci_high", "testcases_needed", "needed_for"}, Raw: raw}
	for _, m := range c.Metrics {
		name := metricName(m, names)
		for _, r := range m.Runs {
			row := []string{name, m.Type.Or(""), r.RunID.Or(""), fmt.Sprint(r.Count.Or(0)), optNum(r.Mean), optNum(r.Delta), "", "", "",
				r.Verdict.Or(""), optNum(r.PAdjusted), "", "", "", ""}
			if ci, ok := r.Ci.Get(); ok {
				row[6], row[7], row[8] = optNum(ci.Low), optNum(ci.High), ci.Method.Or("")
			}
			if ci, ok := r.AdjustedCi.Get(); ok {
				row[11], row[12] = optNum(ci.Low), optNum(ci.High)
			}
			if p, ok := r.Power.Get(); ok {
				if n, ok := p.Testcases.Get(); ok {
					row[13], row[14] = fmt.Sprint(n), "Δ "+optNum(p.Difference)
				}
			}
			if !r.StepKey.IsSet() || r.StepKey.Value == "" {
				row[3] = "–"
			}
			t.Rows = append(t.Rows, row)
		}
	}
	// Then what each run cost, and what a point of each score cost: the
	// run's cost ÷ the score's mean (the mean column holds the amount).
	for _, rc := range c.Costs {
		if rc.Scenarios.Or(0) > 0 {
			t.Rows = append(t.Rows, []string{"cost (USD)", "cost", rc.RunID.Or(""), fmt.Sprint(rc.Scenarios.Or(0)), optNum(rc.Cost), "", "", "", "", "", "", "", "", "", ""})
		}
	}
	for _, m := range c.Metrics {
		for _, r := range m.Runs {
			if r.CostPerPoint.IsSet() {
				t.Rows = append(t.Rows, []string{metricName(m, names) + " cost per point (USD)", "cost", r.RunID.Or(""), fmt.Sprint(r.Count.Or(0)),
					optNum(r.CostPerPoint), "", "", "", "", "", "", "", "", "", ""})
			}
		}
	}
	return t
}

// optNum is a number of the answer, "" where it is absent.
func optNum(p gen.OptFloat64) string {
	v, ok := p.Get()
	if !ok {
		return ""
	}
	return output.Num(v)
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
func baselineFromComparison(c *gen.Comparison, baseID string, run, base []gate.Metric, names map[string]string, lowerBetter map[string]bool) []gate.Check {
	var out []gate.Check
	done := map[string]bool{}
	for _, m := range c.Metrics {
		if m.Kind.Or("") != "annotation" || !strings.HasPrefix(m.Path.Or(""), gate.OutputsPrefix) || len(m.Runs) < 2 {
			continue
		}
		name := metricName(m, names)
		side := m.Runs[1]
		delta, hasDelta := side.Delta.Get()
		ci, hasCI := side.Ci.Get()
		if !hasDelta || !hasCI {
			continue
		}
		done[name] = true
		// Lower is better where the registry says so (latency, cost,
		// tokens, errors) or a gate on the metric is written with <.
		direction := m.Direction.Or("")
		lower := lowerBetter[name] || direction == "lower"
		low, high := ci.Low.Or(0), ci.High.Or(0)
		worse, dir := high < 0, "higher is better"
		if lower {
			worse, dir = low > 0, "lower is better"
		}
		msg := fmt.Sprintf("%s = %s vs baseline %s over %d testcases: Δ %+.4f, 95%% CI [%.4f, %.4f] (%s), %s", name,
			optNum(side.Mean), optNum(m.Runs[0].Mean), ci.N.Or(0), delta, low, high, ci.Method.Or(""), dir)
		adj, hasAdj := side.AdjustedCi.Get()
		pAdjusted, hasP := side.PAdjusted.Get()
		if verdict := side.Verdict.Or(""); verdict != "" && hasAdj && hasP {
			// A gate written with < makes lower better where the
			// registry read higher: the verdict turns round.
			if lower != (direction == "lower") && verdict != "inconclusive" {
				verdict = map[string]string{"improved": "regressed", "regressed": "improved"}[verdict]
			}
			worse = verdict == "regressed"
			correction := "holm"
			if st, ok := c.Statistics.Get(); ok {
				correction = fmt.Sprintf("%s over %d tests", st.Correction.Or(""), st.Tests.Or(0))
			}
			msg += fmt.Sprintf("; %s (%s: p=%.4g, CI [%.4f, %.4f] at %.4g%%)", verdict, correction, pAdjusted,
				adj.Low.Or(0), adj.High.Or(0), 100*adj.Level.Or(0))
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
