package cmd

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/cli/internal/api"
	"github.com/assayhq/assay/cli/internal/api/gen"
	"github.com/assayhq/assay/cli/internal/gate"
)

// A comparison as the registry's Compare renders it (eval-metrics lane).
const comparisonJSON = `{"count": 1, "comparison": {"run_ids": ["b", "r"], "testset_revision_id": "t",
 "statistics": {"unit": "testcase", "correction": "holm", "tests": 4, "alpha": 0.05, "power": 0.8},
 "metrics": [
  {"step": "evaluator-exact", "kind": "annotation", "path": "attributes.ag.data.outputs.success", "type": "binary",
   "runs": [{"run_id": "b", "step_key": "evaluator-exact", "count": 10, "mean": 0.9},
            {"run_id": "r", "step_key": "evaluator-exact", "count": 10, "mean": 0.6, "delta": -0.3,
             "ci": {"low": -0.55, "high": -0.05, "level": 0.95, "method": "paired-t", "n": 10},
             "verdict": "regressed", "p_value": 0.004, "p_adjusted": 0.016,
             "adjusted_ci": {"low": -0.6, "high": -0.02, "level": 0.9875, "method": "paired-t", "n": 10},
             "power": {"difference": 0.05, "testcases": 785, "detectable": 0.3, "alpha": 0.0125, "power": 0.8}}]},
  {"step": "evaluator-tone", "kind": "annotation", "path": "attributes.ag.data.outputs.score", "type": "numeric/continuous",
   "runs": [{"run_id": "b", "step_key": "evaluator-tone", "count": 10, "mean": 0.8},
            {"run_id": "r", "step_key": "evaluator-tone", "count": 10, "mean": 0.7, "delta": -0.1,
             "ci": {"low": -0.19, "high": -0.01, "level": 0.95, "method": "paired-t", "n": 10},
             "verdict": "inconclusive", "p_value": 0.03, "p_adjusted": 0.09,
             "adjusted_ci": {"low": -0.22, "high": 0.02, "level": 0.9833, "method": "paired-t", "n": 10}}]},
  {"step": "evaluator-lev", "kind": "annotation", "path": "attributes.ag.data.outputs.score", "type": "numeric/continuous",
   "runs": [{"run_id": "b", "step_key": "evaluator-lev", "count": 10, "mean": 0.5},
            {"run_id": "r", "step_key": "evaluator-lev", "count": 10, "mean": 0.45, "delta": -0.05,
             "ci": {"low": -0.2, "high": 0.1, "level": 0.95, "method": "paired-t", "n": 10}}]},
  {"step": "evaluator-lev", "kind": "annotation", "path": "attributes.ag.metrics.duration.cumulative", "type": "numeric/continuous",
   "runs": [{"run_id": "b", "step_key": "evaluator-lev", "count": 10, "mean": 0.01},
            {"run_id": "r", "step_key": "evaluator-lev", "count": 10, "mean": 0.5, "delta": 0.49,
             "ci": {"low": 0.4, "high": 0.6, "level": 0.95, "method": "paired-t", "n": 10}}]},
  {"step": "application-good", "kind": "invocation", "path": "attributes.ag.metrics.duration.cumulative", "type": "numeric/continuous",
   "runs": [{"run_id": "b", "step_key": "application-good", "count": 10, "mean": 1.5},
            {"run_id": "r", "count": 0}]}
 ]}}`

func parseComparison(t *testing.T) (*gen.Comparison, obj) {
	c, raw, err := decodeComparison([]byte(comparisonJSON))
	require.NoError(t, err)
	return c, raw
}

// TestDecodeComparisonAsTheRegistryAnswers: the answer is read with the
// type generated from the document, whole, scenarios included: a run
// without a scenario for a testcase is null on that testcase's row.
func TestDecodeComparisonAsTheRegistryAnswers(t *testing.T) {
	c, raw, err := decodeComparison([]byte(`{"count": 1, "comparison": {"run_ids": ["b", "r"], "testset_revision_id": "t",
	 "statistics": {"unit": "testcase", "correction": "holm", "tests": 0, "alpha": 0.05, "power": 0.8, "cost_per_point": "…"},
	 "scenarios": [{"testcase_id": "tc", "runs": [{"scenario_id": "s1", "status": "success", "values": {"evaluator-exact": {"attributes.ag.data.outputs.success": 1}}}, null]},
	               {"runs": [null, {"scenario_id": "s2", "status": "success"}]}],
	 "metrics": [], "costs": [{"run_id": "b", "cost": 0, "scenarios": 0}, {"run_id": "r", "cost": 0, "scenarios": 0}]}}`))
	require.NoError(t, err)
	assert.Equal(t, []string{"b", "r"}, c.RunIds)
	assert.Equal(t, "holm", c.Statistics.Value.Correction.Value)
	assert.Equal(t, "comparison", func() string {
		for k := range raw {
			if k != "count" {
				return k
			}
		}
		return ""
	}(), "raw keeps the answer as sent")

	_, _, err = decodeComparison([]byte(`{"count": 1, "comparison": {"metrics": [{"runs": [{"count": "ten"}]}]}}`))
	assert.ErrorContains(t, err, "the comparison is not the shape expected", "a count must be a number")
	_, _, err = decodeComparison([]byte(`{"count": 0}`))
	assert.ErrorContains(t, err, "the answer has no comparison")
}

