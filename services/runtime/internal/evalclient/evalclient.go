// Package evalclient is the evaluation worker's typed client of the
// registry's evaluation records (runs, scenarios, results, metrics, and
// the internal claim, settle and fail routes), of the pinned testset and
// query revisions a run reads, and of the tracing API (a saved query's
// filter over a window, a cached trace by hash, an app trace's root span).
// Every call carries the internal token with the job's scope (project and
// user), every answer is bounded, and a refusal is an error that says
// which route refused what.
package evalclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/assayhq/assay/pkg/evaljob"
	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/pkg/svcclient"
)

// Bounds of the answers read; a page of records or spans is bounded by
// the page size the client asks for, so these only stop a runaway answer.
const (
	maxRecords = 32 << 20
	maxSpans   = 64 << 20
	// PageSize is how many records or traces one query asks for.
	PageSize = 500
	// maxPages bounds one paged read (MaxItems records).
	maxPages = 200
	// WriteBatch is how many records one write carries.
	WriteBatch = 200
	// MaxItems bounds what one query source yields for one run: a saved
	// query matching more traces is cut there (the run says so in its
	// log), so a broad filter cannot make a run without end.
	MaxItems = 100000
)

// ErrNotFound is a record, revision or trace that does not exist in the
// job's project.
var ErrNotFound = errors.New("evalclient: not found")

// ErrClosed is the registry's 409 for a write to a closed run.
var ErrClosed = errors.New("evalclient: the run is closed")

// StatusError is an answer the worker cannot use: the route, the status
// and the start of the body.
type StatusError struct {
	Route  string
	Status int
	Body   string
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("evalclient: %s answered %d: %s", e.Route, e.Status, e.Body)
}

// Transient says whether err may pass on a retry: the service was
// unreachable or answered 5xx or 429.
func Transient(err error) bool {
	var se *StatusError
	if errors.As(err, &se) {
		return se.Status >= 500 || se.Status == http.StatusTooManyRequests
	}
	return err != nil && !errors.Is(err, ErrNotFound) && !errors.Is(err, ErrClosed)
}

// Client calls one registry and one tracing service.
type Client struct {
	reg, tr *svcclient.Client
}

// New returns a client of the registry and tracing services at their
// internal addresses, each called with the token of the runtime's pair with
// it; timeout bounds each call.
func New(registryURL, registryToken, tracingURL, tracingToken string, timeout time.Duration) *Client {
	return &Client{reg: svcclient.New(registryURL, registryToken, timeout), tr: svcclient.New(tracingURL, tracingToken, timeout)}
}

