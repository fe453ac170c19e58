package httpapi

import (
	"github.com/labstack/echo/v4"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/httpx"
	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/services/registry/internal/versioned"
	"github.com/assayhq/assay/services/registry/internal/wire"
)

// queryRequest reads the body of a query route. Where the reference also
// takes URL query parameters (§1.4: workflow and environment queries at
// every level, query artifacts, application and evaluator variants), the
// parameters fill what the body leaves out (body fields win, field by
// field inside the filter and the windowing), and the body is read
// leniently: malformed JSON or an ill-typed field makes us ignore the body,
// as the reference does, instead of answering 422. A bad URL parameter is
// still a 422 naming it (loc ["query", name]).
func (g *git) queryRequest(c echo.Context, level, filterKey string) (scope.Scope, *wire.Body, versioned.Query, error) {
	if !g.k.urlQuery[level] {
		sc, _, b, err := request(c, false)
		if err != nil {
			return sc, nil, versioned.Query{}, err
		}
		q := g.query(b, filterKey)
		return sc, b, q, wire.ErrOf(b)
	}
	sc, err := httpx.ProjectScope(c)
	if err != nil {
		return sc, nil, versioned.Query{}, err
	}
	u, err := wire.QueryBody(c.QueryParams(), g.k.key, filterKey)
	if err != nil {
		return sc, nil, versioned.Query{}, err
	}
	if q := g.query(u, filterKey); wire.ErrOf(u) != nil {
		return sc, nil, q, wire.ErrOf(u)
	}
	b, err := wire.ReadBody(c.Request().Body)
	if err != nil {
		// Only malformed JSON is ignored: text that cannot be stored or a
		// body over the limit is refused here as everywhere.
		if errs.KindOf(err) != errs.Invalid {
			return sc, nil, versioned.Query{}, err
		}
		b = wire.NewBody("body")
	}
	merged := wire.Merge(b, u, filterKey, "windowing")
	q := g.query(merged, filterKey)
	if wire.ErrOf(merged) != nil { // an ill-typed body is ignored
		q = g.query(u, filterKey)
		return sc, u, q, wire.ErrOf(u)
	}
	return sc, merged, q, nil
}
