package httpapi

// Span and trace queries: by ids in the query string or the path, by the
// filtering/windowing body (or a saved query), and the distinct sessions and
// users.

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/httpx"
	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/pkg/spanmodel"
	"github.com/assayhq/assay/services/tracing/internal/query"
	"github.com/assayhq/assay/services/tracing/internal/registryclient"
)

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

func (h *Handler) listSpans(c echo.Context, sc scope.Scope) error {
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

func (h *Handler) getSpan(c echo.Context, sc scope.Scope) error {
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
func (h *Handler) bindQuery(c echo.Context, sc scope.Scope, focus string) (req query.Request, found bool, err error) {
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

func (h *Handler) querySpans(c echo.Context, sc scope.Scope) error {
	req, found, err := h.bindQuery(c, sc, "span")
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

func (h *Handler) queryTraces(c echo.Context, sc scope.Scope) error {
	req, found, err := h.bindQuery(c, sc, "trace")
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

func (h *Handler) distinct(column, key string) scopedFunc {
	return func(c echo.Context, sc scope.Scope) error {
		var b struct {
			Realtime  bool                `json:"realtime"`
			Windowing *query.RawWindowing `json:"windowing"`
			// Filtering is ours (the compatible query has none): the
			// console lists the sessions of production traffic only.
			Filtering json.RawMessage `json:"filtering"`
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
		ids, next, err := h.Query.DistinctFiltered(c.Request().Context(), sc.ProjectID.String(), column, b.Realtime, b.Filtering, w)
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
