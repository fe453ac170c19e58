package httpapi

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/assayhq/assay/pkg/httpx"
	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/services/registry/internal/versioned"
	"github.com/assayhq/assay/services/registry/internal/wire"
)

// git serves the artifact, variant and revision routes every family
// shares over the family's versioned.Lineage, with what the family
// changes in them (fam).
type git struct {
	k   kind
	lin *versioned.Lineage
	fam family // nil: g itself, the family that changes nothing
}

// family is what a family's API changes in the shared routes. *git
// implements it with the plain behaviour, so a family API embeds its *git
// and overrides only what differs.
type family interface {
	// revisionData adds the family's data to a rendered revision (the
	// plain family sends the stored data as is).
	revisionData(ctx context.Context, sc scope.Scope, o *wire.Obj, r *versioned.Revision, opts readOpts) error
	// narrowRevisions narrows a revision query's results by the family's
	// own body fields (environments' references; the plain family keeps
	// them all).
	narrowRevisions(ctx context.Context, sc scope.Scope, b *wire.Body, rs []versioned.Revision) ([]versioned.Revision, error)
	// editArtifact serves PUT /<plural>/{id} (the plain family replaces
	// the header; the workflow family edits what is sent).
	editArtifact(rq *req) error
}

// readOpts are the options a request gives for rendering revisions.
type readOpts struct {
	includeTestcases   bool
	includeTestcaseIDs bool
	window             *versioned.Windowing
	withSlugs          bool
}

// route registers the shared routes under /<plural>.
func (g *git) route(e *echo.Echo) {
	if g.fam == nil {
		g.fam = g
	}
	p := "/" + g.k.Plural
	e.POST(p, withObject(false, g.k.Key, g.createArtifact))
	e.GET(p+"/:id", byID(g.lin.Artifact, g.sendArtifact))
	e.PUT(p+"/:id", handle(true, g.fam.editArtifact))
	e.POST(p+"/:id/archive", byID(archiving(g.lin.ArchiveArtifact, true), g.sendArtifact))
	e.POST(p+"/:id/unarchive", byID(archiving(g.lin.ArchiveArtifact, false), g.sendArtifact))
	e.POST(p+"/query", g.queryArtifacts)

	e.POST(p+"/variants", withObject(false, g.variantKey(), g.createVariant))
	e.GET(p+"/variants/:id", byID(g.lin.Variant, g.sendVariant))
	e.PUT(p+"/variants/:id", withObject(true, g.variantKey(), g.editVariant))
	e.POST(p+"/variants/:id/archive", byID(archiving(g.lin.ArchiveVariant, true), g.sendVariant))
	e.POST(p+"/variants/:id/unarchive", byID(archiving(g.lin.ArchiveVariant, false), g.sendVariant))
	e.POST(p+"/variants/query", g.queryVariants)
	e.POST(p+"/variants/fork", handle(false, g.forkVariant))

	e.GET(p+"/revisions/:id", handle(true, g.fetchRevision))
	e.PUT(p+"/revisions/:id", handle(true, g.editRevision))
	e.POST(p+"/revisions/:id/archive", g.archiveRevision(true))
	e.POST(p+"/revisions/:id/unarchive", g.archiveRevision(false))
	e.POST(p+"/revisions/query", g.queryRevisions)
	e.POST(p+"/revisions/log", handle(false, g.logRevisions))
}

// request reads the scope, the optional path id and the JSON body: the
// one prologue, which handle, withObject, byID and stream wrap.
func request(c echo.Context, withID bool) (scope.Scope, uuid.UUID, *wire.Body, error) {
	sc, id, err := scopeAndID(c, withID)
	if err != nil {
		return sc, id, nil, err
	}
	b, err := wire.ReadBody(c.Request().Body)
	return sc, id, b, err
}

// scopeAndID reads the caller's scope and, when withID, the path id.
func scopeAndID(c echo.Context, withID bool) (scope.Scope, uuid.UUID, error) {
	sc, err := httpx.ProjectScope(c)
	if err != nil || !withID {
		return sc, uuid.Nil, err
	}
	id, err := httpx.UUIDParam(c, "id")
	return sc, id, err
}

