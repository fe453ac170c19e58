package httpapi

// The legacy flat query, /tracing/spans/query: its keys in the query string
// or a flat JSON body.

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"sort"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/services/tracing/internal/ingest"
	"github.com/assayhq/assay/services/tracing/internal/query"
)

// legacyQuery is /tracing/spans/query: the flat body (or query string),
// with "filter" as an object or a JSON string.
func (h *Handler) legacyQuery(c echo.Context, sc scope.Scope) error {
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
// the JSON body's. An unknown key is a 400 naming it: the compatible platform ignores
// the whole body then, which silently returns unfiltered data.
func readFlat(c echo.Context, allowed map[string]bool) (map[string]any, error) {
	params := map[string]any{}
	for k, v := range c.QueryParams() {
		// project_id is the gateway's scope parameter (the console sends it on every
		// call, as the compatible platform's clients do); the gateway has resolved it already.
		if k == "project_id" {
			continue
		}
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
