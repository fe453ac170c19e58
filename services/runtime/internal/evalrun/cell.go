package evalrun

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"time"

	"github.com/assayhq/assay/pkg/evaluation"
	"github.com/assayhq/assay/pkg/spanmodel"
	"github.com/assayhq/assay/pkg/svcclient"
	"github.com/assayhq/assay/services/runtime/internal/invoke"
)

// outputsWait bounds how long an evaluator waits for the trace of an
// application cell run earlier (by another job) to become readable.
const outputsWait = 30 * time.Second

// run executes one claimed cell and writes its result: the application
// with the scenario's inputs, or an auto evaluator with the inputs, the
// application's outputs and trace (never a sibling evaluator's), linked
// to the evaluated trace.
func (e *cellRun) run(exec, ctx context.Context, c evaluation.Cell, cl *call, src *source) {
	j := e.j
	res := evaluation.Result{RunID: j.job.RunID, ScenarioID: c.ScenarioID, StepKey: c.StepKey, RepeatIdx: c.RepeatIdx,
		Timestamp: src.scenario.Timestamp, Interval: src.scenario.Interval, Meta: j.x.workerMeta()}
	app, err := e.invokeSafely(exec, c, cl, &res)
	switch {
	case exec.Err() != nil && ctx.Err() == nil:
		// Stopped mid-cell: hand it back rather than record a failure
		// the run's owner did not cause.
		e.release(ctx, c, src)
		return
	case err != nil:
		res.Status = evaluation.Failure
		res.Error = errorJSON(err)
	default:
		res.Status = evaluation.Success
	}
	e.budget.add(res.Meta)
	e.out.add(ctx, res, app)
}

// resultBuffer gathers the results of a pass's cells and writes them in
// batches (flushEvery or flushSize, whichever first), so a chunk's cells
// cost a few registry writes instead of one each; the pass ends with a
// flush, so the next pass reads every result. An application cell's
// outputs are kept for its evaluators once its result is written.
type resultBuffer struct {
	e       *cellRun
	wmu     sync.Mutex // one write at a time: the pass's last flush waits for a timed one
	mu      sync.Mutex
	pending []evaluation.Result
	apps    []*appResult
	timer   *time.Timer
}

const (
	flushSize  = 50
	flushEvery = 200 * time.Millisecond
)

func (b *resultBuffer) add(ctx context.Context, res evaluation.Result, app *appResult) {
	b.mu.Lock()
	b.pending = append(b.pending, res)
	b.apps = append(b.apps, app)
	full := len(b.pending) >= flushSize
	if !full && b.timer == nil {
		b.timer = time.AfterFunc(flushEvery, func() { b.flush(ctx) })
	}
	b.mu.Unlock()
	if full {
		b.flush(ctx)
	}
}

// flush writes what is gathered; a failed write is logged (its cells stay
// claimed, so another job takes them once the lease is over).
func (b *resultBuffer) flush(ctx context.Context) {
	b.wmu.Lock()
	defer b.wmu.Unlock()
	b.mu.Lock()
	rs, apps := b.pending, b.apps
	b.pending, b.apps = nil, nil
	if b.timer != nil {
		b.timer.Stop()
		b.timer = nil
	}
	b.mu.Unlock()
	if len(rs) == 0 {
		return
	}
	j := b.e.j
	start := time.Now()
	err := j.x.Client.WriteResults(ctx, j.sc, rs)
	j.x.timed("write", start)
	// Written or not, these cells are no longer renewed: a failed write
	// leaves them to another job once the lease is over.
	for _, r := range rs {
		b.e.unhold(r.Of())
	}
	if err != nil {
		if !errors.Is(err, svcclient.ErrClosed) && j.x.Log != nil {
			j.x.Log.Error("evaluation results not written", "run_id", j.job.RunID, "cells", len(rs), "err", err)
		}
		return
	}
	b.e.mu.Lock()
	for i, r := range rs {
		if apps[i] != nil && r.Status == evaluation.Success {
			b.e.apps[r.Of()] = *apps[i]
		}
	}
	b.e.mu.Unlock()
}

