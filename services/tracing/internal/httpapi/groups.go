package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/services/tracing/internal/query"
)

// groupsBody is the body of /internal/analytics/groups.
type groupsBody struct {
	Specs  []query.MetricSpec  `json:"specs,omitempty" doc:"The metric specs; the analytics defaults when empty."`
	Groups map[string][]string `json:"groups" apidoc:"required" doc:"Named groups of trace ids (32 hex digits): at most 10,000 distinct ids per request."`
}

// groupsResponse is its answer.
type groupsResponse struct {
	Count  int                    `json:"count"`
	Groups map[string]query.Group `json:"groups"`
}

// analyticsGroups is POST /internal/analytics/groups: the evaluation worker's
// metrics read (services/runtime/internal/evalmetrics). Internal: the gateway
// does not proxy /internal/, and every route here needs the internal token.
func (h *Handler) analyticsGroups(c echo.Context, sc scope.Scope) error {
	var b groupsBody
	dec := json.NewDecoder(c.Request().Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&b); err != nil {
		msg := fmt.Sprintf("malformed groups body: %v", err)
		return errs.WithDetail(errs.Invalid, "request.malformed_body", msg, msg)
	}
	groups, err := h.Query.Groups(c.Request().Context(), sc.ProjectID.String(), query.GroupsRequest{Specs: b.Specs, Groups: b.Groups})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, groupsResponse{Count: len(groups), Groups: groups})
}
