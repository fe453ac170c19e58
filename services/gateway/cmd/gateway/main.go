// Command gateway is the platform's public entry: it authenticates every
// request, provisions accounts, manages API keys, serves the OpenAPI document
// and forwards the API to the owning services.
package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/assayhq/assay/pkg/apikey"
	"github.com/assayhq/assay/pkg/app"
	"github.com/assayhq/assay/pkg/httpx"
	"github.com/assayhq/assay/pkg/logx"
	"github.com/assayhq/assay/pkg/pgxutil"
	"github.com/assayhq/assay/services/gateway/internal/accounts"
	"github.com/assayhq/assay/services/gateway/internal/audit"
	"github.com/assayhq/assay/services/gateway/internal/httpapi"
	"github.com/assayhq/assay/services/gateway/internal/mailer"
	"github.com/assayhq/assay/services/gateway/internal/pgstore"
	"github.com/assayhq/assay/services/gateway/internal/purge"
	"github.com/assayhq/assay/services/gateway/internal/seeder"
	"github.com/assayhq/assay/services/gateway/internal/sessions"
	"github.com/assayhq/assay/services/gateway/internal/throttle"
	"github.com/assayhq/assay/services/gateway/migrations"
)

// Config is the gateway's configuration, read from GATEWAY_* variables.
type Config struct {
	Addr        string `default:"127.0.0.1:8080" desc:"listen address of the public API (loopback for a local run; containers set 0.0.0.0:8080)"`
	MetricsAddr string `split_words:"true" default:"127.0.0.1:8086" desc:"listen address of Prometheus /metrics, apart from the public API port (per-route counts are for operators); empty turns it off"`
	AdminKey    string `split_words:"true" required:"true" desc:"secret for Authorization: Access <key> on /api/admin/ (make up: ASSAY_ADMIN_KEY or .run/admin.key)"`
	// One token per service called, each the other half of that service's
	// <SERVICE>_TOKEN_FROM_GATEWAY: a leaked token opens one pair only.
	TokenToRegistry  string        `split_words:"true" required:"true" desc:"token the gateway sends the registry with the caller's scope (the registry's REGISTRY_TOKEN_FROM_GATEWAY); at least 16 characters"`
	TokenToRuntime   string        `split_words:"true" required:"true" desc:"token the gateway sends the runtime (the runtime's RUNTIME_TOKEN_FROM_GATEWAY); at least 16 characters"`
	TokenToTracing   string        `split_words:"true" required:"true" desc:"token the gateway sends tracing (tracing's TRACING_TOKEN_FROM_GATEWAY); at least 16 characters"`
	RegistryURL      string        `split_words:"true" default:"http://127.0.0.1:8081" desc:"base URL of the registry service"`
	RuntimeURL       string        `split_words:"true" default:"http://127.0.0.1:8082" desc:"base URL of the runtime service"`
	TracingURL       string        `split_words:"true" default:"http://127.0.0.1:8083" desc:"base URL of the tracing service"`
	ConsoleURL       string        `split_words:"true" default:"http://127.0.0.1:8085" desc:"base URL of the console service, which serves the web console under /console/ (empty: no console)"`
	UpstreamTimeout  time.Duration `split_words:"true" default:"300s" desc:"how long to wait for a service's response headers"`
	InvitationTTL    time.Duration `split_words:"true" default:"168h" desc:"how long an invitation's token stays valid (resending gives a new token and a new expiry)"`
	PasswordResetTTL time.Duration `split_words:"true" default:"1h" desc:"how long a password reset link works (mailed, or issued by the operator through the admin route); it works once"`
	PublicURL        string        `split_words:"true" desc:"the platform's public base URL (e.g. https://assay.example.com), put before the accept_url of invitations; empty: a path-only link"`
	SmtpURL          string        `split_words:"true" desc:"mail relay for invitations and password resets: smtp://[user:password@]host[:port]?from=address (STARTTLS when offered; port 587 by default); set, an invitation's link goes to the invited email only; empty: invitations are not mailed (the inviter passes the link on) and password reset links are issued by the operator"`
	TrustedProxies   string        `split_words:"true" desc:"comma-separated addresses or CIDRs of the reverse proxies in front of the gateway whose X-Forwarded-For names the client (the sign-in throttle counts per client address); empty: none, the connecting peer is the client"`
	HTTP             httpx.Config
	Postgres         pgxutil.Config
	APIKey           apikey.Config
	Session          sessions.Config
	Signin           throttle.Config
	Log              logx.Config
}

