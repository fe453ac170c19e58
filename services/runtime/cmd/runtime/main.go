// Command runtime invokes applications and evaluators under /services/ and
// publishes the spans of what it runs.
package main

import (
	"context"

	"golang.org/x/sync/errgroup"

	"github.com/assayhq/assay/pkg/app"
	"github.com/assayhq/assay/pkg/httpx"
	"github.com/assayhq/assay/pkg/logx"
	"github.com/assayhq/assay/pkg/natsx"
)

// Config is the runtime's configuration, read from RUNTIME_* variables.
type Config struct {
	Addr          string `default:"127.0.0.1:8082" desc:"listen address (internal; the gateway is the public entry)"`
	InternalToken string `split_words:"true" required:"true" desc:"token the gateway sends with the caller's scope; requests without it get 401"`
	HTTP          httpx.Config
	NATS          natsx.Config
	Log           logx.Config
}

func main() {
	var cfg Config
	app.Main("runtime", "RUNTIME", &cfg, func(ctx context.Context) error { return run(ctx, cfg) })
}

func run(ctx context.Context, cfg Config) error {
	log := logx.New(cfg.Log).With("service", "runtime")
	nc, err := natsx.Connect(cfg.NATS, "runtime", log)
	if err != nil {
		return err
	}
	defer nc.Drain()

	srv := httpx.NewServer(cfg.HTTP, log, "runtime")
	srv.AddCheck("nats", nc.Check)
	srv.Echo.Use(httpx.RequireInternal(cfg.InternalToken))

	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error { return srv.Run(ctx, cfg.Addr) })
	return g.Wait()
}
