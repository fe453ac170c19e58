// Command runtime invokes applications and evaluators under /services/ and
// publishes the spans of what it runs.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"runtime/debug"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/errgroup"

	"github.com/assayhq/assay/pkg/app"
	"github.com/assayhq/assay/pkg/evaljob"
	"github.com/assayhq/assay/pkg/evaluation"
	"github.com/assayhq/assay/pkg/httpx"
	"github.com/assayhq/assay/pkg/logx"
	"github.com/assayhq/assay/pkg/natsx"
	"github.com/assayhq/assay/pkg/spanmodel"
	"github.com/assayhq/assay/services/runtime/internal/callcache"
	"github.com/assayhq/assay/services/runtime/internal/codebox"
	"github.com/assayhq/assay/services/runtime/internal/egress"
	"github.com/assayhq/assay/services/runtime/internal/evalmetrics"
	"github.com/assayhq/assay/services/runtime/internal/evalqueue"
	"github.com/assayhq/assay/services/runtime/internal/evalrun"
	"github.com/assayhq/assay/services/runtime/internal/evaluators"
	"github.com/assayhq/assay/services/runtime/internal/httpapi"
	"github.com/assayhq/assay/services/runtime/internal/invoke"
	"github.com/assayhq/assay/services/runtime/internal/llm"
	"github.com/assayhq/assay/services/runtime/internal/registryclient"
	"github.com/assayhq/assay/services/runtime/internal/traces"
	"github.com/assayhq/assay/services/runtime/internal/tracingclient"
	"github.com/assayhq/assay/services/runtime/internal/vault"
)

