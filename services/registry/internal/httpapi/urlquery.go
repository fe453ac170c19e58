package httpapi

import (
	"github.com/labstack/echo/v4"

	"github.com/assayhq/assay/pkg/httpx"
	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/services/registry/internal/versioned"
	"github.com/assayhq/assay/services/registry/internal/wire"
)

// queryRequest reads the scope and the query of a query route at level
// ("artifact", "variant", "revision"), whose filter is under filterKey;
// the URL parameters count where the family takes them (wire.ReadQuery).
func (g *git) queryRequest(c echo.Context, level, filterKey string) (scope.Scope, *wire.Body, versioned.Query, error) {
	sc, err := httpx.ProjectScope(c)
	if err != nil {
		return sc, nil, versioned.Query{}, err
	}
	qp := c.QueryParams()
	if !g.k.URLQuery[level] {
		qp = nil
	}
	b, q, err := wire.ReadQuery(c.Request().Body, qp, g.k.Key, filterKey)
	return sc, b, q, err
}
