package httpapi

import (
	"strings"
	"testing"

	"github.com/labstack/echo/v4"
)

// Routes returns "METHOD /path" for every route the registry serves, for
// the OpenAPI test; the operational routes are the gateway's to document,
// and the /internal ones (read by other services, never routed by the
// gateway) are not part of the public API, except the evaluation
// worker's, which the fragment documents under the internal tag.
func Routes(t *testing.T) []string {
	e := echo.New()
	Register(e, "x", Services{})
	var out []string
	for _, r := range e.Routes() {
		if strings.HasPrefix(r.Path, "/internal/") && !strings.HasPrefix(r.Path, "/internal/evaluations/") {
			continue
		}
		out = append(out, r.Method+" "+r.Path)
	}
	return out
}
