// Package egress is the only way the runtime calls a URL a user chose
// (webhook evaluators, hook applications, HTTPS evaluator handlers): https
// only, no URL credentials, no private, loopback, link-local, reserved or
// multicast address unless allowed, the resolved IP pinned for the
// connection (no DNS rebinding), every redirect checked the same way, a
// time-out and a cap on the answer.
//
// This file is the contract; the bodies are filled in by the evaluators work.
package egress

import (
	"context"
	"net/http"
	"time"

	"github.com/assayhq/assay/pkg/errs"
)

// Config sets the rules of one client.
type Config struct {
	AllowPrivate bool          // let self-hosters reach their own network (and plain http)
	Timeout      time.Duration // the whole call
	MaxBytes     int64         // answer cap; more is an error
}

// Client posts JSON to user-chosen URLs under its Config.
type Client struct{ cfg Config }

// New returns a client for cfg.
func New(cfg Config) *Client { return &Client{cfg: cfg} }

// PostJSON posts body as JSON to url with headers and returns the status and
// the answer. A refused URL or address is errs.Unprocessable naming it; a
// time-out is errs.Timeout; an answer over MaxBytes is errs.TooLarge.
func (c *Client) PostJSON(ctx context.Context, url string, headers http.Header, body any) (status int, answer []byte, err error) {
	return 0, nil, errs.New(errs.NotImplemented, "runtime.egress", "egress is not built yet")
}
