// Package api is the CLI's HTTP client for the gateway: JSON requests with
// the API key, bounded by a timeout, and errors classified so the command
// line can say in one line what went wrong and exit with a code a CI job
// can act on.
package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Exit codes, documented in docs/cli.md.
const (
	ExitError       = 1 // anything else: a 4xx/5xx answer, a bad file
	ExitUsage       = 2 // bad flags or arguments
	ExitGate        = 3 // an evaluation gate failed
	ExitUnreachable = 4 // no answer from the server
	ExitAuth        = 5 // the key was refused (401/403)
	ExitNotFound    = 6 // the named entity does not exist
)

// Error is an error with the exit code the process should end with.
type Error struct {
	Code   int
	Status int // HTTP status, 0 when there was no answer
	Msg    string
}

func (e *Error) Error() string { return e.Msg }

// Errorf makes an *Error with a code.
func Errorf(code int, format string, args ...any) *Error {
	return &Error{Code: code, Msg: fmt.Sprintf(format, args...)}
}

// StatusOf is the HTTP status of an answer error, 0 for any other error.
func StatusOf(err error) int {
	var e *Error
	if errors.As(err, &e) {
		return e.Status
	}
	return 0
}

// NotFound is the error for an entity the server does not have.
func NotFound(format string, args ...any) *Error { return Errorf(ExitNotFound, format, args...) }

// CodeOf is the exit code for err (ExitError when it carries none).
func CodeOf(err error) int {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ExitError
}

// Client talks to one platform with one key.
type Client struct {
	BaseURL string
	Key     string // sent as "ApiKey <Key>" unless it already has a scheme
	HTTP    *http.Client
}

// New returns a client whose requests time out after timeout (each one).
func New(baseURL, key string, timeout time.Duration) *Client {
	return &Client{BaseURL: strings.TrimRight(baseURL, "/"), Key: key, HTTP: &http.Client{Timeout: timeout}}
}

// Authorization is the header value for the key: a bare key gets the
// ApiKey scheme, a value that already names one ("ApiKey x", "Access x") is
// sent as given.
func (c *Client) Authorization() string {
	if c.Key == "" || strings.Contains(c.Key, " ") {
		return c.Key
	}
	return "ApiKey " + c.Key
}

// JSON sends body (nil for none) and decodes a 2xx answer into out (nil to
// ignore it). Any other answer is an *Error.
func (c *Client) JSON(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	res, err := c.Send(ctx, method, path, rd, "application/json")
	if err != nil {
		return err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(io.LimitReader(res.Body, 256<<20))
	if err != nil {
		return &Error{Code: ExitUnreachable, Msg: fmt.Sprintf("%s %s: reading the answer: %v", method, path, err)}
	}
	if out == nil || len(b) == 0 {
		return nil
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("%s %s: the answer is not the JSON expected: %v", method, path, err)
	}
	return nil
}

// Send sends a request and returns a 2xx (or 304) response, whose body the
// caller closes; any other status is read and returned as an *Error.
func (c *Client) Send(ctx context.Context, method, path string, body io.Reader, contentType string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.BaseURL+path, body)
	if err != nil {
		return nil, Errorf(ExitUsage, "bad server URL %q: %v", c.BaseURL, err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "assay-cli")
	if a := c.Authorization(); a != "" {
		req.Header.Set("Authorization", a)
	}
	res, err := c.HTTP.Do(req)
	if err != nil {
		var own *Error // the body's reader failed (a bad file), not the network
		if errors.As(err, &own) {
			return nil, own
		}
		return nil, unreachable(c.BaseURL, err)
	}
	if res.StatusCode/100 == 2 || res.StatusCode == http.StatusNotModified {
		return res, nil
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(res.Body, 64<<10))
	return nil, statusError(method, path, res.StatusCode, b)
}

func unreachable(base string, err error) error {
	var ue *url.Error
	if errors.As(err, &ue) && ue.Timeout() {
		return &Error{Code: ExitUnreachable, Msg: fmt.Sprintf("the server at %s did not answer in time", base)}
	}
	var op *net.OpError
	if errors.As(err, &op) || errors.As(err, &ue) {
		return &Error{Code: ExitUnreachable, Msg: fmt.Sprintf("cannot reach the server at %s: %v", base, rootCause(err))}
	}
	return &Error{Code: ExitUnreachable, Msg: fmt.Sprintf("cannot reach the server at %s: %v", base, err)}
}

func rootCause(err error) error {
	for {
		u := errors.Unwrap(err)
		if u == nil {
			return err
		}
		err = u
	}
}

// statusError turns a non-2xx answer into one line: the status and the
// server's detail (pkg/errs renders {"detail": string | object | list}).
func statusError(method, path string, status int, body []byte) *Error {
	detail := Detail(body)
	e := &Error{Status: status, Code: ExitError}
	switch {
	case status == http.StatusUnauthorized:
		e.Code = ExitAuth
		e.Msg = "the server refused the API key (401): run `assay login` or set ASSAY_API_KEY"
	case status == http.StatusForbidden:
		e.Code = ExitAuth
		e.Msg = "the API key may not do this (403)"
	case status == http.StatusNotFound:
		e.Code = ExitNotFound
		e.Msg = fmt.Sprintf("not found (404): %s %s", method, path)
	default:
		e.Msg = fmt.Sprintf("%s %s: %d %s", method, path, status, http.StatusText(status))
	}
	if detail != "" {
		e.Msg += ": " + detail
	}
	return e
}

// Detail is the server's error detail as one line, or "".
func Detail(body []byte) string {
	var v struct {
		Detail json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(body, &v) != nil || len(v.Detail) == 0 {
		s := strings.TrimSpace(string(body))
		if len(s) > 200 {
			s = s[:200] + "…"
		}
		return strings.ReplaceAll(s, "\n", " ")
	}
	var s string
	if json.Unmarshal(v.Detail, &s) == nil {
		return s
	}
	var obj struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(v.Detail, &obj) == nil && obj.Message != "" {
		return obj.Message
	}
	var list []struct {
		Msg string `json:"msg"`
		Loc []any  `json:"loc"`
	}
	if json.Unmarshal(v.Detail, &list) == nil && len(list) > 0 {
		parts := make([]string, 0, len(list))
		for _, l := range list {
			loc := make([]string, 0, len(l.Loc))
			for _, p := range l.Loc {
				loc = append(loc, fmt.Sprint(p))
			}
			parts = append(parts, strings.Join(loc, ".")+": "+l.Msg)
		}
		return strings.Join(parts, "; ")
	}
	return string(v.Detail)
}
