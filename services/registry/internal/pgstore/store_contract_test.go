package pgstore_test

// The store's contract, method by method, as the registry's Store
// interface states it in its doc comments, checked on a real PostgreSQL
// migrated as cmd/registry migrates it. A failure here names the store;
// the HTTP tests (internal/httpapi) sit two layers above.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/pgxutil"
	"github.com/assayhq/assay/pkg/testutil/pgtest"
	"github.com/assayhq/assay/services/registry/internal/pgstore"
	"github.com/assayhq/assay/services/registry/internal/versioned"
	"github.com/assayhq/assay/services/registry/migrations"
)

// fixture is a store on a fresh, migrated database, and a project to write in.
type fixture struct {
	pool *pgxpool.Pool
	st   *pgstore.Store
	p    uuid.UUID
	user uuid.UUID
}

// TestStoreContract runs each contract on one database, migrated as
// cmd/registry migrates it (a database costs seconds to create on a loaded
// machine), each in a project of its own: the store keeps projects apart,
// which is itself one of the contracts checked.
func TestStoreContract(t *testing.T) {
	pool := pgtest.New(t)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	require.NoError(t, pgxutil.Migrate(context.Background(), pool, migrations.FS, "registry_schema_version", log))
	for _, tc := range []struct {
		name string
		run  func(*testing.T, *fixture)
	}{
		{"GettersAndUpdatesOfAbsentRowsAreNotFound", testGettersAndUpdatesOfAbsentRowsAreNotFound},
		{"RowsOfAnotherProjectAreNotFound", testRowsOfAnotherProjectAreNotFound},
		{"RowsOfAnotherFamilyAreNotFound", testRowsOfAnotherFamilyAreNotFound},
		{"CreateArtifactStoresWhatItIsGivenAndRefusesATakenSlug", testCreateArtifactStoresWhatItIsGivenAndRefusesATakenSlug},
		{"UpdateArtifactReplacesHeaderAndFolderButNotSlugOrArchive", testUpdateArtifactReplacesHeaderAndFolderButNotSlugOrArchive},
		{"ArchiveArtifactMarksOnlyTheArtifact", testArchiveArtifactMarksOnlyTheArtifact},
		{"CreateVariantFillsTheStoredRowAndChecksItsParent", testCreateVariantFillsTheStoredRowAndChecksItsParent},
		{"DefaultVariantIsTheFirstCreatedArchivedOrNot", testDefaultVariantIsTheFirstCreatedArchivedOrNot},
		{"UpdateVariantReplacesTheHeaderOnly", testUpdateVariantReplacesTheHeaderOnly},
		{"ArchiveVariantMarksItsRevisionsToo", testArchiveVariantMarksItsRevisionsToo},
		{"CommitVersionsAreDenseFromZeroPerVariant", testCommitVersionsAreDenseFromZeroPerVariant},
		{"LatestRevisionCountsArchivedOnes", testLatestRevisionCountsArchivedOnes},
		{"TheHeadIsTheLastCommitNotTheNewestStamp", testTheHeadIsTheLastCommitNotTheNewestStamp},
		{"CommitCheckSeesTheNonArchivedHeadAndTheCount", testCommitCheckSeesTheNonArchivedHeadAndTheCount},
		{"CommitErrorsNameTheirCause", testCommitErrorsNameTheirCause},
		{"ConcurrentCommitsOnOneVariantAreSerialised", testConcurrentCommitsOnOneVariantAreSerialised},
		{"CommitWaitsAtMostTheLockTimeout", testCommitWaitsAtMostTheLockTimeout},
		{"CommitLockIsHeldUntilTheOuterTransactionEnds", testCommitLockIsHeldUntilTheOuterTransactionEnds},
		{"UpdateAndArchiveVariantWaitForTheCommitLock", testUpdateAndArchiveVariantWaitForTheCommitLock},
		{"InTxRollsBackOnErrorAndPanicAndNestsAsSavepoints", testInTxRollsBackOnErrorAndPanicAndNestsAsSavepoints},
		{"UpdateRevisionChangesTheHeaderNeverThePayload", testUpdateRevisionChangesTheHeaderNeverThePayload},
		{"LogIsNewestFirstFromTheRevisionSkippingOlderArchivedOnes", testLogIsNewestFirstFromTheRevisionSkippingOlderArchivedOnes},
		{"QueriesLeaveArchivedRowsOutUnlessAsked", testQueriesLeaveArchivedRowsOutUnlessAsked},
		{"QueryFiltersMatchAsDocumented", testQueryFiltersMatchAsDocumented},
		{"QueryWindowingOrdersByIDAndPages", testQueryWindowingOrdersByIDAndPages},
		{"TestcasesAreStoredOnceByID", testTestcasesAreStoredOnceByID},
		{"TestcasesBySetPagesByCreation", testTestcasesBySetPagesByCreation},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.run(t, &fixture{pool: pool, st: pgstore.New(pool), p: uuid.New(), user: uuid.New()})
		})
	}
}

// with is f with a store built with opts, on the same database and project.
func (f *fixture) with(opts ...pgstore.Option) *fixture {
	cp := *f
	cp.st = pgstore.New(f.pool, opts...)
	return &cp
}

// now is a creation stamp PostgreSQL keeps exactly (microseconds).
func now() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }

func str(s string) *string { return &s }

func (f *fixture) artifact(t *testing.T, fam versioned.Family, slug string) *versioned.Artifact {
	t.Helper()
	a := &versioned.Artifact{ID: versioned.NewID(), Slug: slug, Header: versioned.Header{Name: str("name " + slug), Flags: json.RawMessage(`{"is_application":true}`)},
		Lifecycle: versioned.Lifecycle{CreatedAt: now(), CreatedByID: &f.user}}
	require.NoError(t, f.st.CreateArtifact(context.Background(), f.p, fam, a))
	return a
}

func (f *fixture) variant(t *testing.T, fam versioned.Family, artifactID uuid.UUID, slug string) *versioned.Variant {
	t.Helper()
	v := &versioned.Variant{ID: versioned.NewID(), ArtifactID: artifactID, Slug: slug, Lifecycle: versioned.Lifecycle{CreatedAt: now()}}
	require.NoError(t, f.st.CreateVariant(context.Background(), f.p, fam, v))
	return v
}

// revision is the next revision of variant v, with data and no testcases.
func (f *fixture) revision(v uuid.UUID, slug, data string) *versioned.Revision {
	n := now()
	r := &versioned.Revision{ID: versioned.NewID(), VariantID: v, Slug: slug, Date: n, Author: &f.user, Message: str("commit " + slug),
		Lifecycle: versioned.Lifecycle{CreatedAt: n}}
	if data != "" {
		r.Data = json.RawMessage(data)
	}
	return r
}

func (f *fixture) commit(t *testing.T, fam versioned.Family, v uuid.UUID, slug, data string) *versioned.Revision {
	t.Helper()
	got, err := f.st.Commit(context.Background(), f.p, fam, f.revision(v, slug, data), nil, nil)
	require.NoError(t, err)
	return got
}

// lineage is one artifact with one variant and n revisions (versions 0..n-1).
type lineage struct {
	a    *versioned.Artifact
	v    *versioned.Variant
	revs []*versioned.Revision
}

func (f *fixture) lineage(t *testing.T, fam versioned.Family, slug string, n int) lineage {
	t.Helper()
	l := lineage{a: f.artifact(t, fam, slug)}
	l.v = f.variant(t, fam, l.a.ID, slug+".main")
	for i := range n {
		l.revs = append(l.revs, f.commit(t, fam, l.v.ID, fmt.Sprintf("%s.v%d", slug, i), fmt.Sprintf(`{"n":%d}`, i)))
	}
	return l
}

// requireNotFound is the store's not-found answer: nil and
// versioned.ErrNotFound (possibly wrapped). It is the one place that says so.
func requireNotFound[T any](t *testing.T, got *T, err error, what string) {
	t.Helper()
	require.ErrorIs(t, err, versioned.ErrNotFound, what)
	require.Nil(t, got, what)
}

func requireCode(t *testing.T, err error, kind errs.Kind, code string) {
	t.Helper()
	require.Error(t, err)
	e := errs.From(err)
	assert.Equal(t, kind, e.Kind, "%v", err)
	assert.Equal(t, code, e.Code, "%v", err)
}

func ids[T any](rows []T, id func(T) uuid.UUID) []uuid.UUID {
	out := make([]uuid.UUID, len(rows))
	for i, r := range rows {
		out[i] = id(r)
	}
	return out
}

