package httpapi

import (
	"context"
	"encoding/json"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/services/registry/internal/versioned"
)

// simpleAPI serves the flat /simple/<plural> surface of workflows,
// applications, evaluators, environments and queries: one record merging
// the artifact, its default variant and that variant's latest revision.
// Families differ only in the hooks below.
type simpleAPI struct {
	k   kind
	reg *versioned.Service
	// narrow returns the artifact flags to store for the sent ones.
	narrow func(json.RawMessage) json.RawMessage
	// parse checks the sent data; nil means none was sent.
	parse func(raw json.RawMessage, loc []any) (any, error)
	// commit writes a revision with the parsed data (nil: none) through tx.
	commit func(ctx context.Context, sc scope.Scope, tx *versioned.Service, variantID uuid.UUID, data any, msg string) (*versioned.Revision, error)
	// flags are the flags a record shows; nil: the artifact's.
	flags func(a *versioned.Artifact, r *versioned.Revision) json.RawMessage
	// keepData: an edit without data commits the latest data again
	// (environments commit "no references" instead).
	keepData bool
	// partialEdit: omitted header fields keep their stored values.
	partialEdit bool
	// mismatch400: a path/body id mismatch is a 400, not an empty 200.
	mismatch400 bool
	// archiveVariant: (un)archive also covers the default variant.
	archiveVariant bool
	// noRevisionIDs: query items lack variant_id and revision_id.
	noRevisionIDs bool
	// editCheck, if set, may refuse an edit (evaluator renames).
	editCheck func(cur *versioned.Artifact, h versioned.Header) error
	// slugCheck, if set, refuses reserved slugs.
	slugCheck func(string) error
	// forceFlags is always part of the query's artifact flag filter.
	forceFlags json.RawMessage
	// additionalContext, if set, is sent beside the record on GET
	// /simple/<plural>/{id} (applications' playground build kit).
	additionalContext json.RawMessage
}

func (s *simpleAPI) route(e *echo.Echo) {
	p := "/simple/" + s.k.plural
	e.POST(p, s.create)
	e.GET(p+"/:id", s.fetch)
	e.PUT(p+"/:id", s.edit)
	e.POST(p+"/:id/archive", s.archive(true))
	e.POST(p+"/:id/unarchive", s.archive(false))
	e.POST(p+"/query", s.query)
}

// record renders the simple shape.
func (s *simpleAPI) record(a *versioned.Artifact, v *versioned.Variant, r *versioned.Revision, withIDs bool) *obj {
	o := newObj().put("id", a.ID).put("slug", a.Slug)
	flags := a.Flags
	if s.flags != nil && r != nil {
		flags = s.flags(a, r)
	}
	header(o, versioned.Header{Name: a.Name, Description: a.Description, Flags: flags, Tags: a.Tags, Meta: a.Meta})
	lifecycle(o, a.Lifecycle)
	if r != nil {
		o.put("data", r.Data)
	}
	if withIDs {
		if v != nil {
			o.put("variant_id", v.ID)
		}
		if r != nil {
			o.put("revision_id", r.ID)
		}
	}
	return o
}

func (s *simpleAPI) sendRecord(c echo.Context, a *versioned.Artifact, v *versioned.Variant, r *versioned.Revision) error {
	if a == nil {
		return send(c, envelope(s.k.key, nil))
	}
	return send(c, envelope(s.k.key, s.record(a, v, r, true)))
}

