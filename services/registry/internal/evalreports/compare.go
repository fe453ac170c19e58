package evalreports

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"sort"

	"github.com/google/uuid"
	"golang.org/x/sync/errgroup"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/services/registry/internal/evaluations"
	"github.com/assayhq/assay/services/registry/internal/versioned"
)

// Run comparison (ours: the compatible platform has none): two or
// more runs over the same testset revision, scenario by scenario (matched
// by testcase) and metric by metric, with each run's delta to the first
// and its 95% confidence interval.
//
// Per-scenario values come from the variational metrics the worker
// stores (evalmetrics): a numeric metric's mean over the scenario's cells
// (its repeats), a binary metric's rate of true; categorical, string and
// json metrics have no mean and are left out. A run's mean is the mean of
// its per-scenario values, so every scenario weighs the same whatever its
// repeats.
//
// Steps are matched across runs by kind and evaluator: the invocation
// step of each run with the others' (a run has one application, and
// comparing applications is the point), annotation steps by their
// evaluator (references.evaluator.id), else by step key.
//
// A testcase is the unit of the statistics (compare_stats.go): a run's
// value for a testcase is the mean over its scenarios for it, and a
// run's mean is the mean over its testcases (a scenario without a
// testcase counts as one of its own).
//
// The interval of a delta (run k minus the first run) is paired where the
// testcases match: over the testcases both runs have a value for, the
// differences d give delta = mean(d) and mean(d) ± t(0.975, n-1)·sd(d)/√n
// (method paired-t, n pairs, at least 2). With fewer than two pairs it is
// Welch's: delta = mean_k - mean_1, ± t(0.975, ν)·√(s1²/n1 + sk²/nk) with
// Welch–Satterthwaite ν (method welch-t; each run at least 2 values).
// With less than that there is a delta and no interval. Every delta with
// an interval is then one test of the comparison's family, corrected
// with Holm's method: its verdict, adjusted p-value and adjusted
// interval, and the testcases it would need (ComparePower).

// Bounds of a comparison: it holds every compared run's scenarios and
// their values in memory.
const (
	MaxCompareRuns      = 10
	MaxCompareScenarios = 10000
)

// readPage is the page size of the export's reads.
const readPage = 1000

// comparePage is the page size of the comparison's reads: one more than
// the most scenarios it reads, so a run within the bound is read in one
// query per kind of record. Pages of readPage made a 5,000-scenario run
// five keyset queries per kind, each walking the run's rows in id order
// again (the metrics' index is by scenario, not id): most of the call.
const comparePage = MaxCompareScenarios + 1

// Comparison is the comparison of runs.
type Comparison struct {
	RunIDs            []string          `json:"run_ids"`
	TestsetRevisionID string            `json:"testset_revision_id"`
	Statistics        CompareStatistics `json:"statistics"`
	Scenarios         []CompareScenario `json:"scenarios"`
	Metrics           []CompareMetric   `json:"metrics"`
	// Costs is each run's cost, in the order of run_ids (compareCosts).
	Costs []RunCost `json:"costs"`
}

// RunCost is what a run cost: the sum over its scenarios of each step's
// traced cost (CostPath, USD by the price table).
type RunCost struct {
	RunID string  `json:"run_id"`
	Cost  float64 `json:"cost"`
	// Scenarios is how many scenarios had a traced cost.
	Scenarios int `json:"scenarios"`
}

// CostPath is the per-scenario metric a run's cost adds up.
const CostPath = "attributes.ag.metrics.costs.cumulative.total"

// CostPerPointNote says what cost_per_point is, for readers to quote.
const CostPerPointNote = "cost_per_point = the run's cost (USD, the sum of its scenarios' traced costs) ÷ the score's mean; on scores where higher is better with a positive mean"

// CompareStatistics names how the deltas were tested, for a reader to
// quote: the unit, the correction, the family size and the error rates.
type CompareStatistics struct {
	Unit       string  `json:"unit"`       // "testcase": repeats and duplicate scenarios are averaged first
	Correction string  `json:"correction"` // holm
	Tests      int     `json:"tests"`      // deltas in the family
	Alpha      float64 `json:"alpha"`      // family-wise error rate of the verdicts
	Power      float64 `json:"power"`      // power of the sample sizes
	// CostPerPoint says what the metrics' cost_per_point is.
	CostPerPoint string `json:"cost_per_point"`
}

