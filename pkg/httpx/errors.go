package httpx

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/httpstatus"
	"github.com/assayhq/assay/pkg/inputlimits"
)

// Status returns the HTTP status for an error kind (pkg/httpstatus, the
// one mapping).
func Status(k errs.Kind) int { return httpstatus.Of(k) }

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
		if e.Kind == errs.Internal {
			if refused := storeRefusal(err); refused != nil {
				log.WarnContext(c.Request().Context(), "database refused a value the request checks let through",
					"err", err, "route", c.Path())
				e = refused
			}
		}
		status := Status(e.Kind)
		if status >= http.StatusInternalServerError && clientGone(c) {
			// Nobody reads this answer; the status is for the access log
			// and the metrics, the message for whoever wonders why.
			log.InfoContext(c.Request().Context(), "client closed the request", "err", err, "route", c.Path())
			_ = c.JSON(StatusClientClosed, ErrorBody{Detail: "client closed the request"})
			return
		}
		if status >= http.StatusInternalServerError {
			log.ErrorContext(c.Request().Context(), "request failed",
				"err", err, "route", c.Path(), "code", e.Code)
		}
		// A handler that knows the wait (the gateway's sign-in throttle)
		// has set Retry-After already; the one-second default is for the rest.
		if (e.Kind == errs.Unavailable || e.Kind == errs.Timeout || e.Kind == errs.TooManyRequests) && c.Response().Header().Get("Retry-After") == "" {
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

// sqlStater is implemented by *pgconn.PgError: httpx recognises the
// database's verdict on a value without importing pgx.
type sqlStater interface{ SQLState() string }

// storeRefusal turns a database error caused by the value a client sent
// into a 422: SQLSTATE class 22 (data exception: a NUL character, bytes
// that are not UTF-8, a number or date out of range) and class 54
// (program limit: an index row over its maximum size, a statement too
// complex). It is the last line of defence behind the checks a service
// makes when it reads a request, so a client's input never shows as a 500;
// nil for any other error.
func storeRefusal(err error) *errs.Error {
	var se sqlStater
	if !errors.As(err, &se) {
		return nil
	}
	code := se.SQLState()
	var msg string
	switch {
	case code == "22021" || code == "22P05":
		msg = "A value in the request holds a NUL character or bytes that are not UTF-8, which cannot be stored."
	case code == "54000":
		msg = "A value in the request is too large to be stored or indexed."
	case strings.HasPrefix(code, "22"):
		msg = "A value in the request is malformed or out of range for where it is stored."
	case strings.HasPrefix(code, "54"):
		msg = "The request is too large or too complex to be processed."
	default:
		return nil
	}
	return errs.Message(errs.Unprocessable, "request.value_refused", msg, map[string]any{"sqlstate": code})
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

// BindText is Bind for JSON bodies that reach PostgreSQL: the body is
// also refused with a 422 naming the field when a string in it holds a
// NUL character, invalid UTF-8 or an unpaired surrogate
// (inputlimits.CheckJSONText).
func BindText(c echo.Context, v any) error {
	req := c.Request()
	raw, err := io.ReadAll(req.Body)
	if err != nil {
		return err
	}
	req.Body = io.NopCloser(bytes.NewReader(raw))
	if err := Bind(c, v); err != nil {
		return err
	}
	return inputlimits.CheckJSONText(raw, nil, "body")
}
