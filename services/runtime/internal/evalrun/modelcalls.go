package evalrun

import (
	"encoding/json"
	"time"

	"github.com/assayhq/assay/pkg/evaluation"
	"github.com/assayhq/assay/services/runtime/internal/invoke"
)

// evalOptions are cell c's invocation options: its model calls are
// answered from the model-call cache unless the run opts out
// (data.model_cache false; a revision opts out in its own data), the
// repeat index keeps the repeats of a cell sampling the model, and waits
// on a provider's rate limit reach the run's progress.
func (j *jobRun) evalOptions(c evaluation.Cell) *invoke.EvalOptions {
	mc := j.plan.run.Data.ModelCache
	o := &invoke.EvalOptions{Cache: mc == nil || *mc, Repeat: c.RepeatIdx}
	if w := j.x.Waits; w != nil {
		sc, run := j.sc, j.job.RunID
		o.OnWait = func(provider string, until time.Time) { w.Report(sc, run, provider, until) }
	}
	return o
}

// cellMeta is a result's meta: the worker that ran it and, when the cell
// called a model, its model calls (made, cached, cost_saved), which the
// run's metrics add up (RunMetrics).
func (x *Executor) cellMeta(calls invoke.ModelCalls) json.RawMessage {
	m := map[string]any{"worker": x.Worker}
	if calls.Made > 0 || calls.Cached > 0 {
		m["model_calls"] = calls
	}
	b, _ := json.Marshal(m)
	return b
}

// ModelCallsKey is the entry of a run's global metrics that counts its
// cells' model calls: {made: {type: count, count}, cached: {type: count,
// count}, cost_saved: {type: cost, sum}, cost: {type: cost, sum}} (USD). Its statistics are of
// types no comparison or export reads as a score.
const ModelCallsKey = "model_calls"

// modelCallTotals adds up the model calls the results' meta records;
// false when no cell called a model.
func modelCallTotals(results []evaluation.Result) (map[string]any, bool) {
	var sum invoke.ModelCalls
	for _, r := range results {
		if len(r.Meta) == 0 {
			continue
		}
		var m struct {
			Calls *invoke.ModelCalls `json:"model_calls"`
		}
		if json.Unmarshal(r.Meta, &m) != nil || m.Calls == nil {
			continue
		}
		sum.Made += m.Calls.Made
		sum.Cached += m.Calls.Cached
		sum.CostSaved += m.Calls.CostSaved
		sum.Cost += m.Calls.Cost
	}
	if sum.Made == 0 && sum.Cached == 0 {
		return nil, false
	}
	return map[string]any{
		"made":       map[string]any{"type": "count", "count": sum.Made},
		"cached":     map[string]any{"type": "count", "count": sum.Cached},
		"cost_saved": map[string]any{"type": "cost", "sum": sum.CostSaved},
		"cost":       map[string]any{"type": "cost", "sum": sum.Cost},
	}, true
}