// Config is the runtime's configuration, read from RUNTIME_* variables.
type Config struct {
	Addr        string `default:"127.0.0.1:8082" desc:"listen address (internal; the gateway is the public entry)"`
	MetricsAddr string `split_words:"true" default:"127.0.0.1:8088" desc:"listen address of Prometheus /metrics, the only listener that answers it (scrapers reach it; the API port does not show per-route counts); empty turns it off"`
	GCPercent   int    `envconfig:"GC_PERCENT" default:"400" desc:"Go GC target percentage (as GOGC; ignored when GOGC is set): an invocation allocates its envelope, prompt and spans several times over, and the default 100 spends much of the CPU in the GC"`
	PprofAddr   string `split_words:"true" desc:"listen address of net/http/pprof (e.g. 127.0.0.1:6061), for profiling; empty (the default) turns it off"`
	// One token per caller-callee pair (the gateway is the runtime's only
	// caller): a token leaked from one pair opens no other.
	TokenFromGateway   string           `split_words:"true" required:"true" desc:"token the gateway sends with the caller's scope (its GATEWAY_TOKEN_TO_RUNTIME); requests without it get 401"`
	TokenToRegistry    string           `split_words:"true" required:"true" desc:"token the runtime sends the registry: revisions, provider keys, evaluation records (the registry's REGISTRY_TOKEN_FROM_RUNTIME)"`
	TokenToTracing     string           `split_words:"true" required:"true" desc:"token the runtime sends tracing: invocation spans, and the evaluation workers' queries (tracing's TRACING_TOKEN_FROM_RUNTIME)"`
	RegistryURL        string           `split_words:"true" default:"http://127.0.0.1:8081" desc:"base URL of the registry: revisions to run and the project's secrets"`
	RegistryTimeout    time.Duration    `split_words:"true" default:"10s" desc:"how long a call to the registry may take"`
	TracingURL         string           `split_words:"true" default:"http://127.0.0.1:8083" desc:"base URL of the tracing API (internal): invocation spans are stored through it, and the evaluation worker reads query sources, cached traces and application outputs"`
	RevisionCacheTTL   time.Duration    `split_words:"true" default:"1s" desc:"how long a retrieved revision is reused for the same references (a commit or deployment reaches invocations by slug or environment at most this late); 0 turns it off"`
	URIProvider        string           `split_words:"true" default:"svc" desc:"provider segment of the handler URIs the runtime answers with (svc:builtin:completion:v0); agenta is accepted on input"`
	SecretsTTL         time.Duration    `split_words:"true" default:"30s" desc:"how long a project's provider keys are cached"`
	AllowPrivateEgress bool             `split_words:"true" default:"false" desc:"turn the egress policy's address and port rules off for every outgoing call (LLM providers, webhooks, hooks): private, loopback and link-local addresses and plain http anywhere; prefer RUNTIME_EGRESS_ALLOW"`
	EgressAllow        egress.AllowList `split_words:"true" desc:"destinations outgoing calls (LLM providers and custom base URLs, webhooks, hooks) may reach although private, over plain http too: comma-separated networks (10.0.0.0/8), addresses (10.1.2.3), address:port (10.1.2.3:11434, [fd00::1]:8000), host names or host:port (ollama.internal:11434; a name entry trusts what the name resolves to); empty (the default) admits public https destinations only"`
	HookTimeout        time.Duration    `split_words:"true" default:"30s" desc:"time-out of a hook application or HTTPS handler call"`
	WebhookTimeout     time.Duration    `split_words:"true" default:"10s" desc:"time-out of a webhook evaluator call"`
	EgressMaxBytes     int64            `split_words:"true" default:"1048576" desc:"largest answer a hook or webhook may give"`
	CodeTimeout        time.Duration    `split_words:"true" default:"5s" desc:"time limit of one custom code run"`
	CodeMemBytes       int64            `split_words:"true" default:"67108864" desc:"memory limit of one custom code run"`
	CodePython         string           `split_words:"true" default:"/usr/bin/python3" desc:"Python interpreter custom code runs with, in the sandbox (its standard library and shared libraries are mounted read-only; an interpreter the sandbox user cannot read, such as one under /root, refuses Python code)"`
	CodeBwrap          string           `split_words:"true" default:"bwrap" desc:"bubblewrap executable (path or name on PATH) that sandboxes custom code; without it, or without unprivileged user namespaces, custom code is refused with 422 runtime.sandbox_unavailable"`
	CodeUIDBase        int              `envconfig:"CODE_UID_BASE" default:"1000000" desc:"when the runtime runs as root: first uid of the range sandboxed runs use, one uid per concurrent run (no account or file may use these uids)"`
	CodeUIDs           int              `envconfig:"CODE_UIDS" default:"256" desc:"when the runtime runs as root: size of that uid range, the custom code runs at once (more wait)"`
	CodeMaxProcs       int              `split_words:"true" default:"16" desc:"processes (and threads) one custom code run may have (RLIMIT_NPROC in its own user namespace)"`
	ModelPrices        string           `split_words:"true" desc:"JSON object of model → {input, output, cached_input} US$ per million tokens, checked before the vendored genai-prices table (pkg/prices) (costs of invocation spans)"`
	Eval               EvalConfig
	LLM                llm.Config
	HTTP               httpx.Config
	NATS               natsx.Config
	Log                logx.Config
}

// EvalConfig is the evaluation worker. Variables: RUNTIME_EVAL_*.
type EvalConfig struct {
	Jobs         int           `default:"5" desc:"evaluation jobs one runtime process runs at once (each runs up to its run's concurrency.batch_size cells at once); 0 turns the worker off. With a lookahead, the last free one is kept for a project running no job in this process"`
	ProjectJobs  int           `split_words:"true" default:"4" desc:"evaluation jobs of one project one runtime process runs at once (0: up to RUNTIME_EVAL_JOBS); the jobs waiting are chosen fairly: the project running the fewest, then its run running the fewest, then the oldest"`
	Lookahead    int           `default:"64" desc:"evaluation jobs one runtime process holds beyond those it runs, to choose fairly among (another project's job does not wait behind a queue longer than this); 0 serves jobs first in, first out. Each replica holds its own"`
	AckWait      time.Duration `split_words:"true" default:"15s" desc:"how long an evaluation job may go without a heartbeat before another worker gets it (a killed worker's jobs resume after this long; a running or waiting job heartbeats every third of it)"`
	MaxDeliver   int           `split_words:"true" default:"10" desc:"deliveries of an evaluation job that keeps failing transiently (registry or tracing down) before its run is marked failed"`
	RetryDelay   time.Duration `split_words:"true" default:"5s" desc:"wait before a transiently failed evaluation job is delivered again"`
	Chunk        int           `default:"100" desc:"scenarios per process job: a run job fans its scenarios out in jobs of this many, so several workers share a run"`
	Lease        time.Duration `default:"15s" desc:"how long a claimed cell belongs to its worker without renewal: the worker renews the claims of the cells it runs every third of it (a long cell is never taken over while its worker lives), so a killed worker's cells are claimed again within this long"`
	ActiveEvery  time.Duration `split_words:"true" default:"1s" desc:"how often a running evaluation job re-reads whether its run is still active (a stop takes effect within about this long)"`
	WindowGrace  time.Duration `split_words:"true" default:"2s" desc:"how long after a live evaluation window's end its traces are queried (the last ones reach storage a moment after they are sent)"`
	BudgetDay    time.Duration `split_words:"true" default:"24h" desc:"the period a live evaluation's data.budget is per: once the run's cells of windows starting in the current period cost that much, its windows are not scored until the next period (meta.pause says so). Periods start at the Unix epoch, so 24h is the UTC day; shorter only to test it"`
	DrainTimeout time.Duration `split_words:"true" default:"20s" desc:"on shutdown, how long running evaluation jobs may finish the cells they hold before they are handed back to the stream"`
	Replicas     int           `default:"1" desc:"replicas of the EVALS job stream (3 on a NATS cluster; as REGISTRY_EVALS_REPLICAS)"`
	DedupWindow  time.Duration `split_words:"true" default:"10m" desc:"how long the EVALS stream remembers job ids (as REGISTRY_EVALS_DEDUP_WINDOW)"`
}