func artID(a versioned.Artifact) uuid.UUID { return a.ID }
func varID(v versioned.Variant) uuid.UUID  { return v.ID }
func revID(r versioned.Revision) uuid.UUID { return r.ID }

func (f *fixture) countRevisions(t *testing.T, v uuid.UUID) int {
	t.Helper()
	var n int
	require.NoError(t, f.pool.QueryRow(context.Background(), `SELECT count(*) FROM revisions WHERE variant_id = $1`, v).Scan(&n))
	return n
}

// ---- not found

func testGettersAndUpdatesOfAbsentRowsAreNotFound(t *testing.T, f *fixture) {
	ctx, p, fam, none := context.Background(), f.p, versioned.Workflows, uuid.New()
	l := f.lineage(t, fam, "present", 1)

	a, err := f.st.Artifact(ctx, p, fam, none)
	requireNotFound(t, a, err, "Artifact")
	a, err = f.st.ArtifactBySlug(ctx, p, fam, "absent")
	requireNotFound(t, a, err, "ArtifactBySlug")
	a, err = f.st.UpdateArtifact(ctx, p, fam, &versioned.Artifact{ID: none})
	requireNotFound(t, a, err, "UpdateArtifact")
	a, err = f.st.ArchiveArtifact(ctx, p, fam, none, true, nil)
	requireNotFound(t, a, err, "ArchiveArtifact")

	v, err := f.st.Variant(ctx, p, fam, none)
	requireNotFound(t, v, err, "Variant")
	v, err = f.st.VariantBySlug(ctx, p, fam, "absent")
	requireNotFound(t, v, err, "VariantBySlug")
	v, err = f.st.DefaultVariant(ctx, p, fam, none)
	requireNotFound(t, v, err, "DefaultVariant of no artifact")
	bare := f.artifact(t, fam, "bare")
	v, err = f.st.DefaultVariant(ctx, p, fam, bare.ID)
	requireNotFound(t, v, err, "DefaultVariant of an artifact without variants")
	v, err = f.st.UpdateVariant(ctx, p, fam, &versioned.Variant{ID: none})
	requireNotFound(t, v, err, "UpdateVariant")
	v, err = f.st.ArchiveVariant(ctx, p, fam, none, true, nil)
	requireNotFound(t, v, err, "ArchiveVariant")

	r, err := f.st.Revision(ctx, p, fam, none)
	requireNotFound(t, r, err, "Revision")
	r, err = f.st.RevisionBySlug(ctx, p, fam, "absent")
	requireNotFound(t, r, err, "RevisionBySlug")
	r, err = f.st.RevisionByVersion(ctx, p, fam, l.v.ID, 1)
	requireNotFound(t, r, err, "RevisionByVersion past the last")
	r, err = f.st.RevisionByVersion(ctx, p, fam, none, 0)
	requireNotFound(t, r, err, "RevisionByVersion of no variant")
	empty := f.variant(t, fam, l.a.ID, "empty")
	r, err = f.st.LatestRevision(ctx, p, fam, empty.ID)
	requireNotFound(t, r, err, "LatestRevision of a variant without revisions")
	r, err = f.st.UpdateRevision(ctx, p, fam, &versioned.Revision{ID: none})
	requireNotFound(t, r, err, "UpdateRevision")
	r, err = f.st.ArchiveRevision(ctx, p, fam, none, true, nil)
	requireNotFound(t, r, err, "ArchiveRevision")

	tcs, err := f.st.Testcases(ctx, p, []uuid.UUID{none})
	require.NoError(t, err)
	assert.Empty(t, tcs, "an absent testcase id is left out")
	tcs, err = f.st.TestcasesBySet(ctx, p, none, nil)
	require.NoError(t, err)
	assert.NotNil(t, tcs, "an unknown set is an empty slice")
	assert.Empty(t, tcs)
}

// testRowsOfAnotherProjectAreNotFound: every read, update and archive in
// project B of a row of project A answers "not found" and changes nothing;
// writes naming A's rows as parents are refused as missing parents.
func testRowsOfAnotherProjectAreNotFound(t *testing.T, f *fixture) {
	ctx, fam := context.Background(), versioned.Testsets
	l := f.lineage(t, fam, "theirs", 2)
	set := uuid.New()
	tc := versioned.Testcase{ID: uuid.New(), SetID: &set, Data: json.RawMessage(`{"q":1}`), CreatedAt: now()}
	r := f.revision(l.v.ID, "theirs.tc", "")
	r.TestcaseIDs = []uuid.UUID{tc.ID}
	_, err := f.st.Commit(ctx, f.p, fam, r, []versioned.Testcase{tc}, nil)
	require.NoError(t, err)

	b := uuid.New()
	a, err := f.st.Artifact(ctx, b, fam, l.a.ID)
	requireNotFound(t, a, err, "Artifact")
	a, err = f.st.ArtifactBySlug(ctx, b, fam, l.a.Slug)
	requireNotFound(t, a, err, "ArtifactBySlug")
	a, err = f.st.UpdateArtifact(ctx, b, fam, &versioned.Artifact{ID: l.a.ID, Header: versioned.Header{Name: str("hijacked")}})
	requireNotFound(t, a, err, "UpdateArtifact")
	a, err = f.st.ArchiveArtifact(ctx, b, fam, l.a.ID, true, nil)
	requireNotFound(t, a, err, "ArchiveArtifact")
	v, err := f.st.Variant(ctx, b, fam, l.v.ID)
	requireNotFound(t, v, err, "Variant")
	v, err = f.st.VariantBySlug(ctx, b, fam, l.v.Slug)
	requireNotFound(t, v, err, "VariantBySlug")
	v, err = f.st.DefaultVariant(ctx, b, fam, l.a.ID)
	requireNotFound(t, v, err, "DefaultVariant")
	v, err = f.st.UpdateVariant(ctx, b, fam, &versioned.Variant{ID: l.v.ID, Header: versioned.Header{Name: str("hijacked")}})
	requireNotFound(t, v, err, "UpdateVariant")
	v, err = f.st.ArchiveVariant(ctx, b, fam, l.v.ID, true, nil)
	requireNotFound(t, v, err, "ArchiveVariant")
	rv, err := f.st.Revision(ctx, b, fam, l.revs[0].ID)
	requireNotFound(t, rv, err, "Revision")
	rv, err = f.st.RevisionBySlug(ctx, b, fam, l.revs[0].Slug)
	requireNotFound(t, rv, err, "RevisionBySlug")
	rv, err = f.st.RevisionByVersion(ctx, b, fam, l.v.ID, 0)
	requireNotFound(t, rv, err, "RevisionByVersion")
	rv, err = f.st.LatestRevision(ctx, b, fam, l.v.ID)
	requireNotFound(t, rv, err, "LatestRevision")
	rv, err = f.st.UpdateRevision(ctx, b, fam, &versioned.Revision{ID: l.revs[0].ID, Header: versioned.Header{Name: str("hijacked")}})
	requireNotFound(t, rv, err, "UpdateRevision")
	rv, err = f.st.ArchiveRevision(ctx, b, fam, l.revs[0].ID, true, nil)
	requireNotFound(t, rv, err, "ArchiveRevision")

	as, err := f.st.QueryArtifacts(ctx, b, fam, versioned.Query{IncludeArchived: true})
	require.NoError(t, err)
	assert.Empty(t, as)
	vs, err := f.st.QueryVariants(ctx, b, fam, versioned.Query{IncludeArchived: true, ArtifactRefs: []versioned.Ref{{ID: &l.a.ID}}})
	require.NoError(t, err)
	assert.Empty(t, vs)
	rs, err := f.st.QueryRevisions(ctx, b, fam, versioned.Query{IncludeArchived: true, VariantRefs: []versioned.Ref{{ID: &l.v.ID}}})
	require.NoError(t, err)
	assert.Empty(t, rs)
	tcs, err := f.st.Testcases(ctx, b, []uuid.UUID{tc.ID})
	require.NoError(t, err)
	assert.Empty(t, tcs, "Testcases")
	tcs, err = f.st.TestcasesBySet(ctx, b, set, nil)
	require.NoError(t, err)
	assert.Empty(t, tcs, "TestcasesBySet")

	err = f.st.CreateVariant(ctx, b, fam, &versioned.Variant{ID: versioned.NewID(), ArtifactID: l.a.ID, Slug: "intruder", Lifecycle: versioned.Lifecycle{CreatedAt: now()}})
	requireCode(t, err, errs.NotFound, "registry.parent_missing")
	_, err = f.st.Commit(ctx, b, fam, f.revision(l.v.ID, "intruder.rev", `{}`), nil, nil)
	requireCode(t, err, errs.NotFound, "registry.parent_missing")

	// Slugs are per project: B may take A's.
	require.NoError(t, f.st.CreateArtifact(ctx, b, fam, &versioned.Artifact{ID: versioned.NewID(), Slug: l.a.Slug, Lifecycle: versioned.Lifecycle{CreatedAt: now()}}))

	// Nothing of A changed.
	got, err := f.st.Artifact(ctx, f.p, fam, l.a.ID)
	require.NoError(t, err)
	assert.Equal(t, l.a.Name, got.Name)
	assert.Nil(t, got.DeletedAt)
	gotV, err := f.st.Variant(ctx, f.p, fam, l.v.ID)
	require.NoError(t, err)
	assert.Nil(t, gotV.DeletedAt)
	assert.Nil(t, gotV.Name)
	gotR, err := f.st.Revision(ctx, f.p, fam, l.revs[0].ID)
	require.NoError(t, err)
	assert.Nil(t, gotR.DeletedAt)
	assert.Nil(t, gotR.Name)
	assert.Equal(t, 3, f.countRevisions(t, l.v.ID))
}

