package testsets

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/google/uuid"

	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/services/registry/internal/tcfile"
	"github.com/assayhq/assay/services/registry/internal/testcases"
	"github.com/assayhq/assay/services/registry/internal/versioned"
)

// Simple is the flat record of the simple surface: a testset, its default
// variant and that variant's latest revision with its testcases.
type Simple struct {
	Artifact  *versioned.Artifact
	Variant   *versioned.Variant
	Revision  *versioned.Revision
	Testcases []versioned.Testcase
}

// SimpleInput creates or edits a simple testset.
type SimpleInput struct {
	ID     *uuid.UUID
	Slug   string
	Header versioned.Header
	Rows   []testcases.Row
	// JSONBody marks rows from a JSON request body (not a file).
	JSONBody bool
	// Message is the message of the revision with the rows (none if nil).
	Message *string
}

// CreateSimple creates the artifact, a variant with the same header, an
// empty "Initial commit" v0 and v1 with the rows, in one transaction
// (versioned.Service.CreateRecord). Without a slug, the slug is made from
// the name (versioned.Service.FreeSlug), so a testset uploaded as "Capitals
// QA" is `capitals-qa` to the CLI; without a name either it is generated,
// and the name defaults to the slug.
func (s *Service) CreateSimple(ctx context.Context, sc scope.Scope, in SimpleInput) (*Simple, error) {
	if s.limits.MaxRows > 0 && len(in.Rows) > s.limits.MaxRows {
		return nil, s.errTooManyRows()
	}
	if in.Slug == "" {
		name := ""
		if in.Header.Name != nil {
			name = *in.Header.Name
		}
		slug, err := s.reg.FreeSlug(ctx, sc, fam, name)
		if err != nil {
			return nil, err
		}
		in.Slug = slug
	}
	if in.Header.Name == nil {
		in.Header.Name = &in.Slug
	}
	a := &versioned.Artifact{Slug: in.Slug, Header: in.Header}
	if in.ID != nil {
		a.ID = *in.ID
	}
	var blobs []versioned.Testcase
	rec, err := s.reg.CreateRecord(ctx, sc, fam, a,
		func(*versioned.Artifact) versioned.Header { return in.Header },
		func(reg *versioned.Service, v *versioned.Variant, initial bool) (*versioned.Revision, error) {
			tx := &Service{reg: reg, limits: s.limits}
			if initial {
				msg := versioned.InitialMessage
				return tx.Commit(ctx, sc, Commit{ArtifactID: v.ArtifactID, VariantID: &v.ID, Header: in.Header, Message: &msg, Initial: true})
			}
			r, tcs, err := tx.commit(ctx, sc, Commit{ArtifactID: v.ArtifactID, VariantID: &v.ID, Header: in.Header,
				HasData: true, Rows: in.Rows, Dedup: true, JSONBody: in.JSONBody, Message: in.Message})
			blobs = tcs
			return r, err
		})
	if err != nil {
		return nil, err
	}
	// The testset is new, so every blob (its id hashes the testset id) was
	// written by this commit: answer from memory, not a re-read.
	return &Simple{Artifact: rec.Artifact, Variant: rec.Variant, Revision: rec.Revision, Testcases: blobs}, nil
}

// GetSimple returns the simple record, or nil when the testset, its
// default variant or a revision is missing.
func (s *Service) GetSimple(ctx context.Context, sc scope.Scope, id uuid.UUID) (*Simple, error) {
	a, err := s.reg.Artifact(ctx, sc, fam, id)
	if err != nil || a == nil {
		return nil, err
	}
	return s.simpleOf(ctx, sc, a)
}

func (s *Service) simpleOf(ctx context.Context, sc scope.Scope, a *versioned.Artifact) (*Simple, error) {
	v, err := s.reg.DefaultVariant(ctx, sc, fam, a.ID)
	if err != nil || v == nil {
		return nil, err
	}
	r, err := s.reg.LatestRevision(ctx, sc, fam, v.ID)
	if err != nil || r == nil {
		return nil, err
	}
	return s.load(ctx, sc, a, v, r)
}

func (s *Service) load(ctx context.Context, sc scope.Scope, a *versioned.Artifact, v *versioned.Variant, r *versioned.Revision) (*Simple, error) {
	tcs, err := s.Testcases(ctx, sc, r)
	if err != nil {
		return nil, err
	}
	return &Simple{Artifact: a, Variant: v, Revision: r, Testcases: tcs}, nil
}

