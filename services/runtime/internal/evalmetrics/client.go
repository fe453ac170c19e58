package evalmetrics

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/scope"
)

// Client is Analytics and Spans over the tracing service's HTTP API, with
// the internal token and the caller's scope headers (the grouped analytics
// route is not behind the gateway).
type Client struct {
	base  string
	token string
	http  *http.Client
}

// NewClient returns a client of the tracing service at baseURL; each call
// is bounded by timeout.
func NewClient(baseURL, token string, timeout time.Duration) *Client {
	return &Client{base: strings.TrimSuffix(baseURL, "/"), token: token, http: &http.Client{Timeout: timeout}}
}

// maxAnswer bounds an answer read into memory: a grouped answer is about
// 2 KB per group and spec chunk; 10,000 scenario groups stay well under.
const maxAnswer = 256 << 20

// Groups calls POST /internal/analytics/groups.
func (c *Client) Groups(ctx context.Context, sc scope.Scope, specs []Spec, groups map[string][]string) (map[string]Group, error) {
	var out struct {
		Groups map[string]Group `json:"groups"`
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
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+path, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	scope.Set(req.Header, c.token, sc)
	resp, err := c.http.Do(req)
	if err != nil {
		return &errs.Error{Kind: errs.Unavailable, Code: "runtime.tracing_unavailable", Msg: "the tracing service did not answer", Err: err}
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return &errs.Error{Kind: errs.Unavailable, Code: "runtime.tracing_unavailable", Msg: "the tracing service's answer broke off", Err: err}
	}
	if resp.StatusCode != http.StatusOK {
		kind := errs.Internal
		if resp.StatusCode == http.StatusServiceUnavailable || resp.StatusCode == http.StatusTooManyRequests {
			kind = errs.Unavailable
		}
		return &errs.Error{Kind: kind, Code: "runtime.tracing_refused", Msg: "the tracing service refused a metrics read",
			Err: fmt.Errorf("POST %s: %d %s", path, resp.StatusCode, bytes.TrimSpace(raw))}
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("decode POST %s: %w", path, err)
	}
	return nil
}
