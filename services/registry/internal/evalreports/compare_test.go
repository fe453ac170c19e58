package evalreports_test

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand"
	"net/http"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/pgxutil"
	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/pkg/testutil/pgtest"
	"github.com/assayhq/assay/services/registry/internal/evalreports"
	ev "github.com/assayhq/assay/services/registry/internal/evaluations"
	"github.com/assayhq/assay/services/registry/internal/pgstore"
	"github.com/assayhq/assay/services/registry/migrations"
)

// compareWorld is the comparison's and the export's fixture: runs written
// through the records' use cases on real PostgreSQL, with the variational
// metrics a worker would store.
type compareWorld struct {
	svc   reportsOver
	sc    scope.Scope
	store *pgstore.Evaluations
	// costs gives makeRun's application cells a traced cost: $0.001 ×
	// (the scenario's position + 1).
	costs bool
}

func newCompareWorld(t *testing.T, cfg ev.Config) *compareWorld {
	t.Helper()
	pool := pgtest.New(t)
	require.NoError(t, pgxutil.Migrate(ctx, pool, migrations.FS, "registry_schema_version", slog.New(slog.NewTextHandler(io.Discard, nil))))
	st := pgstore.New(pool).Evaluations()
	svc := ev.NewService(st, nil, cfg)
	return &compareWorld{svc: reportsOver{svc, evalreports.New(svc)}, store: st,
		sc: scope.Scope{ProjectID: uuid.New(), UserID: uuid.New()}}
}

// reportsOver is the records' use cases (to write the fixture runs) and
// the reports over them (Compare, PrepareExport) behind one field.
type reportsOver struct {
	*ev.Service
	*evalreports.Reports
}

// outcome is one scenario of a fixture run: its testcase (none when ""),
// the evaluator's score and success (no metric when score < 0), and the
// evaluator cell's status and error.
type outcome struct {
	testcase string
	score    float64
	success  bool
	status   ev.Status
	err      string
}

const (
	scorePath   = "attributes.ag.data.outputs.score"
	successPath = "attributes.ag.data.outputs.success"
)

// makeRun creates a testset → application → evaluator run over revision
// rev with one scenario per outcome, its cells and its metrics.
func (w *compareWorld) makeRun(t *testing.T, rev, app string, outcomes []outcome) ev.Run {
	t.Helper()
	evaluator := "0193e8a0-0000-7000-8000-00000000e7a1"
	stepsOf := []ev.Step{
		{Key: "testset-x", Type: ev.TypeInput, Origin: ev.OriginAuto},
		{Key: "application-" + app, Type: ev.TypeInvocation, Origin: ev.OriginAuto, References: map[string]ev.Ref{"application": ref(uuid.NewString())}},
		{Key: "evaluator-exact", Type: ev.TypeAnnotation, Origin: ev.OriginAuto, References: map[string]ev.Ref{"evaluator": ref(evaluator)}},
	}
	if rev != "" {
		stepsOf[0].References = map[string]ev.Ref{"testset_revision": ref(rev)}
	}
	runs, err := w.svc.CreateRuns(ctx, w.sc, []ev.Run{{Data: ev.RunData{Steps: stepsOf}}})
	require.NoError(t, err)
	r := runs[0]
	in := make([]ev.Scenario, len(outcomes))
	for i := range in {
		in[i] = ev.Scenario{RunID: r.ID}
	}
	scs, err := w.svc.CreateScenarios(ctx, w.sc, in)
	require.NoError(t, err)
	var results []ev.Result
	var metrics []ev.Metric
	for i, o := range outcomes {
		sid := scs[i].ID
		input := ev.Result{RunID: r.ID, ScenarioID: sid, StepKey: "testset-x", Status: ev.Success}
		if o.testcase != "" {
			tc := o.testcase
			input.TestcaseID = &tc
		}
		appTrace := fmt.Sprintf("%032x", 0xa000+i)
		evalTrace := fmt.Sprintf("%032x", 0xe000+i)
		cell := ev.Result{RunID: r.ID, ScenarioID: sid, StepKey: "evaluator-exact", Status: o.status, TraceID: &evalTrace}
		if cell.Status == "" {
			cell.Status = ev.Success
		}
		if o.err != "" {
			cell.Error = json.RawMessage(fmt.Sprintf(`{"message":%q}`, o.err))
		}
		results = append(results, input,
			ev.Result{RunID: r.ID, ScenarioID: sid, StepKey: "application-" + app, Status: ev.Success, TraceID: &appTrace}, cell)
		if o.score >= 0 {
			data := map[string]any{"evaluator-exact": map[string]any{
				scorePath: map[string]any{"type": "numeric/continuous", "count": 1, "sum": o.score, "mean": o.score},
				successPath: map[string]any{"type": "binary", "count": 1,
					"freq": []any{map[string]any{"value": o.success, "count": 1, "density": 1}}},
				"attributes.ag.data.outputs.label": map[string]any{"type": "categorical/single", "count": 1},
			}, "application-" + app: map[string]any{
				"attributes.ag.metrics.duration.cumulative": map[string]any{"type": "numeric/continuous", "count": 1, "mean": 100.0 * float64(i+1)},
			}}
			if w.costs {
				data["application-"+app].(map[string]any)[evalreports.CostPath] = map[string]any{"type": "numeric/continuous", "count": 1, "mean": 0.001 * float64(i+1)}
			}
			b, _ := json.Marshal(data)
			metrics = append(metrics, ev.Metric{RunID: r.ID, ScenarioID: &sid, Status: ev.Success, Data: b})
		}
	}
	_, err = w.svc.UpsertResults(ctx, w.sc, results)
	require.NoError(t, err)
	// A global metric is not a scenario's value.
	metrics = append(metrics, ev.Metric{RunID: r.ID, Status: ev.Success, Data: json.RawMessage(`{"evaluator-exact":{"` + scorePath + `":{"type":"numeric/continuous","count":99,"mean":42}}}`)})
	_, err = w.svc.UpsertMetrics(ctx, w.sc, metrics)
	require.NoError(t, err)
	return r
}

