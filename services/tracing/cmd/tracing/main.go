// Command tracing ingests spans (OTLP and native) into JetStream and answers
// trace and span queries from ClickHouse.
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

// Config is the tracing service's configuration, read from TRACING_* variables.
type Config struct {
	Addr          string `default:"127.0.0.1:8083" desc:"listen address of the API (internal; the gateway is the public entry)"`
	InternalToken string `split_words:"true" required:"true" desc:"token the gateway sends with the caller's scope; requests without it get 401"`
	HTTP          httpx.Config
	NATS          natsx.Config
	ClickHouse    chx.Config
	Log           logx.Config
}

func main() {
	var cfg Config
	app.Main("tracing", "TRACING", &cfg, func(ctx context.Context) error { return run(ctx, cfg) })
}

func run(ctx context.Context, cfg Config) error {
	log := logx.New(cfg.Log).With("service", "tracing")
	nc, err := natsx.Connect(cfg.NATS, "tracing", log)
	if err != nil {
		return err
	}
	defer nc.Drain()
	ch, err := chx.Open(ctx, cfg.ClickHouse)
	if err != nil {
		return err
	}
	defer ch.Close()

	srv := httpx.NewServer(cfg.HTTP, log, "tracing")
	srv.AddCheck("nats", nc.Check)
	srv.AddCheck("clickhouse", chx.Check(ch))
	srv.Echo.Use(httpx.RequireInternal(cfg.InternalToken))

	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error { return srv.Run(ctx, cfg.Addr) })
	return g.Wait()
}
