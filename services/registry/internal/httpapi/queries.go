package httpapi

import (
	"github.com/labstack/echo/v4"

	"github.com/assayhq/assay/services/registry/internal/queries"
	"github.com/assayhq/assay/services/registry/internal/versioned"
	"github.com/assayhq/assay/services/registry/internal/wire"
)

// queryAPI serves /queries and /simple/queries.
type queryAPI struct {
	git    *git
	qs     *queries.Service
	simple *simpleAPI
}

func newQueryAPI(qs *queries.Service) *queryAPI {
	a := &queryAPI{qs: qs}
	a.git = &git{k: queryKind, lin: qs.Lineage()}
	a.simple = &simpleAPI{k: queryKind, uc: qs.Simple()}
	return a
}

func (a *queryAPI) route(e *echo.Echo) {
	a.git.route(e)
	e.POST("/queries/revisions", withObject(false, "query_revision", a.createRevision))
	e.POST("/queries/revisions/commit", withCommit("query_revision", a.commit))
	e.POST("/queries/revisions/retrieve", handle(false, a.retrieve))
	a.simple.route(e)
}

func (a *queryAPI) createRevision(rq *req, in *wire.Body) error {
	c, sc := rq.c, rq.sc
	r := in.Revision("query", false, false)
	if err := wire.ErrOf(in); err != nil {
		return err
	}
	if r.VariantID == nil {
		return send(c, wire.Envelope("query_revision", nil))
	}
	msg := wire.InitialMessage
	rev := versioned.Revision{Header: r.Header, VariantID: *r.VariantID, Slug: r.SlugOr(), Message: &msg}
	rev.Flags = queries.EmptyFlags(rev.Flags)
	out, err := a.qs.Commit(c.Request().Context(), sc, rev, true)
	if err != nil {
		return err
	}
	return a.git.sendRevision(c, sc, out, readOpts{withSlugs: true})
}

// commit serves /queries/revisions/commit (wire.QueryCommit).
func (a *queryAPI) commit(rq *req, in *wire.Body, key string) error {
	c, sc := rq.c, rq.sc
	rev, err := wire.QueryCommit(in, key)
	if err != nil {
		return err
	}
	out, err := a.qs.Commit(c.Request().Context(), sc, rev, false)
	if err != nil {
		return err
	}
	return a.git.sendRevision(c, sc, out, readOpts{withSlugs: true})
}

// retrieve resolves a query revision; include_trace_ids and include_traces
// (both opt-in) run its stored query against the tracing service.
func (a *queryAPI) retrieve(rq *req) error {
	c, sc, b := rq.c, rq.sc, rq.b
	refs := versioned.Refs{Artifact: b.Ref("query_ref"), Variant: b.Ref("query_variant_ref"), Revision: b.Ref("query_revision_ref")}
	withIDs, withTraces := b.Bool(false, "include_trace_ids"), b.Bool(false, "include_traces")
	win := b.Windowing()
	if err := wire.ErrOf(b); err != nil {
		return err
	}
	r, err := a.qs.Retrieve(c.Request().Context(), sc, refs, queries.Include{TraceIDs: withIDs, Traces: withTraces, Window: win})
	if err != nil {
		return err
	}
	if r == nil {
		return send(c, wire.Envelope("query_revision", nil))
	}
	return a.git.sendRevision(c, sc, r, readOpts{withSlugs: true}, a.git.retrievalInfo(r))
}
