package httpapi

import (
	"github.com/assayhq/assay/pkg/apidoc"
	"io"
	"log/slog"
	"testing"

	"github.com/labstack/echo/v4"
)

// Routes returns "METHOD /path" for every route the gateway serves itself
// (not the proxy catch-all), for the OpenAPI test.
func Routes(t *testing.T) []string {
	e := echo.New()
	if err := Register(e, Deps{Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Upstreams: Upstreams{Registry: "http://x", Runtime: "http://x", Tracing: "http://x"}}); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range e.Routes() {
		if r.Path == "/*" {
			continue
		}
		out = append(out, r.Method+" "+r.Path)
	}
	return append(out, "GET /health", "GET /ready", "GET /metrics") // added by httpx.NewServer
}

// Bindings maps the gateway's operations to the Go types their handlers
// bind and render; pkg/apidoc generates the document's schemas from it.
var Bindings = []apidoc.Binding{
	{Method: "POST", Path: "/api/admin/simple/accounts", Request: provisionRequest{}, Response: accountsOut{}},
	{Method: "DELETE", Path: "/api/admin/simple/accounts", Request: deleteRequest{}},
	{Method: "GET", Path: "/api/keys", Response: keyList{}},
	{Method: "POST", Path: "/api/keys", Request: createKeyRequest{}, Response: keyCreated{}},
	{Method: "GET", Path: "/api/profile", Response: profileOut{}},
	{Method: "POST", Path: "/api/auth/sign-in", Request: signInRequest{}, Response: sessionOut{}},
	{Method: "GET", Path: "/api/auth/session", Response: sessionOut{}},
}