func main() {
	var cfg Config
	app.Main("runtime", "RUNTIME", &cfg, func(ctx context.Context) error { return run(ctx, cfg) })
}

func run(ctx context.Context, cfg Config) error {
	log := logx.New(cfg.Log).With("service", "runtime")
	app.Pprof(cfg.PprofAddr, log)
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(cfg.GCPercent)
	}
	prices, err := spanmodel.LoadPrices(cfg.ModelPrices)
	if err != nil {
		return err
	}
	nc, err := natsx.Connect(cfg.NATS, "runtime", log)
	if err != nil {
		return err
	}
	defer nc.Drain()
	if cfg.Eval.Jobs > 0 {
		// The registry declares it too (it publishes); whoever starts
		// first creates it, with the same settings.
		if _, err := nc.EnsureStream(ctx, evaljob.StreamConfig(cfg.Eval.Replicas, cfg.Eval.DedupWindow)); err != nil {
			return err
		}
	}

	codebox.Configure(codebox.SandboxConfig{Bwrap: cfg.CodeBwrap, Python: cfg.CodePython,
		UIDBase: cfg.CodeUIDBase, UIDs: cfg.CodeUIDs, MaxProcs: cfg.CodeMaxProcs})
	for lang, err := range codebox.Status(ctx) {
		if err != nil {
			log.Warn("custom code is refused: no sandbox", "runtime", lang, "reason", err.Error())
		} else {
			log.Info("custom code sandbox ready", "runtime", lang)
		}
	}

	// One egress policy (the allow-list and the private switch) for every
	// outgoing call; the clients differ only in time-outs and answer caps.
	policy := func(timeout time.Duration) egress.Config {
		return egress.Config{AllowPrivate: cfg.AllowPrivateEgress, Allow: cfg.EgressAllow, Timeout: timeout, MaxBytes: cfg.EgressMaxBytes}
	}
	models := llm.New(cfg.LLM, os.Getenv, egress.New(policy(cfg.LLM.Timeout)))
	if err := models.CheckBaseURLs(); err != nil {
		return err
	}
	// One client per service the runtime calls: every call to the registry
	// goes through registry, every call to tracing through tracing.
	registry := registryclient.New(cfg.RegistryURL, cfg.TokenToRegistry, cfg.RegistryTimeout, cfg.RevisionCacheTTL)
	tracing := tracingclient.New(cfg.TracingURL, cfg.TokenToTracing, cfg.RegistryTimeout)
	svc := &invoke.Service{
		Revisions: registry,
		Secrets:   vault.New(registry, cfg.SecretsTTL),
		LLM:       models,
		Recorder:  &traces.Recorder{Sink: tracing, Norm: &spanmodel.Normalizer{Prices: prices}},
		Hooks:     egress.New(policy(cfg.HookTimeout)),
		Code:      codebox.Limits{Timeout: cfg.CodeTimeout, MemBytes: cfg.CodeMemBytes},
		Provider:  cfg.URIProvider,
		Log:       log,
		// Evaluation cells' model calls: answered from the project's
		// cache when identical, queued behind a provider's 429.
		Cache:         &callcache.Cache{Registry: registry, TTL: cfg.LLM.CacheTTL},
		Prices:        prices,
		RateLimitWait: cfg.LLM.RateLimitWait,
	}
	svc.Eval = evaluators.Env{
		Embedder: svc,
		Egress:   egress.New(policy(cfg.WebhookTimeout)),
		Code:     svc.Code,
	}

	srv := httpx.NewServer(cfg.HTTP, log, "runtime")
	srv.AddCheck("nats", nc.Check)
	srv.Echo.Use(httpx.RequireCallers(httpx.Callers{"gateway": cfg.TokenFromGateway}))
	(&httpapi.Handler{Invoke: svc}).Register(srv.Echo)

	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error { return srv.Run(ctx, cfg.Addr) })
	g.Go(func() error { return srv.RunMetrics(ctx, cfg.MetricsAddr) })
	if cfg.Eval.Jobs > 0 {
		// Jobs waiting for a worker (the alert on evaluation jobs waiting).
		srv.Metrics.MustRegister(natsx.BacklogCollector(nc.JS, evaluation.Stream, evalqueue.ConsumerName, "runtime_eval_jobs", "Evaluation jobs", log))
		queue, err := evalqueue.Open(ctx, nc.JS, cfg.Eval.AckWait, cfg.Eval.MaxDeliver)
		if err != nil {
			return err
		}
		consumer := &evalrun.Consumer{
			Queue: queue,
			Exec: &evalrun.Executor{
				Client:      registry,
				Tracing:     tracing,
				Jobs:        registry, // the registry publishes the fan-out jobs
				Metrics:     &evalrun.RunMetrics{Client: registry, Computer: &evalmetrics.Computer{Tracing: tracing, Spans: tracing}},
				Invoke:      svc,
				Revisions:   svc.Revisions,
				Worker:      workerName(),
				Chunk:       cfg.Eval.Chunk,
				Lease:       cfg.Eval.Lease,
				ActiveEvery: cfg.Eval.ActiveEvery,
				WindowGrace: cfg.Eval.WindowGrace,
				BudgetDay:   cfg.Eval.BudgetDay,
				Waits:       &callcache.Waits{Registry: registry},
				Cells:       &callcache.Cells{Registry: registry, TTL: cfg.LLM.CacheTTL},
				Phases:      phaseSeconds(srv.Metrics),
				Log:         log,
			},
			Jobs: cfg.Eval.Jobs, ProjectJobs: cfg.Eval.ProjectJobs, Lookahead: cfg.Eval.Lookahead, AckWait: cfg.Eval.AckWait, MaxDeliver: cfg.Eval.MaxDeliver,
			RetryDelay: cfg.Eval.RetryDelay, DrainTimeout: cfg.Eval.DrainTimeout, Log: log,
		}
		srv.AddCheck("evals", func(ctx context.Context) error {
			_, err := nc.JS.Stream(ctx, evaluation.Stream)
			return err
		})
		g.Go(func() error { return consumer.Run(ctx) })
	}
	return g.Wait()
}

// workerName names this process in the cells it claims: host, pid and a
// random suffix (a restarted process with the same pid is another worker).
func workerName() string {
	host, _ := os.Hostname()
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return fmt.Sprintf("%s/%d/%s", host, os.Getpid(), hex.EncodeToString(b))
}

// phaseSeconds is runtime_eval_phase_seconds, the time evaluation jobs
// spend in each phase (evalrun.Phases), registered on reg.
func phaseSeconds(reg prometheus.Registerer) evalrun.Phases {
	h := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "runtime_eval_phase_seconds",
		Help:    "Time evaluation jobs spent in each phase: registry reads, claims, cell lookups, cells, result writes, metrics, settles.",
		Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}}, []string{"phase"})
	reg.MustRegister(h)
	return phases{h}
}

type phases struct{ *prometheus.HistogramVec }

func (p phases) Observe(phase string, d time.Duration) { p.WithLabelValues(phase).Observe(d.Seconds()) }