// testRowsOfAnotherFamilyAreNotFound: families share the tables but not
// their rows or slug namespaces; an id, though, is unique in the project
// across families (CreateArtifact's second unique violation).
func testRowsOfAnotherFamilyAreNotFound(t *testing.T, f *fixture) {
	ctx := context.Background()
	l := f.lineage(t, versioned.Workflows, "shared-slug", 1)

	a, err := f.st.Artifact(ctx, f.p, versioned.Environments, l.a.ID)
	requireNotFound(t, a, err, "Artifact")
	a, err = f.st.ArtifactBySlug(ctx, f.p, versioned.Environments, l.a.Slug)
	requireNotFound(t, a, err, "ArtifactBySlug")
	v, err := f.st.Variant(ctx, f.p, versioned.Environments, l.v.ID)
	requireNotFound(t, v, err, "Variant")
	r, err := f.st.Revision(ctx, f.p, versioned.Environments, l.revs[0].ID)
	requireNotFound(t, r, err, "Revision")
	r, err = f.st.RevisionBySlug(ctx, f.p, versioned.Environments, l.revs[0].Slug)
	requireNotFound(t, r, err, "RevisionBySlug")
	_, err = f.st.Commit(ctx, f.p, versioned.Environments, f.revision(l.v.ID, "cross", `{}`), nil, nil)
	requireCode(t, err, errs.NotFound, "registry.parent_missing")

	other := f.artifact(t, versioned.Environments, l.a.Slug)
	assert.NotEqual(t, l.a.ID, other.ID, "the same slug in another family is another artifact")

	err = f.st.CreateArtifact(ctx, f.p, versioned.Environments, &versioned.Artifact{ID: l.a.ID, Slug: "fresh", Lifecycle: versioned.Lifecycle{CreatedAt: now()}})
	requireCode(t, err, errs.Conflict, "registry.slug_taken")
}

// ---- artifacts

func testCreateArtifactStoresWhatItIsGivenAndRefusesATakenSlug(t *testing.T, f *fixture) {
	ctx, fam := context.Background(), versioned.Queries
	folder := uuid.New()
	created := now().Add(-time.Hour)
	a := &versioned.Artifact{ID: versioned.NewID(), Slug: "q1", FolderID: &folder,
		Header:    versioned.Header{Name: str("Q"), Description: str("d"), Flags: json.RawMessage(`{"a":true}`), Tags: json.RawMessage(`{"t":"x"}`), Meta: json.RawMessage(`{"m":1}`)},
		Lifecycle: versioned.Lifecycle{CreatedAt: created, CreatedByID: &f.user}}
	require.NoError(t, f.st.CreateArtifact(ctx, f.p, fam, a))

	got, err := f.st.ArtifactBySlug(ctx, f.p, fam, "q1")
	require.NoError(t, err)
	require.NotNil(t, got)
	assert.Equal(t, a.ID, got.ID)
	assert.Equal(t, &folder, got.FolderID)
	assert.Equal(t, "Q", *got.Name)
	assert.Equal(t, "d", *got.Description)
	assert.JSONEq(t, `{"a":true}`, string(got.Flags))
	assert.JSONEq(t, `{"t":"x"}`, string(got.Tags))
	assert.JSONEq(t, `{"m":1}`, string(got.Meta))
	assert.True(t, created.Equal(got.CreatedAt), "the caller's stamp is kept: %v", got.CreatedAt)
	assert.Equal(t, &f.user, got.CreatedByID)
	assert.Nil(t, got.UpdatedAt)
	assert.Nil(t, got.DeletedAt)

	err = f.st.CreateArtifact(ctx, f.p, fam, &versioned.Artifact{ID: versioned.NewID(), Slug: "q1", Lifecycle: versioned.Lifecycle{CreatedAt: now()}})
	requireCode(t, err, errs.Conflict, "registry.slug_taken")
	assert.True(t, errors.Is(err, versioned.ErrSlugTaken("q1")))
	as, err := f.st.QueryArtifacts(ctx, f.p, fam, versioned.Query{IncludeArchived: true})
	require.NoError(t, err)
	assert.Len(t, as, 1, "the refused artifact is not stored")

	// An archived artifact still holds its slug.
	_, err = f.st.ArchiveArtifact(ctx, f.p, fam, a.ID, true, nil)
	require.NoError(t, err)
	err = f.st.CreateArtifact(ctx, f.p, fam, &versioned.Artifact{ID: versioned.NewID(), Slug: "q1", Lifecycle: versioned.Lifecycle{CreatedAt: now()}})
	requireCode(t, err, errs.Conflict, "registry.slug_taken")
}

func testUpdateArtifactReplacesHeaderAndFolderButNotSlugOrArchive(t *testing.T, f *fixture) {
	ctx, fam := context.Background(), versioned.Workflows
	a := f.artifact(t, fam, "edit-me")
	by := uuid.New()
	_, err := f.st.ArchiveArtifact(ctx, f.p, fam, a.ID, true, &by)
	require.NoError(t, err)

	folder := uuid.New()
	before := time.Now()
	got, err := f.st.UpdateArtifact(ctx, f.p, fam, &versioned.Artifact{ID: a.ID, Slug: "renamed", FolderID: &folder,
		Header:    versioned.Header{Name: str("new"), Tags: json.RawMessage(`{"k":"v"}`)},
		Lifecycle: versioned.Lifecycle{UpdatedByID: &by}})
	require.NoError(t, err)
	require.NotNil(t, got)
	assert.Equal(t, "edit-me", got.Slug, "the slug does not change")
	assert.Equal(t, "new", *got.Name)
	assert.Nil(t, got.Description, "the header is replaced, not merged")
	assert.Nil(t, got.Flags, "the header is replaced, not merged")
	assert.JSONEq(t, `{"k":"v"}`, string(got.Tags))
	assert.Equal(t, &folder, got.FolderID)
	require.NotNil(t, got.UpdatedAt)
	assert.WithinDuration(t, before, *got.UpdatedAt, time.Minute, "updated_at is the database clock")
	assert.Equal(t, &by, got.UpdatedByID)
	assert.NotNil(t, got.DeletedAt, "the archive marker does not change")

	again, err := f.st.Artifact(ctx, f.p, fam, a.ID)
	require.NoError(t, err)
	assert.Equal(t, got, again, "UpdateArtifact returns the stored row")
}

func testArchiveArtifactMarksOnlyTheArtifact(t *testing.T, f *fixture) {
	ctx, fam := context.Background(), versioned.Workflows
	l := f.lineage(t, fam, "arch", 1)
	by := uuid.New()

	got, err := f.st.ArchiveArtifact(ctx, f.p, fam, l.a.ID, true, &by)
	require.NoError(t, err)
	require.NotNil(t, got.DeletedAt)
	assert.Equal(t, &by, got.DeletedByID)
	v, err := f.st.Variant(ctx, f.p, fam, l.v.ID)
	require.NoError(t, err)
	assert.Nil(t, v.DeletedAt, "variants keep their own marker")
	r, err := f.st.Revision(ctx, f.p, fam, l.revs[0].ID)
	require.NoError(t, err)
	assert.Nil(t, r.DeletedAt, "revisions keep their own marker")

	// Getters see archived rows; a variant may still be created under one.
	seen, err := f.st.Artifact(ctx, f.p, fam, l.a.ID)
	require.NoError(t, err)
	require.NotNil(t, seen)
	f.variant(t, fam, l.a.ID, "under-archived")

	got, err = f.st.ArchiveArtifact(ctx, f.p, fam, l.a.ID, false, &by)
	require.NoError(t, err)
	assert.Nil(t, got.DeletedAt)
	assert.Nil(t, got.DeletedByID)
}

