// Package purgewire is the internal call that deletes projects' data in a
// service: POST /internal/projects/purge {"project_ids": [...]}, sent by the
// gateway (with the internal token) to the registry and to tracing before
// it deletes the projects themselves.
package purgewire

import (
	"fmt"
	"net/http"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/httpx"
)

// Path is the route each service serves.
const Path = "/internal/projects/purge"

// MaxProjects bounds one call (an organization's projects).
const MaxProjects = 10000

// Request is the body.
type Request struct {
	ProjectIDs []uuid.UUID `json:"project_ids"`
}

// Response is the answer: the projects purged (all of them, or an error).
type Response struct {
	Count      int         `json:"count"`
	ProjectIDs []uuid.UUID `json:"project_ids"`
}

// Handler binds the request, refuses an empty, oversized or nil-id list
// with a 400 naming project_ids, calls purge and answers 200.
func Handler(purge func(echo.Context, []uuid.UUID) error) echo.HandlerFunc {
	return func(c echo.Context) error {
		var in Request
		if err := httpx.Bind(c, &in); err != nil {
			return err
		}
		if len(in.ProjectIDs) == 0 || len(in.ProjectIDs) > MaxProjects {
			return bad(fmt.Sprintf("project_ids: between 1 and %d project ids are required", MaxProjects), len(in.ProjectIDs))
		}
		for _, id := range in.ProjectIDs {
			if id == uuid.Nil {
				return bad("project_ids: the nil UUID is no project", id.String())
			}
		}
		if err := purge(c, in.ProjectIDs); err != nil {
			return err
		}
		return c.JSON(http.StatusOK, Response{Count: len(in.ProjectIDs), ProjectIDs: in.ProjectIDs})
	}
}

func bad(msg string, value any) error {
	return errs.Message(errs.Invalid, "purge.bad_request", msg, map[string]any{"field": "project_ids", "value": value})
}
