// Package httpapi is the registry's HTTP surface: echo binding and routes
// only; every use case is a method of a family package (testsets,
// workflows, environments, queries, secrets) and every request and
// response shape is package wire's. Every route sits behind the
// gateway's internal token; its operations are listed in pkg/apidoc's
// registry fragment, which a test keeps in step with the routes.
package httpapi

import (
	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/assayhq/assay/pkg/httpx"
	"github.com/assayhq/assay/pkg/inputlimits"
	"github.com/assayhq/assay/pkg/purgewire"
	"github.com/assayhq/assay/services/registry/internal/environments"
	"github.com/assayhq/assay/services/registry/internal/evalreports"
	"github.com/assayhq/assay/services/registry/internal/evaluations"
	"github.com/assayhq/assay/services/registry/internal/modelcalls"
	"github.com/assayhq/assay/services/registry/internal/purge"
	"github.com/assayhq/assay/services/registry/internal/queries"
	"github.com/assayhq/assay/services/registry/internal/secrets"
	"github.com/assayhq/assay/services/registry/internal/simpleevals"
	"github.com/assayhq/assay/services/registry/internal/testsets"
	"github.com/assayhq/assay/services/registry/internal/workflows"
)

// Services are the use cases the routes call.
type Services struct {
	Testsets *testsets.Service
	// Workflows serves workflows, applications and evaluators.
	Workflows    *workflows.Service
	Environments *environments.Service
	Queries      *queries.Service
	Secrets      *secrets.Service // the project vault
	// Evaluations serves the evaluation records (runs, scenarios, results,
	// metrics, queues) and the runtime worker's internal routes.
	Evaluations *evaluations.Service
	// SimpleEvaluations and SimpleQueues serve /simple/evaluations and
	// /simple/queues over the evaluation records.
	SimpleEvaluations *simpleevals.Simple
	SimpleQueues      *simpleevals.SimpleQueues
	// Reports serves the comparison of runs and the export of a run.
	Reports *evalreports.Reports
	// Purge deletes deleted projects' records (the gateway's internal
	// POST /internal/projects/purge).
	Purge *purge.Purger
	// ModelCalls serves the runtime's model-call cache and provider waits.
	ModelCalls *modelcalls.Service
}

// queryText refuses, with a 422 naming the parameter, a query parameter
// whose name or value holds a NUL character or invalid UTF-8: filters,
// file names and forced ids reach PostgreSQL or a response header.
func queryText(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		for name, vs := range c.QueryParams() {
			if err := inputlimits.CheckText(name, "query", name); err != nil {
				return err
			}
			for _, v := range vs {
				if err := inputlimits.CheckText(v, "query", name); err != nil {
					return err
				}
			}
		}
		return next(c)
	}
}

// Register adds the registry's middleware and routes to e, with the gateway
// (internalToken) as the only caller.
func Register(e *echo.Echo, internalToken string, s Services) {
	RegisterCallers(e, httpx.Callers{"gateway": internalToken}, s)
}

// RegisterCallers adds the registry's middleware and routes to e; callers
// are the services admitted, each with its own token.
func RegisterCallers(e *echo.Echo, callers httpx.Callers, s Services) {
	e.Use(httpx.RequireCallers(callers), queryText)
	newTestsetAPI(s.Testsets).route(e)
	registerWorkflows(e, s)
	secretAPI{s.Secrets}.route(e)
	evaluationAPI{s.Evaluations}.route(e)
	simpleEvaluationAPI{s.SimpleEvaluations}.route(e)
	simpleQueueAPI{s.SimpleQueues}.route(e)
	evaluationReadAPI{reports: s.Reports, lookups: exportLookups{ts: s.Testsets, qs: s.Queries}}.route(e)
	modelCallAPI{s.ModelCalls}.route(e)
	e.POST(purgewire.Path, notForwarded(purgewire.Handler(func(c echo.Context, ids []uuid.UUID) error {
		return s.Purge.Projects(c.Request().Context(), ids)
	})))
}

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
	configAPI{s.Workflows}.route(e)
}
