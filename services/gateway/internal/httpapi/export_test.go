package httpapi

import (
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
