package httpapi_test

import (
	"os"
	"sort"
	"testing"

	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/pkg/apidoc"
	"github.com/assayhq/assay/services/runtime/internal/httpapi"
	"github.com/assayhq/assay/services/runtime/internal/invoke"
	"github.com/assayhq/assay/services/runtime/internal/llm"
)

// TestOpenAPIMatchesRoutes keeps pkg/apidoc/runtime.json and the echo
// routes in step, in both directions.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	documented, err := apidoc.Routes("runtime")
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

// The envelope's component names say they are the runtime's; "Request" and
// "Response" alone would claim the whole document's namespace.
type (
	docInvokeRequest  struct{ invoke.Request }
	docInvokeResponse struct{ invoke.Response }
	docInvokeInspect  struct{ invoke.Inspection }
	docProviders      struct{ invoke.Providers }
	docProviderTest   struct{ invoke.ProviderTest }
	docProviderCheck  struct{ llm.Check }
)

// TestOpenAPITypes keeps pkg/apidoc/runtime.types.json generated from the
// envelope types; UPDATE_APIDOC=1 regenerates it.
func TestOpenAPITypes(t *testing.T) {
	b := []apidoc.Binding{
		{Method: "POST", Path: "/services/invoke", Request: docInvokeRequest{}, Response: docInvokeResponse{}},
		{Method: "POST", Path: "/services/inspect", Request: docInvokeRequest{}, Response: docInvokeInspect{}},
		{Method: "POST", Path: "/services/{key}/{version}/invoke", Request: docInvokeRequest{}, Response: docInvokeResponse{}},
		{Method: "POST", Path: "/services/{key}/{version}/inspect", Request: docInvokeRequest{}, Response: docInvokeInspect{}},
		{Method: "GET", Path: "/services/models", Response: docProviders{}},
		{Method: "POST", Path: "/services/providers/test", Request: docProviderTest{}, Response: docProviderCheck{}},
	}
	require.NoError(t, apidoc.CheckTypes("runtime", b, os.Getenv("UPDATE_APIDOC") == "1"))
}
