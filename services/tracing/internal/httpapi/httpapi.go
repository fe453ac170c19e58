// Package httpapi is the tracing service's internal HTTP surface (behind
// the gateway): native ingest, trace CRUD, span and trace queries, the
// legacy query, analytics and the simple traces, plus the gateway's OTLP
// route, served by otlpserver's HTTP transport. Handlers bind, call a
// service, render.
package httpapi

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"sort"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/httpx"
	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/pkg/spanmodel"
	"github.com/assayhq/assay/services/tracing/internal/annotate"
	"github.com/assayhq/assay/services/tracing/internal/dedup"
	"github.com/assayhq/assay/services/tracing/internal/ingest"
	"github.com/assayhq/assay/services/tracing/internal/otlpserver"
	"github.com/assayhq/assay/services/tracing/internal/query"
	"github.com/assayhq/assay/services/tracing/internal/registryclient"
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

	traces *tracewrite.Service // made by Register from the services above
}

// Register adds every route of the internal API (behind the gateway).
func (h *Handler) Register(e *echo.Echo) {
	h.init()
	// OTLP behind the gateway: the receiver's HTTP transport, as on the
	// OTLP port.
	otlp := otlpserver.NewHTTP(h.Ingest, h.Limits)
	e.GET("/otlp/v1/traces", otlp.Ready)
	e.POST("/otlp/v1/traces", otlp.Export)

	e.POST("/tracing/spans/ingest", h.ingestSpans)
	e.POST("/tracing/spans/query", h.legacyQuery)
	e.POST("/tracing/spans/analytics", h.legacyAnalytics)
	e.POST("/tracing/analytics/query", h.analytics)
	e.POST("/spans/analytics/query", h.analytics)
	e.POST("/tracing/traces", h.createTrace)
	e.PUT("/tracing/traces/:id", h.editTrace)
	e.GET("/tracing/traces/:id", h.getTraceTree)
	e.DELETE("/tracing/traces/:id", h.deleteTraceLinks)
	// Spec §4.4: the same body and answer as POST /traces/query. GET would
	// otherwise be read as a trace id.
	e.GET("/tracing/traces/query", methodNotAllowed)
	e.POST("/tracing/traces/query", h.queryTraces)
	e.POST("/tracing/sessions/query", h.distinct("session_id", "session_ids"))
	e.POST("/tracing/users/query", h.distinct("user_id", "user_ids"))

	e.GET("/spans", h.listSpans)
	e.POST("/spans/query", h.querySpans)
	e.POST("/spans/ingest", h.ingestSpans)
	e.GET("/spans/:trace_id/:span_id", h.getSpan)
	e.POST("/spans/sessions/query", h.distinct("session_id", "session_ids"))
	e.POST("/spans/users/query", h.distinct("user_id", "user_ids"))

	e.GET("/traces", h.listTraces)
	// The reference answers 405 for GET on its POST-only trace routes,
	// which would otherwise be read as a trace id.
	e.GET("/traces/query", methodNotAllowed)
	e.GET("/traces/ingest", methodNotAllowed)
	e.POST("/traces/query", h.queryTraces)
	e.POST("/traces/ingest", h.ingestTraces)
	e.POST("/traces", h.createListTrace)
	e.GET("/traces/:id", h.getTrace)
	e.PUT("/traces/:id", h.editListTrace)
	e.DELETE("/traces/:id", h.deleteTrace)

	h.registerSimple(e)
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

func methodNotAllowed(echo.Context) error { return echo.ErrMethodNotAllowed }

// requestKey identifies a request for JetStream's duplicate detection: the
// same body sent again to the same route (a client retry) is stored once.
func requestKey(c echo.Context, body []byte) []byte {
	return append([]byte(c.Request().Method+" "+c.Request().URL.Path+"\n"), body...)
}

func readJSON(c echo.Context) ([]byte, map[string]any, error) {
	body, err := io.ReadAll(c.Request().Body)
	if err != nil {
		return nil, nil, errs.Wrap(errs.Invalid, "request.unreadable_body", err)
	}
	m, err := ingest.DecodeJSON(body)
	return body, m, err
}

type ingestResponse struct {
	Count    int               `json:"count"`
	Links    []ingest.Link     `json:"links"`
	Rejected []rejectedSpanOut `json:"rejected,omitempty"`
}

type rejectedSpanOut struct {
	Index  int    `json:"index"`
	Detail string `json:"detail"`
}

func rejectedOut(rs []spanmodel.Error) []rejectedSpanOut {
	out := make([]rejectedSpanOut, 0, len(rs))
	for _, r := range rs {
		out = append(out, rejectedSpanOut{Index: r.Index, Detail: r.Msg})
	}
	return out
}

// ingestSpans takes the flat and nested native forms; 202 with the
// accepted spans, and (beyond the reference) the rejected ones with why.
func (h *Handler) ingestSpans(c echo.Context) error {
	sc, err := httpx.ProjectScope(c)
	if err != nil {
		return err
	}
	body, m, err := readJSON(c)
	if err != nil {
		return err
	}
	_, hasSpans := m["spans"]
	_, hasTraces := m["traces"]
	if !hasSpans && !hasTraces {
		return errs.WithDetail(errs.Invalid, "tracing.missing_spans", "Missing spans", "body needs \"spans\" (a list) or \"traces\" (an object)")
	}
	raws, parseRejected, err := ingest.NativeSpans(m)
	if err != nil {
		return err
	}
	res, err := h.Ingest.Ingest(c.Request().Context(), sc, raws, requestKey(c, body))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusAccepted, ingestResponse{Count: len(res.Links), Links: res.Links, Rejected: rejectedOut(append(parseRejected, res.Rejected...))})
}

