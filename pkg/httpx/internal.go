package httpx

import (
	"github.com/labstack/echo/v4"

	"github.com/assayhq/assay/pkg/scope"
)

// RequireInternal refuses every request that does not carry the gateway's
// internal token (401), and puts the scope from the internal headers into the
// request context. /health, /ready and /metrics stay open.
func RequireInternal(token string) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if isOperational(c) {
				return next(c)
			}
			s, ok := scope.Parse(c.Request().Header, token)
			if !ok {
				return ErrUnauthorized
			}
			c.SetRequest(c.Request().WithContext(scope.With(c.Request().Context(), s)))
			return next(c)
		}
	}
}

// ProjectScope returns the caller's scope, or 401 when the request carries
// no project (only the gateway's own admin calls lack one).
func ProjectScope(c echo.Context) (scope.Scope, error) {
	s, ok := scope.From(c.Request().Context())
	if !ok || s.ProjectID == [16]byte{} {
		return scope.Scope{}, ErrUnauthorized
	}
	return s, nil
}