// ---- variants

func testCreateVariantFillsTheStoredRowAndChecksItsParent(t *testing.T, f *fixture) {
	ctx, fam := context.Background(), versioned.Workflows
	a := f.artifact(t, fam, "parent")
	v := &versioned.Variant{ID: versioned.NewID(), ArtifactID: a.ID, Slug: "child", Header: versioned.Header{Name: str("c")}, Lifecycle: versioned.Lifecycle{CreatedAt: now()}}
	require.NoError(t, f.st.CreateVariant(ctx, f.p, fam, v))
	assert.Equal(t, "parent", v.ArtifactSlug, "*v is overwritten with the stored row")
	assert.JSONEq(t, `{"is_application":true}`, string(v.ArtifactFlags))
	assert.Equal(t, "c", *v.Name)

	missing := uuid.New()
	err := f.st.CreateVariant(ctx, f.p, fam, &versioned.Variant{ID: versioned.NewID(), ArtifactID: missing, Slug: "orphan", Lifecycle: versioned.Lifecycle{CreatedAt: now()}})
	requireCode(t, err, errs.NotFound, "registry.parent_missing")
	assert.Contains(t, errs.From(err).Msg, missing.String())

	err = f.st.CreateVariant(ctx, f.p, fam, &versioned.Variant{ID: versioned.NewID(), ArtifactID: a.ID, Slug: "child", Lifecycle: versioned.Lifecycle{CreatedAt: now()}})
	requireCode(t, err, errs.Conflict, "registry.slug_taken")
	err = f.st.CreateVariant(ctx, f.p, fam, &versioned.Variant{ID: v.ID, ArtifactID: a.ID, Slug: "other", Lifecycle: versioned.Lifecycle{CreatedAt: now()}})
	requireCode(t, err, errs.Conflict, "registry.slug_taken")
}

func testDefaultVariantIsTheFirstCreatedArchivedOrNot(t *testing.T, f *fixture) {
	ctx, fam := context.Background(), versioned.Workflows
	a := f.artifact(t, fam, "multi")
	base := now()
	// Ids against creation order: the stamp decides, not the id.
	second := &versioned.Variant{ID: versioned.NewID(), ArtifactID: a.ID, Slug: "second", Lifecycle: versioned.Lifecycle{CreatedAt: base.Add(time.Second)}}
	first := &versioned.Variant{ID: versioned.NewID(), ArtifactID: a.ID, Slug: "first", Lifecycle: versioned.Lifecycle{CreatedAt: base}}
	require.NoError(t, f.st.CreateVariant(ctx, f.p, fam, second))
	require.NoError(t, f.st.CreateVariant(ctx, f.p, fam, first))
	_, err := f.st.ArchiveVariant(ctx, f.p, fam, first.ID, true, nil)
	require.NoError(t, err)

	got, err := f.st.DefaultVariant(ctx, f.p, fam, a.ID)
	require.NoError(t, err)
	require.NotNil(t, got)
	assert.Equal(t, "first", got.Slug)
}

func testUpdateVariantReplacesTheHeaderOnly(t *testing.T, f *fixture) {
	ctx, fam := context.Background(), versioned.Workflows
	l := f.lineage(t, fam, "uv", 0)
	by := uuid.New()
	got, err := f.st.UpdateVariant(ctx, f.p, fam, &versioned.Variant{ID: l.v.ID, Slug: "renamed",
		Header: versioned.Header{Description: str("d")}, Lifecycle: versioned.Lifecycle{UpdatedByID: &by}})
	require.NoError(t, err)
	require.NotNil(t, got)
	assert.Equal(t, l.v.Slug, got.Slug)
	assert.Equal(t, "d", *got.Description)
	assert.NotNil(t, got.UpdatedAt)
	assert.Equal(t, &by, got.UpdatedByID)
	assert.Equal(t, l.a.Slug, got.ArtifactSlug)
}

// testArchiveVariantMarksItsRevisionsToo: archiving a variant archives all
// its revisions; unarchiving unarchives them all, those archived one by one
// before included.
func testArchiveVariantMarksItsRevisionsToo(t *testing.T, f *fixture) {
	ctx, fam := context.Background(), versioned.Workflows
	l := f.lineage(t, fam, "av", 3)
	_, err := f.st.ArchiveRevision(ctx, f.p, fam, l.revs[0].ID, true, nil)
	require.NoError(t, err)
	by := uuid.New()

	v, err := f.st.ArchiveVariant(ctx, f.p, fam, l.v.ID, true, &by)
	require.NoError(t, err)
	require.NotNil(t, v.DeletedAt)
	assert.Equal(t, &by, v.DeletedByID)
	for _, r := range l.revs {
		got, err := f.st.Revision(ctx, f.p, fam, r.ID)
		require.NoError(t, err)
		assert.NotNil(t, got.DeletedAt, "revision %d", r.Version)
		assert.Equal(t, &by, got.DeletedByID, "revision %d", r.Version)
	}
	a, err := f.st.Artifact(ctx, f.p, fam, l.a.ID)
	require.NoError(t, err)
	assert.Nil(t, a.DeletedAt, "the artifact keeps its marker")

	v, err = f.st.ArchiveVariant(ctx, f.p, fam, l.v.ID, false, &by)
	require.NoError(t, err)
	assert.Nil(t, v.DeletedAt)
	for _, r := range l.revs {
		got, err := f.st.Revision(ctx, f.p, fam, r.ID)
		require.NoError(t, err)
		assert.Nil(t, got.DeletedAt, "revision %d is unarchived with its variant", r.Version)
	}
}

// ---- commits

func testCommitVersionsAreDenseFromZeroPerVariant(t *testing.T, f *fixture) {
	ctx, fam := context.Background(), versioned.Workflows
	l := f.lineage(t, fam, "dense", 3)
	for i, r := range l.revs {
		assert.Equal(t, i, r.Version)
		assert.Equal(t, l.a.ID, r.ArtifactID, "the artifact is filled from the variant")
		assert.Equal(t, l.a.Slug, r.ArtifactSlug)
		assert.Equal(t, l.v.Slug, r.VariantSlug)
		assert.JSONEq(t, fmt.Sprintf(`{"n":%d}`, i), string(r.Data))
	}
	// Archived revisions still count: the next version is 3, not 2.
	_, err := f.st.ArchiveRevision(ctx, f.p, fam, l.revs[2].ID, true, nil)
	require.NoError(t, err)
	next := f.commit(t, fam, l.v.ID, "dense.v3", `{"n":3}`)
	assert.Equal(t, 3, next.Version)

	// Another variant of the same artifact counts from 0.
	other := f.variant(t, fam, l.a.ID, "dense.other")
	assert.Equal(t, 0, f.commit(t, fam, other.ID, "dense.other.v0", `{}`).Version)

	for i := range 4 {
		got, err := f.st.RevisionByVersion(ctx, f.p, fam, l.v.ID, i)
		require.NoError(t, err)
		require.NotNil(t, got, "version %d", i)
		assert.Equal(t, i, got.Version)
	}
	latest, err := f.st.LatestRevision(ctx, f.p, fam, l.v.ID)
	require.NoError(t, err)
	assert.Equal(t, next.ID, latest.ID)
}

func testLatestRevisionCountsArchivedOnes(t *testing.T, f *fixture) {
	ctx, fam := context.Background(), versioned.Workflows
	l := f.lineage(t, fam, "latest", 2)
	_, err := f.st.ArchiveRevision(ctx, f.p, fam, l.revs[1].ID, true, nil)
	require.NoError(t, err)
	got, err := f.st.LatestRevision(ctx, f.p, fam, l.v.ID)
	require.NoError(t, err)
	assert.Equal(t, l.revs[1].ID, got.ID)
}

