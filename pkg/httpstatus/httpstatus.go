// Package httpstatus is the one place where error kinds become HTTP
// statuses. It is apart from pkg/httpx (which renders errors with it) so
// that a use case that must name a status, such as the runtime's
// invocation envelope, imports no HTTP framework.
package httpstatus

import (
	"net/http"

	"github.com/assayhq/assay/pkg/errs"
)

// statusOf is the one place where error kinds become HTTP statuses.
var statusOf = map[errs.Kind]int{
	errs.Internal:         http.StatusInternalServerError,
	errs.Invalid:          http.StatusBadRequest,
	errs.Unauthenticated:  http.StatusUnauthorized,
	errs.Forbidden:        http.StatusForbidden,
	errs.NotFound:         http.StatusNotFound,
	errs.NotAcceptable:    http.StatusNotAcceptable,
	errs.Conflict:         http.StatusConflict,
	errs.Gone:             http.StatusGone,
	errs.TooLarge:         http.StatusRequestEntityTooLarge,
	errs.Unprocessable:    http.StatusUnprocessableEntity,
	errs.FailedDependency: http.StatusFailedDependency,
	errs.TooManyRequests:  http.StatusTooManyRequests,
	errs.NotImplemented:   http.StatusNotImplemented,
	errs.Unavailable:      http.StatusServiceUnavailable,
	errs.Timeout:          http.StatusGatewayTimeout,
}

// Of returns the HTTP status for an error kind.
func Of(k errs.Kind) int { return statusOf[k] }
