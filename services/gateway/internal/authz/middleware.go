package authz

import (
	"context"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/httpx"
	"github.com/assayhq/assay/pkg/roles"
	"github.com/assayhq/assay/pkg/scope"
)

// Roles resolves a user's effective role in a project
// (accounts.Service.ProjectRole), for a scope that arrives without one.
type Roles interface {
	ProjectRole(ctx context.Context, userID, projectID uuid.UUID) (roles.Role, error)
}

// Match is the rule a request matched, with its path's target ids; the
// audit middleware reads it from the echo context.
type Match struct {
	Rule   Rule
	Path   string // the canonical path (the proxy rewrites the request's)
	Target map[string]string
}

const matchKey = "authz.match"

// Matched returns the rule the request matched, if any.
func Matched(c echo.Context) (Match, bool) {
	m, ok := c.Get(matchKey).(Match)
	return m, ok
}

// Enforce refuses, with roles.Denied, a request whose caller's role lacks
// the permission its route needs. It runs after authentication: the scope
// carries the role (an API key's, capped by its creator's); a scope without
// one (a user signed in by session) is resolved through rs. A path with no
// rule is passed on to be the router's 404.
func Enforce(rs Roles) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			r := c.Request()
			rule, target, ok := Lookup(r.Method, r.URL.Path)
			if !ok {
				return next(c)
			}
			c.Set(matchKey, Match{Rule: rule, Path: r.URL.Path, Target: target})
			if rule.Access != ByRole {
				return next(c)
			}
			s, ok := scope.From(r.Context())
			if !ok {
				return httpx.ErrUnauthorized
			}
			if s.Role == "" && s.UserID != uuid.Nil && rs != nil {
				role, err := rs.ProjectRole(r.Context(), s.UserID, s.ProjectID)
				if err != nil {
					return errs.Wrap(errs.Unavailable, "auth.lookup_failed", err)
				}
				s.Role = string(role)
				c.SetRequest(r.WithContext(scope.With(r.Context(), s)))
			}
			if role := roles.Role(s.Role); !role.Can(rule.Perm) {
				return roles.Denied(role, rule.Perm)
			}
			return next(c)
		}
	}
}