// testTheHeadIsTheLastCommitNotTheNewestStamp: the service makes a
// revision's id and stamps before its commit waits for the variant lock,
// so a commit that waited lands after one stamped later. The latest
// revision, the head check sees and the log follow the order commits
// landed (the version): by stamp, the head was the earlier commit and a
// delta on it dropped what the later one had written.
func testTheHeadIsTheLastCommitNotTheNewestStamp(t *testing.T, f *fixture) {
	ctx, fam := context.Background(), versioned.Workflows
	l := f.lineage(t, fam, "stamps", 0)
	waited := f.revision(l.v.ID, "stamps.waited", `{"who":"waited"}`) // stamped first, lands second
	first := f.revision(l.v.ID, "stamps.first", `{"who":"first"}`)
	first.CreatedAt = waited.CreatedAt.Add(time.Second)
	first.ID = versioned.NewID()
	_, err := f.st.Commit(ctx, f.p, fam, first, nil, nil)
	require.NoError(t, err)
	got, err := f.st.Commit(ctx, f.p, fam, waited, nil, nil)
	require.NoError(t, err)
	require.Equal(t, 1, got.Version)

	latest, err := f.st.LatestRevision(ctx, f.p, fam, l.v.ID)
	require.NoError(t, err)
	assert.Equal(t, waited.ID, latest.ID, "LatestRevision is the last commit")
	var head *versioned.Revision
	_, err = f.st.Commit(ctx, f.p, fam, f.revision(l.v.ID, "stamps.next", `{}`), nil,
		func(h *versioned.Revision, _ int) error { head = h; return nil })
	require.NoError(t, err)
	require.NotNil(t, head)
	assert.Equal(t, waited.ID, head.ID, "check's head is the last commit")

	next, err := f.st.RevisionBySlug(ctx, f.p, fam, "stamps.next")
	require.NoError(t, err)
	log, err := f.st.Log(ctx, f.p, fam, next, 10)
	require.NoError(t, err)
	assert.Equal(t, []uuid.UUID{next.ID, waited.ID, first.ID}, ids(log, revID), "the log follows versions")
	log, err = f.st.Log(ctx, f.p, fam, got, 10)
	require.NoError(t, err)
	assert.Equal(t, []uuid.UUID{waited.ID, first.ID}, ids(log, revID), "a log from the last commit includes the one before it")
}

// testCommitCheckSeesTheNonArchivedHeadAndTheCount: check gets the count
// of all revisions and the newest non-archived one; its error is returned
// as it is and nothing of the commit is stored, testcases included; it may
// complete the revision.
func testCommitCheckSeesTheNonArchivedHeadAndTheCount(t *testing.T, f *fixture) {
	ctx, fam := context.Background(), versioned.Testsets
	l := f.lineage(t, fam, "check", 3)
	_, err := f.st.ArchiveRevision(ctx, f.p, fam, l.revs[2].ID, true, nil)
	require.NoError(t, err)

	var head *versioned.Revision
	count := -1
	refuse := errors.New("refused by check")
	set := uuid.New()
	tc := versioned.Testcase{ID: uuid.New(), SetID: &set, Data: json.RawMessage(`{"x":1}`), CreatedAt: now()}
	_, err = f.st.Commit(ctx, f.p, fam, f.revision(l.v.ID, "check.refused", `{}`), []versioned.Testcase{tc},
		func(h *versioned.Revision, n int) error { head, count = h, n; return refuse })
	require.ErrorIs(t, err, refuse)
	assert.Same(t, refuse, err, "check's error is returned as it is")
	require.NotNil(t, head)
	assert.Equal(t, l.revs[1].ID, head.ID, "the head is the newest non-archived revision")
	assert.Equal(t, 3, count, "the count includes archived revisions")
	assert.Equal(t, 3, f.countRevisions(t, l.v.ID), "a refused commit stores no revision")
	tcs, err := f.st.Testcases(ctx, f.p, []uuid.UUID{tc.ID})
	require.NoError(t, err)
	assert.Empty(t, tcs, "a refused commit stores no testcase")
	r, err := f.st.RevisionBySlug(ctx, f.p, fam, "check.refused")
	requireNotFound(t, r, err, "refused revision")

	// check may complete r.
	got, err := f.st.Commit(ctx, f.p, fam, f.revision(l.v.ID, "check.completed", `{}`), nil,
		func(_ *versioned.Revision, _ int) error { return nil })
	require.NoError(t, err)
	assert.Equal(t, 3, got.Version)

	empty := f.variant(t, fam, l.a.ID, "check.empty")
	_, err = f.st.Commit(ctx, f.p, fam, f.revision(empty.ID, "check.first", `{}`), nil,
		func(h *versioned.Revision, n int) error { head, count = h, n; return nil })
	require.NoError(t, err)
	assert.Nil(t, head, "no head on an empty variant")
	assert.Equal(t, 0, count)
}

func testCommitErrorsNameTheirCause(t *testing.T, f *fixture) {
	ctx, fam := context.Background(), versioned.Workflows
	l := f.lineage(t, fam, "errs", 1)
	otherArtifact := f.artifact(t, fam, "errs-other")

	missing := uuid.New()
	_, err := f.st.Commit(ctx, f.p, fam, f.revision(missing, "errs.orphan", `{}`), nil, nil)
	requireCode(t, err, errs.NotFound, "registry.parent_missing")
	assert.Contains(t, errs.From(err).Msg, missing.String())

	r := f.revision(l.v.ID, "errs.wrong-artifact", `{}`)
	r.ArtifactID = otherArtifact.ID
	_, err = f.st.Commit(ctx, f.p, fam, r, nil, nil)
	requireCode(t, err, errs.NotFound, "registry.parent_missing")
	assert.Contains(t, errs.From(err).Msg, otherArtifact.ID.String())

	_, err = f.st.Commit(ctx, f.p, fam, f.revision(l.v.ID, l.revs[0].Slug, `{}`), nil, nil)
	requireCode(t, err, errs.Conflict, "registry.slug_taken")
	assert.Equal(t, 1, f.countRevisions(t, l.v.ID), "no failed commit stored a revision")

	r = f.revision(l.v.ID, "errs.right-artifact", `{}`)
	r.ArtifactID = l.a.ID
	got, err := f.st.Commit(ctx, f.p, fam, r, nil, nil)
	require.NoError(t, err)
	assert.Equal(t, 1, got.Version, "failed commits took no version")
}

// testConcurrentCommitsOnOneVariantAreSerialised: the variant lock makes
// concurrent commits take distinct, dense versions, none failing.
func testConcurrentCommitsOnOneVariantAreSerialised(t *testing.T, f *fixture) {
	fam := versioned.Workflows
	l := f.lineage(t, fam, "race", 0)
	const n = 8
	versions := make([]int, n)
	errsOf := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := f.st.Commit(context.Background(), f.p, fam, f.revision(l.v.ID, fmt.Sprintf("race.%d", i), `{}`), nil, nil)
			errsOf[i] = err
			if err == nil {
				versions[i] = r.Version
			}
		}()
	}
	wg.Wait()
	seen := map[int]bool{}
	for i := range n {
		require.NoError(t, errsOf[i])
		seen[versions[i]] = true
	}
	for v := range n {
		assert.True(t, seen[v], "version %d taken", v)
	}
}

// testCommitWaitsAtMostTheLockTimeout: a commit on a variant whose lock
// another transaction holds fails with ErrCommitLockTimeout once the
// store's timeout passes, and writes nothing.
func testCommitWaitsAtMostTheLockTimeout(t *testing.T, f *fixture) {
	f = f.with(pgstore.WithLockTimeout(100 * time.Millisecond))
	ctx, fam := context.Background(), versioned.Workflows
	l := f.lineage(t, fam, "locked", 1)

	holder, err := f.pool.Begin(ctx)
	require.NoError(t, err)
	defer holder.Rollback(ctx) //nolint:errcheck // released either way
	_, err = holder.Exec(ctx, `SELECT 1 FROM variants WHERE id = $1 FOR UPDATE`, l.v.ID)
	require.NoError(t, err)

	set := uuid.New()
	tc := versioned.Testcase{ID: uuid.New(), SetID: &set, Data: json.RawMessage(`{}`), CreatedAt: now()}
	_, err = f.st.Commit(ctx, f.p, fam, f.revision(l.v.ID, "locked.v1", `{}`), []versioned.Testcase{tc}, nil)
	require.ErrorIs(t, err, versioned.ErrCommitLockTimeout)
	assert.Equal(t, errs.Unavailable, errs.KindOf(err))

	require.NoError(t, holder.Rollback(ctx))
	assert.Equal(t, 1, f.countRevisions(t, l.v.ID))
	tcs, err := f.st.Testcases(ctx, f.p, []uuid.UUID{tc.ID})
	require.NoError(t, err)
	assert.Empty(t, tcs)
	// The lock is free again: the same commit goes through.
	got, err := f.st.Commit(ctx, f.p, fam, f.revision(l.v.ID, "locked.v1", `{}`), nil, nil)
	require.NoError(t, err)
	assert.Equal(t, 1, got.Version)
}