func (s *simpleAPI) create(c echo.Context) error {
	sc, _, b, err := request(c, false)
	if err != nil {
		return err
	}
	in := b.require(s.k.key)
	if err := errOf(b); err != nil {
		return err
	}
	slug := in.slug("slug")
	h := in.header()
	if err := errOf(in); err != nil {
		return err
	}
	a := &versioned.Artifact{Header: h}
	if forced := c.QueryParam(s.k.key + "_id"); forced != "" {
		id, err := uuid.Parse(forced)
		if err != nil {
			return fieldInvalid("Input should be a valid UUID", forced, "query", s.k.key+"_id")
		}
		a.ID = id
	}
	if slug == nil {
		return fieldMissing("body", s.k.key, "slug")
	}
	if s.slugCheck != nil {
		if err := s.slugCheck(*slug); err != nil {
			return err
		}
	}
	a.Slug = *slug
	a.Flags = s.narrow(a.Flags)
	data, err := s.parse(in.m["data"], append(in.loc, "data"))
	if err != nil {
		return err
	}
	if data == nil && s.keepData {
		data, _ = s.parse(json.RawMessage(`{}`), nil)
	}
	var out *versioned.Artifact
	var v *versioned.Variant
	var r *versioned.Revision
	ctx := c.Request().Context()
	err = s.reg.InTx(ctx, func(tx *versioned.Service) error {
		var err error
		if out, err = tx.CreateArtifact(ctx, sc, s.k.fam, a); err != nil {
			return err
		}
		name := out.Name
		if name == nil {
			name = &out.Slug
		}
		vh := versioned.Header{Name: name, Description: out.Description, Tags: out.Tags, Meta: out.Meta}
		if v, err = tx.CreateVariant(ctx, sc, s.k.fam, &versioned.Variant{ArtifactID: out.ID, Slug: versioned.NewSlug(), Header: vh}); err != nil {
			return err
		}
		// Two commits, as the reference makes: an empty v0 and v1 with data.
		if _, err = s.commit(ctx, sc, tx, v.ID, nil, "Initial commit"); err != nil {
			return err
		}
		r, err = s.commit(ctx, sc, tx, v.ID, data, "")
		return err
	})
	if err != nil {
		return err
	}
	return s.sendRecord(c, out, v, r)
}

// current loads the artifact, its default variant and that variant's
// latest revision.
func (s *simpleAPI) current(ctx context.Context, sc scope.Scope, reg *versioned.Service, id uuid.UUID) (*versioned.Artifact, *versioned.Variant, *versioned.Revision, error) {
	a, err := reg.Artifact(ctx, sc, s.k.fam, id)
	if err != nil || a == nil {
		return nil, nil, nil, err
	}
	v, err := reg.DefaultVariant(ctx, sc, s.k.fam, a.ID)
	if err != nil || v == nil {
		return a, nil, nil, err
	}
	r, err := reg.LatestRevision(ctx, sc, s.k.fam, v.ID)
	return a, v, r, err
}

func (s *simpleAPI) fetch(c echo.Context) error {
	sc, id, _, err := request(c, true)
	if err != nil {
		return err
	}
	a, v, r, err := s.current(c.Request().Context(), sc, s.reg, id)
	if err != nil {
		return err
	}
	if a == nil || s.additionalContext == nil {
		return s.sendRecord(c, a, v, r)
	}
	e := newObj().put("count", 1).put(s.k.key, json.RawMessage(s.record(a, v, r, true).done()))
	return send(c, e.put("additional_context", s.additionalContext).done())
}

func (s *simpleAPI) edit(c echo.Context) error {
	sc, id, b, err := request(c, true)
	if err != nil {
		return err
	}
	in := b.require(s.k.key)
	if err := errOf(b); err != nil {
		return err
	}
	bid := in.id("id")
	h := in.header()
	if err := errOf(in); err != nil {
		return err
	}
	if bid == nil || *bid != id {
		if s.mismatch400 {
			return versioned.Invalid("The " + s.k.key + " id in the path does not match the id in the body.")
		}
		return send(c, envelope(s.k.key, nil))
	}
	data, err := s.parse(in.m["data"], append(in.loc, "data"))
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	var a *versioned.Artifact
	var v *versioned.Variant
	var r *versioned.Revision
	err = s.reg.InTx(ctx, func(tx *versioned.Service) error {
		cur, cv, cr, err := s.current(ctx, sc, tx, id)
		if err != nil || cur == nil || cv == nil {
			return err
		}
		if s.editCheck != nil {
			if err := s.editCheck(cur, h); err != nil {
				return err
			}
		}
		next := *cur
		if s.partialEdit {
			if h.Name != nil {
				next.Name = h.Name
			}
			if h.Description != nil {
				next.Description = h.Description
			}
			if h.Tags != nil {
				next.Tags = h.Tags
			}
			if h.Meta != nil {
				next.Meta = h.Meta
			}
			if h.Flags != nil {
				next.Flags = s.narrow(h.Flags)
			}
		} else {
			next.Header = h
			next.Flags = s.narrow(h.Flags)
		}
		if a, err = tx.EditArtifact(ctx, sc, s.k.fam, &next); err != nil {
			return err
		}
		vn := *cv
		vn.Name, vn.Description, vn.Tags, vn.Meta = next.Name, next.Description, next.Tags, next.Meta
		if vn.Name == nil {
			vn.Name = &cv.Slug
		}
		if v, err = tx.EditVariant(ctx, sc, s.k.fam, &vn); err != nil {
			return err
		}
		if data == nil && s.keepData && cr != nil && cr.Data != nil {
			if data, err = s.parse(cr.Data, nil); err != nil {
				return err
			}
		}
		r, err = s.commit(ctx, sc, tx, cv.ID, data, "")
		return err
	})
	if err != nil {
		return err
	}
	return s.sendRecord(c, a, v, r)
}

