package httpapi

import (
	"github.com/labstack/echo/v4"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/services/tracing/internal/otlpserver"
)

// registerLangfuse serves the paths Langfuse's SDKs call on their own
// (their exporter appends /api/public/otel/v1/traces to the base URL):
// the OTLP endpoint, the same receiver as /otlp/v1/traces; the gateway
// accepts their Basic credentials there. The langfuse.* attributes are
// mapped by pkg/spanmodel's Langfuse adapter.
func registerLangfuse(e *echo.Echo, otlp *otlpserver.HTTP) {
	e.GET("/public/otel/v1/traces", otlp.Ready)
	e.POST("/public/otel/v1/traces", otlp.Export)
	e.POST("/public/media", mediaUnsupported)
}

// mediaUnsupported answers the SDK's media upload (it replaces base64 data
// in inputs and outputs by a @@@langfuseMedia reference and uploads the
// file through Langfuse's media API). Assay stores no media files: a 404
// that says so, which the SDK only logs (a 5xx it would retry, delaying
// its flush), and the span is exported with the reference in place of the
// data.
func mediaUnsupported(echo.Context) error {
	return errs.Message(errs.NotFound, "tracing.media_unsupported",
		"media upload is not supported: Assay does not store media files; the span keeps the @@@langfuseMedia reference in place of the data", nil)
}
