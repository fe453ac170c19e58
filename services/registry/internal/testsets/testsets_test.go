package testsets_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/services/registry/internal/tcfile"
	"github.com/assayhq/assay/services/registry/internal/testcases"
	"github.com/assayhq/assay/services/registry/internal/testsets"
	"github.com/assayhq/assay/services/registry/internal/versioned"
	"github.com/assayhq/assay/services/registry/internal/versioned/versionedtest"
)

func newService(t *testing.T) (*testsets.Service, scope.Scope) {
	t.Helper()
	return testsets.NewService(versionedtest.New(t), tcfile.Limits{MaxRows: 100, MaxBytes: 1 << 20}), versionedtest.Scope()
}

func rows(t *testing.T, raw string) []testcases.Row {
	t.Helper()
	var rs []testcases.Row
	require.NoError(t, json.Unmarshal([]byte(raw), &rs))
	return rs
}

func create(t *testing.T, s *testsets.Service, sc scope.Scope) *testsets.Simple {
	t.Helper()
	rec, err := s.CreateSimple(context.Background(), sc, testsets.SimpleInput{Slug: "ts",
		Header: versioned.Header{Name: versionedtest.Str("Testset")}, Rows: rows(t, `[{"data":{"q":"a"}},{"data":{"q":"b"}}]`)})
	require.NoError(t, err)
	return rec
}

func TestCreateSimpleWritesV0AndV1InOneTransaction(t *testing.T) {
	s, sc := newService(t)
	ctx := context.Background()
	rec := create(t, s, sc)
	assert.Equal(t, 1, rec.Revision.Version)
	assert.Len(t, rec.Testcases, 2)
	assert.Equal(t, "Testset", *rec.Variant.Name)

	log, err := s.Lineage().Log(ctx, sc, versioned.LogTarget{VariantID: &rec.Variant.ID})
	require.NoError(t, err)
	require.Len(t, log, 2)

	// Over the row limit nothing is written: no artifact for the slug.
	_, err = s.CreateSimple(ctx, sc, testsets.SimpleInput{Slug: "big", Rows: make([]testcases.Row, 101)})
	assert.Equal(t, errs.TooLarge, errs.KindOf(err))
	got, err := s.QuerySimple(ctx, sc, versioned.Query{})
	require.NoError(t, err)
	require.Len(t, got.Testsets, 1)
	assert.Equal(t, "ts", got.Testsets[0].Artifact.Slug)
}

func TestCommitFromBase(t *testing.T) {
	s, sc := newService(t)
	ctx := context.Background()
	rec := create(t, s, sc)

	t.Run("the base revision names the testset, a delta applies to it", func(t *testing.T) {
		delta := json.RawMessage(`{"rows":{"add":[{"data":{"q":"c"}}]}}`)
		r, err := s.CommitFromBase(ctx, sc, testsets.Commit{BaseRevisionID: &rec.Revision.ID},
			testsets.Payload{Delta: delta, Loc: []any{"body", "testset_revision"}})
		require.NoError(t, err)
		assert.Equal(t, rec.Artifact.ID, r.ArtifactID)
		assert.Len(t, r.TestcaseIDs, 3)
	})
	t.Run("data by existing testcase ids", func(t *testing.T) {
		ids, _ := json.Marshal(rec.Revision.TestcaseIDs[:1])
		r, err := s.CommitFromBase(ctx, sc, testsets.Commit{ArtifactID: rec.Artifact.ID, VariantID: &rec.Variant.ID},
			testsets.Payload{Data: map[string]json.RawMessage{"testcase_ids": ids}})
		require.NoError(t, err)
		assert.Equal(t, rec.Revision.TestcaseIDs[:1], r.TestcaseIDs)
	})
	t.Run("unknown testcase ids are a 400", func(t *testing.T) {
		ids, _ := json.Marshal([]uuid.UUID{uuid.New()})
		_, err := s.CommitFromBase(ctx, sc, testsets.Commit{ArtifactID: rec.Artifact.ID, VariantID: &rec.Variant.ID},
			testsets.Payload{Data: map[string]json.RawMessage{"testcase_ids": ids}})
		assert.Equal(t, errs.Invalid, errs.KindOf(err))
	})
	t.Run("no testset and an unknown base is a 422 on testset_id", func(t *testing.T) {
		unknown := uuid.New()
		_, err := s.CommitFromBase(ctx, sc, testsets.Commit{BaseRevisionID: &unknown},
			testsets.Payload{Data: map[string]json.RawMessage{}, Loc: []any{"body", "testset_revision"}})
		var e *errs.Error
		require.ErrorAs(t, err, &e)
		assert.Equal(t, errs.Unprocessable, e.Kind)
		require.IsType(t, []errs.FieldError{}, e.Detail)
		assert.Equal(t, []any{"body", "testset_revision", "testset_id"}, e.Detail.([]errs.FieldError)[0].Loc)
	})
}

func TestUploadToRevision(t *testing.T) {
	s, sc := newService(t)
	ctx := context.Background()
	rec := create(t, s, sc)

	r, err := s.UploadToRevision(ctx, sc, rec.Revision.ID, rows(t, `[{"data":{"q":"x"}}]`), "")
	require.NoError(t, err)
	assert.Equal(t, rec.Variant.ID, r.VariantID)
	assert.Equal(t, 2, r.Version)
	assert.Equal(t, testsets.UploadMessage, *r.Message)
	got, err := s.RevisionRows(ctx, sc, r.ID)
	require.NoError(t, err)
	require.Len(t, got, 1)

	_, err = s.UploadToRevision(ctx, sc, uuid.New(), nil, "")
	assert.Equal(t, errs.NotFound, errs.KindOf(err))
	// Another project does not see the revision.
	_, err = s.UploadToRevision(ctx, versionedtest.Scope(), rec.Revision.ID, nil, "")
	assert.Equal(t, errs.NotFound, errs.KindOf(err))
}

func TestArchiveSimple(t *testing.T) {
	s, sc := newService(t)
	ctx := context.Background()
	rec := create(t, s, sc)

	a, err := s.ArchiveSimple(ctx, sc, rec.Artifact.ID, true)
	require.NoError(t, err)
	assert.NotNil(t, a.DeletedAt)
	listed, err := s.QuerySimple(ctx, sc, versioned.Query{})
	require.NoError(t, err)
	assert.Empty(t, listed.Testsets)

	a, err = s.ArchiveSimple(ctx, sc, rec.Artifact.ID, false)
	require.NoError(t, err)
	assert.Nil(t, a.DeletedAt)
	listed, err = s.QuerySimple(ctx, sc, versioned.Query{})
	require.NoError(t, err)
	assert.Len(t, listed.Testsets, 1)
}
