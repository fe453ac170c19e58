package registryclient

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/assayhq/assay/pkg/evaluation"
	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/pkg/svcclient"
)

// Bounds of the evaluation records read; a page of records is bounded by
// the page size the client asks for, so maxRecords only stops a runaway
// answer.
const (
	maxRecords = 32 << 20
	// PageSize is how many records one query asks for.
	PageSize = 500
	// maxPages bounds one paged read (100,000 records).
	maxPages = 200
	// WriteBatch is how many records one write carries.
	WriteBatch = 200
)

// ---- runs

// Run is GET /evaluations/runs/{id}; a deleted or unknown run is
// svcclient.ErrNotFound.
func (c *Client) Run(ctx context.Context, sc scope.Scope, id string) (*evaluation.Run, error) {
	var out struct {
		Run *evaluation.Run `json:"run"`
	}
	if err := c.c.Call(ctx, sc, http.MethodGet, "/evaluations/runs/"+url.PathEscape(id), nil, &out, maxRecords); err != nil {
		return nil, err
	}
	if out.Run == nil {
		return nil, fmt.Errorf("%w: run %s", svcclient.ErrNotFound, id)
	}
	return out.Run, nil
}

// Settle recomputes the run's status from its scenarios (internal route).
func (c *Client) Settle(ctx context.Context, sc scope.Scope, runID string) (*evaluation.Run, error) {
	var out struct {
		Run *evaluation.Run `json:"run"`
	}
	err := c.c.Call(ctx, sc, http.MethodPost, "/internal/evaluations/runs/"+url.PathEscape(runID)+"/settle", map[string]any{}, &out, maxRecords)
	return out.Run, err
}

// Fail marks the run failed with msg (internal route).
func (c *Client) Fail(ctx context.Context, sc scope.Scope, runID, msg string) error {
	return c.c.Call(ctx, sc, http.MethodPost, "/internal/evaluations/runs/"+url.PathEscape(runID)+"/fail",
		map[string]any{"error": msg}, nil, maxRecords)
}

// Cancel cancels the run for the worker's reason, kept under meta.stop
// (internal route).
func (c *Client) Cancel(ctx context.Context, sc scope.Scope, runID string, stop any) error {
	return c.c.Call(ctx, sc, http.MethodPost, "/internal/evaluations/runs/"+url.PathEscape(runID)+"/cancel",
		map[string]any{"stop": stop}, nil, maxRecords)
}

// Pause records why a live run scores no window for now under its
// meta.pause (nil clears it); its status and is_active are unchanged.
func (c *Client) Pause(ctx context.Context, sc scope.Scope, runID string, pause any) error {
	return c.c.Call(ctx, sc, http.MethodPost, "/internal/evaluations/runs/"+url.PathEscape(runID)+"/pause",
		map[string]any{"pause": pause}, nil, maxRecords)
}

// FanOut asks the registry to publish process jobs on the EVALS stream
// (internal route, the runtime's token only), in requests of at most
// fanOutBatch jobs; each keeps its id, so a retry is stored once.
func (c *Client) FanOut(ctx context.Context, sc scope.Scope, jobs []evaluation.Job) error {
	for len(jobs) > 0 {
		n := min(len(jobs), fanOutBatch)
		if err := c.c.Call(ctx, sc, http.MethodPost, "/internal/evaluations/jobs", map[string]any{"jobs": jobs[:n]}, nil, maxRecords); err != nil {
			return err
		}
		jobs = jobs[n:]
	}
	return nil
}

// fanOutBatch is the most jobs one fan-out request carries (the
// registry's evaluations.MaxFanOut).
const fanOutBatch = 1000

// ---- scenarios

// CreateScenarios creates scenarios with the ids they carry, in batches;
// the registry answers an existing id of the same run with the stored
// scenario, so minting again after a crash is harmless.
func (c *Client) CreateScenarios(ctx context.Context, sc scope.Scope, scenarios []evaluation.Scenario) error {
	for len(scenarios) > 0 {
		n := min(len(scenarios), WriteBatch)
		if err := c.c.Call(ctx, sc, http.MethodPost, "/evaluations/scenarios/", map[string]any{"scenarios": scenarios[:n]}, nil, maxRecords); err != nil {
			return err
		}
		scenarios = scenarios[n:]
	}
	return nil
}

