// Package tracingclient is the registry's typed client of the tracing
// service's query API (POST /traces/query for trace focus, POST
// /tracing/spans/query for span focus), used to answer saved queries.
package tracingclient

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/pkg/svcclient"
)

// Client calls the tracing service with the internal token and the
// caller's scope, as the gateway does.
type Client struct{ svc *svcclient.Client }

// New returns a client of the tracing service at base.
func New(base, token string, timeout time.Duration) *Client {
	return &Client{svc: svcclient.New(base, token, timeout)}
}

// Query is a saved query's formatting, filtering and windowing, as stored.
type Query struct {
	Focus     string          // "trace" (default) or "span"
	Format    string          // "agenta" (default) or "opentelemetry"
	Filtering json.RawMessage // Filtering object, or nil
	Windowing json.RawMessage // Windowing object, or nil
}

// Trace is one trace with its spans keyed by span id.
type Trace struct {
	TraceID string                     `json:"trace_id"`
	Spans   map[string]json.RawMessage `json:"spans"`
}

// Result is what a query found: trace ids in first-seen order, and the
// traces when asked.
type Result struct {
	TraceIDs []string
	Traces   []Trace
}

// span is the part of a span the client reads; the rest passes through.
type span struct {
	TraceID string                     `json:"trace_id"`
	SpanID  string                     `json:"span_id"`
	Spans   map[string]json.RawMessage `json:"spans,omitempty"`
}

// Run executes q for the scope.
func (c *Client) Run(ctx context.Context, sc scope.Scope, q Query) (*Result, error) {
	if q.Focus == "span" {
		return c.spans(ctx, sc, q)
	}
	return c.traces(ctx, sc, q)
}

// traces calls POST /traces/query {filtering, windowing}: the answer is
// {count, traces:[{trace_id, spans:{name: node|[node]}}]}.
func (c *Client) traces(ctx context.Context, sc scope.Scope, q Query) (*Result, error) {
	body := map[string]any{}
	if q.Filtering != nil {
		body["filtering"] = q.Filtering
	}
	if q.Windowing != nil {
		body["windowing"] = q.Windowing
	}
	var out struct {
		Traces []struct {
			TraceID string                     `json:"trace_id"`
			Spans   map[string]json.RawMessage `json:"spans"`
		} `json:"traces"`
	}
	if err := c.post(ctx, sc, "/traces/query", body, &out); err != nil {
		return nil, err
	}
	res := &Result{TraceIDs: []string{}, Traces: []Trace{}}
	for _, t := range out.Traces {
		flat := map[string]json.RawMessage{}
		if err := flatten(t.Spans, flat); err != nil {
			return nil, err
		}
		res.TraceIDs = append(res.TraceIDs, t.TraceID)
		res.Traces = append(res.Traces, Trace{TraceID: t.TraceID, Spans: flat})
	}
	return res, nil
}

// flatten turns the nested tree (children keyed by name, a list when
// siblings share one) into spans keyed by span id, children removed.
func flatten(tree map[string]json.RawMessage, into map[string]json.RawMessage) error {
	for _, raw := range tree {
		var nodes []json.RawMessage
		if t := bytes.TrimSpace(raw); len(t) > 0 && t[0] == '[' {
			if err := json.Unmarshal(t, &nodes); err != nil {
				return fmt.Errorf("decode span list: %w", err)
			}
		} else {
			nodes = []json.RawMessage{raw}
		}
		for _, n := range nodes {
			var m map[string]json.RawMessage
			if err := json.Unmarshal(n, &m); err != nil {
				return fmt.Errorf("decode span: %w", err)
			}
			var s span
			_ = json.Unmarshal(n, &s)
			if children := m["spans"]; children != nil {
				var kids map[string]json.RawMessage
				if json.Unmarshal(children, &kids) == nil {
					if err := flatten(kids, into); err != nil {
						return err
					}
				}
				delete(m, "spans")
			}
			flat, _ := json.Marshal(m)
			into[s.SpanID] = flat
		}
	}
	return nil
}

// spans calls the flat POST /tracing/spans/query with focus span; the
// answer is {count, spans:[span]}, grouped here by trace in first-seen
// order.
func (c *Client) spans(ctx context.Context, sc scope.Scope, q Query) (*Result, error) {
	body := map[string]any{"focus": "span"}
	if q.Format != "" {
		body["format"] = q.Format
	}
	if q.Filtering != nil {
		body["filter"] = q.Filtering
	}
	if q.Windowing != nil {
		var w map[string]json.RawMessage
		_ = json.Unmarshal(q.Windowing, &w)
		for _, k := range []string{"oldest", "newest", "limit", "interval", "rate"} {
			if v, ok := w[k]; ok {
				body[k] = v
			}
		}
	}
	var out struct {
		Spans []json.RawMessage `json:"spans"`
	}
	if err := c.post(ctx, sc, "/tracing/spans/query", body, &out); err != nil {
		return nil, err
	}
	res := &Result{TraceIDs: []string{}, Traces: []Trace{}}
	at := map[string]int{}
	for _, raw := range out.Spans {
		var s span
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, fmt.Errorf("decode span: %w", err)
		}
		i, seen := at[s.TraceID]
		if !seen {
			i = len(res.Traces)
			at[s.TraceID] = i
			res.TraceIDs = append(res.TraceIDs, s.TraceID)
			res.Traces = append(res.Traces, Trace{TraceID: s.TraceID, Spans: map[string]json.RawMessage{}})
		}
		res.Traces[i].Spans[s.SpanID] = raw
	}
	return res, nil
}

func (c *Client) post(ctx context.Context, sc scope.Scope, path string, body any, out any) error {
	status, b, err := c.svc.Post(ctx, sc, path, body, 256<<20)
	if err != nil {
		return errs.Wrap(errs.Unavailable, "tracing.unavailable", err)
	}
	switch {
	case status >= 500:
		return errs.Wrap(errs.Unavailable, "tracing.unavailable", fmt.Errorf("tracing query %s: status %d: %s", path, status, truncate(b)))
	case status >= 400:
		// The stored filter was refused: the caller's data is at fault.
		var e struct {
			Detail json.RawMessage `json:"detail"`
		}
		_ = json.Unmarshal(b, &e)
		return errs.WithDetail(errs.Invalid, "queries.tracing_refused", "The tracing service refused the stored query.",
			map[string]any{"message": "The tracing service refused the stored query.", "status": status, "tracing": e.Detail})
	}
	if err := json.Unmarshal(b, out); err != nil {
		return errs.Wrap(errs.Unavailable, "tracing.bad_answer", fmt.Errorf("decode tracing answer: %w", err))
	}
	return nil
}

func truncate(b []byte) string {
	if len(b) > 200 {
		b = b[:200]
	}
	return string(b)
}
