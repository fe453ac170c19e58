// Command registry serves versioned testsets, testcases, workflows,
// applications, evaluators, environments and queries.
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/google/uuid"

	"github.com/assayhq/assay/pkg/app"
	"github.com/assayhq/assay/pkg/httpx"
	"github.com/assayhq/assay/pkg/logx"
	"github.com/assayhq/assay/pkg/natsx"
	"github.com/assayhq/assay/pkg/pgxutil"
	"github.com/assayhq/assay/pkg/spanmodel"
	"github.com/assayhq/assay/services/registry/internal/catalog"
	"github.com/assayhq/assay/services/registry/internal/environments"
	"github.com/assayhq/assay/services/registry/internal/evaljobs"
	"github.com/assayhq/assay/services/registry/internal/evalreports"
	"github.com/assayhq/assay/services/registry/internal/evaluations"
	"github.com/assayhq/assay/services/registry/internal/httpapi"
	"github.com/assayhq/assay/services/registry/internal/modelcalls"
	"github.com/assayhq/assay/services/registry/internal/pgstore"
	"github.com/assayhq/assay/services/registry/internal/purge"
	"github.com/assayhq/assay/services/registry/internal/queries"
	"github.com/assayhq/assay/services/registry/internal/secrets"
	"github.com/assayhq/assay/services/registry/internal/simpleevals"
	"github.com/assayhq/assay/services/registry/internal/tcfile"
	"github.com/assayhq/assay/services/registry/internal/testsets"
	"github.com/assayhq/assay/services/registry/internal/tracingclient"
	"github.com/assayhq/assay/services/registry/internal/versioned"
	"github.com/assayhq/assay/services/registry/internal/workflows"
	"github.com/assayhq/assay/services/registry/migrations"
)

// Config is the registry's configuration, read from REGISTRY_* variables.
type Config struct {
	Addr        string `default:"127.0.0.1:8081" desc:"listen address (internal; the gateway is the public entry)"`
	MetricsAddr string `split_words:"true" default:"127.0.0.1:8087" desc:"listen address of Prometheus /metrics, the only listener that answers it (scrapers reach it; the API port does not show per-route counts); empty turns it off"`
	// One token per caller-callee pair: the registry tells its callers
	// apart and a token leaked from one opens no other pair.
	TokenFromGateway  string `split_words:"true" desc:"token the gateway sends with the caller's scope (its GATEWAY_TOKEN_TO_REGISTRY); empty: the gateway is refused"`
	TokenFromRuntime  string `split_words:"true" desc:"token the runtime sends (its RUNTIME_TOKEN_TO_REGISTRY); empty: the runtime is refused"`
	TokenFromTracing  string `split_words:"true" desc:"token tracing sends (its TRACING_TOKEN_TO_REGISTRY); empty: tracing is refused"`
	TokenToTracing    string `split_words:"true" required:"true" desc:"token the registry sends tracing to run saved queries (tracing's TRACING_TOKEN_FROM_REGISTRY)"`
	Testsets          TestsetLimits
	URIProvider       string        `split_words:"true" default:"svc" desc:"provider segment of our handler URIs (svc:builtin:auto_exact_match:v0); agenta is accepted as an alias on input"`
	ServicesURL       string        `split_words:"true" default:"http://127.0.0.1:8080/services" desc:"public base of the hosted runtime; application revisions get data.url = <this>/<key>/<version>"`
	TracingURL        string        `split_words:"true" default:"http://127.0.0.1:8083" desc:"base URL of the tracing service, which runs saved queries on retrieve"`
	TracingTimeout    time.Duration `split_words:"true" default:"30s" desc:"how long a saved query may wait for the tracing service"`
	CommitLockTimeout time.Duration `split_words:"true" default:"5s" desc:"how long a commit waits for its variant's lock (held by a concurrent commit) before answering 503 commit_lock_timeout"`
	VaultKey          string        `split_words:"true" desc:"key sealing the project vault's provider keys (AES-256-GCM): base64 of 32 random bytes, e.g. openssl rand -base64 32; required unless REGISTRY_DEV=true"`
	ModelPrices       string        `split_words:"true" desc:"JSON object of model → {input, output, cached_input} US$ per million tokens, checked before the vendored genai-prices table (pkg/prices); prices the cost estimate of a new evaluation (set it as RUNTIME_MODEL_PRICES is set)"`
	Dev               bool          `default:"false" desc:"development mode: without REGISTRY_VAULT_KEY the vault seals with a fixed, publicly known key (a warning is logged); never set it in production"`
	Secrets           SecretLimits
	Eval              EvalConfig
	NATS              natsx.Config
	Evals             evaljobs.Config
	HTTP              httpx.Config
	Postgres          pgxutil.Config
	Log               logx.Config
}