func send(c echo.Context, raw json.RawMessage) error {
	return c.JSONBlob(http.StatusOK, raw)
}

// ---- artifacts

func (g *git) createArtifact(rq *req, in *wire.Body) error {
	c, sc := rq.c, rq.sc
	a := &versioned.Artifact{Header: in.Header(), FolderID: in.ID("folder_id")}
	slug := in.Slug("slug")
	if id, err := queryID(c, g.k.Key+"_id"); err != nil {
		return err
	} else if id != nil {
		a.ID = *id
	}
	if err := wire.ErrOf(in); err != nil {
		return err
	}
	if slug == nil { // the compatible platform's NOT NULL failure is swallowed into an empty envelope
		return send(c, wire.Envelope(g.k.Key, nil))
	}
	a.Slug = *slug
	out, err := g.lin.CreateArtifact(c.Request().Context(), sc, a)
	if err != nil {
		return err
	}
	return send(c, wire.Envelope(g.k.Key, g.k.Artifact(out)))
}

func (g *git) sendArtifact(c echo.Context, a *versioned.Artifact, err error) error {
	return sendOne(c, g.k.Key, a, err, g.k.Artifact)
}

// editArtifact full-replaces the header (testsets, environments, queries);
// an id that differs from the path gives the empty envelope.
func (g *git) editArtifact(rq *req) error {
	c, sc, id := rq.c, rq.sc, rq.id
	in := rq.b.Require(g.k.Key)
	if err := wire.ErrOf(rq.b); err != nil {
		return err
	}
	a := &versioned.Artifact{ID: id, Header: in.Header(), FolderID: in.ID("folder_id")}
	bid := in.ID("id")
	if err := wire.ErrOf(in); err != nil {
		return err
	}
	if bid == nil || *bid != id {
		return send(c, wire.Envelope(g.k.Key, nil))
	}
	out, err := g.lin.EditArtifact(c.Request().Context(), sc, a)
	return g.sendArtifact(c, out, err)
}

func (g *git) queryArtifacts(c echo.Context) error {
	sc, _, q, err := g.queryRequest(c, "artifact", g.k.Key)
	if err != nil {
		return err
	}
	as, err := g.lin.QueryArtifacts(c.Request().Context(), sc, q)
	if err != nil {
		return err
	}
	return send(c, wire.List(g.k.Plural, renderAll(as, g.k.Artifact), g.window(q.Windowing, len(as), func() string { return as[len(as)-1].ID.String() })))
}

// ---- variants

func (g *git) variantKey() string { return g.k.Key + "_variant" }

func (g *git) sendVariant(c echo.Context, v *versioned.Variant, err error) error {
	return sendOne(c, g.variantKey(), v, err, g.k.Variant)
}

func (g *git) createVariant(rq *req, in *wire.Body) error {
	c, sc := rq.c, rq.sc
	v := &versioned.Variant{Header: in.Header()}
	slug := in.Slug("slug")
	artifactID := in.ID(g.k.Key+"_id", "artifact_id")
	if err := wire.ErrOf(in); err != nil {
		return err
	}
	if slug == nil {
		return send(c, wire.Envelope(g.variantKey(), nil))
	}
	if err := g.lin.CheckVariantSlug(*slug); err != nil {
		return err
	}
	if artifactID == nil {
		return wire.FieldMissing("body", g.variantKey(), g.k.Key+"_id")
	}
	v.Slug, v.ArtifactID = *slug, *artifactID
	out, err := g.lin.CreateVariant(c.Request().Context(), sc, v)
	return g.sendVariant(c, out, err)
}

func (g *git) editVariant(rq *req, in *wire.Body) error {
	c, sc, id := rq.c, rq.sc, rq.id
	v := &versioned.Variant{ID: id, Header: in.Header()}
	bid := in.ID("id")
	if err := wire.ErrOf(in); err != nil {
		return err
	}
	if bid == nil || *bid != id {
		return send(c, wire.Envelope(g.variantKey(), nil))
	}
	out, err := g.lin.EditVariant(c.Request().Context(), sc, v)
	return g.sendVariant(c, out, err)
}