// CompareScenario is one testcase side by side: one entry per run, in the
// order of run_ids, null where that run has no scenario for it. A
// scenario without a testcase (none recorded on its input cells) has a
// row of its own.
type CompareScenario struct {
	TestcaseID *string         `json:"testcase_id,omitempty"`
	Runs       []*ScenarioSide `json:"runs" apidoc:"nullable-items"`
}

// ScenarioSide is a run's scenario for a testcase, with its per-scenario
// values keyed by compared step (its label: the metrics' "step") and
// metric path.
type ScenarioSide struct {
	ScenarioID string                        `json:"scenario_id"`
	Status     evaluations.Status            `json:"status"`
	Values     map[string]map[string]float64 `json:"values,omitempty"`
}

// CompareMetric is one metric of one compared step across the runs.
type CompareMetric struct {
	Step string `json:"step"` // the compared step: the first run's step key
	Kind string `json:"kind"` // invocation or annotation
	Path string `json:"path"`
	Type string `json:"type"`
	// Direction is which way is better: lower for latency, cost, tokens
	// and errors, higher otherwise.
	Direction string       `json:"direction"`
	Runs      []MetricSide `json:"runs"`
}

// MetricSide is one run's side of a metric: its mean over its testcases
// and, from the second run on, its delta to the first with a 95%
// interval, and its test in the family (compare_stats.go).
type MetricSide struct {
	RunID     string    `json:"run_id"`
	StepKey   string    `json:"step_key,omitempty"` // absent: the run has no such step
	Count     int       `json:"count"`              // scenarios with a value
	Testcases int       `json:"testcases"`          // testcases with a value (a scenario without one counts as one)
	Mean      *float64  `json:"mean,omitempty"`
	Delta     *float64  `json:"delta,omitempty"`
	CI        *Interval `json:"ci,omitempty"`
	// Verdict is improved, regressed or inconclusive (a delta without an
	// interval is inconclusive).
	Verdict string `json:"verdict,omitempty"`
	// PValue is the test's own two-sided p-value, PAdjusted Holm's.
	PValue    *float64 `json:"p_value,omitempty"`
	PAdjusted *float64 `json:"p_adjusted,omitempty"`
	// AdjustedCI is the interval at the level Holm held the test to: it
	// excludes 0 exactly when the verdict is improved or regressed.
	AdjustedCI *Interval     `json:"adjusted_ci,omitempty"`
	Power      *ComparePower `json:"power,omitempty"`
	// CostPerPoint is the run's cost ÷ this score's mean (CostPerPointNote).
	CostPerPoint *float64 `json:"cost_per_point,omitempty"`
}

// compareKey is how a step is matched across runs.
func compareKey(s evaluations.Step) (string, bool) {
	switch s.Type {
	case evaluations.TypeInvocation:
		// Comparing applications is the point: a run has one, so the
		// invocation steps match whatever their application.
		return "invocation", true
	case evaluations.TypeAnnotation:
		if r, ok := s.References["evaluator"]; ok && r.ID != nil {
			return "annotation:" + *r.ID, true
		}
		return "annotation-key:" + s.Key, true
	}
	return "", false
}

// testsetRevision is the run's testset revision id: the one its input
// steps reference ("" when none, or when they name two).
func testsetRevision(r *evaluations.Run) string {
	id := ""
	for _, s := range r.Data.Steps {
		if s.Type != evaluations.TypeInput {
			continue
		}
		if ref, ok := s.References["testset_revision"]; ok && ref.ID != nil {
			if id != "" && id != *ref.ID {
				return ""
			}
			id = *ref.ID
		}
	}
	return id
}

// runSide is what the comparison reads of one run.
type runSide struct {
	run       *evaluations.Run
	keys      map[string]string // compared key → step key
	scenarios []evaluations.Scenario
	testcase  map[string]string                        // scenario id → testcase id
	values    map[string]map[string]map[string]float64 // scenario id → compared key → path → value
	types     map[string]map[string]string             // compared key → path → type
}

