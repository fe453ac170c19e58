package httpx

import (
	"fmt"
	"sort"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/assayhq/assay/pkg/scope"
)

// Callers are the services allowed to call this one, by name, each with
// the token of its own caller-callee pair (e.g. "runtime" → the value of
// REGISTRY_TOKEN_FROM_RUNTIME). An empty token admits no one.
type Callers map[string]string

// Validate refuses a set that admits no caller, and two callers sharing a
// token: the callee could no longer tell them apart, and one leaked token
// would open both pairs.
func (cs Callers) Validate(prefix string) error {
	seen := map[string]string{}
	names := make([]string, 0, len(cs))
	for name := range cs {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		tok := cs[name]
		if tok == "" {
			continue
		}
		if other, dup := seen[tok]; dup {
			return fmt.Errorf("%s_TOKEN_FROM_%s and %s_TOKEN_FROM_%s are the same: give each caller its own token",
				prefix, strings.ToUpper(other), prefix, strings.ToUpper(name))
		}
		seen[tok] = name
	}
	if len(seen) == 0 {
		return fmt.Errorf("no caller token is set (%s_TOKEN_FROM_<CALLER>): every request would get 401", prefix)
	}
	return nil
}

// RequireCallers refuses every request that does not carry the token of one
// of callers (401), and puts the scope from the internal headers and the
// caller's name (scope.CallerFrom) into the request context. /health,
// /ready and /metrics stay open.
func RequireCallers(callers Callers) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if isOperational(c) {
				return next(c)
			}
			s, caller, ok := scope.ParseFrom(c.Request().Header, callers)
			if !ok {
				return ErrUnauthorized
			}
			ctx := scope.WithCaller(scope.With(c.Request().Context(), s), caller)
			c.SetRequest(c.Request().WithContext(ctx))
			return next(c)
		}
	}
}

// RequireInternal is RequireCallers with the gateway as the only caller.
func RequireInternal(token string) echo.MiddlewareFunc {
	return RequireCallers(Callers{"gateway": token})
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
