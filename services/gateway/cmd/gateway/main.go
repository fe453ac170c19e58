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
	"github.com/assayhq/assay/services/gateway/migrations"
)

// Config is the gateway's configuration, read from GATEWAY_* variables.
type Config struct {
	Addr            string        `default:":8080" desc:"listen address of the public API"`
	AdminKey        string        `split_words:"true" required:"true" desc:"secret for Authorization: Access <key> on /api/admin/ (make up: ASSAY_ADMIN_KEY or .run/admin.key)"`
	InternalToken   string        `split_words:"true" required:"true" desc:"token the gateway sends to the services with the caller's scope; must match theirs"`
	RegistryURL     string        `split_words:"true" default:"http://127.0.0.1:8081" desc:"base URL of the registry service"`
	RuntimeURL      string        `split_words:"true" default:"http://127.0.0.1:8082" desc:"base URL of the runtime service"`
	TracingURL      string        `split_words:"true" default:"http://127.0.0.1:8083" desc:"base URL of the tracing service"`
	ConsoleURL      string        `split_words:"true" default:"http://127.0.0.1:8085" desc:"base URL of the console service, which serves the web console under /console/ (empty: no console)"`
	UpstreamTimeout time.Duration `split_words:"true" default:"300s" desc:"how long to wait for a service's response headers"`
	InvitationTTL   time.Duration `split_words:"true" default:"168h" desc:"how long an invitation's token stays valid (resending gives a new token and a new expiry)"`
	PublicURL       string        `split_words:"true" desc:"the platform's public base URL (e.g. https://assay.example.com), put before the accept_url of invitations; empty: a path-only link"`
	SmtpURL         string        `split_words:"true" desc:"mail relay for invitations: smtp://[user:password@]host[:port]?from=address (STARTTLS when offered; port 587 by default); empty: invitations are not mailed, the inviter passes the link on"`
	HTTP            httpx.Config
	Postgres        pgxutil.Config
	APIKey          apikey.Config
	Session         sessions.Config
	Log             logx.Config
}

// Validate checks what tags cannot.
func (c *Config) Validate() error {
	if len(c.AdminKey) < 16 {
		return errors.New("GATEWAY_ADMIN_KEY must be at least 16 characters")
	}
	if len(c.InternalToken) < 16 {
		return errors.New("GATEWAY_INTERNAL_TOKEN must be at least 16 characters")
	}
	if c.InvitationTTL <= 0 {
		return errors.New("GATEWAY_INVITATION_TTL must be positive")
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
	accts := accounts.NewService(pgstore.New(pool), verifier, seeder.New(cfg.RegistryURL, cfg.InternalToken, cfg.UpstreamTimeout),
		purge.New(cfg.RegistryURL, cfg.TracingURL, cfg.InternalToken, cfg.UpstreamTimeout))
	accts.InvitationTTL = cfg.InvitationTTL
	accts.AcceptURL = strings.TrimSuffix(cfg.PublicURL, "/") + accts.AcceptURL
	if cfg.SmtpURL != "" {
		m, err := mailer.New(cfg.SmtpURL, 30*time.Second)
		if err != nil {
			return err
		}
		accts.Mailer = m
	}
	srv := httpx.NewServer(cfg.HTTP, log, "gateway")
	srv.AddCheck("postgres", pgxutil.Check(pool))
	err = httpapi.Register(srv.Echo, httpapi.Deps{
		Accounts:        accts,
		Audit:           audit.New(pool),
		Sessions:        sessions.NewService(pgstore.NewSessions(pool), accts, cfg.Session),
		Verifier:        verifier,
		AdminKey:        cfg.AdminKey,
		InternalToken:   cfg.InternalToken,
		Upstreams:       httpapi.Upstreams{Registry: cfg.RegistryURL, Runtime: cfg.RuntimeURL, Tracing: cfg.TracingURL, Console: cfg.ConsoleURL},
		UpstreamTimeout: cfg.UpstreamTimeout,
		Log:             log,
	})
	if err != nil {
		return err
	}

	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error { return verifier.Run(ctx) })
	g.Go(func() error { return srv.Run(ctx, cfg.Addr) })
	return g.Wait()
}
