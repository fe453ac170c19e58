// Package errs defines transport-free error kinds. Services return *Error
// values; pkg/httpstatus maps each Kind to an HTTP status in one place.
package errs

import (
	"errors"
	"fmt"
)

// Kind classifies an error the way a client must react to it.
type Kind int

// The kinds, from least to most severe. Internal is the zero value so an
// unclassified error never leaks as a client error.
const (
	Internal         Kind = iota // a bug; the cause is logged, never rendered
	Invalid                      // 400: the request is malformed
	Unauthenticated              // 401
	Forbidden                    // 403
	NotFound                     // 404
	NotAcceptable                // 406: the Accept header names a format the handler cannot produce
	Conflict                     // 409
	Gone                         // 410: the thing existed but is no more (an expired invitation)
	TooLarge                     // 413
	Unprocessable                // 422: a field fails validation
	FailedDependency             // 424: a provider the caller configured refused (its key, its rate limit)
	TooManyRequests              // 429
	NotImplemented               // 501
	Unavailable                  // 503: a dependency is down; retry later
	Timeout                      // 504: a dependency did not answer in time
)

// Error is an error with a kind, a stable code ("service.reason") and a
// client-safe detail. Detail is rendered as the JSON "detail" value; when it
// is nil the message is rendered instead.
type Error struct {
	Kind   Kind
	Code   string
	Msg    string
	Detail any
	Err    error // the cause: logged, never rendered
}

func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, e.Msg, e.Err)
	}
	return e.Code + ": " + e.Msg
}

func (e *Error) Unwrap() error { return e.Err }

// Is matches sentinels by code, so a wrapped copy still equals its sentinel.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

// New returns an error whose detail is the plain message.
func New(kind Kind, code, msg string) *Error {
	return &Error{Kind: kind, Code: code, Msg: msg}
}

// WithDetail returns an error whose rendered detail is an arbitrary JSON
// value, such as {"message": "...", "email": "..."}.
func WithDetail(kind Kind, code, msg string, detail any) *Error {
	return &Error{Kind: kind, Code: code, Msg: msg, Detail: detail}
}

// Message returns an error rendered as {"detail": {"message": msg, ...extra}}.
func Message(kind Kind, code, msg string, extra map[string]any) *Error {
	d := map[string]any{"message": msg}
	for k, v := range extra {
		d[k] = v
	}
	return WithDetail(kind, code, msg, d)
}

// FieldError is one entry of a 422 body, shaped like the validation errors
// the compatible platform returns: loc names the field path.
type FieldError struct {
	Type  string `json:"type"`
	Loc   []any  `json:"loc"`
	Msg   string `json:"msg"`
	Input any    `json:"input,omitempty"`
}

// Field returns a 422 error naming the field at loc (e.g. "body", "user", "email").
func Field(msg string, input any, loc ...any) *Error {
	return &Error{
		Kind:   Unprocessable,
		Code:   "request.invalid_field",
		Msg:    fmt.Sprintf("%v: %s", loc, msg),
		Detail: []FieldError{{Type: "value_error", Loc: loc, Msg: msg, Input: input}},
	}
}

// Wrap attaches kind and code to a cause, keeping the cause for logs.
func Wrap(kind Kind, code string, err error) *Error {
	return &Error{Kind: kind, Code: code, Msg: err.Error(), Err: err}
}

// From returns the *Error in err's chain, or an Internal error wrapping err.
func From(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Kind: Internal, Code: "internal", Msg: "An unexpected error occurred. Please try again later or contact support.", Err: err}
}

// KindOf returns the kind of the *Error in err's chain, or Internal.
func KindOf(err error) Kind { return From(err).Kind }
