package httpapi

// Trace CRUD: create or replace one trace (the one-root rule is
// tracewrite's), read one or several by id, delete one.

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/pkg/spanmodel"
	"github.com/assayhq/assay/services/tracing/internal/ingest"
	"github.com/assayhq/assay/services/tracing/internal/query"
)

// upsertTrace binds the body of a trace create or edit ({trace: {...}} or
// the native forms; a span the body's parser rejects is a 400) and stores
// it as one trace through tracewrite; pathID is the edited trace's id, ""
// on create.
func (h *Handler) upsertTrace(c echo.Context, sc scope.Scope, pathID string) (ingest.Result, string, error) {
	body, m, err := readJSON(c)
	if err != nil {
		return ingest.Result{}, "", err
	}
	var raws []spanmodel.Raw
	var rejected []spanmodel.Error
	t, terr := ingest.As[map[string]any](m["trace"], "trace")
	if terr != nil {
		return ingest.Result{}, "", terr.Field()
	}
	if t != nil {
		tid, terr := ingest.As[string](t["trace_id"], "trace", "trace_id")
		if terr != nil {
			return ingest.Result{}, "", terr.Field()
		}
		if tid == "" {
			tid = pathID
		}
		if raws, rejected, err = ingest.NestedSpans(t, tid, "trace"); err != nil {
			return ingest.Result{}, "", err
		}
	} else {
		if _, ok := m["traces"]; !ok {
			if _, ok := m["spans"]; !ok {
				return ingest.Result{}, "", errs.New(errs.Invalid, "tracing.missing_trace", "Missing trace")
			}
		}
		if raws, rejected, err = ingest.NativeSpans(m); err != nil {
			return ingest.Result{}, "", err
		}
	}
	if len(rejected) > 0 {
		return ingest.Result{}, "", errs.WithDetail(errs.Invalid, "tracing.invalid_span", rejected[0].Error(), rejected[0].Error())
	}
	return h.traces.Upsert(c.Request().Context(), sc, raws, pathID, requestKey(c, body))
}

func (h *Handler) createTrace(c echo.Context, sc scope.Scope) error {
	res, _, err := h.upsertTrace(c, sc, "")
	if err != nil {
		return err
	}
	return c.JSON(http.StatusAccepted, ingestResponse{Count: len(res.Links), Links: res.Links})
}

func (h *Handler) editTrace(c echo.Context, sc scope.Scope) error {
	res, _, err := h.upsertTrace(c, sc, c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusAccepted, ingestResponse{Count: len(res.Links), Links: res.Links})
}

func (h *Handler) createListTrace(c echo.Context, sc scope.Scope) error {
	res, id, err := h.upsertTrace(c, sc, "")
	if err != nil {
		return err
	}
	return c.JSON(http.StatusAccepted, map[string]any{"count": len(res.Links), "trace_id": id})
}

func (h *Handler) editListTrace(c echo.Context, sc scope.Scope) error {
	res, id, err := h.upsertTrace(c, sc, c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusAccepted, map[string]any{"count": len(res.Links), "trace_id": id})
}

func pathTraceID(c echo.Context, name string) (string, error) {
	id, err := spanmodel.TraceID(c.Param(name))
	if err != nil {
		return "", errs.WithDetail(errs.Invalid, "tracing.invalid_trace_id", err.Error(), err.Error())
	}
	return id, nil
}

func (h *Handler) getTraceTree(c echo.Context, sc scope.Scope) error {
	return h.sendTrace(c, sc, func(spans []query.Parsed) map[string]any {
		return map[string]any{"count": 1, "traces": query.Trees(spans)}
	})
}

func (h *Handler) getTrace(c echo.Context, sc scope.Scope) error {
	return h.sendTrace(c, sc, func(spans []query.Parsed) map[string]any {
		return map[string]any{"count": 1, "trace": traceList(spans)[0]}
	})
}

// sendTrace loads the trace named by the path's id and answers shape(its
// spans), or {count: 0} when it has none.
func (h *Handler) sendTrace(c echo.Context, sc scope.Scope, shape func([]query.Parsed) map[string]any) error {
	id, err := pathTraceID(c, "id")
	if err != nil {
		return err
	}
	spans, err := h.Query.Traces(c.Request().Context(), sc.ProjectID.String(), []string{id})
	if err != nil {
		return err
	}
	if len(spans) == 0 {
		return c.JSON(http.StatusOK, map[string]any{"count": 0})
	}
	return c.JSON(http.StatusOK, shape(spans))
}

func (h *Handler) listTraces(c echo.Context, sc scope.Scope) error {
	tids, err := idList(c, "trace_id", "trace_ids", spanmodel.TraceID)
	if err != nil {
		return err
	}
	if len(tids) == 0 {
		return errs.New(errs.Invalid, "tracing.missing_ids", "give trace_id or trace_ids")
	}
	spans, err := h.Query.Traces(c.Request().Context(), sc.ProjectID.String(), tids)
	if err != nil {
		return err
	}
	list := traceList(spans)
	return c.JSON(http.StatusOK, map[string]any{"count": len(list), "traces": list})
}

// traceList renders spans grouped by trace as [{trace_id, spans}].
func traceList(spans []query.Parsed) []map[string]any {
	trees := query.Trees(spans)
	out := []map[string]any{}
	for _, id := range query.TraceOrder(spans) {
		out = append(out, map[string]any{"trace_id": id, "spans": trees[id]["spans"]})
	}
	return out
}

// deleteSpans tombstones every live span of the trace the path names.
func (h *Handler) deleteSpans(c echo.Context, sc scope.Scope) (string, []ingest.Link, error) {
	id, err := pathTraceID(c, "id")
	if err != nil {
		return "", nil, err
	}
	links, err := h.traces.Delete(c.Request().Context(), sc, id)
	return id, links, err
}

func (h *Handler) deleteTraceLinks(c echo.Context, sc scope.Scope) error {
	_, links, err := h.deleteSpans(c, sc)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusAccepted, ingestResponse{Count: len(links), Links: links})
}

func (h *Handler) deleteTrace(c echo.Context, sc scope.Scope) error {
	id, links, err := h.deleteSpans(c, sc)
	if err != nil {
		return err
	}
	out := map[string]any{"count": len(links)}
	if len(links) > 0 {
		out["trace_id"] = id
	}
	return c.JSON(http.StatusAccepted, out)
}
