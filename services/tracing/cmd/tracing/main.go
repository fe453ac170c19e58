// Command tracing ingests spans (OTLP and native) into JetStream and answers
// trace and span queries from ClickHouse.
package main

import (
	"context"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/assayhq/assay/pkg/app"
	"github.com/assayhq/assay/pkg/chspans"
	"github.com/assayhq/assay/pkg/chx"
	"github.com/assayhq/assay/pkg/httpx"
	"github.com/assayhq/assay/pkg/logx"
	"github.com/assayhq/assay/pkg/model"
	"github.com/assayhq/assay/pkg/natsx"
	"github.com/assayhq/assay/services/tracing/internal/httpapi"
	"github.com/assayhq/assay/services/tracing/internal/ingest"
	"github.com/assayhq/assay/services/tracing/internal/normalize"
	"github.com/assayhq/assay/services/tracing/internal/query"
)

// Config is the tracing service's configuration, read from TRACING_* variables.
type Config struct {
	Addr          string        `default:"127.0.0.1:8083" desc:"listen address of the API (internal; the gateway is the public entry)"`
	InternalToken string        `split_words:"true" required:"true" desc:"token the gateway sends with the caller's scope; requests without it get 401"`
	ModelPrices   string        `split_words:"true" desc:"JSON object of model → {input, output, cached_input} US$ per million tokens, over the embedded price table"`
	QueryTimeout  time.Duration `split_words:"true" default:"15s" desc:"longest a span or trace query may run"`
	QueryMaxSpans int           `split_words:"true" default:"10000" desc:"most spans (or traces) one query returns when it sets no smaller limit"`
	OTLP          ingest.Limits
	Stream        model.StreamSettings
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
	prices, err := normalize.LoadPrices(cfg.ModelPrices)
	if err != nil {
		return err
	}
	if cfg.ClickHouse.Migrate {
		if err := chspans.Migrate(ctx, cfg.ClickHouse, log); err != nil {
			return err
		}
	}
	nc, err := natsx.Connect(cfg.NATS, "tracing", log)
	if err != nil {
		return err
	}
	defer nc.Drain()
	if _, err := nc.EnsureStream(ctx, model.StreamConfig(cfg.Stream.MaxBytes, cfg.Stream.DedupWindow)); err != nil {
		return err
	}
	ch, err := chx.Open(ctx, cfg.ClickHouse)
	if err != nil {
		return err
	}
	defer ch.Close()

	h := &httpapi.Handler{
		Ingest: ingest.NewService(ingest.NATSPublisher{P: natsx.NewPublisher(nc, cfg.NATS)}, &normalize.Normalizer{Prices: prices}),
		Query:  query.NewService(query.NewStore(ch, cfg.QueryTimeout), cfg.QueryMaxSpans),
		Limits: cfg.OTLP,
		Log:    log,
	}
	srv := httpx.NewServer(cfg.HTTP, log, "tracing")
	srv.AddCheck("nats", nc.Check)
	srv.AddCheck("clickhouse", chx.Check(ch))
	srv.Echo.Use(httpx.RequireInternal(cfg.InternalToken))
	h.Register(srv.Echo)

	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error { return srv.Run(ctx, cfg.Addr) })
	return g.Wait()
}
