// Package httpapi is the gateway's HTTP surface: authentication, the admin
// and API-key endpoints, the OpenAPI document, and the proxy to the services.
package httpapi

import (
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/assayhq/assay/pkg/apidoc"
	"github.com/assayhq/assay/services/gateway/internal/accounts"
	"github.com/assayhq/assay/services/gateway/internal/audit"
	"github.com/assayhq/assay/services/gateway/internal/authz"
	"github.com/assayhq/assay/services/gateway/internal/sessions"
	"github.com/assayhq/assay/services/gateway/internal/throttle"
)

// Deps is what the routes need.
type Deps struct {
	Accounts        *accounts.Service
	Audit           *audit.Log
	Sessions        *sessions.Service
	Verifier        Verifier
	AdminKey        string
	Upstreams       Upstreams
	UpstreamTimeout time.Duration
	Log             *slog.Logger
	// SignIns throttles failed sign-ins (nil: throttle.New's defaults).
	SignIns *throttle.Limiter
	// TrustedProxies are the peers whose X-Forwarded-For names the
	// client (nil: none, the peer is the client).
	TrustedProxies throttle.Proxies
}

type handler struct {
	accounts *accounts.Service
	audit    *audit.Log
	sessions *sessions.Service
	signIns  *throttle.Limiter
	proxies  throttle.Proxies
}

// Register adds the gateway's routes and middleware to e.
func Register(e *echo.Echo, d Deps) error {
	p, err := newProxy(d.Upstreams, d.UpstreamTimeout, d.Log)
	if err != nil {
		return err
	}
	if d.SignIns == nil {
		d.SignIns = throttle.New(throttle.Config{})
	}
	h := &handler{accounts: d.Accounts, audit: d.Audit, sessions: d.Sessions, signIns: d.SignIns, proxies: d.TrustedProxies}
	e.Use(authenticate(d.Verifier, d.Accounts, d.Sessions, d.AdminKey))
	var rs authz.Roles
	if d.Accounts != nil {
		rs = d.Accounts
	}
	e.Use(authz.Enforce(rs))
	if d.Audit != nil {
		e.Use(audit.Middleware(d.Audit, d.Log))
	}

	e.GET("/openapi.json", openapi)
	e.GET("/docs", docs)
	e.GET(strings.TrimPrefix(apidoc.AssetPath, "/api"), redoc)
	e.POST("/admin/simple/accounts", h.provisionAccounts)
	e.DELETE("/admin/simple/accounts", h.deleteAccounts)
	e.GET("/keys", h.listKeys)
	e.POST("/keys", h.createKey)
	e.DELETE("/keys/:id", h.revokeKey)
	e.GET("/profile", h.profile)
	e.GET("/audit", h.listAudit)
	h.registerTeams(e)
	h.registerAdmin(e)
	e.POST("/auth/sign-in", h.signIn)
	e.GET("/auth/session", h.session)
	e.POST("/auth/sign-out", h.signOut)
	e.POST("/auth/password-reset", h.requestReset)
	e.POST("/auth/password-reset/confirm", h.confirmReset)
	registerConsoleLinks(e)

	e.Any("/*", p.handle)
	return nil
}

func openapi(c echo.Context) error {
	b, err := apidoc.Document()
	if err != nil {
		return err
	}
	return c.Blob(http.StatusOK, "application/json", b)
}

func docs(c echo.Context) error {
	b, err := apidoc.HTML(c.QueryParam("tag"))
	if err != nil {
		return err
	}
	return c.HTMLBlob(http.StatusOK, b)
}

// redoc serves the vendored Redoc bundle the docs page loads; it changes
// only with a new build, so clients may cache it for a day.
func redoc(c echo.Context) error {
	c.Response().Header().Set("Cache-Control", "public, max-age=86400")
	return c.Blob(http.StatusOK, "text/javascript; charset=utf-8", apidoc.RedocJS())
}
