package httpapi

import (
	"encoding/json"

	"github.com/labstack/echo/v4"

	"github.com/assayhq/assay/services/registry/internal/versioned"
	"github.com/assayhq/assay/services/registry/internal/wire"
)

// simpleAPI serves the flat /simple/<plural> surface of workflows,
// applications, evaluators, environments and queries: one record merging
// the artifact, its default variant and that variant's latest revision.
// The use cases are the family's versioned.Simple; what is left here
// differs only in binding and rendering.
type simpleAPI struct {
	k  kind
	uc *versioned.Simple
	// mismatch400: a path/body id mismatch is a 400, not an empty 200.
	mismatch400 bool
	// noRevisionIDs: query items lack variant_id and revision_id.
	noRevisionIDs bool
	// additionalContext, if set, is sent beside the record on GET
	// /simple/<plural>/{id} (applications' playground build kit).
	additionalContext json.RawMessage
}

func (s *simpleAPI) route(e *echo.Echo) {
	p := "/simple/" + s.k.Plural
	e.POST(p, withObject(false, s.k.Key, s.create))
	e.GET(p+"/:id", handle(true, s.fetch))
	e.PUT(p+"/:id", withObject(true, s.k.Key, s.edit))
	e.POST(p+"/:id/archive", byID(archiving(s.uc.Archive, true), s.sendRecord))
	e.POST(p+"/:id/unarchive", byID(archiving(s.uc.Archive, false), s.sendRecord))
	e.POST(p+"/query", handle(false, s.query))
}

// record renders the simple shape.
func (s *simpleAPI) record(rec *versioned.Record, withIDs bool) *wire.Obj {
	return wire.Record(rec, s.uc.ShownFlags(rec.Artifact, rec.Revision), withIDs)
}

// sendRecord answers the record, or a null one when rec or its artifact
// is missing.
func (s *simpleAPI) sendRecord(c echo.Context, rec *versioned.Record, err error) error {
	if rec != nil && rec.Artifact == nil {
		rec = nil
	}
	return sendOne(c, s.k.Key, rec, err, func(r *versioned.Record) *wire.Obj { return s.record(r, true) })
}

// slugOrName is the slug sent, or "" for the use case to make one from
// the name, free in the project (versioned.Service.FreeSlug), as the
// console creates applications, evaluators and testsets from the name a
// person typed; with neither a slug nor a name with something to keep in
// a slug, the slug is missing at body.<key>.slug.
func slugOrName(slug, name *string, key string) (string, error) {
	if slug != nil {
		return *slug, nil
	}
	if name == nil || versioned.SlugOf(*name) == "" {
		return "", wire.FieldMissing("body", key, "slug")
	}
	return "", nil
}

func (s *simpleAPI) create(rq *req, in *wire.Body) error {
	c, sc := rq.c, rq.sc
	slug := in.Slug("slug")
	h := in.Header()
	if err := wire.ErrOf(in); err != nil {
		return err
	}
	a := &versioned.Artifact{Header: h}
	if id, err := queryID(c, s.k.Key+"_id"); err != nil {
		return err
	} else if id != nil {
		a.ID = *id
	}
	var err error
	if a.Slug, err = slugOrName(slug, h.Name, s.k.Key); err != nil {
		return err
	}
	rec, err := s.uc.Create(c.Request().Context(), sc, a, in.Value("data"), append(in.Loc(), "data"))
	return s.sendRecord(c, rec, err)
}

func (s *simpleAPI) fetch(rq *req) error {
	c, sc, id := rq.c, rq.sc, rq.id
	rec, err := s.uc.Current(c.Request().Context(), sc, id)
	if err != nil || rec == nil || s.additionalContext == nil {
		return s.sendRecord(c, rec, err)
	}
	e := wire.NewObj().Put("count", 1).Put(s.k.Key, json.RawMessage(s.record(rec, true).Done()))
	return send(c, e.Put("additional_context", s.additionalContext).Done())
}

func (s *simpleAPI) edit(rq *req, in *wire.Body) error {
	c, sc, id := rq.c, rq.sc, rq.id
	bid := in.ID("id")
	h := in.Header()
	if err := wire.ErrOf(in); err != nil {
		return err
	}
	if bid == nil || *bid != id {
		if s.mismatch400 {
			return versioned.Invalid("The " + s.k.Key + " id in the path does not match the id in the body.")
		}
		return send(c, wire.Envelope(s.k.Key, nil))
	}
	data, err := s.uc.Parse(in.Value("data"), append(in.Loc(), "data"))
	if err != nil {
		return err
	}
	rec, err := s.uc.Edit(c.Request().Context(), sc, id, h, data)
	return s.sendRecord(c, rec, err)
}

func (s *simpleAPI) query(rq *req) error {
	c, sc, b := rq.c, rq.sc, rq.b
	q := versioned.Query{ArtifactRefs: b.Refs(s.k.Key + "_refs"), IncludeArchived: b.Bool(false, "include_archived"), Windowing: b.Windowing()}
	if f := b.Sub(s.k.Key); f != nil {
		q.Filter = f.Filter(false)
		b.Adopt(f)
	}
	if err := wire.ErrOf(b); err != nil {
		return err
	}
	recs, err := s.uc.Query(c.Request().Context(), sc, q)
	if err != nil {
		return err
	}
	items := renderAll(recs, func(r *versioned.Record) *wire.Obj { return s.record(r, !s.noRevisionIDs) })
	return send(c, wire.List(s.k.Plural, items, nil))
}