// Validate checks what tags cannot.
func (c *Config) Validate() error {
	if len(c.AdminKey) < 16 {
		return errors.New("GATEWAY_ADMIN_KEY must be at least 16 characters")
	}
	tokens := map[string]string{"GATEWAY_TOKEN_TO_REGISTRY": c.TokenToRegistry, "GATEWAY_TOKEN_TO_RUNTIME": c.TokenToRuntime, "GATEWAY_TOKEN_TO_TRACING": c.TokenToTracing}
	for _, name := range []string{"GATEWAY_TOKEN_TO_REGISTRY", "GATEWAY_TOKEN_TO_RUNTIME", "GATEWAY_TOKEN_TO_TRACING"} {
		if len(tokens[name]) < 16 {
			return fmt.Errorf("%s must be at least 16 characters", name)
		}
	}
	if c.TokenToRegistry == c.TokenToRuntime || c.TokenToRegistry == c.TokenToTracing || c.TokenToRuntime == c.TokenToTracing {
		return errors.New("GATEWAY_TOKEN_TO_REGISTRY, _RUNTIME and _TRACING must differ: one token per pair of services")
	}
	if c.InvitationTTL <= 0 {
		return errors.New("GATEWAY_INVITATION_TTL must be positive")
	}
	if c.PasswordResetTTL <= 0 {
		return errors.New("GATEWAY_PASSWORD_RESET_TTL must be positive")
	}
	if _, err := throttle.ParseProxies(c.TrustedProxies); err != nil {
		return fmt.Errorf("GATEWAY_TRUSTED_PROXIES: %w", err)
	}
	if c.SmtpURL != "" {
		if _, err := mailer.New(c.SmtpURL, time.Second); err != nil {
			return fmt.Errorf("GATEWAY_SMTP_URL: %w", err)
		}
		if c.PublicURL == "" {
			return errors.New("GATEWAY_PUBLIC_URL is required with GATEWAY_SMTP_URL: a mailed link must be absolute")
		}
	}
	return nil
}

func main() {
	var cfg Config
	app.Main("gateway", "GATEWAY", &cfg, func(ctx context.Context) error { return run(ctx, cfg) })
}

func run(ctx context.Context, cfg Config) error {
	log := logx.New(cfg.Log).With("service", "gateway")
	pool, err := pgxutil.Open(ctx, cfg.Postgres)
	if err != nil {
		return err
	}
	defer pool.Close()
	if cfg.Postgres.Migrate {
		if err := pgxutil.MigrateAs(ctx, cfg.Postgres, pool, migrations.FS, "gateway_schema_version", log); err != nil {
			return fmt.Errorf("migrate gateway: %w", err)
		}
	}

	verifier := apikey.NewVerifier(pool, cfg.APIKey, log)
	accts := accounts.NewService(pgstore.New(pool), verifier, seeder.New(cfg.RegistryURL, cfg.TokenToRegistry, cfg.UpstreamTimeout),
		purge.New(purge.Target{URL: cfg.RegistryURL, Token: cfg.TokenToRegistry}, purge.Target{URL: cfg.TracingURL, Token: cfg.TokenToTracing}, cfg.UpstreamTimeout))
	accts.InvitationTTL = cfg.InvitationTTL
	accts.AcceptURL = strings.TrimSuffix(cfg.PublicURL, "/") + accts.AcceptURL
	accts.ResetURL = strings.TrimSuffix(cfg.PublicURL, "/") + accts.ResetURL
	accts.ResetTTL = cfg.PasswordResetTTL
	if cfg.SmtpURL != "" {
		m, err := mailer.New(cfg.SmtpURL, 30*time.Second)
		if err != nil {
			return err
		}
		accts.Mailer = m
	}
	proxies, err := throttle.ParseProxies(cfg.TrustedProxies)
	if err != nil {
		return err
	}
	srv := httpx.NewServer(cfg.HTTP, log, "gateway")
	srv.AddCheck("postgres", pgxutil.Check(pool))
	err = httpapi.Register(srv.Echo, httpapi.Deps{
		Accounts: accts,
		Audit:    audit.New(pool),
		Sessions: sessions.NewService(pgstore.NewSessions(pool), accts, cfg.Session),
		Verifier: verifier,
		AdminKey: cfg.AdminKey,
		Upstreams: httpapi.Upstreams{Registry: cfg.RegistryURL, Runtime: cfg.RuntimeURL, Tracing: cfg.TracingURL, Console: cfg.ConsoleURL,
			RegistryToken: cfg.TokenToRegistry, RuntimeToken: cfg.TokenToRuntime, TracingToken: cfg.TokenToTracing},
		UpstreamTimeout: cfg.UpstreamTimeout,
		Log:             log,
		SignIns:         throttle.New(cfg.Signin),
		TrustedProxies:  proxies,
	})
	if err != nil {
		return err
	}

	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error { return verifier.Run(ctx) })
	g.Go(func() error { return srv.Run(ctx, cfg.Addr) })
	g.Go(func() error { return srv.RunMetrics(ctx, cfg.MetricsAddr) })
	return g.Wait()
}
