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
	documented, err := apidoc.Routes("registry")
	require.NoError(t, err)
	served := httpapi.Routes(t)
	sort.Strings(served)
	assert.Equal(t, served, documented)
}