// invokeSafely is invocation with a panic (a handler's bug) turned into
// the cell's failure: the worker and its other cells go on.
func (e *cellRun) invokeSafely(ctx context.Context, c evaluation.Cell, cl *call, res *evaluation.Result) (app *appResult, err error) {
	defer func() {
		if p := recover(); p != nil {
			if e.j.x.Log != nil {
				e.j.x.Log.Error("evaluation cell panicked", "run_id", e.j.job.RunID, "scenario_id", c.ScenarioID,
					"step_key", c.StepKey, "panic", p, "stack", string(debug.Stack()))
			}
			app, err = nil, fmt.Errorf("the cell's execution crashed: %v", p)
		}
	}()
	return e.invocation(ctx, c, cl, res)
}

// cellError is a failed invocation's status.
type cellError struct{ status invoke.RunStatus }

func (e cellError) Error() string { return e.status.Message }

func errorJSON(err error) json.RawMessage {
	m := map[string]any{"message": err.Error()}
	var ce cellError
	if errors.As(err, &ce) {
		m["code"] = ce.status.Code
		if ce.status.Type != "" {
			m["type"] = ce.status.Type
		}
	}
	b, _ := json.Marshal(m)
	return b
}

// call is a claimed cell's request, built before any cell of the pass
// runs so the pass looks its cells up in the cell cache in one batch
// (cellRun.lookup).
type call struct {
	rev   *invoke.Revision
	refs  map[string]invoke.EntityRef
	data  invoke.CallData
	links map[string]invoke.Link
	key   string // the cell cache key; "" when the cell is always invoked
	err   error  // the request could not be built: the cell fails with it

	looked bool            // key was looked up in the pass's batch
	entry  json.RawMessage // what the batch found under key
}

// prepare builds the cell's request: the resolved revision, the
// references, the call's data and links, and its cell cache key.
func (e *cellRun) prepare(ctx context.Context, c evaluation.Cell, step *evaluation.Step, src *source, byCell map[evaluation.Cell]*evaluation.Result) (cl *call) {
	defer func() {
		if p := recover(); p != nil {
			if e.j.x.Log != nil {
				e.j.x.Log.Error("evaluation cell panicked", "run_id", e.j.job.RunID, "scenario_id", c.ScenarioID,
					"step_key", c.StepKey, "panic", p, "stack", string(debug.Stack()))
			}
			cl = &call{err: fmt.Errorf("the cell's execution crashed: %v", p)}
		}
	}()
	rev, refs, data, links, err := e.request(ctx, c, step, src, byCell)
	if err != nil {
		return &call{err: err}
	}
	return &call{rev: rev, refs: refs, data: data, links: links, key: e.j.cellKey(rev, data, links, c.RepeatIdx)}
}

