// Package audit is the gateway's append-only log of changes: every 2xx
// unsafe request on an audited route family (authz.Rule.Audit) becomes a
// row of audit_log (who, what, when, from which key or session, which
// request), readable by the owners and admins of the organization.
package audit

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/labstack/echo/v4"

	"github.com/assayhq/assay/pkg/apidoc"
	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/httpx"
	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/services/gateway/internal/authz"
	"github.com/assayhq/assay/services/gateway/internal/sessions"
)

// Entry is one row of the log.
type Entry struct {
	ID             uuid.UUID         `json:"id"`
	At             time.Time         `json:"at"`
	OrganizationID *uuid.UUID        `json:"organization_id,omitempty"`
	ProjectID      *uuid.UUID        `json:"project_id,omitempty"`
	ActorUserID    *uuid.UUID        `json:"actor_user_id,omitempty"`
	ActorKeyID     *uuid.UUID        `json:"actor_key_id,omitempty"`
	SessionID      *uuid.UUID        `json:"session_id,omitempty"`
	Action         string            `json:"action" example:"POST /keys"`
	Target         map[string]string `json:"target"`
	Status         int               `json:"status" example:"200"`
	RequestID      *string           `json:"request_id,omitempty"`
}

// Log reads and appends audit_log rows. The table refuses UPDATE and
// DELETE (a trigger), so Append is the only way rows change.
type Log struct{ pool *pgxpool.Pool }

// New returns a log over the gateway's pool.
func New(pool *pgxpool.Pool) *Log { return &Log{pool: pool} }

// Append writes e. Its organization is resolved in the same statement from
// the first target id that names one (organization, workspace or project,
// in this order), else from e.ProjectID; e.OrganizationID when set wins.
func (l *Log) Append(ctx context.Context, e Entry) error {
	target, err := json.Marshal(e.Target)
	if err != nil {
		return err
	}
	orgID, wsID, prjID := targetIDs(e.Action, e.Target)
	_, err = l.pool.Exec(ctx, `
		INSERT INTO audit_log (id, at, organization_id, project_id, actor_user_id, actor_key_id, session_id, action, target, status, request_id)
		VALUES ($1, $2, COALESCE($3::uuid, $12::uuid, (SELECT organization_id FROM workspaces WHERE id = $13::uuid),
			(SELECT organization_id FROM projects WHERE id = $14::uuid), (SELECT organization_id FROM projects WHERE id = $4::uuid)),
			$4, $5, $6, $7, $8, $9, $10, $11)`,
		e.ID, e.At, e.OrganizationID, e.ProjectID, e.ActorUserID, e.ActorKeyID, e.SessionID, e.Action, target, e.Status, e.RequestID,
		orgID, wsID, prjID)
	if err != nil {
		return fmt.Errorf("append audit entry: %w", err)
	}
	return nil
}

// targetIDs picks the organization, workspace or project id the action's
// path names ("/organizations/:id/..." and the admin routes alike).
func targetIDs(action string, target map[string]string) (org, ws, prj *uuid.UUID) {
	id, err := uuid.Parse(target["id"])
	if err != nil {
		return nil, nil, nil
	}
	switch {
	case strings.Contains(action, "/organizations/"):
		return &id, nil, nil
	case strings.Contains(action, "/workspaces/"):
		return nil, &id, nil
	case strings.Contains(action, "/projects/"):
		return nil, nil, &id
	}
	return nil, nil, nil
}

// Query selects a window of the entries of one project's organization,
// newest first.
type Query struct {
	ProjectID    uuid.UUID
	Action       string     // exact, "" = any
	Actor        *uuid.UUID // actor_user_id
	Since, Until *time.Time // at >= Since, at < Until
	Limit        int
	// After continues a previous window: entries strictly older than it.
	After *Cursor
}

// Cursor is the position after the last entry of a window.
type Cursor struct {
	At time.Time `json:"at"`
	ID uuid.UUID `json:"id"`
}

// Encode returns the cursor as an opaque token.
func (c Cursor) Encode() string {
	b, _ := json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(b)
}

// DecodeCursor parses a token from Encode.
func DecodeCursor(s string) (Cursor, error) {
	var c Cursor
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err == nil {
		err = json.Unmarshal(b, &c)
	}
	if err == nil && (c.ID == uuid.Nil || c.At.IsZero()) {
		err = errors.New("incomplete cursor")
	}
	return c, err
}

