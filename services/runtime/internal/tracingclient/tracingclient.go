// Package tracingclient is every call the runtime makes to the tracing
// service, over its internal HTTP API with the token of the runtime's pair
// with tracing and the caller's scope: an invocation's span batch (Send),
// and the evaluation worker's reads (a saved query's traces, a cached or
// an application trace's root span, the grouped analytics its metrics are
// computed from, root outputs for schema inference). Every answer is
// mapped to an error by svcclient.Check. Nothing is cached here: every
// read must see the traces written just before it.
package tracingclient

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/pkg/svcclient"
	"github.com/assayhq/assay/services/runtime/internal/evalmetrics"
)

// Client calls one tracing service. It implements traces.Sink and
// evalmetrics' Analytics and Spans (the grouped analytics route is not
// behind the gateway).
type Client struct {
	c *svcclient.Client
	// within bounds how long Send keeps trying a tracing that is
	// unreachable or answers 5xx/429 (a replica restarting, or killed
	// while the Service still routes to it).
	within time.Duration
}

// New returns a client of the tracing service at baseURL (its internal
// address), called with token; each call is bounded by timeout, and one
// span batch is tried for at most timeout.
func New(baseURL, token string, timeout time.Duration) *Client {
	return &Client{c: svcclient.New(baseURL, token, timeout), within: timeout}
}

// Bounds of the answers read: a page of spans is bounded by the page
// size the client asks for, so maxSpans only stops a runaway answer; a
// grouped analytics answer is about 2 KB per group and spec chunk, and
// 10,000 scenario groups stay well under maxAnswer.
const (
	maxSpans  = 64 << 20
	maxAnswer = 256 << 20
	// pageSize is how many traces one query asks for.
	pageSize = 500
	// MaxItems bounds what one query source yields for one run: a saved
	// query matching more traces is cut there (the run says so in its
	// log), so a broad filter cannot make a run without end.
	MaxItems = 100000
)

// Groups calls POST /internal/analytics/groups.
func (c *Client) Groups(ctx context.Context, sc scope.Scope, specs []evalmetrics.Spec, groups map[string][]string) (map[string]evalmetrics.Group, error) {
	var out struct {
		Groups map[string]evalmetrics.Group `json:"groups"`
	}
	if err := c.post(ctx, sc, "/internal/analytics/groups", map[string]any{"specs": specs, "groups": groups}, &out); err != nil {
		return nil, err
	}
	return out.Groups, nil
}

// inferChunk is how many traces one span query asks for: their spans (a
// judge's model calls too) must fit the query's span cap.
const inferChunk = 100

// RootOutputs reads the root spans of the traces with POST /spans/query
// (a trace id list is its fast path) and returns their ag.data.outputs;
// a root without outputs gives nil.
func (c *Client) RootOutputs(ctx context.Context, sc scope.Scope, traceIDs []string) ([]any, error) {
	var out []any
	for start := 0; start < len(traceIDs); start += inferChunk {
		ids := traceIDs[start:min(start+inferChunk, len(traceIDs))]
		var page struct {
			Spans []struct {
				ParentID   string         `json:"parent_id"`
				Attributes map[string]any `json:"attributes"`
			} `json:"spans"`
		}
		body := map[string]any{"filtering": map[string]any{"conditions": []any{
			map[string]any{"field": "trace_id", "operator": "in", "value": ids}}}}
		if err := c.post(ctx, sc, "/spans/query", body, &page); err != nil {
			return nil, err
		}
		for _, s := range page.Spans {
			if s.ParentID != "" {
				continue
			}
			ag, _ := s.Attributes["ag"].(map[string]any)
			data, _ := ag["data"].(map[string]any)
			out = append(out, data["outputs"])
		}
	}
	return out, nil
}

func (c *Client) post(ctx context.Context, sc scope.Scope, path string, body, out any) error {
	return c.c.Call(ctx, sc, http.MethodPost, path, body, out, maxAnswer)
}

// Traces runs filtering (a saved query's filter; nil matches every
// trace) over [oldest, newest) and returns the root span of each matching
// trace, at most max (MaxItems when 0), page after page. A rate keeps
// that share of the traces (tracing's windowing.rate: by trace id, so a
// trace is kept or not whichever window reads it).
func (c *Client) Traces(ctx context.Context, sc scope.Scope, filtering json.RawMessage, oldest, newest *time.Time, rate *float64, max int) ([]Span, error) {
	if max <= 0 {
		max = MaxItems
	}
	win := map[string]any{"limit": min(pageSize, max)}
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
		if err := c.c.Call(ctx, sc, http.MethodPost, "/traces/query", body, &out, maxSpans); err != nil {
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
	if err := c.c.Call(ctx, sc, http.MethodPost, "/spans/query", body, &out, maxSpans); err != nil {
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

// Send implements traces.Sink: POST /internal/spans/batch, which tracing
// answers (204) once JetStream stored the batch; any other final answer is
// an error with tracing's status and the start of its answer. A failure that may
// pass (no connection, 5xx, 429) is tried again until the client's timeout has passed:
// an invocation answers before its trace is stored only if this fails, and
// tracing stores a batch sent twice once (its message id is the batch's
// hash, and the batch carries its own receive time).
func (c *Client) Send(ctx context.Context, sc scope.Scope, batch []byte) error {
	ctx, cancel := context.WithTimeout(ctx, max(c.within, time.Second))
	defer cancel()
	wait := 50 * time.Millisecond
	for {
		err := c.send(ctx, sc, batch)
		if err == nil || !svcclient.Transient(err) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
		wait = min(2*wait, time.Second)
	}
}

func (c *Client) send(ctx context.Context, sc scope.Scope, batch []byte) error {
	status, answer, err := c.c.PostBytes(ctx, sc, forwardPath, "application/octet-stream", batch, 4<<10)
	return svcclient.Check(http.MethodPost+" "+forwardPath, status, answer, err)
}

// forwardPath is tracing's route for the runtime's batches (its
// httpapi.ForwardPath).
const forwardPath = "/internal/spans/batch"
