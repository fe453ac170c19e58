// Package httpapi is the registry's HTTP surface. Every route sits behind the
// gateway's internal token; its operations are listed in pkg/apidoc's
// registry fragment, which a test keeps in step with the routes.
package httpapi

import (
	"github.com/labstack/echo/v4"

	"github.com/assayhq/assay/pkg/httpx"
	"github.com/assayhq/assay/services/registry/internal/environments"
	"github.com/assayhq/assay/services/registry/internal/queries"
	"github.com/assayhq/assay/services/registry/internal/registry"
	"github.com/assayhq/assay/services/registry/internal/testsets"
	"github.com/assayhq/assay/services/registry/internal/workflows"
)

// Services are the use cases the routes call.
type Services struct {
	Registry *registry.Service
	Testsets *testsets.Service
	// Workflows serves workflows, applications and evaluators.
	Workflows    *workflows.Service
	Environments *environments.Service
	Queries      *queries.Service
}

// Register adds the registry's middleware and routes to e.
func Register(e *echo.Echo, internalToken string, s Services) {
	e.Use(httpx.RequireInternal(internalToken))
	newTestsetAPI(s.Registry, s.Testsets).route(e)
	registerWorkflows(e, s)
}