// request resolves the step's revision and builds the call's references,
// data and links.
func (e *cellRun) request(ctx context.Context, c evaluation.Cell, step *evaluation.Step, src *source, byCell map[evaluation.Cell]*evaluation.Result) (*invoke.Revision, map[string]invoke.EntityRef, invoke.CallData, map[string]invoke.Link, error) {
	j := e.j
	fam := family(step)
	if fam == "" {
		return nil, nil, invoke.CallData{}, nil, fmt.Errorf("step %s names no application or evaluator", step.Key)
	}
	famRefs := map[string]invoke.EntityRef{}
	if r, ok := step.References[fam+"_revision"]; ok && text(r.ID) != "" {
		famRefs[fam+"_revision"] = invoke.EntityRef{ID: *r.ID} // pinned: exactly this revision
	} else {
		for _, k := range []string{fam, fam + "_variant", fam + "_revision"} {
			if r, ok := step.References[k]; ok {
				famRefs[k] = entityRef(r)
			}
		}
	}
	rev, err := j.x.Revisions.Revision(ctx, j.sc, invoke.Lookup{Family: fam, References: famRefs, Resolve: true})
	if err != nil {
		return nil, nil, invoke.CallData{}, nil, err
	}
	if rev == nil {
		return nil, nil, invoke.CallData{}, nil, fmt.Errorf("the %s revision of step %s is not in this project", fam, step.Key)
	}

	refs := map[string]invoke.EntityRef{}
	if src.testcaseID != "" {
		refs["testcase"] = invoke.EntityRef{ID: src.testcaseID}
		if src.inputStep != nil {
			for _, k := range []string{"testset", "testset_variant", "testset_revision"} {
				if r, ok := src.inputStep.References[k]; ok {
					refs[k] = entityRef(r)
				}
			}
		}
	}
	for k, v := range famRefs {
		refs[k] = v
	}

	data := invoke.CallData{Inputs: inputsOf(src, rev)}
	if src.testcase != nil {
		data.Testcase = map[string]any{"id": src.testcase.ID, "data": src.testcase.Data}
	}
	var links map[string]invoke.Link
	if step.Type == evaluation.TypeAnnotation {
		// The evaluated trace: the application cell's, else the source
		// trace (query and trace topologies).
		target, err := e.evaluated(ctx, c, src, byCell)
		if err != nil {
			return nil, nil, invoke.CallData{}, nil, err
		}
		if target != nil {
			links = map[string]invoke.Link{"invocation": {TraceID: target.traceID, SpanID: target.spanID}}
			data.Outputs = target.outputs
			data.Trace = map[string]any{"trace_id": target.traceID, "span_id": target.spanID}
		}
	}

	return rev, refs, data, links, nil
}

// invocation looks the prepared call up in the cache when the run is
// cached, then in the cell cache, else invokes it (with the run's
// retries); it fills res's trace and hash and returns what evaluators of
// an application cell read.
func (e *cellRun) invocation(ctx context.Context, c evaluation.Cell, cl *call, res *evaluation.Result) (*appResult, error) {
	j := e.j
	p := j.plan
	if cl.err != nil {
		return nil, cl.err
	}
	rev, refs, data, links := cl.rev, cl.refs, cl.data, cl.links
	if p.run.Flags.IsCached {
		res.HashID = optional(cacheHash(refs, rev, links))
		if res.HashID != nil {
			hit, err := j.x.Tracing.CachedRoot(ctx, j.sc, *res.HashID)
			if err == nil && hit != nil {
				res.TraceID = optional(hit.TraceID)
				return &appResult{traceID: hit.TraceID, spanID: hit.SpanID, outputs: hit.Ag("data", "outputs")}, nil
			}
		}
	}

	// An identical cell done before (data.model_cache not false): its
	// trace and outputs, with no invocation and no new trace.
	ckey := cl.key
	if ckey != "" {
		if a := e.reuse(cl, res); a != nil {
			return a, nil
		}
	}

	call := invoke.Call{Scope: j.sc, TraceID: TraceID(j.job.RunID, c.ScenarioID, c.StepKey, c.RepeatIdx),
		Req: invoke.Request{References: refs, Links: links, Data: data}, Eval: j.evalOptions(c)}
	var out invoke.Outcome
	var calls invoke.ModelCalls // over the retries
	for attempt := 0; ; attempt++ {
		out = j.x.Invoke.Invoke(ctx, call)
		calls.Made += out.ModelCalls.Made
		calls.Cached += out.ModelCalls.Cached
		calls.CostSaved += out.ModelCalls.CostSaved
		calls.Cost += out.ModelCalls.Cost
		if out.Response.Status.Code == 200 || attempt >= p.maxRetries() || ctx.Err() != nil {
			break
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Duration(p.retryDelaySeconds() * float64(time.Second))):
		}
	}
	if out.Traced {
		res.TraceID = optional(out.Response.TraceID)
	}
	res.Meta = j.x.cellMeta(calls)
	if out.Response.Status.Code != 200 {
		return nil, cellError{status: out.Response.Status}
	}
	var outputs any
	if out.Response.Data != nil {
		outputs = out.Response.Data.Outputs
	}
	app := &appResult{traceID: out.Response.TraceID, spanID: out.Response.SpanID, outputs: outputs}
	if ckey != "" && out.Traced {
		e.remember(ctx, ckey, c, app, calls)
	}
	return app, nil
}

