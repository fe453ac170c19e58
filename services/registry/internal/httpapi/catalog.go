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
	e.GET(p+"/catalog/types", a.types)
	if a.role != "is_application" {
		e.GET(p+"/catalog/types/:key", a.typeByKey)
	}
	e.GET(p+"/catalog/templates", a.templates)
	e.GET(p+"/catalog/templates/:key", a.template)
	e.GET(p+"/catalog/templates/:key/presets", a.presets)
	e.GET(p+"/catalog/templates/:key/presets/:preset", a.preset)
	if a.role == "is_evaluator" {
		e.GET("/simple/evaluators/templates", stream(false, a.legacyTemplates))
	}
	if a.role == "" {
		e.GET(p+"/catalog/harnesses", a.harnesses)
		e.GET(p+"/catalog/harnesses/:key", a.harness)
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

func (a *workflowAPI) types(c echo.Context) error {
	ts := a.wf.Catalog().Types()
	return sendJSON(c, map[string]any{"count": len(ts), "types": ts})
}

func (a *workflowAPI) typeByKey(c echo.Context) error {
	t := a.wf.Catalog().Type(c.Param("key"))
	if t == nil {
		return versioned.NotFound("Unknown ag-type: " + c.Param("key"))
	}
	return sendJSON(c, map[string]any{"count": 1, "type": t})
}

func (a *workflowAPI) templates(c echo.Context) error {
	ts := a.wf.Catalog().Templates(a.catalogRole(c), includeArchived(c))
	return sendJSON(c, map[string]any{"count": len(ts), "templates": ts})
}

func (a *workflowAPI) template(c echo.Context) error {
	t := a.wf.Catalog().Template(a.catalogRole(c), c.Param("key"))
	if t == nil {
		return sendJSON(c, map[string]any{"count": 0})
	}
	return sendJSON(c, map[string]any{"count": 1, "template": t})
}

func (a *workflowAPI) presets(c echo.Context) error {
	ps := a.wf.Catalog().Presets(a.catalogRole(c), c.Param("key"), includeArchived(c))
	return sendJSON(c, map[string]any{"count": len(ps), "presets": ps})
}

func (a *workflowAPI) preset(c echo.Context) error {
	p := a.wf.Catalog().Preset(a.catalogRole(c), c.Param("key"), c.Param("preset"))
	if p == nil {
		return sendJSON(c, map[string]any{"count": 0})
	}
	return sendJSON(c, map[string]any{"count": 1, "preset": p})
}

// legacyTemplates is GET /simple/evaluators/templates, the evaluator
// catalog in the shape older clients read (catalog.LegacyTemplate).
func (a *workflowAPI) legacyTemplates(rq *req) error {
	c := rq.c
	ts := a.wf.Catalog().Legacy(includeArchived(c))
	return sendJSON(c, map[string]any{"count": len(ts), "templates": ts})
}

func (a *workflowAPI) harnesses(c echo.Context) error {
	hs := a.wf.Catalog().Harnesses()
	return sendJSON(c, map[string]any{"count": len(hs), "harnesses": hs})
}

func (a *workflowAPI) harness(c echo.Context) error {
	h := a.wf.Catalog().Harness(c.Param("key"))
	if h == nil {
		return versioned.NotFound("Unknown harness: " + c.Param("key"))
	}
	return sendJSON(c, map[string]any{"count": 1, "harness": h})
}