// call posts body (GET when nil and get is set) and decodes the answer
// into out; 404 is ErrNotFound, a 409 naming a closed run ErrClosed.
func call(ctx context.Context, c *svcclient.Client, sc scope.Scope, method, path string, body, out any, limit int64) error {
	var (
		status int
		answer []byte
		err    error
	)
	if method == http.MethodGet {
		status, answer, err = c.Get(ctx, sc, path, limit)
	} else {
		status, answer, err = c.Post(ctx, sc, path, body, limit)
	}
	if err != nil {
		return fmt.Errorf("evalclient: %s %s: %w", method, path, err)
	}
	switch {
	case status == http.StatusNotFound:
		return fmt.Errorf("%w: %s %s", ErrNotFound, method, path)
	case status == http.StatusConflict && strings.Contains(string(answer), "closed"):
		return fmt.Errorf("%w: %s %s", ErrClosed, method, path)
	case status != http.StatusOK:
		b := string(answer)
		if len(b) > 300 {
			b = b[:300]
		}
		return &StatusError{Route: method + " " + path, Status: status, Body: b}
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(answer, out); err != nil {
		return fmt.Errorf("evalclient: %s %s: unreadable answer (%d bytes, limit %d): %w", method, path, len(answer), limit, err)
	}
	return nil
}

// ---- runs

// Run is GET /evaluations/runs/{id}; a deleted or unknown run is ErrNotFound.
func (c *Client) Run(ctx context.Context, sc scope.Scope, id string) (*Run, error) {
	var out struct {
		Run *Run `json:"run"`
	}
	if err := call(ctx, c.reg, sc, http.MethodGet, "/evaluations/runs/"+url.PathEscape(id), nil, &out, maxRecords); err != nil {
		return nil, err
	}
	if out.Run == nil {
		return nil, fmt.Errorf("%w: run %s", ErrNotFound, id)
	}
	return out.Run, nil
}

// Settle recomputes the run's status from its scenarios (internal route).
func (c *Client) Settle(ctx context.Context, sc scope.Scope, runID string) (*Run, error) {
	var out struct {
		Run *Run `json:"run"`
	}
	err := call(ctx, c.reg, sc, http.MethodPost, "/internal/evaluations/runs/"+url.PathEscape(runID)+"/settle", map[string]any{}, &out, maxRecords)
	return out.Run, err
}

// Fail marks the run failed with msg (internal route).
func (c *Client) Fail(ctx context.Context, sc scope.Scope, runID, msg string) error {
	return call(ctx, c.reg, sc, http.MethodPost, "/internal/evaluations/runs/"+url.PathEscape(runID)+"/fail",
		map[string]any{"error": msg}, nil, maxRecords)
}

// Cancel cancels the run for the worker's reason, kept under meta.stop
// (internal route).
func (c *Client) Cancel(ctx context.Context, sc scope.Scope, runID string, stop any) error {
	return call(ctx, c.reg, sc, http.MethodPost, "/internal/evaluations/runs/"+url.PathEscape(runID)+"/cancel",
		map[string]any{"stop": stop}, nil, maxRecords)
}

// FanOut asks the registry to publish process jobs on the EVALS stream
// (internal route, the runtime's token only), in requests of at most
// fanOutBatch jobs; each keeps its id, so a retry is stored once.
func (c *Client) FanOut(ctx context.Context, sc scope.Scope, jobs []evaljob.Job) error {
	for len(jobs) > 0 {
		n := min(len(jobs), fanOutBatch)
		if err := call(ctx, c.reg, sc, http.MethodPost, "/internal/evaluations/jobs", map[string]any{"jobs": jobs[:n]}, nil, maxRecords); err != nil {
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
func (c *Client) CreateScenarios(ctx context.Context, sc scope.Scope, scenarios []Scenario) error {
	for len(scenarios) > 0 {
		n := min(len(scenarios), WriteBatch)
		if err := call(ctx, c.reg, sc, http.MethodPost, "/evaluations/scenarios/", map[string]any{"scenarios": scenarios[:n]}, nil, maxRecords); err != nil {
			return err
		}
		scenarios = scenarios[n:]
	}
	return nil
}

// Scenarios lists the run's scenarios (only ids, when given), every page.
func (c *Client) Scenarios(ctx context.Context, sc scope.Scope, runID string, ids []string) ([]Scenario, error) {
	filter := map[string]any{"run_id": runID}
	if len(ids) > 0 {
		filter["ids"] = ids
	}
	var all []Scenario
	err := pages(ctx, c.reg, sc, "/evaluations/scenarios/query", "scenario", filter, func(raw json.RawMessage) error {
		var out struct {
			Scenarios []Scenario `json:"scenarios"`
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
func pages(ctx context.Context, c *svcclient.Client, sc scope.Scope, path, key string, filter map[string]any,
	read func(json.RawMessage) error) error {
	var win any = map[string]any{"limit": PageSize}
	for range maxPages {
		var raw json.RawMessage
		if err := call(ctx, c, sc, http.MethodPost, path, map[string]any{key: filter, "windowing": win}, &raw, maxRecords); err != nil {
			return err
		}
		if err := read(raw); err != nil {
			return fmt.Errorf("evalclient: %s: unreadable answer: %w", path, err)
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
	return fmt.Errorf("evalclient: %s: more than %d pages", path, maxPages)
}

// ---- results

// ResultFilter narrows a results query.
type ResultFilter struct {
	RunID       string
	ScenarioIDs []string
	StepKeys    []string
}

// Results lists the results matching f, every page.
func (c *Client) Results(ctx context.Context, sc scope.Scope, f ResultFilter) ([]Result, error) {
	filter := map[string]any{"run_id": f.RunID}
	if len(f.ScenarioIDs) > 0 {
		filter["scenario_ids"] = f.ScenarioIDs
	}
	if len(f.StepKeys) > 0 {
		filter["step_keys"] = f.StepKeys
	}
	var all []Result
	err := pages(ctx, c.reg, sc, "/evaluations/results/query", "result", filter, func(raw json.RawMessage) error {
		var out struct {
			Results []Result `json:"results"`
		}
		err := json.Unmarshal(raw, &out)
		all = append(all, out.Results...)
		return err
	})
	return all, err
}

// WriteResults upserts results on their cells, in batches.
func (c *Client) WriteResults(ctx context.Context, sc scope.Scope, results []Result) error {
	for len(results) > 0 {
		n := min(len(results), WriteBatch)
		if err := call(ctx, c.reg, sc, http.MethodPost, "/evaluations/results/", map[string]any{"results": results[:n]}, nil, maxRecords); err != nil {
			return err
		}
		results = results[n:]
	}
	return nil
}

// Claim marks the listed cells running for this worker and returns the
// ones it got: cells another worker holds, or that are done, are left out.
func (c *Client) Claim(ctx context.Context, sc scope.Scope, cl Claim) ([]Result, error) {
	var out struct {
		Results []Result `json:"results"`
	}
	err := call(ctx, c.reg, sc, http.MethodPost, "/internal/evaluations/results/claim", cl, &out, maxRecords)
	return out.Results, err
}

// Renew extends this worker's claims on the listed cells (those it still
// holds) by the claim's lease and returns how many it extended.
func (c *Client) Renew(ctx context.Context, sc scope.Scope, cl Claim) (int, error) {
	var out struct {
		Count int `json:"count"`
	}
	err := call(ctx, c.reg, sc, http.MethodPost, "/internal/evaluations/results/renew", cl, &out, maxRecords)
	return out.Count, err
}

// WriteMetrics upserts metric records.
func (c *Client) WriteMetrics(ctx context.Context, sc scope.Scope, metrics []Metric) error {
	for len(metrics) > 0 {
		n := min(len(metrics), WriteBatch)
		if err := call(ctx, c.reg, sc, http.MethodPost, "/evaluations/metrics/", map[string]any{"metrics": metrics[:n]}, nil, maxRecords); err != nil {
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
	if err := call(ctx, c.reg, sc, http.MethodPost, "/testsets/revisions/retrieve", body, &out, maxRecords); err != nil {
		return nil, err
	}
	if out.Rev == nil {
		return nil, fmt.Errorf("%w: testset revision %s", ErrNotFound, id)
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
		if err := call(ctx, c.reg, sc, http.MethodPost, "/testcases/query", map[string]any{"testcase_ids": ids[:n]}, &out, maxRecords); err != nil {
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
	if err := call(ctx, c.reg, sc, http.MethodPost, "/queries/revisions/retrieve", body, &out, maxRecords); err != nil {
		return nil, err
	}
	if out.Rev == nil {
		return nil, fmt.Errorf("%w: query revision %s", ErrNotFound, id)
	}
	q := &QueryRevision{ID: out.Rev.ID, Filtering: out.Rev.Data.Filtering}
	if w := out.Rev.Data.Windowing; w != nil {
		q.Oldest, q.Newest, q.Rate = w.Oldest, w.Newest, w.Rate
	}
	return q, nil
}

// ---- tracing

// Traces runs filtering (a saved query's filter; nil matches every
// trace) over [oldest, newest) and returns the root span of each matching
// trace, at most max (MaxItems when 0), page after page. A rate keeps
// that share of the traces (tracing's windowing.rate: by trace id, so a
// trace is kept or not whichever window reads it).
func (c *Client) Traces(ctx context.Context, sc scope.Scope, filtering json.RawMessage, oldest, newest *time.Time, rate *float64, max int) ([]Span, error) {
	if max <= 0 {
		max = MaxItems
	}
	win := map[string]any{"limit": min(PageSize, max)}
	if rate != nil {
		win["rate"] = *rate
	}
	if oldest != nil {
		win["oldest"] = oldest.UTC().Format(time.RFC3339Nano)
	}
	if newest != nil {
		win["newest"] = newest.UTC().Format(time.RFC3339Nano)
	}
	var roots []Span
	for {
		body := map[string]any{"windowing": win}
		if len(filtering) > 0 && string(filtering) != "null" {
			body["filtering"] = filtering
		}
		var out struct {
			Traces []struct {
				TraceID string          `json:"trace_id"`
				Spans   json.RawMessage `json:"spans"`
			} `json:"traces"`
			Windowing map[string]any `json:"windowing"`
		}
		if err := call(ctx, c.tr, sc, http.MethodPost, "/traces/query", body, &out, maxSpans); err != nil {
			return nil, err
		}
		for _, t := range out.Traces {
			if root, ok := rootOf(t.Spans); ok {
				roots = append(roots, root)
				if len(roots) >= max {
					return roots, nil
				}
			}
		}
		if len(out.Windowing) == 0 || len(out.Traces) == 0 {
			return roots, nil
		}
		win = out.Windowing
		if rate != nil {
			win["rate"] = *rate // the next page keeps the sampling
		}
	}
}

// rootOf finds the root of a trace tree ({name: node | [node…]}, the
// children under each node's "spans"): a top-level node without parent,
// else the first top-level node.
func rootOf(raw json.RawMessage) (Span, bool) {
	var tree map[string]json.RawMessage
	if err := json.Unmarshal(raw, &tree); err != nil {
		return Span{}, false
	}
	var first *Span
	for _, v := range tree {
		var nodes []Span
		if len(v) > 0 && v[0] == '[' {
			_ = json.Unmarshal(v, &nodes)
		} else {
			var n Span
			if json.Unmarshal(v, &n) == nil {
				nodes = []Span{n}
			}
		}
		for i := range nodes {
			if nodes[i].ParentID == "" {
				return nodes[i], true
			}
			if first == nil {
				first = &nodes[i]
			}
		}
	}
	if first == nil {
		return Span{}, false
	}
	return *first, true
}

// rootQuery finds one root span matching cond.
func (c *Client) rootQuery(ctx context.Context, sc scope.Scope, cond map[string]any) (*Span, error) {
	body := map[string]any{
		"filtering": map[string]any{"operator": "and", "conditions": []any{cond,
			map[string]any{"field": "parent_id", "operator": "is", "value": nil}}},
		"windowing": map[string]any{"limit": 1},
	}
	var out struct {
		Spans []Span `json:"spans"`
	}
	if err := call(ctx, c.tr, sc, http.MethodPost, "/spans/query", body, &out, maxSpans); err != nil {
		return nil, err
	}
	if len(out.Spans) == 0 {
		return nil, nil
	}
	return &out.Spans[0], nil
}

// CachedRoot finds a root span stored with the cache hash
// (spanmodel.CacheHash); no such span is (nil, nil).
func (c *Client) CachedRoot(ctx context.Context, sc scope.Scope, hash string) (*Span, error) {
	return c.rootQuery(ctx, sc, map[string]any{"field": "hashes", "operator": "in", "value": []string{hash}})
}

// RootSpan reads a trace's root span (its outputs under
// attributes.ag.data.outputs); a trace not stored (yet) is (nil, nil).
func (c *Client) RootSpan(ctx context.Context, sc scope.Scope, traceID string) (*Span, error) {
	return c.rootQuery(ctx, sc, map[string]any{"field": "trace_id", "operator": "is", "value": traceID})
}
