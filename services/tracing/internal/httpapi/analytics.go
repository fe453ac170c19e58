package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/services/tracing/internal/ingest"
	"github.com/assayhq/assay/services/tracing/internal/query"
)

var analyticsKeys = map[string]bool{"focus": true, "format": true, "oldest": true, "newest": true, "limit": true,
	"interval": true, "rate": true, "filter": true, "specs": true,
	// The new-style body of /spans/analytics/query.
	"filtering": true, "windowing": true}

// bindAnalytics reads the flat analytics body (the compatible platform's); the
// new-style filtering and windowing objects are taken too.
func bindAnalytics(c echo.Context, allowSpecs bool) (query.AnalyticsRequest, map[string]any, error) {
	allowed := analyticsKeys
	if !allowSpecs {
		allowed = map[string]bool{}
		for k := range analyticsKeys {
			allowed[k] = k != "specs"
		}
	}
	params, err := readFlat(c, allowed)
	if err != nil {
		return query.AnalyticsRequest{}, nil, err
	}
	if w, ok := params["windowing"].(map[string]any); ok {
		for k, v := range w {
			if _, set := params[k]; !set {
				params[k] = v
			}
		}
	}
	var req query.AnalyticsRequest
	f := params["filter"]
	if f == nil {
		f = params["filtering"]
	}
	switch t := f.(type) {
	case nil:
	case string:
		req.Filter = []byte(t)
	default:
		req.Filter, _ = json.Marshal(ingest.Numbers(t))
	}
	rw := &query.RawWindowing{Newest: jsonScalar(params["newest"]), Oldest: jsonScalar(params["oldest"])}
	if rw.Rate, err = numberParam(params, "rate", false); err != nil {
		return query.AnalyticsRequest{}, nil, err
	}
	w, err := rw.Parse("windowing")
	if err != nil {
		return query.AnalyticsRequest{}, nil, err
	}
	req.Oldest, req.Newest, req.Rate = w.Oldest, w.Newest, w.Rate
	if v, ok := toFloat(params["interval"]); ok {
		if v < 0 {
			return query.AnalyticsRequest{}, nil, errs.WithDetail(errs.Invalid, "tracing.invalid_interval", "interval", "interval is in minutes and must not be negative")
		}
		req.Interval = int(v)
	} else if params["interval"] != nil {
		return query.AnalyticsRequest{}, nil, errs.WithDetail(errs.Invalid, "tracing.invalid_interval", "interval", fmt.Sprintf("interval %v is not a number of minutes", params["interval"]))
	}
	if raw, ok := params["specs"]; ok && raw != nil {
		b, _ := json.Marshal(ingest.Numbers(raw))
		if err := json.Unmarshal(b, &req.Specs); err != nil {
			msg := fmt.Sprintf("specs: %v", err)
			return query.AnalyticsRequest{}, nil, errs.WithDetail(errs.Invalid, "tracing.invalid_specs", msg, msg)
		}
		if err := query.CheckSpecs(req.Specs, "specs"); err != nil {
			return query.AnalyticsRequest{}, nil, err
		}
	}
	return req, params, nil
}

// analytics is /tracing/analytics/query and /spans/analytics/query:
// {count, buckets, query, specs}.
func (h *Handler) analytics(c echo.Context, sc scope.Scope) error {
	req, _, err := bindAnalytics(c, true)
	if err != nil {
		return err
	}
	res, err := h.Query.Analytics(c.Request().Context(), sc.ProjectID.String(), req)
	if err != nil {
		return err
	}
	q := map[string]any{"oldest": res.Oldest.Format(time.RFC3339), "newest": res.Newest.Format(time.RFC3339), "interval": res.Interval}
	if len(req.Filter) > 0 {
		var f any
		if json.Unmarshal(req.Filter, &f) == nil {
			q["filter"] = f
		}
	}
	if req.Rate != nil {
		q["rate"] = *req.Rate
	}
	return c.JSON(http.StatusOK, map[string]any{"count": len(res.Buckets), "buckets": res.Buckets, "query": q, "specs": res.Specs})
}

// legacyAnalytics is /tracing/spans/analytics: totals and errors per bucket.
func (h *Handler) legacyAnalytics(c echo.Context, sc scope.Scope) error {
	req, params, err := bindAnalytics(c, false)
	if err != nil {
		return err
	}
	focus := fmt.Sprint(orDefault(params["focus"], "trace"))
	if focus != "trace" && focus != "span" {
		return errs.WithDetail(errs.Invalid, "tracing.invalid_focus", "focus", fmt.Sprintf("focus %q is not trace or span", focus))
	}
	buckets, err := h.Query.Legacy(c.Request().Context(), sc.ProjectID.String(), focus, req)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"count": len(buckets), "buckets": buckets})
}