func (g *git) queryVariants(c echo.Context) error {
	sc, _, q, err := g.queryRequest(c, "variant", g.variantKey())
	if err != nil {
		return err
	}
	vs, err := g.lin.QueryVariants(c.Request().Context(), sc, q)
	if err != nil {
		return err
	}
	var win json.RawMessage
	if g.k.VariantWindowing {
		win = g.window(q.Windowing, len(vs), func() string { return vs[len(vs)-1].ID.String() })
	}
	return send(c, wire.List(g.k.Key+"_variants", renderAll(vs, g.k.Variant), win))
}

func (g *git) forkVariant(rq *req) error {
	c, sc, b := rq.c, rq.sc, rq.b
	in := b.Require(g.variantKey())
	src := b.Ref(g.variantKey() + "_ref")
	upTo := b.Ref(g.k.Key + "_revision_ref")
	if err := wire.ErrOf(b); err != nil {
		return err
	}
	if src == nil && g.k.ForkByQuery {
		id, err := queryID(c, g.variantKey()+"_id")
		if err != nil {
			return err
		} else if id != nil {
			src = &versioned.Ref{ID: id}
		}
	}
	if src == nil {
		return wire.FieldMissing("body", g.variantKey()+"_ref")
	}
	v := &versioned.Variant{Header: in.Header()}
	slug := in.Slug("slug")
	if err := wire.ErrOf(in); err != nil {
		return err
	}
	if slug == nil {
		return wire.FieldMissing("body", g.variantKey(), "slug")
	}
	v.Slug = *slug
	out, err := g.lin.Fork(c.Request().Context(), sc, v, src, upTo)
	return g.sendVariant(c, out, err)
}

// ---- revisions

func (g *git) revisionKey() string { return g.k.Key + "_revision" }

// renderRevision renders r with its data as the family shows it.
func (g *git) renderRevision(ctx context.Context, sc scope.Scope, r *versioned.Revision, opts readOpts) (*wire.Obj, error) {
	o := g.k.Revision(r, opts.withSlugs)
	if err := g.fam.revisionData(ctx, sc, o, r, opts); err != nil {
		return nil, err
	}
	return o, nil
}

func (g *git) revisionData(_ context.Context, _ scope.Scope, o *wire.Obj, r *versioned.Revision, _ readOpts) error {
	o.Put("data", r.Data)
	return nil
}

func (g *git) narrowRevisions(_ context.Context, _ scope.Scope, _ *wire.Body, rs []versioned.Revision) ([]versioned.Revision, error) {
	return rs, nil
}

// sendRevision answers {count, <e>_revision, ...extra}.
func (g *git) sendRevision(c echo.Context, sc scope.Scope, r *versioned.Revision, opts readOpts, extra ...func(*wire.Obj)) error {
	if r == nil {
		return send(c, wire.Envelope(g.revisionKey(), nil))
	}
	o, err := g.renderRevision(c.Request().Context(), sc, r, opts)
	if err != nil {
		return err
	}
	e := wire.NewObj().Put("count", 1).Put(g.revisionKey(), json.RawMessage(o.Done()))
	for _, f := range extra {
		f(e)
	}
	return send(c, e.Done())
}

// testcaseOpts reads include_testcases (default true) from the query
// string or the body.
func testcaseOpts(c echo.Context, b *wire.Body) readOpts {
	opts := readOpts{includeTestcases: true, includeTestcaseIDs: true, withSlugs: true}
	if q := c.QueryParam("include_testcases"); q != "" {
		opts.includeTestcases = q != "false" && q != "0"
	}
	if b != nil {
		opts.includeTestcases = b.Bool(opts.includeTestcases, "include_testcases")
	}
	return opts
}