// Scenarios lists the run's scenarios (only ids, when given), every page.
func (c *Client) Scenarios(ctx context.Context, sc scope.Scope, runID string, ids []string) ([]evaluation.Scenario, error) {
	filter := map[string]any{"run_id": runID}
	if len(ids) > 0 {
		filter["ids"] = ids
	}
	var all []evaluation.Scenario
	err := c.pages(ctx, sc, "/evaluations/scenarios/query", "scenario", filter, func(raw json.RawMessage) error {
		var out struct {
			Scenarios []evaluation.Scenario `json:"scenarios"`
		}
		err := json.Unmarshal(raw, &out)
		all = append(all, out.Scenarios...)
		return err
	})
	return all, err
}

// pages runs a registry query page after page, each answer's windowing
// being the next request's, until an answer has none (the last page);
// each page is handed to read.
func (c *Client) pages(ctx context.Context, sc scope.Scope, path, key string, filter map[string]any,
	read func(json.RawMessage) error) error {
	var win any = map[string]any{"limit": PageSize}
	for range maxPages {
		var raw json.RawMessage
		if err := c.c.Call(ctx, sc, http.MethodPost, path, map[string]any{key: filter, "windowing": win}, &raw, maxRecords); err != nil {
			return err
		}
		if err := read(raw); err != nil {
			return fmt.Errorf("%s: unreadable answer: %w", path, err)
		}
		var next struct {
			Windowing json.RawMessage `json:"windowing"`
		}
		_ = json.Unmarshal(raw, &next)
		if len(next.Windowing) == 0 || string(next.Windowing) == "null" {
			return nil
		}
		win = next.Windowing
	}
	return fmt.Errorf("%s: more than %d pages", path, maxPages)
}

// ---- results

// ResultFilter narrows a results query.
type ResultFilter struct {
	RunID       string
	ScenarioIDs []string
	StepKeys    []string
	// From and Before keep the results whose timestamp is in
	// [From, Before) (the registry's timestamp_from and timestamp_before);
	// zero does not bound.
	From, Before time.Time
}

// Results lists the results matching f, every page.
func (c *Client) Results(ctx context.Context, sc scope.Scope, f ResultFilter) ([]evaluation.Result, error) {
	filter := map[string]any{"run_id": f.RunID}
	if len(f.ScenarioIDs) > 0 {
		filter["scenario_ids"] = f.ScenarioIDs
	}
	if len(f.StepKeys) > 0 {
		filter["step_keys"] = f.StepKeys
	}
	if !f.From.IsZero() {
		filter["timestamp_from"] = f.From
	}
	if !f.Before.IsZero() {
		filter["timestamp_before"] = f.Before
	}
	var all []evaluation.Result
	err := c.pages(ctx, sc, "/evaluations/results/query", "result", filter, func(raw json.RawMessage) error {
		var out struct {
			Results []evaluation.Result `json:"results"`
		}
		err := json.Unmarshal(raw, &out)
		all = append(all, out.Results...)
		return err
	})
	return all, err
}

// WriteResults upserts results on their cells, in batches.
func (c *Client) WriteResults(ctx context.Context, sc scope.Scope, results []evaluation.Result) error {
	for len(results) > 0 {
		n := min(len(results), WriteBatch)
		if err := c.c.Call(ctx, sc, http.MethodPost, "/evaluations/results/", map[string]any{"results": results[:n]}, nil, maxRecords); err != nil {
			return err
		}
		results = results[n:]
	}
	return nil
}

// Claim marks the listed cells running for this worker and returns the
// ones it got: cells another worker holds, or that are done, are left out.
func (c *Client) Claim(ctx context.Context, sc scope.Scope, cl Claim) ([]evaluation.Result, error) {
	var out struct {
		Results []evaluation.Result `json:"results"`
	}
	err := c.c.Call(ctx, sc, http.MethodPost, "/internal/evaluations/results/claim", cl, &out, maxRecords)
	return out.Results, err
}

