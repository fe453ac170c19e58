// Command console serves the web console: the single-page app built from
// services/console/web and embedded in this binary, under /console/. It
// holds no state and no credentials; the app talks to the gateway's API
// with the user's session.
package main

import (
	"context"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
	"golang.org/x/sync/errgroup"

	"github.com/assayhq/assay/pkg/app"
	"github.com/assayhq/assay/pkg/httpx"
	"github.com/assayhq/assay/pkg/logx"
	"github.com/assayhq/assay/services/console"
	"github.com/assayhq/assay/services/console/internal/spa"
)

// Config is the console's configuration, read from CONSOLE_* variables.
type Config struct {
	Addr        string `default:"127.0.0.1:8085" desc:"listen address (the gateway reaches the console here; it needs no other client)"`
	MetricsAddr string `split_words:"true" default:"127.0.0.1:8091" desc:"listen address of Prometheus /metrics, the only listener that answers it (scrapers reach it; the API port does not show per-route counts); empty turns it off"`
	HTTP        httpx.Config
	Log         logx.Config
}

// Validate has nothing to check beyond the tags.
func (c *Config) Validate() error { return nil }

func main() {
	var cfg Config
	app.Main("console", "CONSOLE", &cfg, func(ctx context.Context) error { return run(ctx, cfg) })
}

func run(ctx context.Context, cfg Config) error {
	log := logx.New(cfg.Log).With("service", "console")
	h, err := spa.New(console.Dist())
	if err != nil {
		return err
	}
	if !h.Built() {
		log.Warn("the web app was not built into this binary; every page answers 503: " + spa.NotBuilt)
	}
	srv := httpx.NewServer(cfg.HTTP, log, "console")
	Register(srv.Echo, h)
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error { return srv.Run(ctx, cfg.Addr) })
	g.Go(func() error { return srv.RunMetrics(ctx, cfg.MetricsAddr) })
	return g.Wait()
}

// Register mounts the app at /console/ (paths arrive without their
// trailing slash: httpx canonicalises them).
func Register(e *echo.Echo, h *spa.Handler) {
	serve := func(c echo.Context) error {
		h.Serve(c.Response(), c.Request(), strings.TrimPrefix(c.Request().URL.Path, "/console"))
		return nil
	}
	for _, p := range []string{"/console", "/console/*"} {
		e.GET(p, serve)
		e.HEAD(p, serve)
	}
	e.GET("/", func(c echo.Context) error { return c.Redirect(http.StatusFound, "/console/") })
}