func (g *git) fetchRevision(rq *req) error {
	c, sc, id := rq.c, rq.sc, rq.id
	r, err := g.lin.Revision(c.Request().Context(), sc, id)
	if err != nil {
		return err
	}
	return g.sendRevision(c, sc, r, testcaseOpts(c, nil))
}

func (g *git) editRevision(rq *req) error {
	c, sc, id, b := rq.c, rq.sc, rq.id, rq.b
	in := b.Require(g.revisionKey())
	opts := testcaseOpts(c, b)
	if err := wire.ErrOf(b); err != nil {
		return err
	}
	r := &versioned.Revision{ID: id, Header: in.Header()}
	bid := in.ID("id")
	if err := wire.ErrOf(in); err != nil {
		return err
	}
	if bid == nil || *bid != id {
		return send(c, wire.Envelope(g.revisionKey(), nil))
	}
	out, err := g.lin.EditRevision(c.Request().Context(), sc, r)
	if err != nil {
		return err
	}
	return g.sendRevision(c, sc, out, opts)
}

func (g *git) archiveRevision(archived bool) echo.HandlerFunc {
	return handle(true, func(rq *req) error {
		c, sc, id, b := rq.c, rq.sc, rq.id, rq.b
		r, err := g.lin.ArchiveRevision(c.Request().Context(), sc, id, archived)
		if err != nil {
			return err
		}
		return g.sendRevision(c, sc, r, testcaseOpts(c, b))
	})
}

func (g *git) queryRevisions(c echo.Context) error {
	sc, b, q, err := g.queryRequest(c, "revision", g.revisionKey())
	if err != nil {
		return err
	}
	opts := testcaseOpts(c, b)
	if err := wire.ErrOf(b); err != nil {
		return err
	}
	rs, err := g.lin.QueryRevisions(c.Request().Context(), sc, q)
	if err != nil {
		return err
	}
	if rs, err = g.fam.narrowRevisions(c.Request().Context(), sc, b, rs); err != nil {
		return err
	}
	return g.sendRevisions(c, sc, rs, opts, g.window(q.Windowing, len(rs), func() string { return rs[len(rs)-1].ID.String() }))
}

func (g *git) sendRevisions(c echo.Context, sc scope.Scope, rs []versioned.Revision, opts readOpts, win json.RawMessage) error {
	items := make([]json.RawMessage, len(rs))
	for i := range rs {
		o, err := g.renderRevision(c.Request().Context(), sc, &rs[i], opts)
		if err != nil {
			return err
		}
		items[i] = o.Done()
	}
	return send(c, wire.List(g.k.Key+"_revisions", items, win))
}

func (g *git) logRevisions(rq *req) error {
	c, sc, b := rq.c, rq.sc, rq.b
	in := b.Require(g.k.Key + "_revisions")
	opts := testcaseOpts(c, b)
	opts.withSlugs = false
	if err := wire.ErrOf(b); err != nil {
		return err
	}
	t := versioned.LogTarget{
		ArtifactID: in.ID(g.k.Key+"_id", "artifact_id"),
		VariantID:  in.ID(g.k.Key+"_variant_id", "variant_id"),
		RevisionID: in.ID(g.k.Key+"_revision_id", "revision_id"),
		Depth:      in.Int("depth"),
	}
	if err := wire.ErrOf(in); err != nil {
		return err
	}
	rs, err := g.lin.Log(c.Request().Context(), sc, t)
	if err != nil {
		return err
	}
	return g.sendRevisions(c, sc, rs, opts, nil)
}

// retrievalInfo adds {"references": {...}} of a resolved revision.
func (g *git) retrievalInfo(r *versioned.Revision) func(*wire.Obj) {
	return func(e *wire.Obj) { e.Put("retrieval_info", g.k.RetrievalInfo(r, nil, "")) }
}

// window is the response windowing of a list, unless the family never
// sends one.
func (g *git) window(win *versioned.Windowing, n int, lastID func() string) json.RawMessage {
	if g.k.NoWindowing {
		return nil
	}
	return wire.NextWindow(win, n, lastID)
}