// TestsetLimits bound what one testset commit or file may hold: ten times
// the compatible platform's limits by default. Over a limit the request gets a 413.
type TestsetLimits struct {
	MaxRows      int   `split_words:"true" default:"100000" desc:"most testcases one testset revision, upload or commit may hold"`
	MaxFileBytes int64 `split_words:"true" default:"104857600" desc:"largest testset file accepted by an upload, in bytes"`
	// POST /simple/testsets/query answered every testset with every
	// testcase inline: one answer could be tens of MB.
	QueryTestsets  int `split_words:"true" default:"50" desc:"most testsets one POST /simple/testsets/query answers (a larger windowing.limit is clamped); when more follow, the answer carries windowing.next to page on"`
	QueryTestcases int `split_words:"true" default:"1000" desc:"most testcases POST /simple/testsets/query inlines per testset (data.testcase_ids stays whole; read the rest with /testcases/query or /testsets/revisions/retrieve)"`
}

// SecretLimits bound a project's vault.
type SecretLimits struct {
	MaxPerProject int `split_words:"true" default:"100" desc:"most secrets (provider keys and custom providers) one project may hold; a create over it is a 409"`
}

// EvalConfig tunes the evaluation records and the live runs' ticker.
type EvalConfig struct {
	DefaultQueuesForAllRuns bool          `split_words:"true" default:"false" desc:"give every evaluation run a default annotation queue, not only runs with a human evaluator step"`
	QueryLimit              int           `split_words:"true" default:"1000" desc:"most evaluation records one query returns (a larger or absent windowing limit is capped; the answer's windowing resumes)"`
	MaxBatch                int           `split_words:"true" default:"10000" desc:"most evaluation records one write or delete may carry"`
	LiveInterval            time.Duration `split_words:"true" default:"1m" desc:"how often the registry publishes a window job for each active live evaluation run (each covers the interval before it); at least 1s"`
	RefreshWait             time.Duration `split_words:"true" default:"8s" desc:"how long POST /evaluations/metrics/refresh waits for the runtime's metrics job to store the records it answers (the compatible SDK reads them at once, with a 10 s client timeout); past it, the records stored so far are answered; 0 answers at once"`
}

// Validate refuses to start without a usable vault key outside
// development, and with a live interval under a second (window job ids
// count in seconds).
func (c *Config) Validate() error {
	if err := c.callers().Validate("REGISTRY"); err != nil {
		return err
	}
	if c.Eval.LiveInterval < time.Second {
		return fmt.Errorf("REGISTRY_EVAL_LIVE_INTERVAL must be at least 1s, got %s", c.Eval.LiveInterval)
	}
	if c.VaultKey != "" {
		if _, err := secrets.ParseKey(c.VaultKey); err != nil {
			return fmt.Errorf("REGISTRY_VAULT_KEY: %w", err)
		}
		return nil
	}
	if !c.Dev {
		return errors.New("REGISTRY_VAULT_KEY is required (base64 of 32 random bytes: openssl rand -base64 32); set REGISTRY_DEV=true to run with a development key")
	}
	return nil
}

// callers are the services whose token the registry accepts.
func (c *Config) callers() httpx.Callers {
	return httpx.Callers{"gateway": c.TokenFromGateway, "runtime": c.TokenFromRuntime, "tracing": c.TokenFromTracing}
}