// List returns up to q.Limit entries and the cursor of the next window
// (nil when there is none). One index range scan: (organization_id, at, id).
func (l *Log) List(ctx context.Context, q Query) ([]Entry, *Cursor, error) {
	args := []any{q.ProjectID, q.Limit + 1}
	where := []string{"organization_id = (SELECT organization_id FROM projects WHERE id = $1)"}
	add := func(cond string, v any) {
		args = append(args, v)
		where = append(where, fmt.Sprintf(cond, len(args)))
	}
	if q.Action != "" {
		add("action = $%d", q.Action)
	}
	if q.Actor != nil {
		add("actor_user_id = $%d", *q.Actor)
	}
	if q.Since != nil {
		add("at >= $%d", *q.Since)
	}
	if q.Until != nil {
		add("at < $%d", *q.Until)
	}
	if q.After != nil {
		args = append(args, q.After.At, q.After.ID)
		where = append(where, fmt.Sprintf("(at, id) < ($%d, $%d)", len(args)-1, len(args)))
	}
	rows, err := l.pool.Query(ctx, `
		SELECT id, at, organization_id, project_id, actor_user_id, actor_key_id, session_id, action, target, status, request_id
		FROM audit_log WHERE `+strings.Join(where, " AND ")+` ORDER BY at DESC, id DESC LIMIT $2`, args...)
	if err != nil {
		return nil, nil, fmt.Errorf("list audit entries: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Entry, error) {
		var e Entry
		err := r.Scan(&e.ID, &e.At, &e.OrganizationID, &e.ProjectID, &e.ActorUserID, &e.ActorKeyID, &e.SessionID, &e.Action, &e.Target, &e.Status, &e.RequestID)
		return e, err
	})
	if err != nil {
		return nil, nil, fmt.Errorf("list audit entries: %w", err)
	}
	if len(out) <= q.Limit {
		return out, nil, nil
	}
	out = out[:q.Limit]
	last := out[len(out)-1]
	return out, &Cursor{At: last.At, ID: last.ID}, nil
}

// Middleware appends an entry after every 2xx unsafe request on an audited
// route. It runs inside authz.Enforce (which records the matched rule). The
// change has been made and answered by then, so a failed append cannot
// undo it: it is logged at error level for the operator.
func Middleware(l *Log, log *slog.Logger) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			err := next(c)
			r := c.Request()
			switch r.Method {
			case http.MethodGet, http.MethodHead, http.MethodOptions:
				return err
			}
			m, ok := authz.Matched(c)
			status := c.Response().Status
			if err != nil || !ok || m.Rule.Audit == "" || status < 200 || status > 299 {
				return err
			}
			pattern, target := routeOf(c, m)
			e := Entry{ID: uuid.Must(uuid.NewV7()), At: time.Now().UTC(), Action: r.Method + " " + pattern, Target: target, Status: status}
			if s, ok := scope.From(r.Context()); ok {
				e.ProjectID = nonNil(s.ProjectID)
				e.ActorUserID = nonNil(s.UserID)
				e.ActorKeyID = nonNil(s.KeyID)
			}
			if id, ok := sessions.IDFrom(r.Context()); ok {
				e.SessionID = &id
			}
			if id := c.Response().Header().Get(httpx.HeaderRequestID); id != "" {
				e.RequestID = &id
			}
			// The client may be gone; the entry is still owed.
			ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), 5*time.Second)
			defer cancel()
			if aerr := l.Append(ctx, e); aerr != nil {
				log.ErrorContext(ctx, "audit entry lost", "err", aerr, "action", e.Action)
			}
			return nil
		}
	}
}

// documented are the proxied services' routes ("POST /testsets/:id"), from
// their OpenAPI fragments, whose routes tests keep equal to what they serve.
var documented = func() []string {
	var out []string
	for _, svc := range []string{"registry", "tracing", "runtime"} {
		rs, err := apidoc.Routes(svc)
		if err != nil {
			panic(err) // the embedded fragments are checked by every build's tests
		}
		out = append(out, rs...)
	}
	return out
}()

// routeOf names the route a request took and the ids in its path: echo's
// route for the gateway's own, else the proxied service's documented route
// with the fewest parameters (a literal segment beats ":id"), else the
// table's pattern.
func routeOf(c echo.Context, m authz.Match) (string, map[string]string) {
	if p := c.Path(); p != "" && p != "/*" {
		target := map[string]string{}
		for i, name := range c.ParamNames() {
			target[name] = c.ParamValues()[i]
		}
		return p, target
	}
	method := c.Request().Method + " "
	best, bestParams := "", map[string]string(nil)
	for _, r := range documented {
		pattern, ok := strings.CutPrefix(r, method)
		if !ok {
			continue
		}
		params, ok := authz.MatchPattern(pattern, m.Path)
		if ok && (best == "" || strings.Count(pattern, ":") < strings.Count(best, ":")) {
			best, bestParams = pattern, params
		}
	}
	if best == "" {
		return m.Rule.Pattern, m.Target
	}
	return best, bestParams
}

func nonNil(id uuid.UUID) *uuid.UUID {
	if id == uuid.Nil {
		return nil
	}
	return &id
}

// ErrBadQuery names a bad query parameter of GET /audit.
func ErrBadQuery(name, value, msg string) error {
	return errs.Message(errs.Invalid, "audit.bad_query", name+": "+msg, map[string]any{"field": name, "value": value})
}