func side(t *testing.T, c *evalreports.Comparison, step, path string) evalreports.CompareMetric {
	t.Helper()
	for _, m := range c.Metrics {
		if m.Step == step && m.Path == path {
			return m
		}
	}
	t.Fatalf("no metric %s %s in %+v", step, path, c.Metrics)
	return evalreports.CompareMetric{}
}

// TestCompare: every expected value is computed by hand (t quantiles from
// the t table: t(0.975, 3) = 3.182446; Welch's ν = 3.857, t = 2.817474).
func TestCompare(t *testing.T) {
	w := newCompareWorld(t, ev.Config{})
	rev := uuid.NewString()
	tc := []string{uuid.NewString(), uuid.NewString(), uuid.NewString(), uuid.NewString()}
	a := w.makeRun(t, rev, "a", []outcome{{tc[0], 0.5, true, "", ""}, {tc[1], 1, true, "", ""}, {tc[2], 0, false, ev.Failure, "boom"}, {tc[3], 0.5, true, "", ""}})
	// B in another scenario order: matched by testcase, not position.
	b := w.makeRun(t, rev, "b", []outcome{{tc[3], 0.5, true, "", ""}, {tc[2], 0.5, true, "", ""}, {tc[1], 1, true, "", ""}, {tc[0], 1, true, "", ""}})
	// C shares one testcase with A; its other scenarios have none.
	c := w.makeRun(t, rev, "c", []outcome{{tc[0], 1, true, "", ""}, {"", 0, false, "", ""}, {"", 0.5, true, "", ""}})

	got, err := w.svc.Compare(ctx, w.sc, []string{a.ID, b.ID, c.ID})
	require.NoError(t, err)
	assert.Equal(t, []string{a.ID, b.ID, c.ID}, got.RunIDs)
	assert.Equal(t, rev, got.TestsetRevisionID)

	t.Run("scenarios side by side by testcase", func(t *testing.T) {
		require.Len(t, got.Scenarios, 6, "four testcases, and C's two scenarios without one")
		first := got.Scenarios[0]
		require.NotNil(t, first.TestcaseID)
		assert.Equal(t, tc[0], *first.TestcaseID)
		require.Len(t, first.Runs, 3)
		assert.Equal(t, 0.5, first.Runs[0].Values["evaluator-exact"][scorePath])
		assert.Equal(t, 1.0, first.Runs[1].Values["evaluator-exact"][scorePath])
		assert.Equal(t, 1.0, first.Runs[2].Values["evaluator-exact"][scorePath])
		third := got.Scenarios[2]
		assert.Equal(t, tc[2], *third.TestcaseID)
		assert.Equal(t, ev.Errors, third.Runs[0].Status, "A's evaluator failed there")
		assert.Nil(t, third.Runs[2], "C has no scenario for this testcase")
		assert.Nil(t, got.Scenarios[4].TestcaseID)
		assert.Nil(t, got.Scenarios[4].Runs[0])
		assert.NotNil(t, got.Scenarios[4].Runs[2])
	})

	t.Run("paired delta of a score", func(t *testing.T) {
		m := side(t, got, "evaluator-exact", scorePath)
		assert.Equal(t, ev.TypeAnnotation, m.Kind)
		assert.Equal(t, "numeric/continuous", m.Type)
		require.Len(t, m.Runs, 3)
		assert.Equal(t, 4, m.Runs[0].Count)
		assert.InDelta(t, 0.5, *m.Runs[0].Mean, 1e-12, "(0.5 + 1 + 0 + 0.5) / 4: the global metric's 42 is not a scenario")
		assert.Nil(t, m.Runs[0].Delta, "the first run is the baseline")
		assert.InDelta(t, 0.75, *m.Runs[1].Mean, 1e-12)
		// differences B - A per testcase: 0.5, 0, 0.5, 0 → mean 0.25,
		// sd √(4·0.0625/3) = 0.288675, se 0.144338, half 3.182446·se = 0.459347
		assert.InDelta(t, 0.25, *m.Runs[1].Delta, 1e-12)
		ci := m.Runs[1].CI
		require.NotNil(t, ci)
		assert.Equal(t, evalreports.MethodPaired, ci.Method)
		assert.Equal(t, 4, ci.N)
		assert.Equal(t, 0.95, ci.Level)
		assert.InDelta(t, -0.209347, ci.Low, 1e-5)
		assert.InDelta(t, 0.709347, ci.High, 1e-5)
	})

	t.Run("Welch where fewer than two testcases match", func(t *testing.T) {
		m := side(t, got, "evaluator-exact", scorePath)
		// C: 1, 0, 0.5 (mean 0.5, s² 0.25); A: mean 0.5, s² 1/6.
		// se² = (1/6)/4 + 0.25/3 = 0.125; ν = 0.125² / ((1/24)²/3 + (1/12)²/2) = 3.857;
		// t(0.975, 3.857) = 2.817474; half = 2.817474 · √0.125 = 0.996127
		c := m.Runs[2]
		assert.InDelta(t, 0.5, *c.Mean, 1e-12)
		assert.InDelta(t, 0, *c.Delta, 1e-12)
		require.NotNil(t, c.CI)
		assert.Equal(t, evalreports.MethodWelch, c.CI.Method)
		assert.Equal(t, 7, c.CI.N)
		assert.InDelta(t, -0.996127, c.CI.Low, 1e-5)
		assert.InDelta(t, 0.996127, c.CI.High, 1e-5)
	})

	t.Run("a binary metric compares its rate", func(t *testing.T) {
		m := side(t, got, "evaluator-exact", successPath)
		assert.InDelta(t, 0.75, *m.Runs[0].Mean, 1e-12)
		assert.InDelta(t, 1, *m.Runs[1].Mean, 1e-12)
		// differences 0, 0, 1, 0: mean 0.25, sd 0.5, se 0.25, half 0.795612
		assert.InDelta(t, -0.545612, m.Runs[1].CI.Low, 1e-5)
		assert.InDelta(t, 1.045612, m.Runs[1].CI.High, 1e-5)
	})

	t.Run("applications are matched by kind", func(t *testing.T) {
		m := side(t, got, "application-a", "attributes.ag.metrics.duration.cumulative")
		assert.Equal(t, ev.TypeInvocation, m.Kind)
		assert.Equal(t, "application-b", m.Runs[1].StepKey)
		// A: 100, 200, 300, 400 by testcase; B (reversed order): 400, 300, 200, 100
		assert.InDelta(t, 0, *m.Runs[1].Delta, 1e-12)
		assert.InDelta(t, 250, *m.Runs[1].Mean, 1e-12)
		first := got.Scenarios[0] // tc0: A's first scenario, B's fourth
		assert.Equal(t, 100.0, first.Runs[0].Values["application-a"]["attributes.ag.metrics.duration.cumulative"])
		assert.Equal(t, 400.0, first.Runs[1].Values["application-a"]["attributes.ag.metrics.duration.cumulative"],
			"values are keyed by the compared step's label, whatever the run's own step key")
	})

	t.Run("categorical metrics have no mean", func(t *testing.T) {
		for _, m := range got.Metrics {
			assert.NotEqual(t, "attributes.ag.data.outputs.label", m.Path)
		}
	})

	t.Run("errors name the run", func(t *testing.T) {
		other := w.makeRun(t, uuid.NewString(), "d", []outcome{{tc[0], 1, true, "", ""}})
		_, err := w.svc.Compare(ctx, w.sc, []string{a.ID, other.ID})
		assert.Equal(t, http.StatusConflict, status(t, err))
		body, _ := json.Marshal(errDetail(err))
		assert.Contains(t, string(body), other.ID)

		none := w.makeRun(t, "", "e", []outcome{{tc[0], 1, true, "", ""}})
		_, err = w.svc.Compare(ctx, w.sc, []string{a.ID, none.ID})
		assert.Equal(t, http.StatusUnprocessableEntity, status(t, err))
		assert.Contains(t, err.Error(), "run_ids 1")

		missing := uuid.NewString()
		_, err = w.svc.Compare(ctx, w.sc, []string{missing, a.ID})
		assert.Equal(t, http.StatusUnprocessableEntity, status(t, err))
		assert.Contains(t, err.Error(), "run_ids 0")

		for _, ids := range [][]string{{a.ID}, {a.ID, a.ID}, {a.ID, "nope"}} {
			_, err = w.svc.Compare(ctx, w.sc, ids)
			assert.Equal(t, http.StatusUnprocessableEntity, status(t, err), "%v", ids)
		}
		// Another project's run is not there.
		_, err = w.svc.Compare(ctx, scope.Scope{ProjectID: uuid.New()}, []string{a.ID, b.ID})
		assert.Equal(t, http.StatusUnprocessableEntity, status(t, err))
	})
}