// TestCompareRefusesANonUUID: the route's run_ids are UUIDs; the CLI says
// which argument is not one before it calls the server.
func TestCompareRefusesANonUUID(t *testing.T) {
	_, _, err := compare(t.Context(), api.New("http://127.0.0.1:1", "k", time.Second), []string{"0190f0a0-0000-7000-8000-00000000ffff", "run-2"})
	require.Error(t, err)
	assert.Equal(t, api.ExitUsage, api.CodeOf(err))
	assert.Contains(t, err.Error(), `run id "run-2" is not a UUID`)
}

func TestCompareTable(t *testing.T) {
	c, raw := parseComparison(t)
	tb := compareTable(c, raw, nil)
	assert.Equal(t, []string{"metric", "type", "run_id", "n", "mean", "delta", "ci_low", "ci_high", "method",
		"verdict", "p_adjusted", "adj_ci_low", "adj_ci_high", "testcases_needed", "needed_for"}, tb.Header)
	require.Len(t, tb.Rows, 10)
	assert.Equal(t, []string{"exact.success", "binary", "b", "10", "0.9", "", "", "", "", "", "", "", "", "", ""}, tb.Rows[0])
	assert.Equal(t, []string{"exact.success", "binary", "r", "10", "0.6", "-0.3", "-0.55", "-0.05", "paired-t",
		"regressed", "0.016", "-0.6", "-0.02", "785", "Δ 0.05"}, tb.Rows[1])
	assert.Equal(t, "inconclusive", tb.Rows[3][9])
	assert.Equal(t, []string{"good.metrics.duration.cumulative", "numeric/continuous", "r", "–", "", "", "", "", "", "", "", "", "", "", ""}, tb.Rows[9],
		"a run without the step says so")
}

// TestCompareTableCosts: each run's cost and each score's cost per point
// follow the metrics' rows, the amount in the mean column.
func TestCompareTableCosts(t *testing.T) {
	c, raw, err := decodeComparison([]byte(`{"count": 1, "comparison": {"run_ids": ["b", "r"],
	 "costs": [{"run_id": "b", "cost": 0.003, "scenarios": 2}, {"run_id": "r", "cost": 0, "scenarios": 0}],
	 "metrics": [{"step": "evaluator-exact", "kind": "annotation", "path": "attributes.ag.data.outputs.score", "type": "numeric/continuous",
	   "runs": [{"run_id": "b", "step_key": "evaluator-exact", "count": 2, "mean": 0.75, "cost_per_point": 0.004},
	            {"run_id": "r", "step_key": "evaluator-exact", "count": 2, "mean": 0.5}]}]}}`))
	require.NoError(t, err)
	tb := compareTable(c, raw, nil)
	require.Len(t, tb.Rows, 4, "two metric rows, one cost row (r has no traced cost), one cost per point")
	assert.Equal(t, []string{"cost (USD)", "cost", "b", "2", "0.003"}, tb.Rows[2][:5])
	assert.Equal(t, []string{"exact.score cost per point (USD)", "cost", "b", "2", "0.004"}, tb.Rows[3][:5])
}

func TestStepNames(t *testing.T) {
	var run obj
	require.NoError(t, json.Unmarshal([]byte(`{"data": {"steps": [
	  {"key": "testset-0a1b", "type": "input", "references": {"testset": {"id": "t", "slug": "qa"}, "testset_revision": {"slug": "0a1b"}}},
	  {"key": "application-9f", "type": "invocation", "references": {"application": {"slug": "capitals"}}},
	  {"key": "evaluator-bb89", "type": "annotation", "references": {"evaluator_revision": {"slug": "bb89"}, "evaluator": {"slug": "exact_match"}}},
	  {"key": "evaluator-x", "type": "annotation"}]}}`), &run))
	assert.Equal(t, map[string]string{"testset-0a1b": "qa", "application-9f": "capitals", "evaluator-bb89": "exact_match"}, stepNames(run))
}

func TestBaselineFromComparison(t *testing.T) {
	c, _ := parseComparison(t)
	cs := baselineFromComparison(c, "b", nil, nil, nil, nil)
	require.Len(t, cs, 3, "evaluator outputs only, not an evaluator's duration")
	assert.False(t, cs[0].Passed, "regressed: the adjusted interval is below zero")
	assert.Contains(t, cs[0].Message, "Δ -0.3000, 95% CI [-0.5500, -0.0500] (paired-t)")
	assert.Contains(t, cs[0].Message, "regressed (holm over 4 tests: p=0.016, CI [-0.6000, -0.0200] at 98.75%)")
	assert.True(t, cs[1].Passed, "below zero at 95% but inconclusive once corrected for four tests")
	assert.Contains(t, cs[1].Message, "inconclusive (holm over 4 tests: p=0.09")
	assert.True(t, cs[2].Passed, "the interval crosses zero: noise")
	cs = baselineFromComparison(c, "b", nil, nil, nil, map[string]bool{"exact.success": true})
	assert.True(t, cs[0].Passed, "lower is better: a drop is no failure")

	// A metric the comparison has no interval for is gated on the global
	// metrics instead.
	run := []gate.Metric{{Name: "other.ok", Output: true, HasValue: true, Value: 0, Count: 5}}
	base := []gate.Metric{{Name: "other.ok", Output: true, HasValue: true, Value: 1, Count: 5}}
	cs = baselineFromComparison(c, "b", run, base, nil, nil)
	require.Len(t, cs, 4)
	assert.False(t, cs[3].Passed)
}