// vaultCipher returns the vault's cipher: the configured key, else (in
// development only, Validate saw to it) the fixed development key.
func vaultCipher(cfg Config, log *slog.Logger) (*secrets.Cipher, error) {
	if cfg.VaultKey == "" {
		log.Warn("REGISTRY_VAULT_KEY is not set: the vault seals secrets with the public development key (REGISTRY_DEV=true)")
		return secrets.NewCipher(secrets.DevKey())
	}
	key, err := secrets.ParseKey(cfg.VaultKey)
	if err != nil {
		return nil, err
	}
	return secrets.NewCipher(key)
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
		if err := pgxutil.MigrateAs(ctx, cfg.Postgres, pool, migrations.FS, "registry_schema_version", log); err != nil {
			return fmt.Errorf("migrate registry: %w", err)
		}
	}

	store := pgstore.New(pool, pgstore.WithLockTimeout(cfg.CommitLockTimeout))
	reg := versioned.NewService(store)
	cat, err := catalog.New(cfg.URIProvider)
	if err != nil {
		return err
	}
	envs := environments.NewService(reg)
	vault, err := vaultCipher(cfg, log)
	if err != nil {
		return err
	}
	nc, err := natsx.Connect(cfg.NATS, "registry", log)
	if err != nil {
		return err
	}
	defer nc.Drain()
	if err := evaljobs.Ensure(ctx, nc, cfg.Evals); err != nil {
		return err
	}
	jobs := evaljobs.Publisher{P: natsx.NewPublisher(nc, cfg.NATS)}

	srv := httpx.NewServer(cfg.HTTP, log, "registry")
	srv.AddCheck("postgres", pgxutil.Check(pool))
	srv.AddCheck("nats", nc.Check)
	ts := testsets.NewService(reg, tcfile.Limits{MaxRows: cfg.Testsets.MaxRows, MaxBytes: cfg.Testsets.MaxFileBytes,
		QueryTestsets: cfg.Testsets.QueryTestsets, QueryTestcases: cfg.Testsets.QueryTestcases})
	wf := workflows.NewService(reg, envs, cat, workflows.Config{Provider: cfg.URIProvider, ServicesURL: cfg.ServicesURL})
	qs := queries.NewService(reg, tracingclient.New(cfg.TracingURL, cfg.TokenToTracing, cfg.TracingTimeout))
	evs := evaluations.NewService(store.Evaluations(), jobs, evaluations.Config{
		DefaultQueuesForAllRuns: cfg.Eval.DefaultQueuesForAllRuns, MaxLimit: cfg.Eval.QueryLimit, MaxBatch: cfg.Eval.MaxBatch,
		RefreshWait: cfg.Eval.RefreshWait})
	simple := simpleevals.NewSimple(evs, simpleevals.Families{Testsets: ts, Workflows: wf, Queries: qs})
	prices, err := spanmodel.LoadPrices(cfg.ModelPrices)
	if err != nil {
		return fmt.Errorf("REGISTRY_MODEL_PRICES: %w", err)
	}
	simple.SetPrices(prices)
	calls := &modelcalls.Service{Store: store.ModelCalls()}
	evs.SetWaits(func(ctx context.Context, project, run uuid.UUID) ([]evaluations.ProviderWait, error) {
		ws, err := calls.Waits(ctx, project, run)
		out := make([]evaluations.ProviderWait, len(ws))
		for i, w := range ws {
			out[i] = evaluations.ProviderWait{Provider: w.Provider, Until: w.Until}
		}
		return out, err
	})
	httpapi.RegisterCallers(srv.Echo, cfg.callers(), httpapi.Services{
		Testsets:          ts,
		Workflows:         wf,
		Environments:      envs,
		Queries:           qs,
		Secrets:           secrets.NewService(store.Secrets(), vault, secrets.Limits{MaxPerProject: cfg.Secrets.MaxPerProject}),
		Evaluations:       evs,
		SimpleEvaluations: simple,
		SimpleQueues:      simpleevals.NewSimpleQueues(simple),
		Reports:           evalreports.New(evs),
		Purge:             &purge.Purger{Pool: pool, JS: nc.JS},
		ModelCalls:        calls,
	})
	live := &simpleevals.Ticker{Runs: store.Evaluations(), Jobs: jobs, Interval: cfg.Eval.LiveInterval, Log: log}

	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error { return srv.Run(ctx, cfg.Addr) })
	g.Go(func() error { return srv.RunMetrics(ctx, cfg.MetricsAddr) })
	g.Go(func() error { return live.Run(ctx) })
	return g.Wait()
}