// Compare compares runs over one testset revision. Errors name the run at
// fault: a run_ids entry that is not a run (422), a run without a testset
// revision (422), a run over another revision than the first's (409), a
// run with more than MaxCompareScenarios scenarios (422).
func (s *Reports) Compare(ctx context.Context, sc scope.Scope, runIDs []string) (*Comparison, error) {
	if len(runIDs) < 2 || len(runIDs) > MaxCompareRuns {
		return nil, errs.Field(fmt.Sprintf("List should have between 2 and %d run ids", MaxCompareRuns), len(runIDs), "body", "run_ids")
	}
	ids := make([]uuid.UUID, len(runIDs))
	seen := map[uuid.UUID]bool{}
	for i, v := range runIDs {
		id, err := evaluations.ParseID(v, "body", "run_ids", i)
		if err != nil {
			return nil, err
		}
		if seen[id] {
			return nil, errs.Field("A run is compared once", v, "body", "run_ids", i)
		}
		seen[id] = true
		ids[i] = id
	}
	runs, err := s.store.Runs(ctx, sc.ProjectID, evaluations.Filter{IDs: ids, Windowing: evaluations.UpTo(len(ids))})
	if err != nil {
		return nil, err
	}
	byID := map[string]*evaluations.Run{}
	for i := range runs {
		byID[runs[i].ID] = &runs[i]
	}
	sides := make([]*runSide, len(ids))
	revision := ""
	for i, id := range ids {
		r := byID[id.String()]
		if r == nil {
			return nil, evaluations.RunNotFound(id.String(), "body", "run_ids", i)
		}
		rev := testsetRevision(r)
		if rev == "" {
			return nil, errs.Field("Run has no single testset revision to compare by", r.ID, "body", "run_ids", i)
		}
		if i == 0 {
			revision = rev
		} else if rev != revision {
			return nil, errs.Message(errs.Conflict, "evaluations.compare_testsets_differ",
				"Compared runs must share a testset revision.",
				map[string]any{"run_id": r.ID, "testset_revision_id": rev, "expected_testset_revision_id": revision})
		}
	}
	// The runs are read side by side (and each run's scenarios, testcases
	// and metrics too, readSide): a comparison of two 5,000-scenario runs
	// is then as long as its longest read, not the sum of them.
	g, gctx := errgroup.WithContext(ctx)
	for i, id := range ids {
		r := byID[id.String()]
		g.Go(func() error {
			side, err := s.readSide(gctx, sc.ProjectID, r, i)
			sides[i] = side
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	out := &Comparison{RunIDs: make([]string, len(sides)), TestsetRevisionID: revision}
	for i, sd := range sides {
		out.RunIDs[i] = sd.run.ID
	}
	labels := stepLabels(sides)
	out.Scenarios = sideBySide(sides, labels)
	out.Metrics = compareMetrics(sides, labels)
	out.Statistics = CompareStatistics{Unit: "testcase", Correction: CorrectionHolm, Tests: out.tests(), Alpha: Alpha, Power: PowerTarget,
		CostPerPoint: CostPerPointNote}
	out.Costs = compareCosts(sides)
	costPerPoint(out)
	return out, nil
}

// compareCosts adds up each run's traced cost: every compared step's
// CostPath over every scenario.
func compareCosts(sides []*runSide) []RunCost {
	out := make([]RunCost, len(sides))
	for i, sd := range sides {
		out[i].RunID = sd.run.ID
		for _, sc := range sd.scenarios {
			had := false
			for _, paths := range sd.values[sc.ID] {
				if v, ok := paths[CostPath]; ok {
					out[i].Cost += v
					had = true
				}
			}
			if had {
				out[i].Scenarios++
			}
		}
	}
	return out
}

// costPerPoint sets each score's cost per point: annotation metrics where
// higher is better, whose mean is positive, on runs with a cost.
func costPerPoint(c *Comparison) {
	for i := range c.Metrics {
		m := &c.Metrics[i]
		if m.Kind != evaluations.TypeAnnotation || m.Direction != HigherIsBetter {
			continue
		}
		for j := range m.Runs {
			side := &m.Runs[j]
			if j >= len(c.Costs) || side.Mean == nil || *side.Mean <= 0 || c.Costs[j].Scenarios == 0 {
				continue
			}
			v := c.Costs[j].Cost / *side.Mean
			side.CostPerPoint = &v
		}
	}
}

// stepLabels names each compared step by the step key of the first run
// that has it: the metrics' "step" and the scenarios' values keys.
func stepLabels(sides []*runSide) map[string]string {
	labels := map[string]string{}
	for _, sd := range sides {
		for k, key := range sd.keys {
			if _, ok := labels[k]; !ok {
				labels[k] = key
			}
		}
	}
	return labels
}

// labelled is a scenario's values keyed by compared step label.
func labelled(values map[string]map[string]float64, labels map[string]string) map[string]map[string]float64 {
	if values == nil {
		return nil
	}
	out := make(map[string]map[string]float64, len(values))
	for k, v := range values {
		out[labels[k]] = v
	}
	return out
}

// readSide reads a run's scenarios, their testcases and their
// per-scenario values, page by page.
func (s *Reports) readSide(ctx context.Context, p uuid.UUID, r *evaluations.Run, idx int) (*runSide, error) {
	rid := uuid.MustParse(r.ID)
	side := &runSide{run: r, keys: map[string]string{}, testcase: map[string]string{},
		values: map[string]map[string]map[string]float64{}, types: map[string]map[string]string{}}
	var inputs []string
	for _, st := range r.Data.Steps {
		if st.Type == evaluations.TypeInput {
			inputs = append(inputs, st.Key)
		}
	}
	// The four reads fill different fields: they run at once. The
	// metrics are decoded once the undeclared steps are known (a walk
	// over every cell of the run, as long as the other reads).
	g, ctx := errgroup.WithContext(ctx)
	var more []evaluations.Step
	var metrics []evaluations.ScenarioData
	g.Go(func() error {
		// Annotations linked under keys the run does not declare are
		// compared too, by their key (UpsertResults).
		var err error
		more, err = s.svc.UndeclaredSteps(ctx, p, r, MaxExportCells)
		return err
	})
	g.Go(func() error {
		return eachPageOf(comparePage, func(w *versioned.Windowing) (int, *uuid.UUID, error) {
			ss, err := s.store.Scenarios(ctx, p, evaluations.Filter{RunIDs: []uuid.UUID{rid}, Windowing: w})
			if err != nil || len(ss) == 0 {
				return 0, nil, err
			}
			side.scenarios = append(side.scenarios, ss...)
			if len(side.scenarios) > MaxCompareScenarios {
				return 0, nil, errs.Field(fmt.Sprintf("Run has more than %d scenarios, the most a comparison reads", MaxCompareScenarios), r.ID, "body", "run_ids", idx)
			}
			last := uuid.MustParse(ss[len(ss)-1].ID)
			return len(ss), &last, nil
		})
	})
	if len(inputs) > 0 {
		g.Go(func() error {
			return eachPageOf(comparePage, func(w *versioned.Windowing) (int, *uuid.UUID, error) {
				rs, err := s.store.Results(ctx, p, evaluations.Filter{RunIDs: []uuid.UUID{rid}, StepKeys: inputs, RepeatIdxs: []int{0}, Windowing: w})
				if err != nil || len(rs) == 0 {
					return 0, nil, err
				}
				for _, res := range rs {
					if res.TestcaseID != nil {
						side.testcase[res.ScenarioID] = *res.TestcaseID
					}
				}
				last := uuid.MustParse(rs[len(rs)-1].ID)
				return len(rs), &last, nil
			})
		})
	}
	g.Go(func() error {
		// Only the per-scenario records' data: the run's global and
		// temporal metrics are not a scenario's value.
		var err error
		metrics, err = s.store.ScenarioMetricData(ctx, p, rid, comparePage)
		return err
	})
	if err := g.Wait(); err != nil {
		return nil, err
	}
	stepKey := map[string]string{} // step key → compared key
	for _, st := range append(append([]evaluations.Step{}, r.Data.Steps...), more...) {
		if k, ok := compareKey(st); ok {
			if _, dup := side.keys[k]; !dup {
				side.keys[k] = st.Key
				stepKey[st.Key] = k
			}
		}
	}
	for _, m := range metrics {
		side.addValues(m.ScenarioID, m.Data, stepKey)
	}
	return side, nil
}

// eachPage calls read with ascending windowings of readPage records until
// a page comes back short; read returns its count and last id.
func eachPage(read func(*versioned.Windowing) (int, *uuid.UUID, error)) error {
	return eachPageOf(readPage, read)
}

// eachPageOf is eachPage with pages of size records.
func eachPageOf(size int, read func(*versioned.Windowing) (int, *uuid.UUID, error)) error {
	asc, n := "ascending", size
	w := &versioned.Windowing{Order: &asc, Limit: &n}
	for {
		got, last, err := read(w)
		if err != nil || got < size || last == nil {
			return err
		}
		next := *w
		next.Next = last
		w = &next
	}
}

// scenarioValue is a per-scenario value of a metric's statistics: a
// numeric metric's mean, a binary metric's rate of true.
func scenarioValue(stats map[string]any) (string, float64, bool) {
	typ, _ := stats["type"].(string)
	switch typ {
	case "numeric/continuous", "numeric/discrete":
		if m, ok := stats["mean"].(float64); ok {
			return typ, m, true
		}
	case "binary":
		freq, _ := stats["freq"].([]any)
		total, yes := 0.0, 0.0
		for _, f := range freq {
			e, _ := f.(map[string]any)
			c, _ := e["count"].(float64)
			total += c
			if e["value"] == true {
				yes += c
			}
		}
		if total > 0 {
			return typ, yes / total, true
		}
	}
	return "", 0, false
}

// metricStats is the part of a metric's statistics a comparison reads:
// decoded into fields, not maps of any, since a comparison decodes one
// per scenario and run.
type metricStats struct {
	Type string   `json:"type"`
	Mean *float64 `json:"mean"`
	Freq []struct {
		Value any     `json:"value"`
		Count float64 `json:"count"`
	} `json:"freq"`
}

// value is scenarioValue of decoded statistics.
func (st *metricStats) value() (float64, bool) {
	switch st.Type {
	case "numeric/continuous", "numeric/discrete":
		if st.Mean != nil {
			return *st.Mean, true
		}
	case "binary":
		total, yes := 0.0, 0.0
		for _, f := range st.Freq {
			total += f.Count
			if f.Value == true {
				yes += f.Count
			}
		}
		if total > 0 {
			return yes / total, true
		}
	}
	return 0, false
}

// addValues reads a variational metric's data {step_key: {path: stats}}.
func (sd *runSide) addValues(scenario string, data []byte, stepKey map[string]string) {
	var d map[string]map[string]*metricStats
	if json.Unmarshal(data, &d) != nil {
		return
	}
	for step, paths := range d {
		key, ok := stepKey[step]
		if !ok {
			continue
		}
		for path, stats := range paths {
			if stats == nil {
				continue
			}
			v, ok := stats.value()
			if !ok {
				continue
			}
			if sd.values[scenario] == nil {
				sd.values[scenario] = map[string]map[string]float64{}
			}
			if sd.values[scenario][key] == nil {
				sd.values[scenario][key] = map[string]float64{}
			}
			sd.values[scenario][key][path] = v
			if sd.types[key] == nil {
				sd.types[key] = map[string]string{}
			}
			sd.types[key][path] = stats.Type
		}
	}
}

// sideBySide lines the runs' scenarios up by testcase, in the first run's
// order, then the testcases only later runs have.
func sideBySide(sides []*runSide, labels map[string]string) []CompareScenario {
	var rows []CompareScenario
	row := map[string]int{}
	for i, sd := range sides {
		for _, sc := range sd.scenarios {
			entry := &ScenarioSide{ScenarioID: sc.ID, Status: sc.Status, Values: labelled(sd.values[sc.ID], labels)}
			tc, ok := sd.testcase[sc.ID]
			if ok {
				if at, found := row[tc]; found && rows[at].Runs[i] == nil {
					rows[at].Runs[i] = entry
					continue
				}
			}
			r := CompareScenario{Runs: make([]*ScenarioSide, len(sides))}
			r.Runs[i] = entry
			if ok {
				tc := tc
				r.TestcaseID = &tc
				if _, found := row[tc]; !found {
					row[tc] = len(rows)
				}
			}
			rows = append(rows, r)
		}
	}
	return rows
}

// compareMetrics is each compared step's metrics across the runs: the
// steps and paths of the first run that has them, in key and path order.
func compareMetrics(sides []*runSide, labels map[string]string) []CompareMetric {
	type kp struct{ key, path string }
	types := map[kp]string{}
	for _, sd := range sides {
		for key, paths := range sd.types {
			for path, typ := range paths {
				if _, ok := types[kp{key, path}]; !ok {
					types[kp{key, path}] = typ
				}
			}
		}
	}
	list := make([]kp, 0, len(types))
	for k := range types {
		list = append(list, k)
	}
	sort.Slice(list, func(i, j int) bool {
		if list[i].key != list[j].key {
			return list[i].key < list[j].key
		}
		return list[i].path < list[j].path
	})
	out := make([]CompareMetric, 0, len(list))
	var tests []test
	for _, k := range list {
		m := CompareMetric{Step: labels[k.key], Path: k.path, Type: types[k], Kind: evaluations.TypeAnnotation, Direction: Direction(k.path)}
		if k.key == evaluations.TypeInvocation {
			m.Kind = evaluations.TypeInvocation
		}
		// per run: testcase → its value (the mean over the run's
		// scenarios for it), and the values by testcase (a scenario
		// without a testcase is one of its own)
		byCase := make([]map[string]float64, len(sides))
		vals := make([][]float64, len(sides))
		counts := make([]int, len(sides))
		for i, sd := range sides {
			sum, n := map[string]float64{}, map[string]int{}
			var order []string
			for _, sc := range sd.scenarios {
				v, ok := sd.values[sc.ID][k.key][k.path]
				if !ok {
					continue
				}
				counts[i]++
				tc, ok := sd.testcase[sc.ID]
				if !ok {
					vals[i] = append(vals[i], v)
					continue
				}
				if n[tc] == 0 {
					order = append(order, tc)
				}
				sum[tc] += v
				n[tc]++
			}
			byCase[i] = make(map[string]float64, len(order))
			for _, tc := range order {
				mean := sum[tc] / float64(n[tc])
				byCase[i][tc] = mean
				vals[i] = append(vals[i], mean)
			}
		}
		for i, sd := range sides {
			side := MetricSide{RunID: sd.run.ID, StepKey: sd.keys[k.key], Count: counts[i], Testcases: len(vals[i])}
			if len(vals[i]) > 0 {
				mean, _ := meanVar(vals[i])
				side.Mean = &mean
			}
			if i > 0 {
				var est *estimate
				side.Delta, est = delta(byCase[0], byCase[i], vals[0], vals[i])
				if side.Delta != nil {
					side.Verdict = VerdictInconclusive
				}
				if est != nil {
					iv := est.interval(0.95)
					side.CI = &iv
					tests = append(tests, test{metric: len(out), run: i, est: *est, base: side0Mean(vals[0]), binary: m.Type == "binary"})
				}
			}
			m.Runs = append(m.Runs, side)
		}
		out = append(out, m)
	}
	familyTest(out, tests)
	return out
}

// test is one delta of the family: where it is and its estimate.
type test struct {
	metric, run int
	est         estimate
	base        float64 // the baseline's mean
	binary      bool
}

func side0Mean(vs []float64) float64 {
	if len(vs) == 0 {
		return 0
	}
	m, _ := meanVar(vs)
	return m
}

// familyTest corrects the family's tests with Holm's method and sets each
// delta's verdict, p-values, adjusted interval and sample size.
func familyTest(out []CompareMetric, tests []test) {
	if len(tests) == 0 {
		return
	}
	ps := make([]float64, len(tests))
	for i, t := range tests {
		ps[i] = t.est.pValue()
	}
	adjusted, levels := holm(ps, Alpha)
	strictest := Alpha / float64(len(tests))
	for i, t := range tests {
		m := &out[t.metric]
		side := &m.Runs[t.run]
		p, adj := ps[i], adjusted[i]
		side.PValue, side.PAdjusted = &p, &adj
		iv := t.est.interval(1 - levels[i])
		side.AdjustedCI = &iv
		side.Verdict = verdictOf(t.est.delta, adj, m.Direction)
		difference := RateDifference
		if !t.binary {
			difference = RelativeDifference * math.Abs(t.base)
		}
		perCase := t.est.n
		if t.est.method == MethodWelch {
			perCase = min(side.Testcases, m.Runs[0].Testcases)
		}
		pw := t.est.power(difference, strictest, perCase)
		side.Power = &pw
	}
}

// tests is the number of deltas with an interval in c: its family.
func (c *Comparison) tests() int {
	n := 0
	for _, m := range c.Metrics {
		for _, r := range m.Runs {
			if r.AdjustedCI != nil {
				n++
			}
		}
	}
	return n
}

// delta is run b's delta to run a and its estimate (see the top of the
// file): paired over shared testcases when there are two or more.
func delta(aCase, bCase map[string]float64, a, b []float64) (*float64, *estimate) {
	var ds []float64
	cases := make([]string, 0, len(aCase))
	for tc := range aCase {
		cases = append(cases, tc)
	}
	sort.Strings(cases) // a stable sum
	for _, tc := range cases {
		if vb, ok := bCase[tc]; ok {
			ds = append(ds, vb-aCase[tc])
		}
	}
	switch {
	case len(ds) >= 2:
		e := pairedEstimate(ds)
		return &e.delta, &e
	case len(a) >= 2 && len(b) >= 2:
		e := welchEstimate(a, b)
		return &e.delta, &e
	case len(a) > 0 && len(b) > 0:
		ma, _ := meanVar(a)
		mb, _ := meanVar(b)
		d := mb - ma
		return &d, nil
	}
	return nil, nil
}