// EditSimple full-replaces the header of the artifact and its default
// variant and commits the rows when the header or the rows changed. A
// missing testset gives nil.
func (s *Service) EditSimple(ctx context.Context, sc scope.Scope, id uuid.UUID, in SimpleInput) (*Simple, error) {
	if s.limits.MaxRows > 0 && len(in.Rows) > s.limits.MaxRows {
		return nil, s.errTooManyRows()
	}
	var out *Simple
	err := s.inTx(ctx, func(tx *Service) error {
		cur, err := tx.reg.Artifact(ctx, sc, fam, id)
		if err != nil || cur == nil {
			return err
		}
		changed := !sameHeader(cur.Header, in.Header)
		a := *cur
		a.Name, a.Description, a.Tags, a.Meta = in.Header.Name, in.Header.Description, in.Header.Tags, in.Header.Meta
		if changed {
			if _, err := tx.reg.EditArtifact(ctx, sc, fam, &a); err != nil {
				return err
			}
		}
		v, err := tx.reg.DefaultVariant(ctx, sc, fam, id)
		if err != nil {
			return err
		}
		if v == nil {
			if v, err = tx.reg.CreateVariant(ctx, sc, fam, &versioned.Variant{ArtifactID: id, Slug: versioned.NewSlug(), Header: in.Header}); err != nil {
				return err
			}
		} else if changed {
			nv := *v
			nv.Name, nv.Description, nv.Tags, nv.Meta = in.Header.Name, in.Header.Description, in.Header.Tags, in.Header.Meta
			if v, err = tx.reg.EditVariant(ctx, sc, fam, &nv); err != nil {
				return err
			}
		}
		head, err := tx.reg.LatestRevision(ctx, sc, fam, v.ID)
		if err != nil {
			return err
		}
		rows := testcases.AssignDedup(in.Rows, in.JSONBody)
		testcases.AssignIDs(id, rows)
		ids := make([]uuid.UUID, len(rows))
		for i, r := range rows {
			ids[i] = r.ID
		}
		if changed || !sameIDs(head, ids) {
			// Dedup ids are already in the rows, so Commit keeps them.
			head, err = tx.Commit(ctx, sc, Commit{ArtifactID: id, VariantID: &v.ID, Header: in.Header, HasData: true, Rows: rows, Message: in.Message})
			if err != nil {
				return err
			}
		}
		fresh, err := tx.reg.Artifact(ctx, sc, fam, id)
		if err != nil {
			return err
		}
		out, err = tx.load(ctx, sc, fresh, v, head)
		return err
	})
	return out, err
}

func sameHeader(a, b versioned.Header) bool {
	return eqStr(a.Name, b.Name) && eqStr(a.Description, b.Description) && eqJSON(a.Tags, b.Tags) && eqJSON(a.Meta, b.Meta)
}

func eqStr(a, b *string) bool { return a == nil && b == nil || a != nil && b != nil && *a == *b }

// eqJSON compares two JSON objects by value.
func eqJSON(a, b json.RawMessage) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	if bytes.Equal(a, b) {
		return true
	}
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}

// QuerySimple lists simple records; testsets lacking a variant or a
// revision are skipped.
func (s *Service) QuerySimple(ctx context.Context, sc scope.Scope, q versioned.Query) (SimplePage, error) {
	// Paged and bounded, whatever the request asks: every testset with
	// every testcase inline made one answer of 51 MB for 21 testsets.
	maxSets, maxCases := s.limits.QueryTestsets, s.limits.QueryTestcases
	if maxSets <= 0 {
		maxSets = tcfile.DefaultQueryTestsets
	}
	if maxCases <= 0 {
		maxCases = tcfile.DefaultQueryTestcases
	}
	w := versioned.Windowing{}
	if q.Windowing != nil {
		w = *q.Windowing
	}
	if w.Limit == nil || *w.Limit > maxSets {
		w.Limit = &maxSets
	}
	q.Windowing = &w
	as, err := s.reg.QueryArtifacts(ctx, sc, fam, q)
	if err != nil {
		return SimplePage{}, err
	}
	page := SimplePage{Window: &w, Artifacts: len(as), Testsets: make([]Simple, 0, len(as))}
	if len(as) > 0 {
		page.LastID = as[len(as)-1].ID
	}
	for i := range as {
		v, err := s.reg.DefaultVariant(ctx, sc, fam, as[i].ID)
		if err != nil {
			return SimplePage{}, err
		}
		if v == nil {
			continue
		}
		r, err := s.reg.LatestRevision(ctx, sc, fam, v.ID)
		if err != nil {
			return SimplePage{}, err
		}
		if r == nil {
			continue
		}
		tcs, err := s.reg.Testcases(ctx, sc, r.TestcaseIDs[:min(len(r.TestcaseIDs), maxCases)])
		if err != nil {
			return SimplePage{}, err
		}
		page.Testsets = append(page.Testsets, Simple{Artifact: &as[i], Variant: v, Revision: r, Testcases: tcs})
	}
	return page, nil
}

// SimplePage is one answer of QuerySimple: the testsets, each with at
// most Limits.QueryTestcases testcases inline, and what the response's
// windowing needs (the page's artifacts, some of which may lack a
// revision and are left out).
type SimplePage struct {
	Testsets  []Simple
	Window    *versioned.Windowing
	Artifacts int
	LastID    uuid.UUID
}

// ArchiveSimple (un)archives the artifact only; nil if missing.
func (s *Service) ArchiveSimple(ctx context.Context, sc scope.Scope, id uuid.UUID, archived bool) (*versioned.Artifact, error) {
	return s.reg.ArchiveArtifact(ctx, sc, fam, id, archived)
}