// testCommitLockIsHeldUntilTheOuterTransactionEnds: inside InTx, Commit's
// variant lock outlives the commit's savepoint; another commit on the
// variant times out until the outer transaction ends.
func testCommitLockIsHeldUntilTheOuterTransactionEnds(t *testing.T, f *fixture) {
	f = f.with(pgstore.WithLockTimeout(100 * time.Millisecond))
	ctx, fam := context.Background(), versioned.Workflows
	l := f.lineage(t, fam, "outer", 1)
	other := pgstore.New(f.pool, pgstore.WithLockTimeout(100*time.Millisecond))

	err := f.st.InTx(ctx, func(tx versioned.Store) error {
		if _, err := tx.Commit(ctx, f.p, fam, f.revision(l.v.ID, "outer.v1", `{}`), nil, nil); err != nil {
			return err
		}
		_, err := other.Commit(ctx, f.p, fam, f.revision(l.v.ID, "outer.blocked", `{}`), nil, nil)
		assert.ErrorIs(t, err, versioned.ErrCommitLockTimeout, "the lock is still held after the savepoint")
		return nil
	})
	require.NoError(t, err)
	got, err := other.Commit(ctx, f.p, fam, f.revision(l.v.ID, "outer.v2", `{}`), nil, nil)
	require.NoError(t, err)
	assert.Equal(t, 2, got.Version)
}

// testUpdateAndArchiveVariantWaitForTheCommitLock: while a commit holds
// the variant lock, UpdateVariant and ArchiveVariant wait (here until
// their context gives up) and change nothing; once it is released they
// go through.
func testUpdateAndArchiveVariantWaitForTheCommitLock(t *testing.T, f *fixture) {
	ctx, fam := context.Background(), versioned.Workflows
	l := f.lineage(t, fam, "waits", 1)
	release := make(chan struct{})
	locked := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- f.st.InTx(ctx, func(tx versioned.Store) error {
			if _, err := tx.Commit(ctx, f.p, fam, f.revision(l.v.ID, "waits.v1", `{}`), nil, nil); err != nil {
				return err
			}
			close(locked)
			<-release
			return nil
		})
	}()
	<-locked

	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	got, err := f.st.UpdateVariant(short, f.p, fam, &versioned.Variant{ID: l.v.ID, Header: versioned.Header{Name: str("edited")}})
	cancel()
	require.Error(t, err, "UpdateVariant waits for the lock: %+v", got)
	short, cancel = context.WithTimeout(ctx, 300*time.Millisecond)
	_, err = f.st.ArchiveVariant(short, f.p, fam, l.v.ID, true, nil)
	cancel()
	require.Error(t, err, "ArchiveVariant waits for the lock")
	assert.Contains(t, err.Error(), "archive variant: ", "its errors are wrapped")

	close(release)
	require.NoError(t, <-done)
	v, err := f.st.Variant(ctx, f.p, fam, l.v.ID)
	require.NoError(t, err)
	assert.Nil(t, v.Name, "the waiting update changed nothing")
	assert.Nil(t, v.DeletedAt, "the waiting archive changed nothing")
	got, err = f.st.UpdateVariant(ctx, f.p, fam, &versioned.Variant{ID: l.v.ID, Header: versioned.Header{Name: str("edited")}})
	require.NoError(t, err)
	assert.Equal(t, "edited", *got.Name)
	got, err = f.st.ArchiveVariant(ctx, f.p, fam, l.v.ID, true, nil)
	require.NoError(t, err)
	assert.NotNil(t, got.DeletedAt)
}

// ---- transactions

func testInTxRollsBackOnErrorAndPanicAndNestsAsSavepoints(t *testing.T, f *fixture) {
	ctx, fam := context.Background(), versioned.Workflows
	mk := func(slug string) *versioned.Artifact {
		return &versioned.Artifact{ID: versioned.NewID(), Slug: slug, Lifecycle: versioned.Lifecycle{CreatedAt: now()}}
	}
	exists := func(slug string) bool {
		a, err := f.st.ArtifactBySlug(ctx, f.p, fam, slug)
		if errors.Is(err, versioned.ErrNotFound) {
			return false
		}
		require.NoError(t, err)
		return a != nil
	}

	boom := errors.New("boom")
	err := f.st.InTx(ctx, func(tx versioned.Store) error {
		require.NoError(t, tx.CreateArtifact(ctx, f.p, fam, mk("rolled-back")))
		return boom
	})
	assert.Same(t, boom, err, "fn's error is returned as it is")
	assert.False(t, exists("rolled-back"))

	assert.Panics(t, func() {
		_ = f.st.InTx(ctx, func(tx versioned.Store) error {
			require.NoError(t, tx.CreateArtifact(ctx, f.p, fam, mk("panicked")))
			panic("boom")
		})
	})
	assert.False(t, exists("panicked"))

	err = f.st.InTx(ctx, func(tx versioned.Store) error {
		require.NoError(t, tx.CreateArtifact(ctx, f.p, fam, mk("outer")))
		inner := tx.InTx(ctx, func(tx2 versioned.Store) error {
			require.NoError(t, tx2.CreateArtifact(ctx, f.p, fam, mk("inner")))
			return boom
		})
		assert.Same(t, boom, inner)
		// A failed statement inside a savepoint leaves the outer one usable.
		dup := tx.InTx(ctx, func(tx2 versioned.Store) error { return tx2.CreateArtifact(ctx, f.p, fam, mk("outer")) })
		requireCode(t, dup, errs.Conflict, "registry.slug_taken")
		return tx.CreateArtifact(ctx, f.p, fam, mk("outer-after"))
	})
	require.NoError(t, err)
	assert.True(t, exists("outer"))
	assert.False(t, exists("inner"), "the inner savepoint was rolled back")
	assert.True(t, exists("outer-after"))
}

// ---- revisions

func testUpdateRevisionChangesTheHeaderNeverThePayload(t *testing.T, f *fixture) {
	ctx, fam := context.Background(), versioned.Workflows
	l := f.lineage(t, fam, "ur", 1)
	r := *l.revs[0]
	r.Name, r.Flags = str("renamed"), json.RawMessage(`{"f":true}`)
	r.Data, r.Slug, r.Version = json.RawMessage(`{"changed":true}`), "changed", 9
	got, err := f.st.UpdateRevision(ctx, f.p, fam, &r)
	require.NoError(t, err)
	require.NotNil(t, got)
	assert.Equal(t, "renamed", *got.Name)
	assert.JSONEq(t, `{"f":true}`, string(got.Flags))
	assert.JSONEq(t, `{"n":0}`, string(got.Data), "data never changes")
	assert.Equal(t, l.revs[0].Slug, got.Slug, "the slug never changes")
	assert.Equal(t, 0, got.Version, "the version never changes")
	assert.NotNil(t, got.UpdatedAt)
}

// testLogIsNewestFirstFromTheRevisionSkippingOlderArchivedOnes.
func testLogIsNewestFirstFromTheRevisionSkippingOlderArchivedOnes(t *testing.T, f *fixture) {
	ctx, fam := context.Background(), versioned.Workflows
	l := f.lineage(t, fam, "log", 5)
	for _, i := range []int{1, 3} {
		_, err := f.st.ArchiveRevision(ctx, f.p, fam, l.revs[i].ID, true, nil)
		require.NoError(t, err)
	}
	got, err := f.st.Log(ctx, f.p, fam, l.revs[3], 10)
	require.NoError(t, err)
	assert.Equal(t, []uuid.UUID{l.revs[3].ID, l.revs[2].ID, l.revs[0].ID}, ids(got, revID),
		"the starting revision even though archived, then older non-archived ones")
	got, err = f.st.Log(ctx, f.p, fam, l.revs[4], 2)
	require.NoError(t, err)
	assert.Equal(t, []uuid.UUID{l.revs[4].ID, l.revs[2].ID}, ids(got, revID), "at most depth")
}

// ---- queries

