package httpapi_test

import (
	"sort"
	"testing"

	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/pkg/apidoc"
	"github.com/assayhq/assay/services/tracing/internal/httpapi"
)

// TestOpenAPIMatchesRoutes keeps pkg/apidoc/tracing.json and the echo
// routes in step: an undocumented route, or a documented one that is not
// served, fails.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	documented, err := apidoc.Routes("tracing")
	require.NoError(t, err)
	e := echo.New()
	(&httpapi.Handler{}).Register(e)
	var served []string
	for _, r := range e.Routes() {
		served = append(served, r.Method+" "+r.Path)
	}
	sort.Strings(served)
	assert.Equal(t, served, documented)
}
