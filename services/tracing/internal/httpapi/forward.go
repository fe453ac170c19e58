package httpapi

import (
	"io"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/pkg/spanstream"
)

// ForwardPath is the runtime's route for its invocations' span batches.
const ForwardPath = "/internal/spans/batch"

// forwardSpans serves POST /internal/spans/batch: a span batch the
// runtime encoded (pkg/spanstream), published on SPANS once stored, 204.
// Only the runtime's token is admitted: another caller (the gateway, whose
// clients use the ingest routes) is answered as if the route did not exist.
func (h *Handler) forwardSpans(c echo.Context, sc scope.Scope) error {
	if c.Request().Header.Get("X-Forwarded-Host") != "" || scope.CallerFrom(c.Request().Context()) != "runtime" {
		return echo.ErrNotFound
	}
	data, err := io.ReadAll(io.LimitReader(c.Request().Body, spanstream.MaxMessageBytes+1))
	if err != nil {
		return errs.Wrap(errs.Invalid, "request.unreadable_body", err)
	}
	if len(data) > spanstream.MaxMessageBytes {
		return errs.WithDetail(errs.TooLarge, "tracing.batch_too_large", "Span batch too large",
			"body: larger than one stream message")
	}
	if err := h.Ingest.Forward(c.Request().Context(), sc, data); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}
