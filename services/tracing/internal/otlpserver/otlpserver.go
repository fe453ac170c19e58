// Package otlpserver is tracing's OTLP receiver: one receiver, two
// transports, as the OpenTelemetry Collector's otlpreceiver. The gRPC
// transport (GRPC, port 4317) and the HTTP one (HTTP: /v1/traces on port
// 4318, and /otlp/v1/traces behind the gateway) decode an
// ExportTraceServiceRequest and hand its spans to the ingest service. On
// the standard ports exporters reach tracing without the gateway hop, and
// tracing checks API keys itself (RequireAPIKey, and the gRPC metadata),
// with the same cached verifier the gateway uses.
package otlpserver

import (
	"context"
	"errors"

	"github.com/labstack/echo/v4"

	"github.com/assayhq/assay/pkg/apikey"
	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/httpx"
	"github.com/assayhq/assay/pkg/roles"
	"github.com/assayhq/assay/pkg/scope"
)

// Verifier resolves an API key to its project; apikey.Verifier implements it.
type Verifier interface {
	Verify(ctx context.Context, raw string) (scope.Scope, error)
}

func authenticate(ctx context.Context, v Verifier, header string) (scope.Scope, error) {
	raw, ok := apikey.FromAuthorization(header)
	if !ok {
		// Langfuse's exporters send Basic base64(<prefix>:<secret>); this
		// port serves OTLP only, where the gateway accepts it too.
		raw, ok = apikey.FromBasic(header)
	}
	if !ok {
		return scope.Scope{}, httpx.ErrUnauthorized
	}
	sc, err := v.Verify(ctx, raw)
	if errors.Is(err, apikey.ErrInvalid) {
		return scope.Scope{}, httpx.ErrUnauthorized
	}
	if err != nil {
		return scope.Scope{}, errs.Wrap(errs.Unavailable, "tracing.key_lookup", err)
	}
	// Exporting spans writes to the project: the gateway's authz table asks
	// the same permission of its ingest routes, with the same 403 body.
	if r := roles.Role(sc.Role); !r.Can(roles.Write) {
		return scope.Scope{}, roles.Denied(r, roles.Write)
	}
	return sc, nil
}

// RequireAPIKey authenticates HTTP requests by their Authorization header
// and puts the key's project into the request context. A key without the
// write permission is a 403 (roles.Denied).
func RequireAPIKey(v Verifier) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			switch c.Request().URL.Path {
			case "/health", "/ready":
				return next(c)
			}
			sc, err := authenticate(c.Request().Context(), v, c.Request().Header.Get("Authorization"))
			if err != nil {
				return err
			}
			c.SetRequest(c.Request().WithContext(scope.With(c.Request().Context(), sc)))
			return next(c)
		}
	}
}
