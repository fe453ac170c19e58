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
// its scenarios and, from the second run on, the delta to the first with
// a 95% interval (paired over the shared testcases, else Welch's).
type comparison struct {
	RunIDs            []string        `json:"run_ids"`
	TestsetRevisionID string          `json:"testset_revision_id"`
	Metrics           []compareMetric `json:"metrics"`
}

type compareMetric struct {
	Step string `json:"step"`
	Kind string `json:"kind"`
	Path string `json:"path"`
	Type string `json:"type"`
	Runs []struct {
		RunID   string   `json:"run_id"`
		StepKey string   `json:"step_key"`
		Count   int      `json:"count"`
		Mean    *float64 `json:"mean"`
		Delta   *float64 `json:"delta"`
		CI      *struct {
			Low    float64 `json:"low"`
			High   float64 `json:"high"`
			Method string  `json:"method"`
			N      int     `json:"n"`
		} `json:"ci"`
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
// after the first the delta and its interval.
func compareTable(c *comparison, raw obj, names map[string]string) output.Table {
	t := output.Table{Header: []string{"metric", "type", "run_id", "n", "mean", "delta", "ci_low", "ci_high", "method"}, Raw: raw}
	for _, m := range c.Metrics {
		name := metricName(m, names)
		for _, r := range m.Runs {
			row := []string{name, m.Type, r.RunID, fmt.Sprint(r.Count), optNum(r.Mean), optNum(r.Delta), "", "", ""}
			if r.CI != nil {
				row[6], row[7], row[8] = output.Num(r.CI.Low), output.Num(r.CI.High), r.CI.Method
			}
			if r.StepKey == "" {
				row[3] = "–"
			}
			t.Rows = append(t.Rows, row)
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
// the baseline (first) with the comparison's own intervals: worse when the
// whole interval of the delta is on the bad side of zero. Only evaluator
// outputs are gated; a metric without an interval (fewer than two values)
// falls back to the normal approximation over the global metrics.
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
		worse, dir := side.CI.High < 0, "higher is better"
		if lowerBetter[name] {
			worse, dir = side.CI.Low > 0, "lower is better"
		}
		out = append(out, gate.Check{Name: name + " vs baseline " + baseID, Kind: "baseline", Passed: !worse,
			Message: fmt.Sprintf("%s = %s vs baseline %s over %d testcases: Δ %+.4f, 95%% CI [%.4f, %.4f] (%s), %s", name,
				optNum(side.Mean), optNum(m.Runs[0].Mean), side.CI.N, *side.Delta, side.CI.Low, side.CI.High, side.CI.Method, dir)})
	}
	var rest []gate.Metric
	for _, m := range run {
		if !done[m.Name] {
			rest = append(rest, m)
		}
	}
	return append(out, gate.Baseline(rest, base, baseID, lowerBetter)...)
}
