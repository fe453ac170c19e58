package evalrun

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/assayhq/assay/pkg/evaluation"
)

// item is one source item of a run: a testcase or a trace.
type item struct {
	key        string // the scenario id's name: "<step>:testcase:<id>"
	testcaseID string
	traceID    string
}

// source serves a run job: it mints a scenario per item of the run's
// input steps, writes their input cells (and the human and custom cells
// as pending), and fans them out as process jobs. A queue's scenarios
// were minted by the registry (direct traces or testcases): they are
// fanned out as they are. A live run is sourced by its window jobs.
func (j *jobRun) source(ctx context.Context) error {
	p := j.plan
	if p.run.Flags.IsLive {
		return nil
	}
	var items []item
	sourced := false
	for _, s := range p.inputs {
		if ref, ok := s.References["testset_revision"]; ok && text(ref.ID) != "" {
			rev, err := j.x.Client.TestsetRevision(ctx, j.sc, *ref.ID)
			if err != nil {
				return fmt.Errorf("evalrun: testset revision of step %s: %w", s.Key, err)
			}
			for _, id := range rev.TestcaseIDs {
				items = append(items, item{key: s.Key + ":testcase:" + id, testcaseID: id})
			}
			sourced = true
		}
		if ref, ok := s.References["query_revision"]; ok && text(ref.ID) != "" {
			q, err := j.x.Client.QueryRevision(ctx, j.sc, *ref.ID)
			if err != nil {
				return fmt.Errorf("evalrun: query revision of step %s: %w", s.Key, err)
			}
			roots, err := j.x.Tracing.Traces(ctx, j.sc, q.Filtering, q.Oldest, q.Newest, q.Rate, 0)
			if err != nil {
				return fmt.Errorf("evalrun: traces of step %s: %w", s.Key, err)
			}
			for _, r := range roots {
				items = append(items, item{key: s.Key + ":trace:" + r.TraceID, traceID: r.TraceID})
			}
			sourced = true
		}
	}
	if !sourced {
		// Direct traces or testcases: the registry minted the scenarios.
		scs, err := j.x.Client.Scenarios(ctx, j.sc, j.job.RunID, nil)
		if err != nil {
			return err
		}
		ids := make([]string, len(scs))
		for i, s := range scs {
			ids[i] = s.ID
		}
		if len(ids) == 0 {
			return j.settle(ctx)
		}
		return j.publish(ctx, ids)
	}
	ids, err := j.mint(ctx, items, nil, nil)
	if err != nil {
		return err
	}
	if len(ids) == 0 {
		return j.settle(ctx) // an empty testset is a finished run
	}
	return j.publish(ctx, ids)
}

// window serves a window job of a live run: the query over
// [oldest, newest), one temporal scenario per trace.
func (j *jobRun) window(ctx context.Context) error {
	if j.job.Oldest == nil || j.job.Newest == nil || !j.job.Oldest.Before(*j.job.Newest) {
		return fmt.Errorf("evalrun: window job without a window [oldest, newest)")
	}
	oldest, newest := j.job.Oldest.UTC(), j.job.Newest.UTC()
	// Traces of the window's last moments are still on their way to
	// storage when the window job arrives: wait for them a little.
	if d := time.Until(newest.Add(j.x.WindowGrace)); d > 0 {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(min(d, j.x.WindowGrace)):
		}
	}
	if over, err := j.dailyBudgetReached(ctx); err != nil || over {
		return err // over: this window is not scored (the run's meta.pause says why)
	}
	var items []item
	for _, s := range j.plan.inputs {
		ref, ok := s.References["query_revision"]
		if !ok || text(ref.ID) == "" {
			continue
		}
		q, err := j.x.Client.QueryRevision(ctx, j.sc, *ref.ID)
		if err != nil {
			return fmt.Errorf("evalrun: query revision of step %s: %w", s.Key, err)
		}
		roots, err := j.x.Tracing.Traces(ctx, j.sc, q.Filtering, &oldest, &newest, q.Rate, 0)
		if err != nil {
			return fmt.Errorf("evalrun: traces of step %s: %w", s.Key, err)
		}
		for _, r := range roots {
			items = append(items, item{key: fmt.Sprintf("%s:trace:%s@%d", s.Key, r.TraceID, oldest.Unix()), traceID: r.TraceID})
		}
	}
	minutes := max(1, int(newest.Sub(oldest)/time.Minute))
	ids, err := j.mint(ctx, items, &oldest, &minutes)
	if err != nil {
		return err
	}
	if len(ids) == 0 {
		return j.settle(ctx)
	}
	return j.publish(ctx, ids)
}

// mint creates the items' scenarios (deterministic ids; the registry keeps
// an existing one) and their input cells at every repeat. The human and
// custom annotation cells are not written: a missing cell counts as
// pending, and writing them pending would wipe an annotation made before
// a restart of the run.
func (j *jobRun) mint(ctx context.Context, items []item, ts *time.Time, interval *int) ([]string, error) {
	p := j.plan
	status := evaluation.Pending
	if p.executable() {
		status = evaluation.Running
	}
	seen := map[string]bool{}
	var scenarios []evaluation.Scenario
	var cells []evaluation.Result
	var ids []string
	for _, it := range items {
		id := ScenarioID(j.job.RunID, it.key)
		if seen[id] {
			continue // the same trace matched twice
		}
		seen[id] = true
		ids = append(ids, id)
		scenarios = append(scenarios, evaluation.Scenario{ID: id, RunID: j.job.RunID, Status: status, Timestamp: ts, Interval: interval})
		for r := range p.repeats {
			for _, s := range p.inputs {
				if !strings.HasPrefix(it.key, s.Key+":") {
					continue
				}
				cells = append(cells, evaluation.Result{RunID: j.job.RunID, ScenarioID: id, StepKey: s.Key, RepeatIdx: r,
					Status: evaluation.Success, TestcaseID: optional(it.testcaseID), TraceID: optional(it.traceID), Timestamp: ts, Interval: interval})
			}
		}
	}
	if err := j.x.Client.CreateScenarios(ctx, j.sc, scenarios); err != nil {
		return nil, fmt.Errorf("evalrun: mint scenarios: %w", err)
	}
	if err := j.x.Client.WriteResults(ctx, j.sc, cells); err != nil {
		return nil, fmt.Errorf("evalrun: write input cells: %w", err)
	}
	return ids, nil
}
