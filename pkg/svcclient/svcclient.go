// Package svcclient is how one service calls another: a JSON POST (or a
// GET) that carries the internal token and the caller's scope, exactly as
// the gateway forwards a request. Check (answer.go) is the one mapping of
// an answer to an error (unreachable, not found, closed, refused) and
// Transient says which of them may pass on a retry; a caller that must say
// more (an invocation's errs.Kind) starts from those.
package svcclient

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/assayhq/assay/pkg/scope"
)

// Client posts to one service.
type Client struct {
	base  string
	token string
	http  *http.Client
}

// New returns a client of the service at base.
func New(base, token string, timeout time.Duration) *Client {
	return &Client{base: strings.TrimRight(base, "/"), token: token, http: &http.Client{Timeout: timeout}}
}

// Post sends body as JSON to path in the scope sc and returns the status
// and at most limit bytes of the answer. err is set only when no answer
// came (the service is down, or the context ended).
func (c *Client) Post(ctx context.Context, sc scope.Scope, path string, body any, limit int64) (status int, answer []byte, err error) {
	raw, err := json.Marshal(body)
	if err != nil {
		return 0, nil, fmt.Errorf("encode %s request: %w", path, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+path, bytes.NewReader(raw))
	if err != nil {
		return 0, nil, fmt.Errorf("build %s request: %w", path, err)
	}
	req.Header.Set("Content-Type", "application/json")
	return c.do(req, sc, path, limit)
}

// PostBytes sends body as it is (of contentType) to path, with the scope
// headers and the token, and reads at most limit bytes of the answer: for
// bodies that are not JSON, such as the runtime's encoded span batches.
func (c *Client) PostBytes(ctx context.Context, sc scope.Scope, path, contentType string, body []byte, limit int64) (status int, answer []byte, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+path, bytes.NewReader(body))
	if err != nil {
		return 0, nil, fmt.Errorf("build %s request: %w", path, err)
	}
	req.Header.Set("Content-Type", contentType)
	return c.do(req, sc, path, limit)
}

// Get is Post without a body: GET path in the scope sc.
func (c *Client) Get(ctx context.Context, sc scope.Scope, path string, limit int64) (status int, answer []byte, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+path, nil)
	if err != nil {
		return 0, nil, fmt.Errorf("build %s request: %w", path, err)
	}
	return c.do(req, sc, path, limit)
}

func (c *Client) do(req *http.Request, sc scope.Scope, path string, limit int64) (int, []byte, error) {
	scope.Set(req.Header, c.token, sc)
	res, err := c.http.Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("%s %s: %w", strings.ToLower(req.Method), path, err)
	}
	defer res.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(res.Body, limit))
	if err != nil {
		return 0, nil, fmt.Errorf("read %s answer: %w", path, err)
	}
	return res.StatusCode, answer, nil
}
