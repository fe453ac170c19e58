package httpapi

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/assayhq/assay/pkg/apikey"
	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/httpx"
	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/services/gateway/internal/sessions"
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
// A browser asks for /favicon.ico on its own: a plain 404, not a 401.
var openPaths = map[string]bool{"/health": true, "/ready": true, "/openapi.json": true, "/docs": true, "/docs/redoc.standalone.js": true,
	"/favicon.ico": true}

// isConsolePath: the console's pages are public (they hold no data; the
// app's API calls are authenticated), and "/" redirects to them.
func isConsolePath(p string) bool {
	return p == "/" || p == "/console" || strings.HasPrefix(p, "/console/")
}

// isSessionPath: sign-in, the session read and sign-out handle the
// session cookie themselves.
func isSessionPath(p string) bool { return strings.HasPrefix(p, "/auth/") }

// isCompatAccept: the compatible invitation accept
// (/organizations/{org}/workspaces/{ws}/invite/accept) is open like
// /invitations/accept, and its handler reads the session cookie itself:
// the project_id its link carries is one the invitee is not a member of
// yet, so the session cannot be scoped to it.
func isCompatAccept(p string) bool {
	s := strings.Split(strings.Trim(p, "/"), "/")
	return len(s) == 6 && s[0] == "organizations" && s[2] == "workspaces" && s[4] == "invite" && s[5] == "accept"
}

// optionalPaths take credentials when given and go on without them: the
// invitation token is the credential of an accept.
var optionalPaths = map[string]bool{"/invitations/accept": true}

// acceptsBasic: Langfuse's SDKs authenticate with "Basic
// base64(<public key>:<secret key>)" (our key's prefix and secret, see
// apikey.FromBasic). The scheme is accepted only where those clients send
// it, the OTLP ingest routes and Langfuse's public API prefix, so that no
// other route gains a second way in.
func acceptsBasic(p string) bool {
	return p == "/otlp/v1/traces" || strings.HasPrefix(p, "/public/")
}

// isAdminPath: the Access scheme is accepted only on paths under /admin/.
func isAdminPath(p string) bool { return strings.Contains(p+"/", "/admin/") }

// authenticate implements the compatible platform's authentication:
// "ApiKey <key>" (or a bare key) on every path but the admin ones,
// "Access <admin key>" only on admin paths, and the same 401 for every
// failure, before any body is read. A request without an Authorization
// header but with the console's session cookie is the session's user
// (sessionScope).
func authenticate(v Verifier, ws Workspaces, ss *sessions.Service, adminKey string) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			r := c.Request()
			path := r.URL.Path
			if openPaths[path] || isConsolePath(path) || isConsoleLink(path) || isSessionPath(path) || isCompatAccept(path) {
				return next(c)
			}
			header := r.Header.Get(echo.HeaderAuthorization)
			if header == "" && !isAdminPath(path) && ss != nil {
				if token := cookie(c, SessionCookie); token != "" {
					s, err := sessionScope(c, ss, ws, token)
					if err != nil {
						return err
					}
					req := c.Request() // carries the session id now
					c.SetRequest(req.WithContext(scope.With(req.Context(), s)))
					return next(c)
				}
			}
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
			if !ok && acceptsBasic(path) {
				raw, ok = apikey.FromBasic(header)
			}
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

// sessionScope authenticates a request by its session cookie (docs/console.md,
// signing in): a live session, the CSRF token on unsafe methods, and the
// project named by project_id (else the user's oldest) with the user's
// role there.
func sessionScope(c echo.Context, ss *sessions.Service, ws Workspaces, token string) (scope.Scope, error) {
	r := c.Request()
	ctx := r.Context()
	sess, err := ss.Lookup(ctx, token)
	if err != nil {
		return scope.Scope{}, err
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
	default:
		if err := sessions.CheckCSRF(sess, r.Header.Get(CSRFHeader)); err != nil {
			return scope.Scope{}, err
		}
	}
	q := r.URL.Query()
	project := uuid.Nil
	if q.Has("project_id") {
		if project, err = uuid.Parse(q.Get("project_id")); err != nil || project == uuid.Nil {
			return scope.Scope{}, errs.Message(errs.Invalid, "auth.invalid_project",
				fmt.Sprintf("project_id: '%s' is not a project id", q.Get("project_id")), map[string]any{"field": "project_id"})
		}
	}
	s, err := ss.Scope(ctx, sess, project)
	if err != nil {
		return scope.Scope{}, err
	}
	if q.Has("workspace_id") {
		want, err := ws.ProjectWorkspace(ctx, s.ProjectID)
		if err != nil {
			return scope.Scope{}, errs.Wrap(errs.Unavailable, "auth.lookup_failed", err)
		}
		if id, err := uuid.Parse(q.Get("workspace_id")); err != nil || id != want {
			return scope.Scope{}, errs.Message(errs.Forbidden, "auth.workspace_mismatch",
				fmt.Sprintf("workspace_id: project %s is not in workspace '%s'", s.ProjectID, q.Get("workspace_id")),
				map[string]any{"field": "workspace_id", "project_id": s.ProjectID.String()})
		}
	}
	c.SetRequest(r.WithContext(sessions.WithID(ctx, sess.ID)))
	return s, nil
}