// TestCompareCosts: each run's cost is the sum of its scenarios' traced
// costs, and a score's cost per point that cost ÷ the score's mean.
func TestCompareCosts(t *testing.T) {
	w := newCompareWorld(t, ev.Config{})
	w.costs = true
	rev := uuid.NewString()
	tc := []string{uuid.NewString(), uuid.NewString()}
	// A costs 0.001 + 0.002, scores 0.5 and 1 (mean 0.75); B costs the
	// same and scores 0.25 and 0.25 (mean 0.25).
	a := w.makeRun(t, rev, "a", []outcome{{tc[0], 0.5, true, "", ""}, {tc[1], 1, true, "", ""}})
	b := w.makeRun(t, rev, "b", []outcome{{tc[0], 0.25, false, "", ""}, {tc[1], 0.25, false, "", ""}})
	got, err := w.svc.Compare(ctx, w.sc, []string{a.ID, b.ID})
	require.NoError(t, err)
	require.Len(t, got.Costs, 2)
	assert.Equal(t, a.ID, got.Costs[0].RunID)
	assert.InDelta(t, 0.003, got.Costs[0].Cost, 1e-12)
	assert.Equal(t, 2, got.Costs[0].Scenarios)
	assert.InDelta(t, 0.003, got.Costs[1].Cost, 1e-12)
	assert.NotEmpty(t, got.Statistics.CostPerPoint, "the answer says what cost per point is")

	score := side(t, got, "evaluator-exact", scorePath)
	require.NotNil(t, score.Runs[0].CostPerPoint)
	assert.InDelta(t, 0.003/0.75, *score.Runs[0].CostPerPoint, 1e-12)
	assert.InDelta(t, 0.003/0.25, *score.Runs[1].CostPerPoint, 1e-12)
	rate := side(t, got, "evaluator-exact", successPath)
	assert.InDelta(t, 0.003/1, *rate.Runs[0].CostPerPoint, 1e-12, "a rate is a score too")
	assert.Nil(t, rate.Runs[1].CostPerPoint, "a mean of 0 has no cost per point")
	cost := side(t, got, "application-a", evalreports.CostPath)
	assert.Nil(t, cost.Runs[0].CostPerPoint, "a cost is not a score")
}

