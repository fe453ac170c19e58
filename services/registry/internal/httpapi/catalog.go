package httpapi

import (
	"encoding/json"

	"github.com/labstack/echo/v4"

	"github.com/assayhq/assay/services/registry/internal/catalog"
	"github.com/assayhq/assay/services/registry/internal/versioned"
)

// routeCatalog adds under p the catalog routes of the workflow family: the
// types, templates, presets and harnesses an application, evaluator or
// workflow is built from (package catalog holds them).
func (a *workflowAPI) routeCatalog(e *echo.Echo, p string) {
	cat := a.wf.Catalog // read per request: the routes are also listed without services
	e.GET(p+"/catalog/types", counted("types", func(echo.Context) []catalog.Type { return cat().Types() }))
	if a.role != "is_application" {
		e.GET(p+"/catalog/types/:key", found("type", func(c echo.Context) *catalog.Type { return cat().Type(c.Param("key")) },
			func(c echo.Context) error { return versioned.NotFound("Unknown ag-type: " + c.Param("key")) }))
	}
	e.GET(p+"/catalog/templates", counted("templates", func(c echo.Context) []catalog.Template {
		return cat().Templates(a.catalogRole(c), includeArchived(c))
	}))
	e.GET(p+"/catalog/templates/:key", found("template", func(c echo.Context) *catalog.Template {
		return cat().Template(a.catalogRole(c), c.Param("key"))
	}, nil))
	e.GET(p+"/catalog/templates/:key/presets", counted("presets", func(c echo.Context) []catalog.Template {
		return cat().Presets(a.catalogRole(c), c.Param("key"), includeArchived(c))
	}))
	e.GET(p+"/catalog/templates/:key/presets/:preset", found("preset", func(c echo.Context) *catalog.Template {
		return cat().Preset(a.catalogRole(c), c.Param("key"), c.Param("preset"))
	}, nil))
	if a.role == "is_evaluator" {
		// GET /simple/evaluators/templates: the evaluator catalog in the
		// shape older clients read (catalog.LegacyTemplate).
		legacy := counted("templates", func(c echo.Context) []catalog.LegacyTemplate { return cat().Legacy(includeArchived(c)) })
		e.GET("/simple/evaluators/templates", stream(false, func(rq *req) error { return legacy(rq.c) }))
	}
	if a.role == "" {
		e.GET(p+"/catalog/harnesses", counted("harnesses", func(echo.Context) []catalog.Harness { return cat().Harnesses() }))
		e.GET(p+"/catalog/harnesses/:key", found("harness", func(c echo.Context) *catalog.Harness { return cat().Harness(c.Param("key")) },
			func(c echo.Context) error { return versioned.NotFound("Unknown harness: " + c.Param("key")) }))
	}
}

// counted answers {"count": n, key: list(c)}.
func counted[T any](key string, list func(echo.Context) []T) echo.HandlerFunc {
	return func(c echo.Context) error {
		xs := list(c)
		return sendJSON(c, map[string]any{"count": len(xs), key: xs})
	}
}

// found answers {"count": 1, key: get(c)}; when there is none, missing(c)
// or, when missing is nil, {"count": 0}.
func found[T any](key string, get func(echo.Context) *T, missing func(echo.Context) error) echo.HandlerFunc {
	return func(c echo.Context) error {
		x := get(c)
		if x != nil {
			return sendJSON(c, map[string]any{"count": 1, key: x})
		}
		if missing != nil {
			return missing(c)
		}
		return sendJSON(c, map[string]any{"count": 0})
	}
}

func (a *workflowAPI) catalogRole(c echo.Context) catalog.Role {
	var r catalog.Role
	t := true
	switch a.role {
	case "is_application":
		r.IsApplication = &t
	case "is_evaluator":
		r.IsEvaluator = &t
	default:
		flag := func(name string) *bool {
			v := c.QueryParam(name)
			if v == "" {
				return nil
			}
			b := v == "true" || v == "1"
			return &b
		}
		r.IsApplication, r.IsEvaluator, r.IsSnippet = flag("is_application"), flag("is_evaluator"), flag("is_snippet")
	}
	return r
}

func includeArchived(c echo.Context) bool {
	v := c.QueryParam("include_archived")
	return v == "true" || v == "1"
}

func sendJSON(c echo.Context, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return send(c, raw)
}
