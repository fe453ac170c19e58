package httpapi

import (
	"context"
	"crypto/subtle"
	"errors"
	"strings"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/assayhq/assay/pkg/apikey"
	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/httpx"
	"github.com/assayhq/assay/pkg/scope"
)

// Verifier resolves an API key to its project scope (apikey.Verifier).
type Verifier interface {
	Verify(ctx context.Context, raw string) (scope.Scope, error)
}

// Workspaces tells which workspace a project belongs to
// (accounts.Service); uuid.Nil when the project does not exist.
type Workspaces interface {
	ProjectWorkspace(ctx context.Context, projectID uuid.UUID) (uuid.UUID, error)
}

// openPaths need no credentials (canonical form, see httpx.CanonicalPath).
var openPaths = map[string]bool{"/health": true, "/ready": true, "/metrics": true, "/openapi.json": true, "/docs": true, "/docs/redoc.standalone.js": true}

// optionalPaths take credentials when given and go on without them: the
// invitation token is the credential of an accept.
var optionalPaths = map[string]bool{"/invitations/accept": true}

// isAdminPath: the Access scheme is accepted only on paths under /admin/.
func isAdminPath(p string) bool { return strings.Contains(p+"/", "/admin/") }

// authenticate implements reference §0.2: "ApiKey <key>" (or a bare key) on
// every path but the admin ones, "Access <admin key>" only on admin paths,
// and the same 401 for every failure, before any body is read.
func authenticate(v Verifier, ws Workspaces, adminKey string) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			r := c.Request()
			path := r.URL.Path
			if openPaths[path] {
				return next(c)
			}
			header := r.Header.Get(echo.HeaderAuthorization)
			if header == "" && optionalPaths[path] {
				return next(c)
			}
			if isAdminPath(path) {
				key, ok := strings.CutPrefix(header, "Access ")
				if !ok || subtle.ConstantTimeCompare([]byte(key), []byte(adminKey)) != 1 {
					return httpx.ErrUnauthorized
				}
				return next(c)
			}
			raw, ok := apikey.FromAuthorization(header)
			if !ok {
				return httpx.ErrUnauthorized
			}
			s, err := v.Verify(r.Context(), raw)
			switch {
			case errors.Is(err, apikey.ErrInvalid):
				return httpx.ErrUnauthorized
			case err != nil:
				return errs.Wrap(errs.Unavailable, "auth.lookup_failed", err)
			}
			// A project or workspace named in the query must be real and the
			// key's own: the key alone decides the scope.
			q := r.URL.Query()
			for _, name := range []string{"project_id", "workspace_id"} {
				if !q.Has(name) {
					continue
				}
				id, err := uuid.Parse(q.Get(name))
				if err != nil || id == uuid.Nil {
					return httpx.ErrUnauthorized
				}
				want := s.ProjectID
				if name == "workspace_id" {
					if want, err = ws.ProjectWorkspace(r.Context(), s.ProjectID); err != nil {
						return errs.Wrap(errs.Unavailable, "auth.lookup_failed", err)
					}
				}
				if id != want {
					return httpx.ErrUnauthorized
				}
			}
			c.SetRequest(r.WithContext(scope.With(r.Context(), s)))
			return next(c)
		}
	}
}