// errDetail is the detail an error renders.
func errDetail(err error) any {
	return errs.From(err).Detail
}

// TestCompareRepeatsAndVerdicts: a testcase is the unit (two scenarios of
// one testcase are averaged before pairing), every delta is tested in
// one Holm-corrected family, and a revision against itself (two runs of
// the same noisy scores) gets no verdict but inconclusive.
func TestCompareRepeatsAndVerdicts(t *testing.T) {
	w := newCompareWorld(t, ev.Config{})
	rev := uuid.NewString()
	tc := []string{uuid.NewString(), uuid.NewString(), uuid.NewString()}

	t.Run("repeats of a testcase are averaged before pairing", func(t *testing.T) {
		a := w.makeRun(t, rev, "a", []outcome{{tc[0], 0, false, "", ""}, {tc[1], 1, true, "", ""}, {tc[2], 0.5, true, "", ""}})
		// B sampled tc0 twice (1 then 0): its value there is 0.5.
		b := w.makeRun(t, rev, "b", []outcome{{tc[0], 1, true, "", ""}, {tc[0], 0, false, "", ""}, {tc[1], 1, true, "", ""}, {tc[2], 0.5, true, "", ""}})
		got, err := w.svc.Compare(ctx, w.sc, []string{a.ID, b.ID})
		require.NoError(t, err)
		m := side(t, got, "evaluator-exact", scorePath)
		assert.Equal(t, 4, m.Runs[1].Count, "scenarios with a value")
		assert.Equal(t, 3, m.Runs[1].Testcases)
		assert.InDelta(t, 2.0/3, *m.Runs[1].Mean, 1e-12, "(0.5 + 1 + 0.5) / 3 over testcases")
		// differences 0.5, 0, 0 (not 1, 0, 0 from the first scenario alone)
		assert.InDelta(t, 0.5/3, *m.Runs[1].Delta, 1e-12)
		require.NotNil(t, m.Runs[1].CI)
		assert.Equal(t, 3, m.Runs[1].CI.N, "three pairs of testcases")
		assert.Equal(t, "testcase", got.Statistics.Unit)
	})

	// Scores of 40 testcases: a revision's expected score per testcase
	// plus the noise of sampling it, drawn from a fixed seed.
	cases := make([]string, 40)
	truth := make([]float64, 40)
	for i := range cases {
		cases[i] = uuid.NewString()
		truth[i] = float64(i%5) / 4
	}
	rng := rand.New(rand.NewSource(7))
	sample := func(shift float64) []outcome {
		out := make([]outcome, len(cases))
		for i := range cases {
			s := math.Max(0, math.Min(1, truth[i]+shift+rng.NormFloat64()*0.15))
			out[i] = outcome{cases[i], s, s >= 0.5, "", ""}
		}
		return out
	}
	base := w.makeRun(t, rev, "base", sample(0))
	again := w.makeRun(t, rev, "again", sample(0))
	better := w.makeRun(t, rev, "better", sample(0.3))

	t.Run("a revision against itself is inconclusive", func(t *testing.T) {
		got, err := w.svc.Compare(ctx, w.sc, []string{base.ID, again.ID})
		require.NoError(t, err)
		assert.Equal(t, evalreports.CorrectionHolm, got.Statistics.Correction)
		assert.Equal(t, 3, got.Statistics.Tests, "score, success and duration")
		for _, m := range got.Metrics {
			s := m.Runs[1]
			require.NotNil(t, s.PAdjusted, "%s", m.Path)
			assert.Equal(t, evalreports.VerdictInconclusive, s.Verdict, "%s: Δ %v, p %v adjusted %v", m.Path, *s.Delta, *s.PValue, *s.PAdjusted)
			assert.True(t, s.AdjustedCI.Low <= 0 && s.AdjustedCI.High >= 0, "%s: %+v", m.Path, s.AdjustedCI)
			assert.GreaterOrEqual(t, s.AdjustedCI.High-s.AdjustedCI.Low, s.CI.High-s.CI.Low, "the corrected interval is no narrower")
		}
		// The noise says how many testcases a difference of 0.05 needs.
		p := side(t, got, "evaluator-exact", successPath).Runs[1].Power
		require.NotNil(t, p)
		assert.Equal(t, 0.05, p.Difference)
		assert.InDelta(t, 0.05/3, p.Alpha, 1e-12)
		require.NotNil(t, p.Testcases)
		assert.Greater(t, *p.Testcases, 40)
		assert.Greater(t, p.Detectable, 0.05)
	})

	t.Run("a real improvement is one, in both runs' family", func(t *testing.T) {
		got, err := w.svc.Compare(ctx, w.sc, []string{base.ID, again.ID, better.ID})
		require.NoError(t, err)
		assert.Equal(t, 6, got.Statistics.Tests)
		m := side(t, got, "evaluator-exact", scorePath)
		assert.Equal(t, evalreports.HigherIsBetter, m.Direction)
		assert.Equal(t, evalreports.VerdictInconclusive, m.Runs[1].Verdict)
		assert.Equal(t, evalreports.VerdictImproved, m.Runs[2].Verdict, "p %v adjusted %v", *m.Runs[2].PValue, *m.Runs[2].PAdjusted)
		assert.Greater(t, m.Runs[2].AdjustedCI.Low, 0.0)
		assert.Empty(t, m.Runs[0].Verdict, "the baseline has none")
		d := side(t, got, "application-base", "attributes.ag.metrics.duration.cumulative")
		assert.Equal(t, evalreports.LowerIsBetter, d.Direction)
	})
}
