package httpapi

import (
	"testing"

	"github.com/labstack/echo/v4"
)

// Routes returns "METHOD /path" for every route the registry serves, for
// the OpenAPI test; the operational routes are the gateway's to document.
func Routes(t *testing.T) []string {
	e := echo.New()
	Register(e, "x", Services{})
	var out []string
	for _, r := range e.Routes() {
		out = append(out, r.Method+" "+r.Path)
	}
	return out
}