func (s *simpleAPI) archive(archived bool) echo.HandlerFunc {
	return func(c echo.Context) error {
		sc, id, _, err := request(c, true)
		if err != nil {
			return err
		}
		ctx := c.Request().Context()
		var a *versioned.Artifact
		var v *versioned.Variant
		var r *versioned.Revision
		err = s.reg.InTx(ctx, func(tx *versioned.Service) error {
			var err error
			if a, err = tx.ArchiveArtifact(ctx, sc, s.k.fam, id, archived); err != nil || a == nil {
				return err
			}
			if v, err = tx.DefaultVariant(ctx, sc, s.k.fam, a.ID); err != nil || v == nil {
				return err
			}
			if s.archiveVariant {
				if v, err = tx.ArchiveVariant(ctx, sc, s.k.fam, v.ID, archived); err != nil || v == nil {
					return err
				}
			}
			r, err = tx.LatestRevision(ctx, sc, s.k.fam, v.ID)
			return err
		})
		if err != nil {
			return err
		}
		return s.sendRecord(c, a, v, r)
	}
}

func (s *simpleAPI) query(c echo.Context) error {
	sc, _, b, err := request(c, false)
	if err != nil {
		return err
	}
	q := versioned.Query{ArtifactRefs: b.refs(s.k.key + "_refs"), IncludeArchived: b.boolean(false, "include_archived"), Windowing: b.windowing()}
	if f := b.sub(s.k.key); f != nil {
		q.Filter = f.filter(false)
		if b.err == nil {
			b.err = f.err
		}
	}
	if err := errOf(b); err != nil {
		return err
	}
	// Flags are compared with each record's shown flags afterwards, so the
	// merged revision flags of workflows can be asked for.
	want := q.Filter.Flags
	q.Filter.Flags = s.forceFlags
	if q.Windowing == nil {
		order := "descending"
		q.Windowing = &versioned.Windowing{Order: &order}
	}
	ctx := c.Request().Context()
	as, err := s.reg.QueryArtifacts(ctx, sc, s.k.fam, q)
	if err != nil {
		return err
	}
	items := []json.RawMessage{}
	for i := range as {
		a, v, r, err := s.current(ctx, sc, s.reg, as[i].ID)
		if err != nil {
			return err
		}
		if a == nil {
			continue
		}
		o := s.record(a, v, r, !s.noRevisionIDs)
		if want != nil {
			shown := a.Flags
			if s.flags != nil && r != nil {
				shown = s.flags(a, r)
			}
			if !flagsMatch(want, shown) {
				continue
			}
		}
		items = append(items, o.done())
	}
	return send(c, list(s.k.plural, items, nil))
}

// flagsMatch reports whether every flag in want equals the one in got.
func flagsMatch(want, got json.RawMessage) bool {
	var w, g map[string]any
	_ = json.Unmarshal(want, &w)
	_ = json.Unmarshal(got, &g)
	for k, v := range w {
		gv, ok := g[k]
		if !ok {
			if b, isBool := v.(bool); isBool && !b {
				continue // an absent flag is false
			}
			return false
		}
		wr, _ := json.Marshal(v)
		gr, _ := json.Marshal(gv)
		if string(wr) != string(gr) {
			return false
		}
	}
	return true
}
