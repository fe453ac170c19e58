// Command tracing ingests spans (OTLP and native) into JetStream and answers
// trace and span queries from ClickHouse.
package main

import (
	"context"
	"errors"
	"os"
	"runtime/debug"
	"time"

	"golang.org/x/sync/errgroup"
	"google.golang.org/grpc"

	"github.com/assayhq/assay/pkg/apikey"
	"github.com/assayhq/assay/pkg/app"
	"github.com/assayhq/assay/pkg/chspans"
	"github.com/assayhq/assay/pkg/chx"
	"github.com/assayhq/assay/pkg/httpx"
	"github.com/assayhq/assay/pkg/logx"
	"github.com/assayhq/assay/pkg/natsx"
	"github.com/assayhq/assay/pkg/pgxutil"
	"github.com/assayhq/assay/pkg/spanmodel"
	"github.com/assayhq/assay/pkg/spanstream"
	"github.com/assayhq/assay/services/tracing/internal/admit"
	"github.com/assayhq/assay/services/tracing/internal/annotate"
	"github.com/assayhq/assay/services/tracing/internal/dedup"
	"github.com/assayhq/assay/services/tracing/internal/httpapi"
	"github.com/assayhq/assay/services/tracing/internal/ingest"
	"github.com/assayhq/assay/services/tracing/internal/otlpserver"
	"github.com/assayhq/assay/services/tracing/internal/purge"
	"github.com/assayhq/assay/services/tracing/internal/query"
	"github.com/assayhq/assay/services/tracing/internal/registryclient"
)

// Config is the tracing service's configuration, read from TRACING_* variables.
type Config struct {
	Addr        string `default:"127.0.0.1:8083" desc:"listen address of the API (internal; the gateway is the public entry)"`
	MetricsAddr string `split_words:"true" default:"127.0.0.1:8089" desc:"listen address of Prometheus /metrics (the API's and both OTLP ports' metrics), the only listener that answers it: the OTLP ports may sit behind a public load balancer; empty turns it off"`
	PprofAddr   string `split_words:"true" desc:"listen address of net/http/pprof (e.g. 127.0.0.1:6060), for profiling; empty (the default) turns it off"`
	GCPercent   int    `envconfig:"GC_PERCENT" default:"400" desc:"Go GC target percentage (as GOGC; ignored when GOGC is set): normalisation allocates ~24 KB per span, and the default 100 spends a quarter of the CPU in the GC"`
	// One token per caller-callee pair: tracing tells its callers apart and
	// a token leaked from one opens no other pair.
	TokenFromGateway  string        `split_words:"true" desc:"token the gateway sends with the caller's scope (its GATEWAY_TOKEN_TO_TRACING); empty: the gateway is refused"`
	TokenFromRuntime  string        `split_words:"true" desc:"token the runtime sends with its invocation spans and its evaluation workers' queries (its RUNTIME_TOKEN_TO_TRACING); empty: the runtime is refused"`
	TokenFromRegistry string        `split_words:"true" desc:"token the registry sends to run saved queries (its REGISTRY_TOKEN_TO_TRACING); empty: the registry is refused"`
	TokenToRegistry   string        `split_words:"true" required:"true" desc:"token tracing sends the registry: saved queries, evaluators and applications (the registry's REGISTRY_TOKEN_FROM_TRACING)"`
	ModelPrices       string        `split_words:"true" desc:"JSON object of model → {input, output, cached_input} US$ per million tokens, checked before the vendored genai-prices table (pkg/prices)"`
	QueryTimeout      time.Duration `split_words:"true" default:"15s" desc:"longest one ClickHouse statement of a query may run (max_execution_time, whole seconds); a longer one answers 422 naming this variable"`
	QueryMaxSpans     int           `split_words:"true" default:"10000" desc:"most spans (or traces) one query returns when it sets no smaller limit; a larger windowing.limit answers 400"`
	Query             query.Limits
	RegistryURL       string        `split_words:"true" default:"http://127.0.0.1:8081" desc:"base URL of the registry: saved query refs, and the evaluators and applications annotations and invocations refer to"`
	URIProvider       string        `split_words:"true" default:"svc" desc:"provider segment of the URI of evaluators auto-created for annotations (svc:custom:feedback:v0); match the registry's REGISTRY_URI_PROVIDER"`
	RegistryTimeout   time.Duration `split_words:"true" default:"10s" desc:"how long a call to the registry may take"`
	OTLP              otlpConfig
	Admit             admit.Config
	Span              spanmodel.Limits
	Postgres          keysPostgres
	APIKey            apikey.Config
	Stream            spanstream.StreamSettings
	HTTP              httpx.Config
	NATS              natsx.Config
	ClickHouse        chx.Config
	// Span queries run their tenant's filters: under a read-only user they
	// cannot write or alter anything whatever they compile to.
	ClickHouseReadURL string `envconfig:"CLICKHOUSE_READ_URL" desc:"ClickHouse URL of a read-only user (deployments/clickhouse/users.sh, assay_reader) for span queries; empty: TRACING_CLICKHOUSE_URL"`
	Log               logx.Config
}

// Validate checks what the tags cannot: the span limits and the admission
// bound.
func (c *Config) Validate() error {
	return errors.Join(c.callers().Validate("TRACING"), c.Span.Validate(), c.Admit.Validate())
}

// callers are the services whose token tracing accepts.
func (c *Config) callers() httpx.Callers {
	return httpx.Callers{"gateway": c.TokenFromGateway, "runtime": c.TokenFromRuntime, "registry": c.TokenFromRegistry}
}

