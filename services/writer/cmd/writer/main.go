// Command writer moves span batches from JetStream into ClickHouse.
package main

import (
	"context"

	"golang.org/x/sync/errgroup"

	"github.com/assayhq/assay/pkg/app"
	"github.com/assayhq/assay/pkg/chx"
	"github.com/assayhq/assay/pkg/httpx"
	"github.com/assayhq/assay/pkg/logx"
	"github.com/assayhq/assay/pkg/natsx"
)

// Config is the writer's configuration, read from WRITER_* variables.
type Config struct {
	Addr       string `default:"127.0.0.1:8084" desc:"listen address of /health, /ready and /metrics"`
	HTTP       httpx.Config
	NATS       natsx.Config
	ClickHouse chx.Config
	Log        logx.Config
}

func main() {
	var cfg Config
	app.Main("writer", "WRITER", &cfg, func(ctx context.Context) error { return run(ctx, cfg) })
}

func run(ctx context.Context, cfg Config) error {
	log := logx.New(cfg.Log).With("service", "writer")
	nc, err := natsx.Connect(cfg.NATS, "writer", log)
	if err != nil {
		return err
	}
	defer nc.Drain()
	ch, err := chx.Open(ctx, cfg.ClickHouse)
	if err != nil {
		return err
	}
	defer ch.Close()

	srv := httpx.NewServer(cfg.HTTP, log, "writer")
	srv.AddCheck("nats", nc.Check)
	srv.AddCheck("clickhouse", chx.Check(ch))

	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error { return srv.Run(ctx, cfg.Addr) })
	return g.Wait()
}