func testQueriesLeaveArchivedRowsOutUnlessAsked(t *testing.T, f *fixture) {
	ctx, fam := context.Background(), versioned.Workflows
	live := f.lineage(t, fam, "live", 2)
	gone := f.lineage(t, fam, "gone", 1)
	_, err := f.st.ArchiveArtifact(ctx, f.p, fam, gone.a.ID, true, nil)
	require.NoError(t, err)
	_, err = f.st.ArchiveVariant(ctx, f.p, fam, gone.v.ID, true, nil)
	require.NoError(t, err)
	_, err = f.st.ArchiveRevision(ctx, f.p, fam, live.revs[1].ID, true, nil)
	require.NoError(t, err)

	as, err := f.st.QueryArtifacts(ctx, f.p, fam, versioned.Query{})
	require.NoError(t, err)
	assert.ElementsMatch(t, []uuid.UUID{live.a.ID}, ids(as, artID))
	as, err = f.st.QueryArtifacts(ctx, f.p, fam, versioned.Query{IncludeArchived: true})
	require.NoError(t, err)
	assert.ElementsMatch(t, []uuid.UUID{live.a.ID, gone.a.ID}, ids(as, artID))

	vs, err := f.st.QueryVariants(ctx, f.p, fam, versioned.Query{})
	require.NoError(t, err)
	assert.ElementsMatch(t, []uuid.UUID{live.v.ID}, ids(vs, varID))
	vs, err = f.st.QueryVariants(ctx, f.p, fam, versioned.Query{IncludeArchived: true})
	require.NoError(t, err)
	assert.ElementsMatch(t, []uuid.UUID{live.v.ID, gone.v.ID}, ids(vs, varID))

	rs, err := f.st.QueryRevisions(ctx, f.p, fam, versioned.Query{})
	require.NoError(t, err)
	assert.ElementsMatch(t, []uuid.UUID{live.revs[0].ID}, ids(rs, revID))
	rs, err = f.st.QueryRevisions(ctx, f.p, fam, versioned.Query{IncludeArchived: true})
	require.NoError(t, err)
	assert.ElementsMatch(t, []uuid.UUID{live.revs[0].ID, live.revs[1].ID, gone.revs[0].ID}, ids(rs, revID))

	none, err := f.st.QueryArtifacts(ctx, f.p, fam, versioned.Query{Filter: versioned.Filter{Slug: str("nothing")}})
	require.NoError(t, err)
	assert.NotNil(t, none, "no match is an empty, non-nil slice")
	assert.Empty(t, none)
}

func testQueryFiltersMatchAsDocumented(t *testing.T, f *fixture) {
	ctx, fam := context.Background(), versioned.Workflows
	mk := func(slug, name string, flags, tags string) *versioned.Artifact {
		a := &versioned.Artifact{ID: versioned.NewID(), Slug: slug, Header: versioned.Header{Name: &name}, Lifecycle: versioned.Lifecycle{CreatedAt: now()}}
		if flags != "" {
			a.Flags = json.RawMessage(flags)
		}
		if tags != "" {
			a.Tags = json.RawMessage(tags)
		}
		require.NoError(t, f.st.CreateArtifact(ctx, f.p, fam, a))
		return a
	}
	folder := uuid.New()
	alpha := mk("alpha", "The Alpha_1%", `{"is_evaluator":true,"x":1}`, `{"team":"a","env":"prod"}`)
	beta := mk("beta", "beta two", `{"is_evaluator":false}`, `{"team":"b"}`)
	gamma := mk("gamma", "GAMMA", "", "")
	_, err := f.st.UpdateArtifact(ctx, f.p, fam, &versioned.Artifact{ID: gamma.ID, FolderID: &folder, Header: gamma.Header})
	require.NoError(t, err)

	q := func(filter versioned.Filter, refs ...versioned.Ref) []uuid.UUID {
		t.Helper()
		as, err := f.st.QueryArtifacts(ctx, f.p, fam, versioned.Query{Filter: filter, ArtifactRefs: refs})
		require.NoError(t, err)
		return ids(as, artID)
	}
	assert.ElementsMatch(t, []uuid.UUID{alpha.ID}, q(versioned.Filter{Name: str("alpha")}), "name: case-insensitive substring")
	assert.ElementsMatch(t, []uuid.UUID{alpha.ID}, q(versioned.Filter{Name: str("_1%")}), "name: LIKE wildcards are literal")
	assert.Empty(t, q(versioned.Filter{Name: str("a_p")}), "name: _ is not a wildcard")
	assert.ElementsMatch(t, []uuid.UUID{beta.ID}, q(versioned.Filter{Slug: str("beta")}))
	assert.ElementsMatch(t, []uuid.UUID{alpha.ID, gamma.ID}, q(versioned.Filter{Slugs: []string{"alpha", "gamma"}}))
	assert.ElementsMatch(t, []uuid.UUID{alpha.ID}, q(versioned.Filter{Flags: json.RawMessage(`{"is_evaluator":true}`)}), "flags: containment")
	assert.ElementsMatch(t, []uuid.UUID{alpha.ID}, q(versioned.Filter{Tags: json.RawMessage(`{"env":"prod"}`)}), "tags: containment")
	assert.ElementsMatch(t, []uuid.UUID{gamma.ID}, q(versioned.Filter{HasFolder: true, FolderID: &folder}))
	assert.ElementsMatch(t, []uuid.UUID{alpha.ID, beta.ID}, q(versioned.Filter{HasFolder: true}), "a null folder is the root")
	assert.ElementsMatch(t, []uuid.UUID{alpha.ID, beta.ID, gamma.ID}, q(versioned.Filter{}), "no folder filter without HasFolder")
	// Artifact refs: ids AND slugs.
	assert.ElementsMatch(t, []uuid.UUID{alpha.ID}, q(versioned.Filter{}, versioned.Ref{ID: &alpha.ID}, versioned.Ref{Slug: str("alpha")}))
	assert.Empty(t, q(versioned.Filter{}, versioned.Ref{ID: &alpha.ID}, versioned.Ref{Slug: str("beta")}), "ids and slugs must both match")

	// Variants: any artifact ref, any variant ref (id OR slug).
	va := f.variant(t, fam, alpha.ID, "alpha.v")
	vb := f.variant(t, fam, beta.ID, "beta.v")
	vs, err := f.st.QueryVariants(ctx, f.p, fam, versioned.Query{ArtifactRefs: []versioned.Ref{{ID: &alpha.ID}, {Slug: str("beta")}}})
	require.NoError(t, err)
	assert.ElementsMatch(t, []uuid.UUID{va.ID, vb.ID}, ids(vs, varID))
	vs, err = f.st.QueryVariants(ctx, f.p, fam, versioned.Query{VariantRefs: []versioned.Ref{{ID: &va.ID}, {Slug: str("beta.v")}}})
	require.NoError(t, err)
	assert.ElementsMatch(t, []uuid.UUID{va.ID, vb.ID}, ids(vs, varID), "variant refs: id or slug")

	// Revisions: author, message; revision refs ids AND slugs.
	ra := f.commit(t, fam, va.ID, "alpha.r0", `{}`)
	other := uuid.New()
	rb := f.revision(vb.ID, "beta.r0", `{}`)
	rb.Author, rb.Message = &other, str("Fix the PROMPT")
	rb, err = f.st.Commit(ctx, f.p, fam, rb, nil, nil)
	require.NoError(t, err)
	qr := func(q versioned.Query) []uuid.UUID {
		t.Helper()
		rs, err := f.st.QueryRevisions(ctx, f.p, fam, q)
		require.NoError(t, err)
		return ids(rs, revID)
	}
	assert.ElementsMatch(t, []uuid.UUID{rb.ID}, qr(versioned.Query{Filter: versioned.Filter{Author: &other}}))
	assert.ElementsMatch(t, []uuid.UUID{ra.ID, rb.ID}, qr(versioned.Query{Filter: versioned.Filter{Authors: []uuid.UUID{other, f.user}}}))
	assert.ElementsMatch(t, []uuid.UUID{rb.ID}, qr(versioned.Query{Filter: versioned.Filter{Message: str("prompt")}}))
	assert.ElementsMatch(t, []uuid.UUID{ra.ID}, qr(versioned.Query{ArtifactRefs: []versioned.Ref{{Slug: str("alpha")}}}))
	assert.ElementsMatch(t, []uuid.UUID{rb.ID}, qr(versioned.Query{RevisionRefs: []versioned.Ref{{ID: &rb.ID}, {Slug: str("beta.r0")}}}))
	assert.Empty(t, qr(versioned.Query{RevisionRefs: []versioned.Ref{{ID: &rb.ID}, {Slug: str("alpha.r0")}}}), "revision refs: ids and slugs must both match")
}

