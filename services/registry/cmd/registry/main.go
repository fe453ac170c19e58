// Command registry serves versioned testsets, testcases, workflows,
// applications, evaluators, environments and queries.
package main

import (
	"context"
	"fmt"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/assayhq/assay/pkg/app"
	"github.com/assayhq/assay/pkg/httpx"
	"github.com/assayhq/assay/pkg/logx"
	"github.com/assayhq/assay/pkg/pgxutil"
	"github.com/assayhq/assay/services/registry/internal/catalog"
	"github.com/assayhq/assay/services/registry/internal/environments"
	"github.com/assayhq/assay/services/registry/internal/httpapi"
	"github.com/assayhq/assay/services/registry/internal/pgstore"
	"github.com/assayhq/assay/services/registry/internal/queries"
	"github.com/assayhq/assay/services/registry/internal/registry"
	"github.com/assayhq/assay/services/registry/internal/tcfile"
	"github.com/assayhq/assay/services/registry/internal/testsets"
	"github.com/assayhq/assay/services/registry/internal/tracingclient"
	"github.com/assayhq/assay/services/registry/internal/workflows"
	"github.com/assayhq/assay/services/registry/migrations"
)

// Config is the registry's configuration, read from REGISTRY_* variables.
type Config struct {
	Addr              string `default:"127.0.0.1:8081" desc:"listen address (internal; the gateway is the public entry)"`
	InternalToken     string `split_words:"true" required:"true" desc:"token the gateway sends with the caller's scope; requests without it get 401"`
	Testsets          TestsetLimits
	URIProvider       string        `split_words:"true" default:"svc" desc:"provider segment of our handler URIs (svc:builtin:auto_exact_match:v0); agenta is accepted as an alias on input"`
	ServicesURL       string        `split_words:"true" default:"http://127.0.0.1:8080/services" desc:"public base of the hosted runtime; application revisions get data.url = <this>/<key>/<version>"`
	TracingURL        string        `split_words:"true" default:"http://127.0.0.1:8083" desc:"base URL of the tracing service, which runs saved queries on retrieve"`
	TracingTimeout    time.Duration `split_words:"true" default:"30s" desc:"how long a saved query may wait for the tracing service"`
	CommitLockTimeout time.Duration `split_words:"true" default:"5s" desc:"how long a commit waits for its variant's lock (held by a concurrent commit) before answering 503 commit_lock_timeout"`
	HTTP              httpx.Config
	Postgres          pgxutil.Config
	Log               logx.Config
}

// TestsetLimits bound what one testset commit or file may hold: ten times
// the reference's limits by default. Over a limit the request gets a 413.
type TestsetLimits struct {
	MaxRows      int   `split_words:"true" default:"100000" desc:"most testcases one testset revision, upload or commit may hold"`
	MaxFileBytes int64 `split_words:"true" default:"104857600" desc:"largest testset file accepted by an upload, in bytes"`
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
	if cfg.Postgres.Migrate {
		if err := pgxutil.Migrate(ctx, pool, migrations.FS, "registry_schema_version", log); err != nil {
			return fmt.Errorf("migrate registry: %w", err)
		}
	}

	reg := registry.NewService(pgstore.New(pool, pgstore.WithLockTimeout(cfg.CommitLockTimeout)))
	cat, err := catalog.New(cfg.URIProvider)
	if err != nil {
		return err
	}
	envs := environments.NewService(reg)
	srv := httpx.NewServer(cfg.HTTP, log, "registry")
	srv.AddCheck("postgres", pgxutil.Check(pool))
	httpapi.Register(srv.Echo, cfg.InternalToken, httpapi.Services{
		Registry:     reg,
		Testsets:     testsets.NewService(reg, tcfile.Limits{MaxRows: cfg.Testsets.MaxRows, MaxBytes: cfg.Testsets.MaxFileBytes}),
		Workflows:    workflows.NewService(reg, envs, cat, workflows.Config{Provider: cfg.URIProvider, ServicesURL: cfg.ServicesURL}),
		Environments: envs,
		Queries:      queries.NewService(tracingclient.New(cfg.TracingURL, cfg.InternalToken, cfg.TracingTimeout)),
	})

	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error { return srv.Run(ctx, cfg.Addr) })
	return g.Wait()
}
