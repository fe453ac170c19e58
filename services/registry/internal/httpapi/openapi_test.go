package httpapi_test

import (
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/pkg/apidoc"
	"github.com/assayhq/assay/services/registry/internal/httpapi"
)

// TestOpenAPIMatchesRoutes keeps the registry's fragment of the OpenAPI
// document and its echo routes in step, in both directions.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	ops, err := apidoc.Operations("registry")
	require.NoError(t, err)
	var documented []string
	for _, op := range ops {
		documented = append(documented, op.Method+" "+apidoc.RoutePath(op.Path))
	}
	served := httpapi.Routes(t)
	sort.Strings(documented)
	sort.Strings(served)
	assert.Equal(t, served, documented)
}
