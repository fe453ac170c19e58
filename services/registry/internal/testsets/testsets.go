// Package testsets holds the testset use cases on top of the versioned git
// model: commits of testcase rows (full data, deltas, from a base revision,
// from an uploaded file), content-addressed blobs and testcase queries, the
// simple surface that merges a testset, its default variant and latest
// revision, and the family's git-model rules.
package testsets

import (
	"context"
	"slices"
	"strconv"

	"github.com/google/uuid"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/services/registry/internal/canon"
	"github.com/assayhq/assay/services/registry/internal/tcfile"
	"github.com/assayhq/assay/services/registry/internal/testcases"
	"github.com/assayhq/assay/services/registry/internal/versioned"
)

const fam = versioned.Testsets

// Service implements the testset use cases.
type Service struct {
	reg    *versioned.Service
	limits tcfile.Limits
}

// NewService returns a testset service; limits bound uploads and commits.
func NewService(reg *versioned.Service, limits tcfile.Limits) *Service {
	return &Service{reg: reg, limits: limits}
}

// Limits returns the configured row and size limits.
func (s *Service) Limits() tcfile.Limits { return s.limits }

// Commit is a testset commit: either full rows or a delta against a base.
type Commit struct {
	ArtifactID uuid.UUID
	VariantID  *uuid.UUID
	Slug       string
	Header     versioned.Header
	Message    *string
	// Rows is the full data when HasData; nil rows with HasData commit an
	// empty revision ({"testcases": []} counts as data).
	HasData bool
	Rows    []testcases.Row
	// Delta applies to BaseRevisionID, else the default variant's latest.
	Delta          *testcases.Delta
	BaseRevisionID *uuid.UUID
	// Dedup assigns testcase_dedup_id to every row (simple and upload
	// paths); JSONBody also moves a body's __dedup_id__ first.
	Dedup, JSONBody bool
	Initial         bool
}

// ErrTooManyRows is the 413 for a commit over the row limit.
func (s *Service) errTooManyRows() error {
	return errs.New(errs.TooLarge, "testsets.too_large",
		"Testset exceeds the maximum count of "+itoa(s.limits.MaxRows)+" testcases per testset.")
}

// Commit stores a new revision. A delta without a base gives nil.
func (s *Service) Commit(ctx context.Context, sc scope.Scope, c Commit) (*versioned.Revision, error) {
	r, _, err := s.commit(ctx, sc, c)
	return r, err
}

// commit also returns the blobs of the revision as committed, in order.
func (s *Service) commit(ctx context.Context, sc scope.Scope, c Commit) (*versioned.Revision, []versioned.Testcase, error) {
	rows := c.Rows
	if c.Delta != nil {
		base, err := s.base(ctx, sc, c)
		if err != nil || base == nil {
			return nil, nil, err
		}
		baseRows, err := s.Rows(ctx, sc, base)
		if err != nil {
			return nil, nil, err
		}
		rows = testcases.ApplyDelta(baseRows, *c.Delta)
		if c.VariantID == nil {
			c.VariantID = &base.VariantID
		}
		if c.Message == nil {
			m := "Patched testset revision"
			c.Message = &m
		}
		if c.Header.Description == nil {
			c.Header.Description = base.Description
		}
		c.HasData = true
	}
	if c.VariantID == nil {
		return nil, nil, versioned.Invalid("testset_revision.testset_variant_id is required.")
	}
	if s.limits.MaxRows > 0 && len(rows) > s.limits.MaxRows {
		return nil, nil, s.errTooManyRows()
	}
	rev := versioned.Revision{ArtifactID: c.ArtifactID, VariantID: *c.VariantID, Slug: c.Slug, Header: c.Header, Message: c.Message}
	var blobs []versioned.Testcase
	if c.HasData {
		if c.Dedup {
			rows = testcases.AssignDedup(rows, c.JSONBody)
		}
		testcases.AssignIDs(c.ArtifactID, rows)
		rev.TestcaseIDs = make([]uuid.UUID, len(rows))
		blobs = make([]versioned.Testcase, len(rows))
		setID := c.ArtifactID
		for i, r := range rows {
			rev.TestcaseIDs[i] = r.ID
			blobs[i] = versioned.Testcase{ID: r.ID, SetID: &setID, Data: canon.AppendCompact(nil, r.Data),
				Flags: rawObject(r.Flags), Tags: rawObject(r.Tags), Meta: rawObject(r.Meta)}
		}
	}
	r, err := s.reg.Commit(ctx, sc, fam, versioned.Commit{Revision: rev, Testcases: blobs, Initial: c.Initial})
	return r, blobs, err
}

func (s *Service) base(ctx context.Context, sc scope.Scope, c Commit) (*versioned.Revision, error) {
	if c.BaseRevisionID != nil {
		return s.reg.Revision(ctx, sc, fam, *c.BaseRevisionID)
	}
	v, err := s.reg.DefaultVariant(ctx, sc, fam, c.ArtifactID)
	if err != nil || v == nil {
		return nil, err
	}
	return s.reg.LatestRevision(ctx, sc, fam, v.ID)
}

// Testcases loads the revision's testcases in order.
func (s *Service) Testcases(ctx context.Context, sc scope.Scope, r *versioned.Revision) ([]versioned.Testcase, error) {
	return s.reg.Testcases(ctx, sc, r.TestcaseIDs)
}

// Rows loads the revision's testcases as editable rows.
func (s *Service) Rows(ctx context.Context, sc scope.Scope, r *versioned.Revision) ([]testcases.Row, error) {
	tcs, err := s.Testcases(ctx, sc, r)
	if err != nil {
		return nil, err
	}
	return ToRows(tcs)
}

// ToRows parses stored testcases back into editable rows.
func ToRows(tcs []versioned.Testcase) ([]testcases.Row, error) {
	rows := make([]testcases.Row, len(tcs))
	for i, tc := range tcs {
		data, err := canon.ParseObject(tc.Data)
		if err != nil {
			return nil, err
		}
		rows[i] = testcases.Row{ID: tc.ID, Data: data}
		for _, m := range []struct {
			raw []byte
			dst **canon.Object
		}{{tc.Flags, &rows[i].Flags}, {tc.Tags, &rows[i].Tags}, {tc.Meta, &rows[i].Meta}} {
			if m.raw != nil {
				if *m.dst, err = canon.ParseObject(m.raw); err != nil {
					return nil, err
				}
			}
		}
	}
	return rows, nil
}

// sameIDs reports whether a revision already holds exactly ids.
func sameIDs(r *versioned.Revision, ids []uuid.UUID) bool {
	return r != nil && r.TestcaseIDs != nil && slices.Equal(r.TestcaseIDs, ids)
}

func rawObject(o *canon.Object) []byte {
	if o == nil {
		return nil
	}
	return canon.AppendCompact(nil, o)
}

func itoa(n int) string { return strconv.Itoa(n) }

// inTx runs fn with a service whose writes form one transaction.
func (s *Service) inTx(ctx context.Context, fn func(*Service) error) error {
	return s.reg.InTx(ctx, func(r *versioned.Service) error { return fn(&Service{reg: r, limits: s.limits}) })
}
