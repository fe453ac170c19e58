// Command writer moves span batches from JetStream into ClickHouse.
package main

import (
	"context"
	"os"
	"runtime/debug"

	"golang.org/x/sync/errgroup"

	"github.com/assayhq/assay/pkg/app"
	"github.com/assayhq/assay/pkg/chspans"
	"github.com/assayhq/assay/pkg/chx"
	"github.com/assayhq/assay/pkg/httpx"
	"github.com/assayhq/assay/pkg/logx"
	"github.com/assayhq/assay/pkg/natsx"
	"github.com/assayhq/assay/pkg/spanstream"
	"github.com/assayhq/assay/services/writer/internal/chstore"
	"github.com/assayhq/assay/services/writer/internal/writer"
)

// Config is the writer's configuration, read from WRITER_* variables.
type Config struct {
	Addr        string `default:"127.0.0.1:8084" desc:"listen address of /health and /ready"`
	MetricsAddr string `split_words:"true" default:"127.0.0.1:8090" desc:"listen address of Prometheus /metrics, the only listener that answers it (scrapers reach it; the API port does not show per-route counts); empty turns it off"`
	PprofAddr   string `split_words:"true" desc:"listen address of net/http/pprof (e.g. 127.0.0.1:6060), for profiling; empty (the default) turns it off"`
	MemoryLimit int64  `split_words:"true" default:"1073741824" desc:"soft limit of the writer's memory in bytes (as GOMEMLIMIT; ignored when GOMEMLIMIT is set): the garbage collector runs more often near it rather than let the heap grow to twice what is live; size it above (WRITER_INSERTERS × 4 + 2) × WRITER_BATCH_BYTES plus the batches fetched ahead (docs/operations.md, the writer's memory); 0 turns it off"`
	writer.Config
	Retention  chstore.RetentionConfig
	Stream     spanstream.StreamSettings
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
	app.Pprof(cfg.PprofAddr, log)
	if cfg.MemoryLimit > 0 && os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(cfg.MemoryLimit)
		// What the writer holds at most (docs/operations.md, the writer's memory); with a
		// limit below it the garbage collector runs without pause.
		held := int64(max(cfg.Inserters, 1)*4+2) * int64(cfg.BatchBytes)
		if cfg.MemoryLimit < held+held/4 {
			log.Warn("WRITER_MEMORY_LIMIT is below what the writer may hold: raise it or lower WRITER_BATCH_BYTES",
				"memory_limit", cfg.MemoryLimit, "may_hold", held)
		}
	}
	if cfg.ClickHouse.Migrate {
		if err := chspans.Migrate(ctx, cfg.ClickHouse, log); err != nil {
			return err
		}
	}
	nc, err := natsx.Connect(cfg.NATS, "writer", log)
	if err != nil {
		return err
	}
	defer nc.Drain()
	if _, err := nc.EnsureStream(ctx, cfg.Stream.Config()); err != nil {
		return err
	}
	if _, err := nc.EnsureStream(ctx, cfg.Stream.DeadLetterConfig()); err != nil {
		return err
	}
	ch, err := chx.Open(ctx, cfg.ClickHouse)
	if err != nil {
		return err
	}
	defer ch.Close()
	store, err := chstore.New(ch, cfg.Retention, log)
	if err != nil {
		return err
	}
	store.Cluster = cfg.ClickHouse.Cluster

	srv := httpx.NewServer(cfg.HTTP, log, "writer")
	srv.AddCheck("nats", nc.Check)
	srv.AddCheck("clickhouse", chx.Check(ch))
	w := writer.New(cfg.Config, nc.JS, store, natsx.NewPublisher(nc, cfg.NATS), srv.Metrics, log)
	// What the writer has yet to insert, and since when: the alerts on
	// writer lag and backlog age (the chart's PrometheusRule) read these.
	srv.Metrics.MustRegister(natsx.BacklogCollector(nc.JS, spanstream.SpanStream, spanstream.WriterConsumer, "writer_backlog", "Span batches", log))

	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error { return srv.Run(ctx, cfg.Addr) })
	g.Go(func() error { return srv.RunMetrics(ctx, cfg.MetricsAddr) })
	g.Go(func() error { return w.Run(ctx) })
	g.Go(func() error { return store.RunRetention(ctx, cfg.Retention.Interval) })
	return g.Wait()
}