// testQueryWindowingOrdersByIDAndPages: with windowing, rows come by id
// (creation), descending unless ascending is asked, after the cursor,
// limited.
func testQueryWindowingOrdersByIDAndPages(t *testing.T, f *fixture) {
	ctx, fam := context.Background(), versioned.Workflows
	l := f.lineage(t, fam, "win", 5)
	all := ids(func() []versioned.Revision {
		out := make([]versioned.Revision, len(l.revs))
		for i, r := range l.revs {
			out[i] = *r
		}
		return out
	}(), revID)
	page := func(w versioned.Windowing) []uuid.UUID {
		t.Helper()
		rs, err := f.st.QueryRevisions(ctx, f.p, fam, versioned.Query{Windowing: &w})
		require.NoError(t, err)
		return ids(rs, revID)
	}
	two, asc := 2, "ascending"
	assert.Equal(t, []uuid.UUID{all[4], all[3]}, page(versioned.Windowing{Limit: &two}), "descending by default")
	assert.Equal(t, []uuid.UUID{all[2], all[1]}, page(versioned.Windowing{Limit: &two, Next: &all[3]}), "after the cursor")
	assert.Equal(t, []uuid.UUID{all[0], all[1]}, page(versioned.Windowing{Limit: &two, Order: &asc}))
	assert.Equal(t, []uuid.UUID{all[2], all[3]}, page(versioned.Windowing{Limit: &two, Order: &asc, Next: &all[1]}))
	zero := 0
	assert.Len(t, page(versioned.Windowing{Limit: &zero}), 1, "a limit below 1 is 1")
	assert.Equal(t, []uuid.UUID{all[4], all[3], all[2], all[1], all[0]}, page(versioned.Windowing{}), "no limit: all, ordered")

	oldest, newest := l.revs[1].CreatedAt, l.revs[3].CreatedAt
	assert.Equal(t, []uuid.UUID{all[3], all[2], all[1]}, page(versioned.Windowing{Oldest: &oldest, Newest: &newest}), "within newest/oldest on created_at")
}

// ---- testcases

// testTestcasesAreStoredOnceByID: blobs are content-addressed; a commit
// naming a stored id keeps the first row, whatever it carries, and a
// repeated id within one commit is stored once.
func testTestcasesAreStoredOnceByID(t *testing.T, f *fixture) {
	ctx, fam := context.Background(), versioned.Testsets
	l := f.lineage(t, fam, "tcs", 0)
	set := l.a.ID
	first := now()
	id1, id2 := uuid.New(), uuid.New()
	tcs := []versioned.Testcase{
		{ID: id1, SetID: &set, Data: json.RawMessage(`{"b":2, "a":1.50}`), Tags: json.RawMessage(`{"t":1}`), CreatedAt: first, CreatedByID: &f.user},
		{ID: id2, SetID: &set, Data: json.RawMessage(`{"q":"two"}`), CreatedAt: first},
		{ID: id1, SetID: &set, Data: json.RawMessage(`{"dup":true}`), CreatedAt: first},
	}
	r := f.revision(l.v.ID, "tcs.v0", "")
	r.TestcaseIDs = []uuid.UUID{id1, id2, id1}
	got, err := f.st.Commit(ctx, f.p, fam, r, tcs, nil)
	require.NoError(t, err)
	assert.Equal(t, []uuid.UUID{id1, id2, id1}, got.TestcaseIDs, "the revision keeps its ordered ids, repeats included")
	assert.Nil(t, got.Data)

	// A second commit with id1 under other data and stamp.
	r2 := f.revision(l.v.ID, "tcs.v1", "")
	r2.TestcaseIDs = []uuid.UUID{id1}
	later := first.Add(time.Hour)
	_, err = f.st.Commit(ctx, f.p, fam, r2, []versioned.Testcase{{ID: id1, SetID: &set, Data: json.RawMessage(`{"other":true}`), CreatedAt: later}}, nil)
	require.NoError(t, err)

	var n int
	require.NoError(t, f.pool.QueryRow(ctx, `SELECT count(*) FROM testcases WHERE project_id = $1`, f.p).Scan(&n))
	assert.Equal(t, 2, n, "each id is stored once")

	missing := uuid.New()
	out, err := f.st.Testcases(ctx, f.p, []uuid.UUID{id2, missing, id1, id2})
	require.NoError(t, err)
	require.Len(t, out, 3, "the missing id is left out")
	assert.Equal(t, []uuid.UUID{id2, id1, id2}, []uuid.UUID{out[0].ID, out[1].ID, out[2].ID}, "in the order of ids, repeats repeated")
	assert.Equal(t, `{"b":2, "a":1.50}`, string(out[1].Data), "the first row is kept, byte for byte")
	assert.JSONEq(t, `{"t":1}`, string(out[1].Tags))
	assert.True(t, first.Equal(out[1].CreatedAt), "the first stamp is kept")
	assert.Equal(t, &f.user, out[1].CreatedByID)
	assert.Equal(t, &set, out[1].SetID)

	empty, err := f.st.Testcases(ctx, f.p, nil)
	require.NoError(t, err)
	assert.NotNil(t, empty)
	assert.Empty(t, empty)
}

// testTestcasesBySetPagesByCreation: every blob ever committed to the set,
// archived revisions included, by (created_at, id), with both cursors.
func testTestcasesBySetPagesByCreation(t *testing.T, f *fixture) {
	ctx, fam := context.Background(), versioned.Testsets
	l := f.lineage(t, fam, "set", 0)
	set := l.a.ID
	base := now()
	var all []uuid.UUID // in (created_at, id) order
	for i := range 3 {
		stamp := base.Add(time.Duration(i) * time.Second)
		a, b := uuid.New(), uuid.New()
		if string(b[:]) < string(a[:]) {
			a, b = b, a
		}
		r := f.revision(l.v.ID, fmt.Sprintf("set.v%d", i), "")
		r.TestcaseIDs = []uuid.UUID{b, a}
		rev, err := f.st.Commit(ctx, f.p, fam, r, []versioned.Testcase{
			{ID: b, SetID: &set, Data: json.RawMessage(`{}`), CreatedAt: stamp},
			{ID: a, SetID: &set, Data: json.RawMessage(`{}`), CreatedAt: stamp},
		}, nil)
		require.NoError(t, err)
		all = append(all, a, b)
		if i == 0 {
			_, err = f.st.ArchiveRevision(ctx, f.p, fam, rev.ID, true, nil)
			require.NoError(t, err)
		}
	}
	otherSet := uuid.New()
	r := f.revision(l.v.ID, "set.other", "")
	_, err := f.st.Commit(ctx, f.p, fam, r, []versioned.Testcase{{ID: uuid.New(), SetID: &otherSet, Data: json.RawMessage(`{}`), CreatedAt: base}}, nil)
	require.NoError(t, err)

	page := func(w *versioned.Windowing) []uuid.UUID {
		t.Helper()
		tcs, err := f.st.TestcasesBySet(ctx, f.p, set, w)
		require.NoError(t, err)
		out := make([]uuid.UUID, len(tcs))
		for i, tc := range tcs {
			out[i] = tc.ID
		}
		return out
	}
	rev := func(s []uuid.UUID) []uuid.UUID {
		out := make([]uuid.UUID, len(s))
		for i, v := range s {
			out[len(s)-1-i] = v
		}
		return out
	}
	assert.Equal(t, all, page(nil), "ascending by (created_at, id), archived revisions' blobs included")
	desc, two := "descending", 2
	assert.Equal(t, rev(all), page(&versioned.Windowing{Order: &desc}))
	assert.Equal(t, all[:2], page(&versioned.Windowing{Limit: &two}))
	stamp1 := base.Add(time.Second)
	assert.Equal(t, all[3:5], page(&versioned.Windowing{Limit: &two, Oldest: &stamp1, Next: &all[2]}), "after the (oldest, next) pair")
	assert.Equal(t, rev(all[:2]), page(&versioned.Windowing{Limit: &two, Order: &desc, Oldest: &stamp1, Next: &all[2]}), "before the pair, descending")
	newest := base
	assert.Equal(t, all, page(&versioned.Windowing{Newest: &newest}), "Newest is not used")
}
