package httpapi_test

import (
	"context"
	"net/http"
	"sync"

	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/services/registry/internal/catalog"
	"github.com/assayhq/assay/services/registry/internal/environments"
	"github.com/assayhq/assay/services/registry/internal/httpapi"
	"github.com/assayhq/assay/services/registry/internal/queries"
	"github.com/assayhq/assay/services/registry/internal/tracingclient"
	"github.com/assayhq/assay/services/registry/internal/versioned"
	"github.com/assayhq/assay/services/registry/internal/workflows"
)

const servicesURL = "http://assay.test/services"

// withWorkflows adds the workflow family, environments and queries over
// reg to s.
func withWorkflows(reg *versioned.Service, s httpapi.Services, tr *fakeTracing) httpapi.Services {
	s.Environments = environments.NewService(reg)
	s.Workflows = workflows.NewService(reg, s.Environments, catalog.MustNew("svc"),
		workflows.Config{Provider: "svc", ServicesURL: servicesURL})
	s.Queries = queries.NewService(reg, tr)
	return s
}

// fakeTracing stands in for the tracing service in the HTTP tests: it
// records each query the registry runs and answers a fixed result. The
// client's own wire mapping is tested in tracingclient.
type fakeTracing struct {
	mu     sync.Mutex
	calls  []tracingclient.Query
	scopes []scope.Scope
	result tracingclient.Result
}

func (f *fakeTracing) Run(_ context.Context, sc scope.Scope, q tracingclient.Query) (*tracingclient.Result, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, q)
	f.scopes = append(f.scopes, sc)
	r := f.result
	return &r, nil
}

// setScope adds the internal token and the test project's scope.
func setScope(req *http.Request, s *server) {
	scope.Set(req.Header, token, scope.Scope{ProjectID: s.project, UserID: s.user})
}