func (h *Handler) upsertTrace(c echo.Context, pathID string) (ingest.Result, string, error) {
	sc, err := httpx.ProjectScope(c)
	if err != nil {
		return ingest.Result{}, "", err
	}
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

func (h *Handler) createTrace(c echo.Context) error {
	res, _, err := h.upsertTrace(c, "")
	if err != nil {
		return err
	}
	return c.JSON(http.StatusAccepted, ingestResponse{Count: len(res.Links), Links: res.Links})
}

func (h *Handler) editTrace(c echo.Context) error {
	res, _, err := h.upsertTrace(c, c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusAccepted, ingestResponse{Count: len(res.Links), Links: res.Links})
}

func (h *Handler) createListTrace(c echo.Context) error {
	res, id, err := h.upsertTrace(c, "")
	if err != nil {
		return err
	}
	return c.JSON(http.StatusAccepted, map[string]any{"count": len(res.Links), "trace_id": id})
}

func (h *Handler) editListTrace(c echo.Context) error {
	res, id, err := h.upsertTrace(c, c.Param("id"))
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

func (h *Handler) getTraceTree(c echo.Context) error {
	return h.sendTrace(c, func(spans []query.Parsed) map[string]any {
		return map[string]any{"count": 1, "traces": query.Trees(spans)}
	})
}

func (h *Handler) getTrace(c echo.Context) error {
	return h.sendTrace(c, func(spans []query.Parsed) map[string]any {
		return map[string]any{"count": 1, "trace": traceList(spans)[0]}
	})
}

// sendTrace loads the trace named by the path's id and answers shape(its
// spans), or {count: 0} when it has none.
func (h *Handler) sendTrace(c echo.Context, shape func([]query.Parsed) map[string]any) error {
	sc, err := httpx.ProjectScope(c)
	if err != nil {
		return err
	}
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

// deleteSpans tombstones every live span of the trace the path names.
func (h *Handler) deleteSpans(c echo.Context) (string, []ingest.Link, error) {
	sc, err := httpx.ProjectScope(c)
	if err != nil {
		return "", nil, err
	}
	id, err := pathTraceID(c, "id")
	if err != nil {
		return "", nil, err
	}
	links, err := h.traces.Delete(c.Request().Context(), sc, id)
	return id, links, err
}

func (h *Handler) deleteTraceLinks(c echo.Context) error {
	_, links, err := h.deleteSpans(c)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusAccepted, ingestResponse{Count: len(links), Links: links})
}

func (h *Handler) deleteTrace(c echo.Context) error {
	id, links, err := h.deleteSpans(c)
	if err != nil {
		return err
	}
	out := map[string]any{"count": len(links)}
	if len(links) > 0 {
		out["trace_id"] = id
	}
	return c.JSON(http.StatusAccepted, out)
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

// idList reads the ids of a query string: every value of the singular
// and of the plural name, each value a comma list, so ?trace_id=a&trace_id=b,
// ?trace_id=a,b and ?trace_ids=a,b mean the same. Every route that takes
// ids in the query reads them here.
func idList(c echo.Context, one, many string, parse func(string) (string, error)) ([]string, error) {
	var raw []string
	params := c.QueryParams()
	for _, name := range []string{one, many} {
		for _, v := range params[name] {
			for _, p := range strings.Split(v, ",") {
				if p = strings.TrimSpace(p); p != "" {
					raw = append(raw, p)
				}
			}
		}
	}
	out := make([]string, 0, len(raw))
	for _, r := range raw {
		id, err := parse(r)
		if err != nil {
			return nil, errs.WithDetail(errs.Invalid, "tracing.invalid_id", err.Error(), err.Error())
		}
		out = append(out, id)
	}
	return out, nil
}

func (h *Handler) listSpans(c echo.Context) error {
	sc, err := httpx.ProjectScope(c)
	if err != nil {
		return err
	}
	tids, err := idList(c, "trace_id", "trace_ids", spanmodel.TraceID)
	if err != nil {
		return err
	}
	sids, err := idList(c, "span_id", "span_ids", spanmodel.SpanID)
	if err != nil {
		return err
	}
	if len(tids) == 0 && len(sids) == 0 {
		return errs.New(errs.Invalid, "tracing.missing_ids", "give trace_id, trace_ids, span_id or span_ids")
	}
	spans, err := h.Query.Spans(c.Request().Context(), sc.ProjectID.String(), tids, sids)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"count": len(spans), "spans": query.Spans(spans)})
}

func (h *Handler) listTraces(c echo.Context) error {
	sc, err := httpx.ProjectScope(c)
	if err != nil {
		return err
	}
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

func (h *Handler) getSpan(c echo.Context) error {
	sc, err := httpx.ProjectScope(c)
	if err != nil {
		return err
	}
	tid, err := pathTraceID(c, "trace_id")
	if err != nil {
		return err
	}
	sid, err := spanmodel.SpanID(c.Param("span_id"))
	if err != nil {
		return errs.WithDetail(errs.Invalid, "tracing.invalid_span_id", err.Error(), err.Error())
	}
	spans, err := h.Query.Spans(c.Request().Context(), sc.ProjectID.String(), []string{tid}, []string{sid})
	if err != nil {
		return err
	}
	if len(spans) == 0 {
		return c.JSON(http.StatusOK, map[string]any{"count": 0})
	}
	return c.JSON(http.StatusOK, map[string]any{"count": 1, "span": query.SpanJSON(spans[0])})
}

func (h *Handler) ingestTraces(c echo.Context) error {
	sc, err := httpx.ProjectScope(c)
	if err != nil {
		return err
	}
	body, m, err := readJSON(c)
	if err != nil {
		return err
	}
	list, terr := ingest.As[[]any](m["traces"], "traces")
	if terr != nil {
		return terr.Field()
	}
	if len(list) == 0 {
		return errs.New(errs.Invalid, "tracing.missing_traces", "Missing traces")
	}
	var raws []spanmodel.Raw
	var traceOf []int // the position in traces of each raw span
	var rejected []rejectedSpanOut
	for i, t := range list {
		tm, ok := t.(map[string]any)
		if !ok {
			return (&ingest.TypeError{Loc: []any{"traces", i}, Want: "an object"}).Field()
		}
		tid, terr := ingest.As[string](tm["trace_id"], "traces", i, "trace_id")
		if terr != nil {
			return terr.Field()
		}
		r, bad, err := ingest.NestedSpans(tm, tid, "traces", i)
		if err != nil {
			return err
		}
		for _, b := range bad {
			rejected = append(rejected, rejectedSpanOut{Index: b.Index, Detail: fmt.Sprintf("traces[%d]: %s", i, b.Msg)})
		}
		raws = append(raws, r...)
		for range r {
			traceOf = append(traceOf, i)
		}
	}
	res, err := h.Ingest.Ingest(c.Request().Context(), sc, raws, requestKey(c, body))
	if err != nil {
		return err
	}
	// A bad span costs only itself, and the caller learns which and why
	// (the reference drops it silently).
	for _, b := range res.Rejected {
		at := -1
		if b.Index >= 0 && b.Index < len(traceOf) {
			at = traceOf[b.Index]
		}
		rejected = append(rejected, rejectedSpanOut{Index: b.Index, Detail: fmt.Sprintf("traces[%d]: %s", at, b.Msg)})
	}
	ids := []string{}
	seen := map[string]bool{}
	for _, l := range res.Links {
		if !seen[l.TraceID] {
			seen[l.TraceID] = true
			ids = append(ids, l.TraceID)
		}
	}
	out := map[string]any{"count": len(ids), "trace_ids": ids}
	if len(rejected) > 0 {
		out["rejected"] = rejected
	}
	return c.JSON(http.StatusAccepted, out)
}

// queryBody is the body of /spans/query and /traces/query.
type queryBody struct {
	Filtering        json.RawMessage     `json:"filtering"`
	Windowing        *query.RawWindowing `json:"windowing"`
	QueryRef         json.RawMessage     `json:"query_ref"`
	QueryVariantRef  json.RawMessage     `json:"query_variant_ref"`
	QueryRevisionRef json.RawMessage     `json:"query_revision_ref"`
}

// bindQuery reads a /spans/query or /traces/query body. found is false
// when saved query refs resolve to nothing: the empty envelope answers.
func (h *Handler) bindQuery(c echo.Context, focus string) (req query.Request, found bool, err error) {
	var b queryBody
	if c.Request().ContentLength != 0 {
		dec := json.NewDecoder(c.Request().Body)
		dec.DisallowUnknownFields()
		if err := dec.Decode(&b); err != nil && err != io.EOF {
			msg := fmt.Sprintf("malformed query body: %v", err)
			return query.Request{}, false, errs.WithDetail(errs.Invalid, "request.malformed_body", msg, msg)
		}
	}
	var refs registryclient.QueryRefs
	for _, r := range []struct {
		name string
		raw  json.RawMessage
		dst  **registryclient.Ref
	}{{"query_ref", b.QueryRef, &refs.Query}, {"query_variant_ref", b.QueryVariantRef, &refs.Variant}, {"query_revision_ref", b.QueryRevisionRef, &refs.Revision}} {
		ref, err := parseRef(r.name, r.raw)
		if err != nil {
			return query.Request{}, false, err
		}
		*r.dst = ref
	}
	if !refs.IsZero() {
		sc, err := httpx.ProjectScope(c)
		if err != nil {
			return query.Request{}, false, err
		}
		return query.Saved(c.Request().Context(), h.SavedQueries, sc, focus, refs, b.Windowing)
	}
	w, err := b.Windowing.Parse("windowing")
	if err != nil {
		return query.Request{}, false, err
	}
	return query.Request{Focus: focus, Filter: b.Filtering, Windowing: w}, true, nil
}

// parseRef reads {id?, slug?, version?}; a version may come as a number.
func parseRef(name string, raw json.RawMessage) (*registryclient.Ref, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		msg := fmt.Sprintf("%s must be an object {id, slug, version}", name)
		return nil, errs.WithDetail(errs.Invalid, "tracing.invalid_ref", msg, msg)
	}
	ref := &registryclient.Ref{}
	for k, v := range m {
		if v == nil {
			continue
		}
		s := fmt.Sprint(v)
		switch k {
		case "id":
			ref.ID = s
		case "slug":
			ref.Slug = s
		case "version":
			ref.Version = s
		default:
			msg := fmt.Sprintf("%s.%s is not a ref field (id, slug, version)", name, k)
			return nil, errs.WithDetail(errs.Invalid, "tracing.invalid_ref", msg, msg)
		}
	}
	return ref, nil
}

func (h *Handler) querySpans(c echo.Context) error {
	sc, err := httpx.ProjectScope(c)
	if err != nil {
		return err
	}
	req, found, err := h.bindQuery(c, "span")
	if err != nil {
		return err
	}
	if !found {
		return c.JSON(http.StatusOK, map[string]any{"count": 0})
	}
	res, err := h.Query.Query(c.Request().Context(), sc.ProjectID.String(), req)
	if err != nil {
		return err
	}
	out := map[string]any{"count": len(res.Spans), "spans": query.Spans(res.Spans)}
	if res.Next != nil {
		out["windowing"] = res.Next
	}
	return c.JSON(http.StatusOK, out)
}

func (h *Handler) queryTraces(c echo.Context) error {
	sc, err := httpx.ProjectScope(c)
	if err != nil {
		return err
	}
	req, found, err := h.bindQuery(c, "trace")
	if err != nil {
		return err
	}
	if !found {
		return c.JSON(http.StatusOK, map[string]any{"count": 0})
	}
	res, err := h.Query.Query(c.Request().Context(), sc.ProjectID.String(), req)
	if err != nil {
		return err
	}
	list := traceList(res.Spans)
	out := map[string]any{"count": len(list), "traces": list}
	if res.Next != nil {
		out["windowing"] = res.Next
	}
	return c.JSON(http.StatusOK, out)
}

// legacyQuery is /tracing/spans/query: the flat body (or query string),
// with "filter" as an object or a JSON string.
func (h *Handler) legacyQuery(c echo.Context) error {
	sc, err := httpx.ProjectScope(c)
	if err != nil {
		return err
	}
	allowed := map[string]bool{"focus": true, "format": true, "oldest": true, "newest": true, "limit": true, "interval": true, "rate": true, "filter": true, "next": true, "order": true}
	params, err := readFlat(c, allowed)
	if err != nil {
		return err
	}
	focus := fmt.Sprint(orDefault(params["focus"], "trace"))
	if focus != "trace" && focus != "span" {
		return errs.WithDetail(errs.Invalid, "tracing.invalid_focus", "focus", fmt.Sprintf("focus %q is not trace or span", focus))
	}
	format := fmt.Sprint(orDefault(params["format"], "agenta"))
	if format != "agenta" && format != "opentelemetry" {
		return errs.WithDetail(errs.Invalid, "tracing.invalid_format", "format", fmt.Sprintf("format %q is not agenta or opentelemetry", format))
	}
	var filter json.RawMessage
	switch f := params["filter"].(type) {
	case nil:
	case string:
		filter = json.RawMessage(f)
	default:
		filter, _ = json.Marshal(ingest.Numbers(f))
	}
	var rw *query.RawWindowing
	if params["oldest"] != nil || params["newest"] != nil || params["limit"] != nil || params["rate"] != nil || params["next"] != nil || params["order"] != nil {
		rw = &query.RawWindowing{Newest: jsonScalar(params["newest"]), Oldest: jsonScalar(params["oldest"]), Order: str(params["order"]), Next: str(params["next"])}
		limit, err := numberParam(params, "limit", true)
		if err != nil {
			return err
		}
		if limit != nil {
			n := int(*limit)
			rw.Limit = &n
		}
		if rw.Rate, err = numberParam(params, "rate", false); err != nil {
			return err
		}
	}
	w, err := rw.Parse("windowing")
	if err != nil {
		return err
	}
	res, err := h.Query.Query(c.Request().Context(), sc.ProjectID.String(), query.Request{Focus: focus, Filter: filter, Windowing: w})
	if err != nil {
		return err
	}
	if focus == "span" || format == "opentelemetry" {
		return c.JSON(http.StatusOK, map[string]any{"count": len(res.Spans), "spans": query.Spans(res.Spans)})
	}
	trees := query.Trees(res.Spans)
	return c.JSON(http.StatusOK, map[string]any{"count": len(trees), "traces": trees})
}

// readFlat reads the legacy flat query: query-string keys, overridden by
// the JSON body's. An unknown key is a 400 naming it: the reference ignores
// the whole body then, which silently returns unfiltered data.
func readFlat(c echo.Context, allowed map[string]bool) (map[string]any, error) {
	params := map[string]any{}
	for k, v := range c.QueryParams() {
		if len(v) > 0 {
			params[k] = v[0]
		}
	}
	if c.Request().ContentLength != 0 {
		body, err := io.ReadAll(c.Request().Body)
		if err != nil {
			return nil, errs.Wrap(errs.Invalid, "request.unreadable_body", err)
		}
		if len(strings.TrimSpace(string(body))) > 0 {
			m, err := ingest.DecodeJSON(body)
			if err != nil {
				return nil, err
			}
			for k, v := range m {
				params[k] = v
			}
		}
	}
	for k := range params {
		if !allowed[k] {
			known := make([]string, 0, len(allowed))
			for a := range allowed {
				known = append(known, a)
			}
			sort.Strings(known)
			return nil, errs.WithDetail(errs.Invalid, "tracing.unknown_key", "unknown query key "+k,
				fmt.Sprintf("unknown query key %q (known: %s)", k, strings.Join(known, ", ")))
		}
	}
	return params, nil
}

func (h *Handler) distinct(column, key string) echo.HandlerFunc {
	return func(c echo.Context) error {
		sc, err := httpx.ProjectScope(c)
		if err != nil {
			return err
		}
		var b struct {
			Realtime  bool                `json:"realtime"`
			Windowing *query.RawWindowing `json:"windowing"`
		}
		if c.Request().ContentLength != 0 {
			if err := httpx.Bind(c, &b); err != nil {
				return err
			}
		}
		w, err := b.Windowing.Parse("windowing")
		if err != nil {
			return err
		}
		ids, next, err := h.Query.Distinct(c.Request().Context(), sc.ProjectID.String(), column, b.Realtime, w)
		if err != nil {
			return err
		}
		out := map[string]any{"count": len(ids), key: nonNil(ids)}
		if next != nil {
			out["windowing"] = next
		}
		return c.JSON(http.StatusOK, out)
	}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func orDefault(v any, d string) any {
	if v == nil || v == "" {
		return d
	}
	return v
}

func str(v any) string {
	if v == nil {
		return ""
	}
	return fmt.Sprint(v)
}

func jsonScalar(v any) any {
	if n, ok := v.(json.Number); ok {
		return n.String()
	}
	return v
}

// numberParam reads the numeric key name of a flat query (body or query
// string): nil when absent, a 400 naming it when it is not a number (or
// not a whole one, with integer).
func numberParam(params map[string]any, name string, integer bool) (*float64, error) {
	raw, ok := params[name]
	if !ok || raw == nil {
		return nil, nil
	}
	v, ok := toFloat(raw)
	if !ok || integer && (v != math.Trunc(v) || math.Abs(v) > 1<<31) {
		kind := "a number"
		if integer {
			kind = "a whole number"
		}
		msg := fmt.Sprintf("%s: %v is not %s", name, raw, kind)
		return nil, errs.WithDetail(errs.Invalid, "tracing.invalid_windowing", msg, msg)
	}
	return &v, nil
}

func toFloat(v any) (float64, bool) {
	switch t := v.(type) {
	case json.Number:
		f, err := t.Float64()
		return f, err == nil
	case string:
		var f float64
		_, err := fmt.Sscan(t, &f)
		return f, err == nil
	case float64:
		return t, true
	}
	return 0, false
}

var _ = scope.Scope{}
