package httpapi

import (
	"encoding/hex"
	"net/http"
	"net/url"
	"strings"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/assayhq/assay/pkg/errs"
)

// The compatible SDK prints links to its web app built from the project
// (GET /projects/current): {host}/w/{workspace}/p/{project}/evaluations/
// results/{run} at the end of a local evaluation, and .../observability?
// trace={32 hex} from get_trace_url(). The gateway answers them with a
// redirect to the console's own page for the run or trace, naming the
// project so the console opens it there. Like the console's pages they
// hold no data and need no credentials; the console's API calls do.

// isConsoleLink reports a path of those links.
func isConsoleLink(p string) bool { return strings.HasPrefix(p, "/w/") }

func registerConsoleLinks(e *echo.Echo) {
	e.GET("/w/:workspace_id/p/:project_id/evaluations/results/:run_id", runLink)
	e.GET("/w/:workspace_id/p/:project_id/observability", traceLink)
}

// linkProject reads the link's project id; the workspace is not needed
// (a project is in one workspace) but must be an id too.
func linkProject(c echo.Context) (uuid.UUID, error) {
	if _, err := uuid.Parse(c.Param("workspace_id")); err != nil {
		return uuid.Nil, errs.Field("Input should be a valid UUID", c.Param("workspace_id"), "path", "workspace_id")
	}
	p, err := uuid.Parse(c.Param("project_id"))
	if err != nil {
		return uuid.Nil, errs.Field("Input should be a valid UUID", c.Param("project_id"), "path", "project_id")
	}
	return p, nil
}

func runLink(c echo.Context) error {
	p, err := linkProject(c)
	if err != nil {
		return err
	}
	run, err := uuid.Parse(c.Param("run_id"))
	if err != nil {
		return errs.Field("Input should be a valid UUID", c.Param("run_id"), "path", "run_id")
	}
	return c.Redirect(http.StatusFound, "/console/evaluations/"+run.String()+"?"+url.Values{"project_id": {p.String()}}.Encode())
}

func traceLink(c echo.Context) error {
	p, err := linkProject(c)
	if err != nil {
		return err
	}
	q := url.Values{"project_id": {p.String()}}.Encode()
	t := strings.ToLower(strings.ReplaceAll(c.QueryParam("trace"), "-", ""))
	if t == "" {
		return c.Redirect(http.StatusFound, "/console/traces?"+q)
	}
	if b, err := hex.DecodeString(t); err != nil || len(b) != 16 {
		return errs.Field("Input should be a trace id (32 hex characters)", c.QueryParam("trace"), "query", "trace")
	}
	return c.Redirect(http.StatusFound, "/console/traces/"+t+"?"+q)
}