// evaluated is the trace an evaluator cell evaluates: the application
// cell it reads (run by this job, or read back from tracing), or the
// scenario's source trace; nil when there is neither.
func (e *cellRun) evaluated(ctx context.Context, c evaluation.Cell, src *source, byCell map[evaluation.Cell]*evaluation.Result) (*appResult, error) {
	p := e.j.plan
	if p.app == nil {
		if src.root == nil {
			return nil, nil
		}
		return &appResult{traceID: src.root.TraceID, spanID: src.root.SpanID, outputs: src.root.Ag("data", "outputs")}, nil
	}
	dep := evaluation.Cell{ScenarioID: c.ScenarioID, StepKey: p.app.Key, RepeatIdx: p.appRepeat(c.RepeatIdx)}
	e.mu.Lock()
	a, ok := e.apps[dep]
	e.mu.Unlock()
	if ok {
		return &a, nil
	}
	r := byCell[dep]
	if r == nil || text(r.TraceID) == "" {
		return nil, fmt.Errorf("the application cell of this evaluator has no trace")
	}
	// Run by an earlier job: its trace may still be on its way to storage.
	deadline := time.Now().Add(outputsWait)
	for {
		root, err := e.j.x.Tracing.RootSpan(ctx, e.j.sc, *r.TraceID)
		if err != nil {
			return nil, err
		}
		if root != nil {
			return &appResult{traceID: root.TraceID, spanID: root.SpanID, outputs: root.Ag("data", "outputs")}, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("the application trace %s is not readable after %s", *r.TraceID, outputsWait)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// inputsOf is the scenario's inputs: the testcase's data
// with its testcase_id, or the source trace's root inputs; kept to the
// properties the revision's inputs schema declares, when it declares any.
func inputsOf(src *source, rev *invoke.Revision) map[string]any {
	in := map[string]any{}
	switch {
	case src.testcase != nil:
		for k, v := range src.testcase.Data {
			in[k] = v
		}
		in["testcase_id"] = src.testcase.ID
	case src.root != nil:
		if m, ok := src.root.Ag("data", "inputs").(map[string]any); ok {
			for k, v := range m {
				in[k] = v
			}
		}
	}
	schema, _ := rev.Data.Schemas["inputs"].(map[string]any)
	props, _ := schema["properties"].(map[string]any)
	if len(props) == 0 {
		return in
	}
	out := map[string]any{}
	for k := range props {
		if v, ok := in[k]; ok {
			out[k] = v
		}
	}
	return out
}

// cacheHash is the hash (spanmodel.CacheHash) the cell's root span will carry: the call's
// references with those the registry resolved over them (as invoke
// records them), and the keyed links.
func cacheHash(refs map[string]invoke.EntityRef, rev *invoke.Revision, links map[string]invoke.Link) string {
	all := map[string]invoke.EntityRef{}
	for k, v := range refs {
		all[k] = v
	}
	for k, v := range rev.References {
		all[k] = v
	}
	var srefs []spanmodel.Reference
	for k, v := range all {
		srefs = append(srefs, spanmodel.Reference{Key: k, ID: v.ID, Slug: v.Slug, Version: v.Version})
	}
	var slinks []spanmodel.Link
	for k, l := range links {
		slinks = append(slinks, spanmodel.Link{Key: k, TraceID: l.TraceID, SpanID: l.SpanID})
	}
	return spanmodel.CacheHash(srefs, slinks)
}

// entityRef is a step reference as the invoke use case reads it.
func entityRef(r evaluation.Ref) invoke.EntityRef {
	return invoke.EntityRef{ID: text(r.ID), Slug: text(r.Slug), Version: text(r.Version)}
}

// text is an optional string of the records, "" when absent.
func text(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// optional is s as an optional string of the records: absent when empty,
// so the worker never writes an empty trace, testcase or hash id.
func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
