package httpapi

import (
	"net/http"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/assayhq/assay/pkg/httpx"
	"github.com/assayhq/assay/services/gateway/internal/audit"
)

// Audit windows: the default and the largest page.
const (
	auditDefaultLimit = 50
	auditMaxLimit     = 500
)

// auditPage is GET /audit's envelope; Next continues with ?cursor=.
type auditPage struct {
	Count   int           `json:"count"`
	Entries []audit.Entry `json:"entries"`
	Next    string        `json:"next,omitempty"`
}

// listAudit serves GET /audit: the audit log of the caller's project's
// organization (the authz table asks manage_members: owners and admins).
func (h *handler) listAudit(c echo.Context) error {
	s, err := httpx.ProjectScope(c)
	if err != nil {
		return err
	}
	q := audit.Query{ProjectID: s.ProjectID, Limit: auditDefaultLimit}
	params := c.QueryParams()
	for name, vs := range params {
		v := vs[len(vs)-1]
		switch name {
		case "action":
			q.Action = v
		case "actor":
			id, err := uuid.Parse(v)
			if err != nil {
				return audit.ErrBadQuery(name, v, "must be a user id (UUID)")
			}
			q.Actor = &id
		case "since", "until":
			t, err := time.Parse(time.RFC3339Nano, v)
			if err != nil {
				return audit.ErrBadQuery(name, v, "must be an RFC 3339 time, e.g. 2026-01-02T15:04:05Z")
			}
			if name == "since" {
				q.Since = &t
			} else {
				q.Until = &t
			}
		case "limit":
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > auditMaxLimit {
				return audit.ErrBadQuery(name, v, "must be an integer from 1 to "+strconv.Itoa(auditMaxLimit))
			}
			q.Limit = n
		case "cursor":
			cur, err := audit.DecodeCursor(v)
			if err != nil {
				return audit.ErrBadQuery(name, v, "is not a cursor this route returned")
			}
			q.After = &cur
		case "project_id", "workspace_id": // checked by authentication
		default:
			return audit.ErrBadQuery(name, v, "unknown parameter: action, actor, since, until, limit or cursor")
		}
	}
	entries, next, err := h.audit.List(c.Request().Context(), q)
	if err != nil {
		return err
	}
	out := auditPage{Count: len(entries), Entries: entries}
	if out.Entries == nil {
		out.Entries = []audit.Entry{}
	}
	if next != nil {
		out.Next = next.Encode()
	}
	return c.JSON(http.StatusOK, out)
}
