package versioned

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/google/uuid"

	"github.com/assayhq/assay/pkg/scope"
)

// Record is the flat record of the simple surfaces: an artifact, its
// default variant and that variant's latest revision. Variant and Revision
// are nil when missing; a nil *Record means the artifact is missing.
type Record struct {
	Artifact *Artifact
	Variant  *Variant
	Revision *Revision
}

// InitialMessage is the message of the empty v0 every simple create writes.
const InitialMessage = "Initial commit"

// CreateRecord is the one create of every simple surface: it creates the
// artifact a, its default variant with the header variantHeader gives for
// the created artifact, an empty v0 and v1, in one transaction. commit
// writes one revision on the new variant through tx: first with initial
// true (v0, message InitialMessage, no data), then with initial false (v1).
// Two commits, as the compatible platform makes them.
func (s *Service) CreateRecord(ctx context.Context, sc scope.Scope, f Family, a *Artifact,
	variantHeader func(*Artifact) Header,
	commit func(tx *Service, v *Variant, initial bool) (*Revision, error),
) (*Record, error) {
	var out Record
	err := s.InTx(ctx, func(tx *Service) error {
		var err error
		if out.Artifact, err = tx.CreateArtifact(ctx, sc, f, a); err != nil {
			return err
		}
		v := &Variant{ArtifactID: out.Artifact.ID, Slug: NewSlug(), Header: variantHeader(out.Artifact)}
		if out.Variant, err = tx.CreateVariant(ctx, sc, f, v); err != nil {
			return err
		}
		if _, err = commit(tx, out.Variant, true); err != nil {
			return err
		}
		out.Revision, err = commit(tx, out.Variant, false)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// SimpleFamily is what a family adds to the simple surface of the
// workflows, applications, evaluators, environments and queries; Simple
// runs the transactions around it.
type SimpleFamily interface {
	// Family names the family the records belong to.
	Family() Family
	// Rules are the family's variations on the simple use cases.
	Rules() SimpleRules
	// NarrowFlags returns the artifact flags to store for the sent ones.
	NarrowFlags(json.RawMessage) json.RawMessage
	// ParseData checks sent data (never empty nor null); loc is its place
	// in the request, nil for stored data an edit keeps.
	ParseData(raw json.RawMessage, loc []any) (any, error)
	// CommitData writes a revision on the variant through tx with the
	// parsed data (nil: none); msg "" means no message.
	CommitData(ctx context.Context, sc scope.Scope, tx *Service, variantID uuid.UUID, data any, msg string) (*Revision, error)
	// ShownFlags are the flags a record shows for its revision r (never nil).
	ShownFlags(a *Artifact, r *Revision) json.RawMessage
}

// SimpleRules are the variations between families on the simple surface.
type SimpleRules struct {
	// KeepData: an edit without data commits the latest data again
	// (environments commit "no references" instead), and a create without
	// data commits the family's empty data ({}).
	KeepData bool
	// PartialEdit: omitted header fields keep their stored values.
	PartialEdit bool
	// ArchiveVariant: (un)archive also covers the default variant.
	ArchiveVariant bool
	// EditCheck, if set, may refuse an edit (evaluator renames).
	EditCheck func(cur *Artifact, h Header) error
	// SlugCheck, if set, refuses reserved slugs.
	SlugCheck func(string) error
	// ForceFlags is always part of the query's artifact flag filter.
	ForceFlags json.RawMessage
}

// Simple holds the use cases of one family's simple surface: one record
// merging the artifact, its default variant and that variant's latest
// revision, created, edited and (un)archived in one transaction each.
type Simple struct {
	reg   *Service
	fam   SimpleFamily
	rules SimpleRules
}

// NewSimple returns the simple use cases of family f.
func NewSimple(reg *Service, f SimpleFamily) *Simple {
	return &Simple{reg: reg, fam: f, rules: f.Rules()}
}

// Parse checks sent data at loc; absent or null data gives nil.
func (s *Simple) Parse(raw json.RawMessage, loc []any) (any, error) {
	if len(raw) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return nil, nil
	}
	return s.fam.ParseData(raw, loc)
}

// ShownFlags are the flags the record shows: the family's for a record
// with a revision, else the artifact's.
func (s *Simple) ShownFlags(a *Artifact, r *Revision) json.RawMessage {
	if r == nil {
		return a.Flags
	}
	return s.fam.ShownFlags(a, r)
}

// Create checks a's slug, narrows its flags, parses the sent data raw
// (at loc in the request; absent or null: none) and creates the record
// through CreateRecord. Without a slug, the slug is made from the name
// and free in the project (FreeSlug): "Capital checker" is
// `capital-checker`, or `capital-checker-2` when that is taken.
func (s *Simple) Create(ctx context.Context, sc scope.Scope, a *Artifact, raw json.RawMessage, loc []any) (*Record, error) {
	if a.Slug == "" && a.Name != nil {
		slug, err := s.reg.FreeSlug(ctx, sc, s.fam.Family(), *a.Name)
		if err != nil {
			return nil, err
		}
		a.Slug = slug
	}
	if s.rules.SlugCheck != nil {
		if err := s.rules.SlugCheck(a.Slug); err != nil {
			return nil, err
		}
	}
	a.Flags = s.fam.NarrowFlags(a.Flags)
	data, err := s.Parse(raw, loc)
	if err != nil {
		return nil, err
	}
	if data == nil && s.rules.KeepData {
		data, _ = s.fam.ParseData(json.RawMessage(`{}`), nil)
	}
	f := s.fam.Family()
	vh := func(out *Artifact) Header {
		name := out.Name
		if name == nil {
			name = &out.Slug
		}
		return Header{Name: name, Description: out.Description, Tags: out.Tags, Meta: out.Meta}
	}
	return s.reg.CreateRecord(ctx, sc, f, a, vh, func(tx *Service, v *Variant, initial bool) (*Revision, error) {
		if initial {
			return s.fam.CommitData(ctx, sc, tx, v.ID, nil, InitialMessage)
		}
		return s.fam.CommitData(ctx, sc, tx, v.ID, data, "")
	})
}

// Current loads the record, or nil when the artifact is missing.
func (s *Simple) Current(ctx context.Context, sc scope.Scope, id uuid.UUID) (*Record, error) {
	return s.current(ctx, sc, s.reg, id)
}

func (s *Simple) current(ctx context.Context, sc scope.Scope, reg *Service, id uuid.UUID) (*Record, error) {
	f := s.fam.Family()
	a, err := reg.Artifact(ctx, sc, f, id)
	if err != nil || a == nil {
		return nil, err
	}
	v, err := reg.DefaultVariant(ctx, sc, f, a.ID)
	if err != nil || v == nil {
		return &Record{Artifact: a}, err
	}
	r, err := reg.LatestRevision(ctx, sc, f, v.ID)
	return &Record{Artifact: a, Variant: v, Revision: r}, err
}

// Edit replaces the header of the artifact and its default variant (only
// the sent fields under PartialEdit) and commits data (nil: none, or the
// head's data again under KeepData), in one transaction. A missing
// artifact or default variant gives an empty Record.
func (s *Simple) Edit(ctx context.Context, sc scope.Scope, id uuid.UUID, h Header, data any) (*Record, error) {
	f := s.fam.Family()
	var out Record
	err := s.reg.InTx(ctx, func(tx *Service) error {
		cur, err := s.current(ctx, sc, tx, id)
		if err != nil || cur == nil || cur.Variant == nil {
			return err
		}
		if s.rules.EditCheck != nil {
			if err := s.rules.EditCheck(cur.Artifact, h); err != nil {
				return err
			}
		}
		next := *cur.Artifact
		if s.rules.PartialEdit {
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
				next.Flags = s.fam.NarrowFlags(h.Flags)
			}
		} else {
			next.Header = h
			next.Flags = s.fam.NarrowFlags(h.Flags)
		}
		if out.Artifact, err = tx.EditArtifact(ctx, sc, f, &next); err != nil {
			return err
		}
		cv := cur.Variant
		vn := *cv
		vn.Name, vn.Description, vn.Tags, vn.Meta = next.Name, next.Description, next.Tags, next.Meta
		if vn.Name == nil {
			vn.Name = &cv.Slug
		}
		if out.Variant, err = tx.EditVariant(ctx, sc, f, &vn); err != nil {
			return err
		}
		if cr := cur.Revision; data == nil && s.rules.KeepData && cr != nil && cr.Data != nil {
			if data, err = s.fam.ParseData(cr.Data, nil); err != nil {
				return err
			}
		}
		out.Revision, err = s.fam.CommitData(ctx, sc, tx, cv.ID, data, "")
		return err
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// Archive (un)archives the artifact (and its default variant under
// ArchiveVariant) in one transaction and returns the record; an empty
// Record when the artifact is missing.
func (s *Simple) Archive(ctx context.Context, sc scope.Scope, id uuid.UUID, archived bool) (*Record, error) {
	f := s.fam.Family()
	var out Record
	err := s.reg.InTx(ctx, func(tx *Service) error {
		a, err := tx.ArchiveArtifact(ctx, sc, f, id, archived)
		if err != nil || a == nil {
			return err
		}
		out.Artifact = a
		v, err := tx.DefaultVariant(ctx, sc, f, a.ID)
		if err != nil || v == nil {
			return err
		}
		if s.rules.ArchiveVariant {
			if v, err = tx.ArchiveVariant(ctx, sc, f, v.ID, archived); err != nil || v == nil {
				return err
			}
		}
		out.Variant = v
		out.Revision, err = tx.LatestRevision(ctx, sc, f, v.ID)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// Query lists the records of the artifacts q selects. The flags of
// q.Filter are compared with each record's shown flags (so the merged
// revision flags of workflows can be asked for); the family's ForceFlags
// filter the artifacts. Without windowing the newest come first.
func (s *Simple) Query(ctx context.Context, sc scope.Scope, q Query) ([]Record, error) {
	want := q.Filter.Flags
	q.Filter.Flags = s.rules.ForceFlags
	if q.Windowing == nil {
		order := "descending"
		q.Windowing = &Windowing{Order: &order}
	}
	as, err := s.reg.QueryArtifacts(ctx, sc, s.fam.Family(), q)
	if err != nil {
		return nil, err
	}
	var out []Record
	for i := range as {
		rec, err := s.Current(ctx, sc, as[i].ID)
		if err != nil {
			return nil, err
		}
		if rec == nil {
			continue
		}
		if want != nil && !flagsMatch(want, s.ShownFlags(rec.Artifact, rec.Revision)) {
			continue
		}
		out = append(out, *rec)
	}
	return out, nil
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
