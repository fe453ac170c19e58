package evalrun

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/assayhq/assay/pkg/evaluation"
	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/services/runtime/internal/evalmetrics"
	"github.com/assayhq/assay/services/runtime/internal/registryclient"
)

// RunMetrics computes a run's metrics with evalmetrics over its result
// cells' traces and stores them: the global record over the whole run, one
// record per scenario (the scenarios given, or all), and for a live run
// one per time bucket.
type RunMetrics struct {
	Client   *registryclient.Client
	Computer *evalmetrics.Computer
}

// Refresh implements Metrics.
func (m *RunMetrics) Refresh(ctx context.Context, sc scope.Scope, run *evaluation.Run, scenarioIDs []string) error {
	results, err := m.Client.Results(ctx, sc, registryclient.ResultFilter{RunID: run.ID})
	if err != nil {
		return err
	}
	want := map[string]bool{}
	for _, id := range scenarioIDs {
		want[id] = true
	}
	var cells []evalmetrics.Cell
	var steps []evalmetrics.Step
	for _, s := range run.Data.Steps {
		st := evalmetrics.Step{Key: s.Key, Type: s.Type, Origin: s.Origin}
		if s.Schemas != nil {
			st.Outputs = s.Schemas.Outputs
		}
		steps = append(steps, st)
	}
	// Cells under step keys the run does not declare (the compatible web
	// app links its annotations as "<invocation>.<evaluator slug>") are
	// human annotations: measured like any other, their schema inferred.
	declared := map[string]bool{}
	for _, s := range steps {
		declared[s.Key] = true
	}
	for _, r := range results {
		if !declared[r.StepKey] && text(r.TraceID) != "" {
			declared[r.StepKey] = true
			steps = append(steps, evalmetrics.Step{Key: r.StepKey, Type: evaluation.TypeAnnotation, Origin: evaluation.OriginHuman})
		}
	}
	withCells := map[string]bool{} // scenarios with any result, traced or not
	for _, r := range results {
		withCells[r.ScenarioID] = true
		if text(r.TraceID) == "" || (r.Status != evaluation.Success && r.Status != evaluation.Failure) {
			continue // not run (yet), or refused before anything ran
		}
		cells = append(cells, evalmetrics.Cell{ScenarioID: r.ScenarioID, StepKey: r.StepKey, TraceID: *r.TraceID, Timestamp: r.Timestamp,
			Earlier: reused(r.Meta)})
	}
	levels := evalmetrics.Global | evalmetrics.PerScenario
	if run.Flags.IsLive {
		levels |= evalmetrics.PerTimestamp
	}
	res, err := m.Computer.Compute(ctx, sc, steps, cells, levels)
	if err != nil {
		return err
	}
	// A schemaless evaluator gets a schema from its traces, for these
	// metrics (the run's own steps are the registry's to rewrite). Compute
	// waited for every trace, so the inference reads them all.
	var inferred []evalmetrics.Step
	for _, st := range steps {
		if st.Type == evaluation.TypeAnnotation && len(st.Outputs) == 0 && m.Computer.Spans != nil {
			if schema, err := m.Computer.Infer(ctx, sc, st, cells); err == nil && schema != nil {
				st.Outputs = schema
				inferred = append(inferred, st)
			}
		}
	}
	if len(inferred) > 0 {
		more, err := m.Computer.Compute(ctx, sc, inferred, cells, levels)
		if err != nil {
			return err
		}
		merge(&res, more)
	}
	if mc, ok := modelCallTotals(results); ok {
		if res.Global == nil {
			res.Global = evalmetrics.Data{}
		}
		res.Global[ModelCallsKey] = mc
	}
	var out []evaluation.Metric
	data := func(d evalmetrics.Data) json.RawMessage {
		b, _ := json.Marshal(d)
		return b
	}
	out = append(out, evaluation.Metric{RunID: run.ID, Status: evaluation.Success, Data: data(res.Global)})
	for id, d := range res.Scenarios {
		if len(want) > 0 && !want[id] {
			continue
		}
		out = append(out, evaluation.Metric{RunID: run.ID, ScenarioID: &id, Status: evaluation.Success, Data: data(d)})
	}
	// A scenario asked for whose cells have no trace (inputs only, or
	// every invocation refused) still gets its record, with no data: a
	// client that refreshes a scenario reads its record back at once.
	for id := range want {
		if _, done := res.Scenarios[id]; !done && withCells[id] {
			out = append(out, evaluation.Metric{RunID: run.ID, ScenarioID: &id, Status: evaluation.Success, Data: json.RawMessage(`{}`)})
		}
	}
	for ts, d := range res.Temporal {
		ts := ts
		one := 1
		out = append(out, evaluation.Metric{RunID: run.ID, Timestamp: &ts, Interval: &one, Status: evaluation.Success, Data: data(d)})
	}
	if err := m.Client.WriteMetrics(ctx, sc, out); err != nil {
		return fmt.Errorf("evalrun: store metrics: %w", err)
	}
	return nil
}

// merge puts more's steps over res's.
func merge(res *evalmetrics.Result, more evalmetrics.Result) {
	into := func(dst, src evalmetrics.Data) {
		for k, v := range src {
			dst[k] = v
		}
	}
	if res.Global != nil {
		into(res.Global, more.Global)
	}
	for id, d := range more.Scenarios {
		if res.Scenarios[id] == nil {
			if res.Scenarios == nil {
				res.Scenarios = map[string]evalmetrics.Data{}
			}
			res.Scenarios[id] = evalmetrics.Data{}
		}
		into(res.Scenarios[id], d)
	}
	for ts, d := range more.Temporal {
		if res.Temporal[ts] == nil {
			if res.Temporal == nil {
				res.Temporal = map[time.Time]evalmetrics.Data{}
			}
			res.Temporal[ts] = evalmetrics.Data{}
		}
		into(res.Temporal[ts], d)
	}
}

// reused says whether a result's meta marks a reused cell (meta.cache
// "cell"): its trace is an earlier run's.
func reused(meta json.RawMessage) bool {
	var m struct {
		Cache string `json:"cache"`
	}
	return json.Unmarshal(meta, &m) == nil && m.Cache == CellCacheMeta
}
