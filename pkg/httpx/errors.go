package httpx

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/assayhq/assay/pkg/errs"
)

// statusOf is the one place where error kinds become HTTP statuses.
var statusOf = map[errs.Kind]int{
	errs.Internal:        http.StatusInternalServerError,
	errs.Invalid:         http.StatusBadRequest,
	errs.Unauthenticated: http.StatusUnauthorized,
	errs.Forbidden:       http.StatusForbidden,
	errs.NotFound:        http.StatusNotFound,
	errs.Conflict:        http.StatusConflict,
	errs.TooLarge:        http.StatusRequestEntityTooLarge,
	errs.Unprocessable:   http.StatusUnprocessableEntity,
	errs.TooManyRequests: http.StatusTooManyRequests,
	errs.NotImplemented:  http.StatusNotImplemented,
	errs.Unavailable:     http.StatusServiceUnavailable,
	errs.Timeout:         http.StatusGatewayTimeout,
}

// Status returns the HTTP status for an error kind.
func Status(k errs.Kind) int { return statusOf[k] }

// ErrorBody is the JSON shape of every error response: {"detail": ...}.
type ErrorBody struct {
	Detail any `json:"detail"`
}

// ErrUnauthorized is the one 401 every auth failure answers with.
var ErrUnauthorized = errs.Message(errs.Unauthenticated, "auth.unauthorized", "Unauthorized", nil)

// ErrorHandler renders every error; handlers never write error bodies.
func ErrorHandler(log *slog.Logger) echo.HTTPErrorHandler {
	return func(err error, c echo.Context) {
		if c.Response().Committed {
			return
		}
		var he *echo.HTTPError
		if errors.As(err, &he) {
			detail := he.Message
			if detail == nil {
				detail = http.StatusText(he.Code)
			}
			_ = c.JSON(he.Code, ErrorBody{Detail: detail})
			return
		}
		e := errs.From(err)
		status := Status(e.Kind)
		if status >= http.StatusInternalServerError {
			log.ErrorContext(c.Request().Context(), "request failed",
				"err", err, "route", c.Path(), "code", e.Code)
		}
		if e.Kind == errs.Unavailable || e.Kind == errs.Timeout || e.Kind == errs.TooManyRequests {
			c.Response().Header().Set("Retry-After", "1")
		}
		detail := e.Detail
		if detail == nil {
			detail = e.Msg
			if e.Kind == errs.Internal {
				detail = map[string]any{"message": e.Msg}
			}
		}
		_ = c.JSON(status, ErrorBody{Detail: detail})
	}
}

// UUIDParam parses the path parameter name as a UUID; anything else is a 422
// naming the parameter.
func UUIDParam(c echo.Context, name string) (uuid.UUID, error) {
	raw := c.Param(name)
	id, err := uuid.Parse(raw)
	if err != nil || len(raw) != 36 && len(raw) != 32 {
		return uuid.Nil, errs.Field(fmt.Sprintf("Input should be a valid UUID: %q", raw), raw, "path", name)
	}
	return id, nil
}

// Bind decodes the JSON body into v; a malformed body is a 400 that says why.
func Bind(c echo.Context, v any) error {
	if err := (&echo.DefaultBinder{}).BindBody(c, v); err != nil {
		var he *echo.HTTPError
		if errors.As(err, &he) {
			return errs.WithDetail(errs.Invalid, "request.malformed_body", fmt.Sprint(he.Message), fmt.Sprintf("malformed JSON body: %v", he.Message))
		}
		return err
	}
	return nil
}
