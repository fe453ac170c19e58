package otlpserver

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/httpx"
	"github.com/assayhq/assay/pkg/spanmodel"
	"github.com/assayhq/assay/services/tracing/internal/ingest"
)

// HTTP is the OTLP trace service over HTTP (protobuf or JSON, gzip or
// not). The caller's project comes from the request context: RequireAPIKey
// puts it there on the OTLP port, the internal-token middleware behind the
// gateway.
type HTTP struct {
	ingest *ingest.Service
	limits ingest.Limits
}

// NewHTTP returns the HTTP transport; limits bound a request's body, as
// sent and decompressed.
func NewHTTP(svc *ingest.Service, limits ingest.Limits) *HTTP {
	return &HTTP{ingest: svc, limits: limits}
}

// Register adds the standard OTLP/HTTP route, POST /v1/traces (port 4318).
func (h *HTTP) Register(e *echo.Echo) {
	e.POST("/v1/traces", h.Export)
}

// Ready answers the readiness probe some SDKs send as a GET on the
// traces route.
func (h *HTTP) Ready(c echo.Context) error {
	return c.JSON(http.StatusOK, map[string]string{"status": "ready"})
}

// Export ingests an ExportTraceServiceRequest. Bad spans are dropped alone
// and reported as an OTLP partial success; the rest is stored before 200.
// The answer has the request's encoding.
func (h *HTTP) Export(c echo.Context) error {
	sc, err := httpx.ProjectScope(c)
	if err != nil {
		return err
	}
	r := c.Request()
	body, err := ingest.ReadBody(r.Body, r.Header.Get("Content-Encoding"), h.limits)
	if err != nil {
		return err
	}
	isJSON := ingest.IsJSON(r.Header.Get("Content-Type"))
	var raws []spanmodel.Raw
	if isJSON {
		// OTLP/JSON's hex ids need pdata's reader.
		td, err := ingest.DecodeOTLP(body, true)
		if err != nil {
			return err
		}
		raws = ingest.RawSpans(td)
	} else if raws, err = ingest.DecodeOTLPProto(body); err != nil {
		return err
	}
	rec := httpExport(c)
	rec.decode(len(raws))
	res, err := h.ingest.Ingest(r.Context(), sc, raws, body)
	if err != nil {
		return err
	}
	rec.reject(len(res.Rejected))
	out, err := ingest.Response(res.Rejected, isJSON)
	if err != nil {
		return errs.Wrap(errs.Internal, "tracing.encode_response", err)
	}
	ct := "application/x-protobuf"
	if isJSON {
		ct = "application/json"
	}
	return c.Blob(http.StatusOK, ct, out)
}