// Renew extends this worker's claims on the listed cells (those it still
// holds) by the claim's lease and returns how many it extended.
func (c *Client) Renew(ctx context.Context, sc scope.Scope, cl Claim) (int, error) {
	var out struct {
		Count int `json:"count"`
	}
	err := c.c.Call(ctx, sc, http.MethodPost, "/internal/evaluations/results/renew", cl, &out, maxRecords)
	return out.Count, err
}

// WriteMetrics upserts metric records.
func (c *Client) WriteMetrics(ctx context.Context, sc scope.Scope, metrics []evaluation.Metric) error {
	for len(metrics) > 0 {
		n := min(len(metrics), WriteBatch)
		if err := c.c.Call(ctx, sc, http.MethodPost, "/evaluations/metrics/", map[string]any{"metrics": metrics[:n]}, nil, maxRecords); err != nil {
			return err
		}
		metrics = metrics[n:]
	}
	return nil
}

// ---- pinned sources

// TestsetRevision retrieves a testset revision by id with its testcase
// ids (not the testcases: a process job reads only its chunk's).
func (c *Client) TestsetRevision(ctx context.Context, sc scope.Scope, id string) (*TestsetRevision, error) {
	var out struct {
		Rev *struct {
			ID   string `json:"id"`
			Data struct {
				TestcaseIDs []string `json:"testcase_ids"`
			} `json:"data"`
		} `json:"testset_revision"`
	}
	body := map[string]any{"testset_revision_ref": map[string]any{"id": id}, "include_testcases": false, "include_testcase_ids": true}
	if err := c.c.Call(ctx, sc, http.MethodPost, "/testsets/revisions/retrieve", body, &out, maxRecords); err != nil {
		return nil, err
	}
	if out.Rev == nil {
		return nil, fmt.Errorf("%w: testset revision %s", svcclient.ErrNotFound, id)
	}
	return &TestsetRevision{ID: out.Rev.ID, TestcaseIDs: out.Rev.Data.TestcaseIDs}, nil
}

// Testcases reads testcases by id, in batches.
func (c *Client) Testcases(ctx context.Context, sc scope.Scope, ids []string) ([]Testcase, error) {
	var all []Testcase
	for len(ids) > 0 {
		n := min(len(ids), PageSize)
		var out struct {
			Testcases []Testcase `json:"testcases"`
		}
		if err := c.c.Call(ctx, sc, http.MethodPost, "/testcases/query", map[string]any{"testcase_ids": ids[:n]}, &out, maxRecords); err != nil {
			return nil, err
		}
		all = append(all, out.Testcases...)
		ids = ids[n:]
	}
	return all, nil
}

// QueryRevision retrieves a saved query revision by id.
func (c *Client) QueryRevision(ctx context.Context, sc scope.Scope, id string) (*QueryRevision, error) {
	var out struct {
		Rev *struct {
			ID   string `json:"id"`
			Data struct {
				Filtering json.RawMessage `json:"filtering"`
				Windowing *struct {
					Oldest *time.Time `json:"oldest"`
					Newest *time.Time `json:"newest"`
					Rate   *float64   `json:"rate"`
				} `json:"windowing"`
			} `json:"data"`
		} `json:"query_revision"`
	}
	body := map[string]any{"query_revision_ref": map[string]any{"id": id}}
	if err := c.c.Call(ctx, sc, http.MethodPost, "/queries/revisions/retrieve", body, &out, maxRecords); err != nil {
		return nil, err
	}
	if out.Rev == nil {
		return nil, fmt.Errorf("%w: query revision %s", svcclient.ErrNotFound, id)
	}
	q := &QueryRevision{ID: out.Rev.ID, Filtering: out.Rev.Data.Filtering}
	if w := out.Rev.Data.Windowing; w != nil {
		q.Oldest, q.Newest, q.Rate = w.Oldest, w.Newest, w.Rate
	}
	return q, nil
}
