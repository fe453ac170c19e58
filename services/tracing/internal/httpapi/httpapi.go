// Package httpapi is the tracing service's internal HTTP surface (behind
// the gateway): native ingest, trace CRUD, span and trace queries, the
// legacy query, analytics and the simple traces, plus the gateway's OTLP
// route, served by otlpserver's HTTP transport. Handlers bind, call a
// service, render.
package httpapi

import (
	"context"
	"log/slog"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/httpx"
	"github.com/assayhq/assay/pkg/purgewire"
	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/services/tracing/internal/annotate"
	"github.com/assayhq/assay/services/tracing/internal/dedup"
	"github.com/assayhq/assay/services/tracing/internal/ingest"
	"github.com/assayhq/assay/services/tracing/internal/otlpserver"
	"github.com/assayhq/assay/services/tracing/internal/query"
	"github.com/assayhq/assay/services/tracing/internal/tracewrite"
)

// Handler holds the services the routes call.
type Handler struct {
	Ingest *ingest.Service
	Query  *query.Service
	// SavedQueries resolves query refs (the registry); nil answers 503.
	SavedQueries query.SavedQueries
	// Workflows resolves the evaluators and applications that annotations
	// and invocations refer to; nil stores references as sent.
	Workflows *annotate.Resolver
	// Deletes bumps the project's delete epoch so a re-send after a delete
	// is not taken for a retry (package dedup); nil skips it.
	Deletes *dedup.Epochs
	Limits  ingest.Limits
	Log     *slog.Logger
	// Purge deletes deleted projects' spans (the gateway's internal POST
	// /internal/projects/purge); nil answers 503.
	Purge interface {
		Projects(ctx context.Context, ids []uuid.UUID) error
	}

	traces *tracewrite.Service // made by Register from the services above
}

// Register adds every route of the internal API (behind the gateway).
func (h *Handler) Register(e *echo.Echo) {
	h.init()
	e.Use(h.readBudget)
	// OTLP behind the gateway: the receiver's HTTP transport, as on the
	// OTLP port.
	otlp := otlpserver.NewHTTP(h.Ingest, h.Limits)
	e.GET("/otlp/v1/traces", otlp.Ready)
	e.POST("/otlp/v1/traces", otlp.Export)
	registerLangfuse(e, otlp)

	e.POST("/tracing/spans/ingest", scoped(h.ingestSpans))
	e.POST("/tracing/spans/query", scoped(h.legacyQuery))
	e.POST("/tracing/spans/analytics", scoped(h.legacyAnalytics))
	e.POST("/tracing/analytics/query", scoped(h.analytics))
	e.POST("/spans/analytics/query", scoped(h.analytics))
	e.POST("/internal/analytics/groups", scoped(h.analyticsGroups))
	e.POST(ForwardPath, scoped(h.forwardSpans))
	e.POST("/tracing/traces", scoped(h.createTrace))
	e.PUT("/tracing/traces/:id", scoped(h.editTrace))
	e.GET("/tracing/traces/:id", scoped(h.getTraceTree))
	e.DELETE("/tracing/traces/:id", scoped(h.deleteTraceLinks))
	// The same body and answer as POST /traces/query. GET would
	// otherwise be read as a trace id.
	e.GET("/tracing/traces/query", methodNotAllowed)
	e.POST("/tracing/traces/query", scoped(h.queryTraces))
	e.POST("/tracing/sessions/query", scoped(h.distinct("session_id", "session_ids")))
	e.POST("/tracing/users/query", scoped(h.distinct("user_id", "user_ids")))

	e.GET("/spans", scoped(h.listSpans))
	e.POST("/spans/query", scoped(h.querySpans))
	e.POST("/spans/ingest", scoped(h.ingestSpans))
	e.GET("/spans/:trace_id/:span_id", scoped(h.getSpan))
	e.POST("/spans/sessions/query", scoped(h.distinct("session_id", "session_ids")))
	e.POST("/spans/users/query", scoped(h.distinct("user_id", "user_ids")))

	e.GET("/traces", scoped(h.listTraces))
	// The compatible platform answers 405 for GET on its POST-only trace routes,
	// which would otherwise be read as a trace id.
	e.GET("/traces/query", methodNotAllowed)
	e.GET("/traces/ingest", methodNotAllowed)
	e.POST("/traces/query", scoped(h.queryTraces))
	e.POST("/traces/ingest", scoped(h.ingestTraces))
	e.POST("/traces", scoped(h.createListTrace))
	e.GET("/traces/:id", scoped(h.getTrace))
	e.PUT("/traces/:id", scoped(h.editListTrace))
	e.DELETE("/traces/:id", scoped(h.deleteTrace))

	h.registerSimple(e)
	e.POST(purgewire.Path, purgewire.Handler(func(c echo.Context, ids []uuid.UUID) error {
		if h.Purge == nil {
			return errs.New(errs.Unavailable, "tracing.purge", "purge is not configured")
		}
		return h.Purge.Projects(c.Request().Context(), ids)
	}))
}

// init makes the use-case services the handlers call from the ones the
// Handler was given.
func (h *Handler) init() {
	var epochs tracewrite.Epochs // a nil *dedup.Epochs must stay a nil interface
	if h.Deletes != nil {
		epochs = h.Deletes
	}
	h.traces = tracewrite.NewService(h.Ingest, h.Query, epochs)
}

// readBudget opens the request's share of the span reads' memory budget
// (query.Budget) for the caller's project, and gives it back once the
// answer is written: the rows a read returns are held until then.
func (h *Handler) readBudget(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		sc, ok := scope.From(c.Request().Context())
		if !ok {
			return next(c)
		}
		read := h.Query.Reads().Open(sc.ProjectID.String())
		defer read.Release()
		c.SetRequest(c.Request().WithContext(query.WithRead(c.Request().Context(), read)))
		return next(c)
	}
}

func methodNotAllowed(echo.Context) error { return echo.ErrMethodNotAllowed }

// scopedFunc is a handler of a route that serves one project, the
// caller's.
type scopedFunc func(c echo.Context, sc scope.Scope) error

// scoped reads the caller's project (the scope the gateway's headers
// carry) before f runs: the one prologue of every route here.
func scoped(f scopedFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		sc, err := httpx.ProjectScope(c)
		if err != nil {
			return err
		}
		return f(c, sc)
	}
}
