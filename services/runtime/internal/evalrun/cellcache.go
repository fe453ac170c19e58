package evalrun

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"github.com/assayhq/assay/pkg/evaluation"
	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/services/runtime/internal/invoke"
)

// CellCache keeps, per project and for a time, what a cell that succeeded
// gave (its trace and outputs) under a key of everything it was invoked
// with, so a later run's identical cell points at that trace instead of
// invoking again and writing another (docs/decisions/0011-cell-reuse.md).
// callcache.Cells implements it over the registry's model-call cache.
type CellCache interface {
	// LookupCells returns the entries stored under keys in sc's project,
	// in one call however many keys (a pass of a job names its cells' at
	// once); a key with no live entry is absent from the map.
	LookupCells(ctx context.Context, sc scope.Scope, keys []string) (map[string]json.RawMessage, error)
	// StoreCell stores entry under key in sc's project, replacing any.
	StoreCell(ctx context.Context, sc scope.Scope, key string, entry json.RawMessage) error
}

// CellCacheMeta is meta.cache of a result that reuses an earlier cell.
const CellCacheMeta = "cell"

// cellEntry is what a cell cache entry holds: the earlier cell's trace,
// its outputs (what its evaluators read) and its model calls (what reusing
// it saves).
type cellEntry struct {
	TraceID string            `json:"trace_id"`
	SpanID  string            `json:"span_id"`
	Outputs any               `json:"outputs,omitempty"`
	Calls   invoke.ModelCalls `json:"model_calls"`
	Run     string            `json:"run_id"`
	Cell    evaluation.Cell   `json:"cell"`
}

// cellKey is the cell cache key of a cell about to be invoked: SHA-256
// over a version tag, the resolved revision (its id and data: handler,
// parameters), the call's inputs, testcase and evaluated outputs, the
// trace it links to (an evaluator is reused only over the same evaluated
// trace, so its link stays true) and the repeat index (repeats sample
// again). The step key and run are left out: they name the cell, not
// what it computes. "" when the cell must be invoked: the run or the
// revision opts out of caching (data.model_cache false, as the
// model-call cache), or the revision's handler is a hook or at a URL
// (not a handler URI), whose answer is another service's and may change
// under the same revision.
func (j *jobRun) cellKey(rev *invoke.Revision, data invoke.CallData, links map[string]invoke.Link, repeat int) string {
	if j.x.Cells == nil {
		return ""
	}
	if mc := j.plan.run.Data.ModelCache; mc != nil && !*mc {
		return ""
	}
	if rev == nil || rev.ID == "" || (rev.Data.ModelCache != nil && !*rev.Data.ModelCache) {
		return ""
	}
	// The handler the invocation would run (invoke.Service): a URI at a
	// URL, or the hook handler, is another service's answer.
	if h, err := invoke.ParseURI(rev.Data.URI); err != nil || h.Key == "hook" {
		return ""
	}
	b, err := json.Marshal(struct {
		V        string                 `json:"v"`
		Revision string                 `json:"revision"`
		Data     invoke.RevisionData    `json:"data"`
		Call     invoke.CallData        `json:"call"`
		Links    map[string]invoke.Link `json:"links,omitempty"`
		Repeat   int                    `json:"repeat"`
	}{"evaluation-cell/1", rev.ID, rev.Data, data, links, repeat})
	if err != nil {
		return ""
	}
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// lookup reads the cell cache entries of the pass's prepared calls in
// one batch: one registry call for the pass rather than one per cell,
// which took most of a re-run's cells' time (docs/benchmarks.md,
// "Re-run"). A lookup that fails leaves every call a miss: its cell is
// invoked.
func (e *cellRun) lookup(ctx context.Context, calls []*call) {
	j := e.j
	var keys []string
	for _, cl := range calls {
		if cl != nil && cl.err == nil && cl.key != "" {
			keys = append(keys, cl.key)
		}
	}
	if len(keys) == 0 {
		return
	}
	found, err := j.x.Cells.LookupCells(ctx, j.sc, keys)
	if err != nil && j.x.Log != nil {
		j.x.Log.Warn("cell cache not read; invoking the cells", "run_id", j.job.RunID, "cells", len(keys), "err", err)
	}
	for _, cl := range calls {
		if cl != nil && cl.err == nil && cl.key != "" {
			cl.looked, cl.entry = true, found[cl.key]
		}
	}
}

// reuse fills res as the earlier cell's when the pass's lookup found
// cl's key (its trace, meta.cache "cell", its model calls counted as
// cached) and returns what evaluators read of it.
func (e *cellRun) reuse(cl *call, res *evaluation.Result) *appResult {
	j := e.j
	if !cl.looked || len(cl.entry) == 0 {
		return nil
	}
	var ent cellEntry
	if json.Unmarshal(cl.entry, &ent) != nil || ent.TraceID == "" {
		return nil
	}
	res.TraceID = optional(ent.TraceID)
	saved := invoke.ModelCalls{Cached: ent.Calls.Made + ent.Calls.Cached, CostSaved: ent.Calls.Cost + ent.Calls.CostSaved}
	m := map[string]any{"worker": j.x.Worker, "cache": CellCacheMeta,
		"reused": map[string]any{"run_id": ent.Run, "scenario_id": ent.Cell.ScenarioID, "step_key": ent.Cell.StepKey, "repeat_idx": ent.Cell.RepeatIdx}}
	if saved.Cached > 0 {
		m["model_calls"] = saved
	}
	res.Meta, _ = json.Marshal(m)
	return &appResult{traceID: ent.TraceID, spanID: ent.SpanID, outputs: ent.Outputs}
}

// remember stores a cell that succeeded under key, for later runs.
func (e *cellRun) remember(ctx context.Context, key string, c evaluation.Cell, app *appResult, calls invoke.ModelCalls) {
	j := e.j
	b, err := json.Marshal(cellEntry{TraceID: app.traceID, SpanID: app.spanID, Outputs: app.outputs, Calls: calls, Run: j.job.RunID, Cell: c})
	if err != nil {
		return
	}
	if err := j.x.Cells.StoreCell(ctx, j.sc, key, b); err != nil && j.x.Log != nil {
		j.x.Log.Warn("cell not cached", "run_id", j.job.RunID, "err", err)
	}
}