// otlpConfig is the OTLP ports and limits. Variables: TRACING_OTLP_*.
type otlpConfig struct {
	ingest.Limits
	HTTPAddr string `split_words:"true" default:"127.0.0.1:4318" desc:"listen address of OTLP/HTTP (/v1/traces, API-key auth); empty turns it off"`
	GRPCAddr string `split_words:"true" default:"127.0.0.1:4317" desc:"listen address of OTLP/gRPC (API key in the authorization metadata); empty turns it off"`
}

// keysPostgres is the gateway's database, read for API keys on the OTLP
// ports. Variables: TRACING_POSTGRES_*.
type keysPostgres struct {
	URL      string `default:"postgres://postgres@127.0.0.1:55432/assay?sslmode=disable" desc:"the gateway's PostgreSQL (api_keys is read, never written); used by the OTLP ports"`
	MaxConns int32  `split_words:"true" default:"4" desc:"largest number of pooled connections for key lookups"`
}

func main() {
	var cfg Config
	app.Main("tracing", "TRACING", &cfg, func(ctx context.Context) error { return run(ctx, cfg) })
}

func run(ctx context.Context, cfg Config) error {
	log := logx.New(cfg.Log).With("service", "tracing")
	app.Pprof(cfg.PprofAddr, log)
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(cfg.GCPercent)
	}
	prices, err := spanmodel.LoadPrices(cfg.ModelPrices)
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
	if _, err := nc.EnsureStream(ctx, cfg.Stream.Config()); err != nil {
		return err
	}
	ch, err := chx.Open(ctx, cfg.ClickHouse)
	if err != nil {
		return err
	}
	defer ch.Close()
	reader := ch
	if cfg.ClickHouseReadURL != "" {
		rc := cfg.ClickHouse
		rc.URL = cfg.ClickHouseReadURL
		if reader, err = chx.OpenReader(ctx, rc); err != nil {
			return err
		}
		defer reader.Close()
	}

	deletes, err := dedup.OpenReplicated(ctx, nc.JS, cfg.Stream.DedupWindow, cfg.Stream.Replicas)
	if err != nil {
		return err
	}
	registry := registryclient.New(cfg.RegistryURL, cfg.TokenToRegistry, cfg.RegistryTimeout)
	h := &httpapi.Handler{
		SavedQueries: registry,
		Workflows:    &annotate.Resolver{Registry: registry, Provider: cfg.URIProvider},
		Ingest: ingest.NewService(dedup.Publisher{P: ingest.NATSPublisher{P: natsx.NewPublisher(nc, cfg.NATS)}, Epochs: deletes},
			&spanmodel.Normalizer{Prices: prices, Limits: cfg.Span}),
		Deletes: deletes,
		Query:   query.NewService(query.NewStore(reader, cfg.QueryTimeout, cfg.Query), cfg.QueryMaxSpans),
		Limits:  cfg.OTLP.Limits,
		Log:     log,
		Purge:   &purge.Purger{CH: ch, Cluster: cfg.ClickHouse.Cluster, JS: nc.JS, Epochs: deletes},
	}
	// Deletes are read-your-writes: their tombstones are also written here.
	h.Ingest.Direct = ingest.ClickHouseRows{Conn: ch}
	srv := httpx.NewServer(cfg.HTTP, log, "tracing")
	srv.AddCheck("nats", nc.Check)
	srv.AddCheck("clickhouse", chx.Check(ch))
	// OTLP exports are counted on every port they arrive on (through the
	// gateway, OTLP/HTTP, OTLP/gRPC), before authentication and the gate.
	exports := otlpserver.NewMetrics(srv.Metrics)
	srv.Echo.Use(exports.HTTPMiddleware())
	srv.Echo.Use(httpx.RequireCallers(cfg.callers()))
	gate := admit.New(cfg.Admit)
	srv.Echo.Use(gate.Middleware())
	h.Register(srv.Echo)

	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		gate.WatchLag(ctx, func(ctx context.Context) (time.Duration, error) { return spanstream.Lag(ctx, nc.JS) }, srv.Metrics, log)
		return nil
	})
	g.Go(func() error { return srv.Run(ctx, cfg.Addr) })
	g.Go(func() error { return srv.RunMetrics(ctx, cfg.MetricsAddr) })
	if cfg.OTLP.HTTPAddr != "" || cfg.OTLP.GRPCAddr != "" {
		pool, err := pgxutil.Open(ctx, pgxutil.Config{URL: cfg.Postgres.URL, MaxConns: cfg.Postgres.MaxConns})
		if err != nil {
			return err
		}
		defer pool.Close()
		keys := apikey.NewVerifier(pool, cfg.APIKey, log)
		g.Go(func() error { return keys.Run(ctx) })
		if cfg.OTLP.HTTPAddr != "" {
			otlpHTTP := httpx.NewServer(cfg.HTTP, log, "tracing_otlp", httpx.SharedMetrics(srv.Metrics))
			otlpHTTP.AddCheck("nats", nc.Check)
			otlpHTTP.AddCheck("postgres", pgxutil.Check(pool))
			otlpHTTP.Echo.Use(exports.HTTPMiddleware())
			otlpHTTP.Echo.Use(otlpserver.RequireAPIKey(keys))
			otlpHTTP.Echo.Use(gate.Middleware())
			otlpserver.NewHTTP(h.Ingest, h.Limits).Register(otlpHTTP.Echo)
			g.Go(func() error { return otlpHTTP.Run(ctx, cfg.OTLP.HTTPAddr) })
		}
		if cfg.OTLP.GRPCAddr != "" {
			grpcSrv := otlpserver.NewGRPC(h.Ingest, keys, int(cfg.OTLP.MaxDecompressed), log,
				append([]grpc.ServerOption{exports.ServerOption()}, gate.ServerOptions()...)...)
			g.Go(func() error { return grpcSrv.Run(ctx, cfg.OTLP.GRPCAddr) })
		}
	}
	return g.Wait()
}
