// Command registry serves versioned testsets, testcases, workflows,
// applications, evaluators, environments and queries.
package main

import (
	"context"

	"golang.org/x/sync/errgroup"

	"github.com/assayhq/assay/pkg/app"
	"github.com/assayhq/assay/pkg/httpx"
	"github.com/assayhq/assay/pkg/logx"
	"github.com/assayhq/assay/pkg/pgxutil"
	"github.com/assayhq/assay/services/registry/internal/httpapi"
)

// Config is the registry's configuration, read from REGISTRY_* variables.
type Config struct {
	Addr          string `default:"127.0.0.1:8081" desc:"listen address (internal; the gateway is the public entry)"`
	InternalToken string `split_words:"true" required:"true" desc:"token the gateway sends with the caller's scope; requests without it get 401"`
	HTTP          httpx.Config
	Postgres      pgxutil.Config
	Log           logx.Config
}

func main() {
	var cfg Config
	app.Main("registry", "REGISTRY", &cfg, func(ctx context.Context) error { return run(ctx, cfg) })
}

func run(ctx context.Context, cfg Config) error {
	log := logx.New(cfg.Log).With("service", "registry")
	pool, err := pgxutil.Open(ctx, cfg.Postgres)
	if err != nil {
		return err
	}
	defer pool.Close()

	srv := httpx.NewServer(cfg.HTTP, log, "registry")
	srv.AddCheck("postgres", pgxutil.Check(pool))
	httpapi.Register(srv.Echo, cfg.InternalToken)

	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error { return srv.Run(ctx, cfg.Addr) })
	return g.Wait()
}
