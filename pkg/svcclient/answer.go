package svcclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/assayhq/assay/pkg/scope"
)

// ErrNotFound is a 404: the record, revision or trace does not exist in
// the caller's project.
var ErrNotFound = errors.New("svcclient: not found")

// ErrClosed is the registry's 409 for a write to a closed evaluation run
// (its answer names the run closed).
var ErrClosed = errors.New("svcclient: the run is closed")

// bodyStart is how much of a refused answer an error message quotes.
const bodyStart = 300

// StatusError is an answer outside 2xx: the route, the status and the
// start of the body. It is ErrNotFound for a 404 and ErrClosed for a
// closed-run 409 (errors.Is), so a caller tests the meaning and can still
// read the answer (a refusal's detail).
type StatusError struct {
	Route  string // method and path, "POST /evaluations/results/"
	Status int
	Body   string // the start of the answer
	Answer []byte // the answer as read (bounded by the call's limit)
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("%s answered %d: %s", e.Route, e.Status, e.Body)
}

// Is makes a 404 ErrNotFound and a closed-run 409 ErrClosed.
func (e *StatusError) Is(target error) bool {
	switch target {
	case ErrNotFound:
		return e.Status == http.StatusNotFound
	case ErrClosed:
		return e.Status == http.StatusConflict && strings.Contains(string(e.Answer), "closed")
	}
	return false
}

// UnreachableError is a call that got no answer: the service is down or
// slow, or the context ended.
type UnreachableError struct {
	Route string
	Err   error
}

func (e *UnreachableError) Error() string { return fmt.Sprintf("%s: no answer: %v", e.Route, e.Err) }
func (e *UnreachableError) Unwrap() error { return e.Err }

// Check is the one place a service's answer becomes an error: err (no
// answer) is an *UnreachableError, any status outside 2xx a *StatusError
// (ErrNotFound, ErrClosed as above), a 2xx nil. route names the call in
// the error ("GET /evaluations/runs/x").
func Check(route string, status int, answer []byte, err error) error {
	if err != nil {
		return &UnreachableError{Route: route, Err: err}
	}
	if status >= 200 && status < 300 {
		return nil
	}
	b := string(answer)
	if len(b) > bodyStart {
		b = b[:bodyStart]
	}
	return &StatusError{Route: route, Status: status, Body: b, Answer: answer}
}

// Transient says whether err may pass on a retry: unreachable, 5xx or
// 429. A StatusError of any other status, ErrNotFound and ErrClosed never
// will; an error Check did not make (an unreadable answer, a failure of
// the caller's own) is presumed to, since wrongly giving up fails a whole
// evaluation run where a wrong retry costs one redelivery.
func Transient(err error) bool {
	var se *StatusError
	if errors.As(err, &se) {
		return se.Status >= 500 || se.Status == http.StatusTooManyRequests
	}
	return err != nil && !errors.Is(err, ErrNotFound) && !errors.Is(err, ErrClosed)
}

// Call sends body as JSON with method (GET: no body) to path in the scope
// sc, maps the answer with Check, and decodes a 2xx answer into out (when
// not nil); limit bounds the answer read.
func (c *Client) Call(ctx context.Context, sc scope.Scope, method, path string, body, out any, limit int64) error {
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
	route := method + " " + path
	if err := Check(route, status, answer, err); err != nil {
		return err
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(answer, out); err != nil {
		return fmt.Errorf("%s: unreadable answer (%d bytes, limit %d): %w", route, len(answer), limit, err)
	}
	return nil
}
