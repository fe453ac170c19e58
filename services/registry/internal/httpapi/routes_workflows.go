package httpapi

import "github.com/labstack/echo/v4"

// registerWorkflows adds the workflow family (workflows, applications,
// evaluators), environments and queries, each with its simple surface.
func registerWorkflows(e *echo.Echo, s Services) {
	for _, r := range []struct{ key, plural string }{{"workflow", "workflows"}, {"application", "applications"}, {"evaluator", "evaluators"}} {
		a := newWorkflowAPI(s.Workflows, r.key, r.plural)
		a.route(e)
		newSimpleWorkflows(s.Workflows, a).route(e)
	}
	newEnvironmentAPI(s.Environments, s.Workflows).route(e)
	newQueryAPI(s.Queries).route(e)
}
