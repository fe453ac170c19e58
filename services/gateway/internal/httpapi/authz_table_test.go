package httpapi_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/pkg/apidoc"
	"github.com/assayhq/assay/services/gateway/internal/authz"
	"github.com/assayhq/assay/services/gateway/internal/httpapi"
)

// TestEveryRouteHasARule fails when a route the gateway serves, a route a
// proxied service documents (their own tests keep the documents equal to
// what they serve) or a proxied family has no entry in the authz table:
// a new route cannot skip enforcement.
func TestEveryRouteHasARule(t *testing.T) {
	check := func(method, path string) {
		_, _, ok := authz.Lookup(method, path)
		assert.True(t, ok, "%s %s has no rule in authz.Table", method, path)
	}
	for _, r := range httpapi.Routes(t) {
		method, path, _ := strings.Cut(r, " ")
		check(method, path)
	}
	for _, svc := range []string{"registry", "tracing", "runtime"} {
		routes, err := apidoc.Routes(svc)
		require.NoError(t, err)
		for _, r := range routes {
			method, path, _ := strings.Cut(r, " ")
			if strings.HasPrefix(path, "/internal/") {
				continue // served between services, never routed by the gateway
			}
			check(method, path)
		}
	}
	for _, family := range httpapi.Owners() {
		for _, m := range []string{"GET", "POST", "PUT", "PATCH", "DELETE"} {
			check(m, "/"+family)
			check(m, "/"+family+"/x/y")
		}
	}
}

// TestTableChoices pins the table's deliberate choices, route by route: the
// permission each needs and the action it audits.
func TestTableChoices(t *testing.T) {
	for _, c := range []struct{ method, path, perm, audit string }{
		{"GET", "/testsets/abc", "read", ""},
		{"POST", "/testsets/query", "read", ""},
		{"DELETE", "/simple/testsets/abc", "write", ""},
		{"POST", "/simple/testsets/abc/archive", "write", ""},
		{"POST", "/testsets/revisions/abc/download", "read", ""},
		{"POST", "/applications/revisions/deploy", "deploy", "deployments"},
		{"POST", "/workflows/revisions/deploy", "deploy", "deployments"},
		{"POST", "/environments/revisions/commit", "deploy", "deployments"},
		{"POST", "/evaluations/runs", "run_evaluation", "evaluation_runs"},
		{"POST", "/evaluations/runs/query", "read", ""},
		{"PATCH", "/evaluations/scenarios", "run_evaluation", ""},
		{"POST", "/evaluations/results", "annotate", "evaluation_results"},
		{"DELETE", "/evaluations/results", "run_evaluation", "evaluation_results"},
		{"POST", "/simple/evaluations/abc/start", "run_evaluation", "evaluation_runs"},
		{"POST", "/annotations", "annotate", "annotations"},
		{"POST", "/annotations/query", "read", ""},
		{"POST", "/services/invoke", "run_service", ""},
		{"POST", "/services/completion/v0/invoke", "run_service", ""},
		{"POST", "/services/inspect", "read", ""},
		{"POST", "/otlp/v1/traces", "write", ""},
		{"POST", "/traces/query", "read", ""},
		{"GET", "/secrets", "manage_keys", "secrets"},
		{"POST", "/keys", "manage_keys", "keys"},
		{"GET", "/audit", "manage_members", ""},
		{"POST", "/preview/testsets/query", "read", ""},
	} {
		r, _, ok := authz.Lookup(c.method, c.path)
		require.True(t, ok, c.path)
		assert.Equal(t, authz.ByRole, r.Access, "%s %s", c.method, c.path)
		assert.Equal(t, c.perm, string(r.Perm), "%s %s", c.method, c.path)
		assert.Equal(t, c.audit, r.Audit, "%s %s", c.method, c.path)
	}
	r, target, ok := authz.Lookup("DELETE", "/organizations/o1/members/u1")
	require.True(t, ok)
	assert.Equal(t, authz.ByTarget, r.Access)
	assert.Equal(t, "members", r.Audit)
	assert.Equal(t, map[string]string{"id": "o1"}, target)
}
