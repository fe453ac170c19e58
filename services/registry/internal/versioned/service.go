package versioned

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/scope"
)

// Store is the persistence the registry needs; pgstore implements it.
//
// The contract every method shares, unless its comment says otherwise:
//
//   - Scope. Every row is read and written within the project p and, for
//     artifacts, variants and revisions, the family f. A row of another
//     project or family is "not found", never an error that discloses it.
//   - Not found. A getter (Artifact, Variant, Revision and their By*
//     forms, DefaultVariant, LatestRevision) and an update or archive of a
//     row that does not exist return nil, ErrNotFound (compare with
//     errors.Is). Service maps it once (found) back to nil, nil for its
//     callers, which turn that into their own answer.
//   - Archived rows. Getters and updates see archived rows (deleted_at set)
//     like any other; only the Query* methods leave them out, unless
//     Query.IncludeArchived is set.
//   - Errors. Errors named below are the registry's own (errs kinds, mapped
//     to HTTP by the caller); anything else is a database or connection
//     failure, wrapped or as pgx returned it, and means 5xx.
//   - Locks. Besides Commit's variant lock, a method takes only the row
//     locks its own INSERT or UPDATE takes. Outside InTx they end with the
//     statement (or with the method's own transaction); inside InTx they are
//     held until that transaction ends.
//   - Lists. Query* methods return an empty, non-nil slice when nothing
//     matches. Without Windowing they apply no order and no limit; with it,
//     rows are ordered by id (UUIDv7, so by creation), descending unless
//     Order is "ascending", after the Next cursor, within Newest/Oldest on
//     created_at, and limited to Windowing.LimitValue.
type Store interface {
	// CreateArtifact inserts a with a.ID, a.Slug, its header, folder and
	// creation stamp as given (the caller generates id and stamp).
	// Errors: registry.ErrSlugTaken when the slug is taken in the project
	// and family, and also when a.ID already exists in the project (any
	// family): both are unique violations. folder_id is not checked.
	CreateArtifact(ctx context.Context, p uuid.UUID, f Family, a *Artifact) error
	// Artifact returns the artifact with id, archived or not; ErrNotFound
	// if there is none.
	Artifact(ctx context.Context, p uuid.UUID, f Family, id uuid.UUID) (*Artifact, error)
	// ArtifactBySlug returns the artifact with slug, archived or not;
	// ErrNotFound if there is none.
	ArtifactBySlug(ctx context.Context, p uuid.UUID, f Family, slug string) (*Artifact, error)
	// UpdateArtifact replaces the header (name, description, flags, tags,
	// meta) and folder of the artifact a.ID, stamps updated_at with the
	// database clock and updated_by_id with a.UpdatedByID, and returns the
	// stored row. The slug and the archive marker do not change.
	// ErrNotFound if the artifact does not exist. No registry error is mapped here.
	UpdateArtifact(ctx context.Context, p uuid.UUID, f Family, a *Artifact) (*Artifact, error)
	// ArchiveArtifact sets (archived) or clears deleted_at and
	// deleted_by_id of the artifact only: its variants and revisions keep
	// their own markers. It returns the stored row; ErrNotFound if the
	// artifact does not exist.
	ArchiveArtifact(ctx context.Context, p uuid.UUID, f Family, id uuid.UUID, archived bool, by *uuid.UUID) (*Artifact, error)
	// QueryArtifacts lists artifacts matching q.Filter (name and
	// description by case-insensitive substring; slug, flags and tags by
	// equality or JSON containment; folder when Filter.HasFolder). Ids and
	// slugs of q.ArtifactRefs must both match (AND). Filter.Author, Date
	// and Message name revision columns and must be unset (the handlers
	// refuse them on artifact and variant queries with a 422).
	// Errors are wrapped "query artifacts: ...".
	QueryArtifacts(ctx context.Context, p uuid.UUID, f Family, q Query) ([]Artifact, error)

	// CreateVariant inserts v under the artifact v.ArtifactID (archived or
	// not) and, on success, overwrites *v with the stored row (artifact slug
	// and flags included).
	// Errors: registry.ErrParentMissing (level "artifact") when the artifact
	// does not exist in the project and family; registry.ErrSlugTaken when
	// the slug (or v.ID) is taken.
	CreateVariant(ctx context.Context, p uuid.UUID, f Family, v *Variant) error
	// Variant returns the variant with id, archived or not; ErrNotFound if
	// there is none.
	Variant(ctx context.Context, p uuid.UUID, f Family, id uuid.UUID) (*Variant, error)
	// VariantBySlug returns the variant with slug, archived or not;
	// ErrNotFound if there is none.
	VariantBySlug(ctx context.Context, p uuid.UUID, f Family, slug string) (*Variant, error)
	// DefaultVariant returns the artifact's first variant by (created_at,
	// id), archived or not; ErrNotFound if the artifact has none or does
	// not exist.
	DefaultVariant(ctx context.Context, p uuid.UUID, f Family, artifactID uuid.UUID) (*Variant, error)
	// UpdateVariant replaces the header of the variant v.ID (slug and
	// archive marker unchanged), stamps updated_at/updated_by_id, and
	// returns the stored row; ErrNotFound if the variant does not exist. The
	// UPDATE waits for a Commit that holds the variant's lock.
	UpdateVariant(ctx context.Context, p uuid.UUID, f Family, v *Variant) (*Variant, error)
	// ArchiveVariant sets or clears deleted_at of the variant and of every
	// one of its revisions, in one transaction (a savepoint inside InTx).
	// Unarchiving therefore also unarchives revisions that were archived
	// one by one before. It returns the stored variant; ErrNotFound if it
	// does not exist (nothing is changed then). Errors are wrapped "archive
	// variant: ...". Its UPDATEs lock the variant row and its revisions'
	// rows, so it waits for a Commit in progress on the variant (with
	// no lock timeout of its own).
	ArchiveVariant(ctx context.Context, p uuid.UUID, f Family, id uuid.UUID, archived bool, by *uuid.UUID) (*Variant, error)
	// QueryVariants lists variants matching q.Filter whose artifact matches
	// any of q.ArtifactRefs and which match any of q.VariantRefs (each by id
	// or slug); q.Filter applies as in QueryArtifacts, folder aside. The
	// artifact's own archive marker is not consulted. Errors are wrapped
	// "query variants: ...".
	QueryVariants(ctx context.Context, p uuid.UUID, f Family, q Query) ([]Variant, error)

	// Commit inserts r as the next revision of the variant r.VariantID and
	// returns the stored row. In one transaction (a savepoint inside
	// InTx) it:
	//
	//  1. locks the variant row (SELECT ... FOR UPDATE), waiting at most
	//     the store's lock timeout when one is configured (set with
	//     SET LOCAL, so inside InTx it lasts until the outer transaction
	//     ends); the lock is held until the transaction ends, the outer
	//     one inside InTx, so commits on one variant are serialised;
	//  2. fills r.ArtifactID from the variant when it is uuid.Nil;
	//  3. counts the variant's revisions, archived ones included, and, if
	//     check is not nil, calls check with that count and the head: the
	//     newest (highest version) non-archived revision, or nil (not
	//     LatestRevision, which counts archived ones). check may refuse
	//     the commit with any error, returned as it is, or complete r;
	//  4. inserts the testcase blobs tcs that are not stored yet (an
	//     existing id keeps its first row; set id and creation stamp are
	//     taken from tcs[0] for all);
	//  5. inserts r with Version = the count (dense from 0 per variant).
	//
	// Errors: registry.ErrParentMissing (level "variant") when the variant
	// does not exist in the project and family; registry.ErrVariantNotOfArtifact
	// when r.ArtifactID is set and is not the variant's artifact;
	// registry.ErrCommitLockTimeout when the lock wait exceeds the timeout
	// (nothing was written); registry.ErrSlugTaken when r.Slug is taken;
	// check's error. On any error nothing of the commit is stored.
	Commit(ctx context.Context, p uuid.UUID, f Family, r *Revision, tcs []Testcase, check func(head *Revision, count int) error) (*Revision, error)
	// Revision returns the revision with id, archived or not; ErrNotFound
	// if there is none.
	Revision(ctx context.Context, p uuid.UUID, f Family, id uuid.UUID) (*Revision, error)
	// RevisionBySlug returns the revision with slug, archived or not;
	// ErrNotFound if there is none.
	RevisionBySlug(ctx context.Context, p uuid.UUID, f Family, slug string) (*Revision, error)
	// RevisionByVersion returns the variant's revision with version,
	// archived or not; ErrNotFound if there is none.
	RevisionByVersion(ctx context.Context, p uuid.UUID, f Family, variantID uuid.UUID, version int) (*Revision, error)
	// LatestRevision returns the variant's newest revision, archived ones
	// included; ErrNotFound if it has none. Newest is the highest version,
	// the order in which commits took the variant lock: ids and creation
	// stamps are made before a commit waits for it, so a commit that
	// waited can land with an older stamp than the one before it.
	LatestRevision(ctx context.Context, p uuid.UUID, f Family, variantID uuid.UUID) (*Revision, error)
	// UpdateRevision replaces the header of the revision r.ID (name,
	// description, flags, tags, meta; data, testcases, slug and version
	// never change), stamps updated_at/updated_by_id, and returns the stored
	// row; ErrNotFound if the revision does not exist.
	UpdateRevision(ctx context.Context, p uuid.UUID, f Family, r *Revision) (*Revision, error)
	// ArchiveRevision sets or clears deleted_at of one revision and returns
	// the stored row; ErrNotFound if it does not exist.
	ArchiveRevision(ctx context.Context, p uuid.UUID, f Family, id uuid.UUID, archived bool, by *uuid.UUID) (*Revision, error)
	// QueryRevisions lists revisions matching q.Filter (author, date and
	// message included) whose artifact matches any of q.ArtifactRefs and
	// variant any of q.VariantRefs (each by id or slug); ids and slugs of
	// q.RevisionRefs must both match (AND). Errors are wrapped "query
	// revisions: ...".
	QueryRevisions(ctx context.Context, p uuid.UUID, f Family, q Query) ([]Revision, error)
	// Log returns, newest first by version, the revision from (even if
	// archived) and the older non-archived revisions of its variant, at
	// most depth in all. from must not be nil. Errors are wrapped "log
	// revisions: ...".
	Log(ctx context.Context, p uuid.UUID, f Family, from *Revision, depth int) ([]Revision, error)

	// Testcases returns the project's blobs with ids, in the order of ids
	// (a repeated id is repeated); ids that do not exist are left out, not
	// an error, so the result may be shorter than ids. Errors are wrapped
	// "load testcases: ...".
	Testcases(ctx context.Context, p uuid.UUID, ids []uuid.UUID) ([]Testcase, error)
	// InTx runs fn on a store bound to one transaction (a savepoint when
	// the store is already bound to one). If fn returns an error or
	// panics, everything fn wrote is rolled back and the error is returned
	// as it is; otherwise the transaction commits. Locks taken inside
	// (Commit's variant lock) are held until then. The store given to fn
	// must not be used after fn returns.
	InTx(ctx context.Context, fn func(Store) error) error
	// TestcasesBySet pages every blob ever committed to the testset setID
	// (archived revisions included), by (created_at, id), descending when
	// win.Order is "descending"; after win.Next (with win.Oldest, the
	// cursor is the pair (Oldest, Next)) and limited to win.LimitValue.
	// win.Newest is not used. An unknown set gives an empty slice. Errors
	// are wrapped "query testcases: ...".
	TestcasesBySet(ctx context.Context, p, setID uuid.UUID, win *Windowing) ([]Testcase, error)
}

// Service implements the git model over a Store.
type Service struct {
	store Store
	now   func() time.Time
}

// NewService returns a service over store.
func NewService(store Store) *Service { return &Service{store: store, now: time.Now} }

// InTx runs fn with a service whose writes form one transaction.
func (s *Service) InTx(ctx context.Context, fn func(*Service) error) error {
	return s.store.InTx(ctx, func(st Store) error { return fn(&Service{store: st, now: s.now}) })
}

// Now is the service clock, truncated to the microseconds PostgreSQL keeps.
func (s *Service) Now() time.Time { return s.now().UTC().Truncate(time.Microsecond) }

// NewID returns a UUIDv7, so ids sort by creation.
func NewID() uuid.UUID { return uuid.Must(uuid.NewV7()) }

// NewSlug returns a server-generated slug: 12 hex characters, as the
// compatible platform derives from uuid4().hex[-12:].
func NewSlug() string {
	id := uuid.New()
	return hex.EncodeToString(id[10:])
}

// found is the one place the store's ErrNotFound becomes the nil, nil the
// Service's callers expect of a missing row: each of them decides what
// "missing" answers (a 404, an empty list, a {count: 0}, a 400 naming the
// ref), so the sentinel stops here. Every Service method that returns a
// store getter's, update's or archive's row passes it through found.
func found[T any](v *T, err error) (*T, error) {
	if errors.Is(err, ErrNotFound) {
		return nil, nil
	}
	return v, err
}

func userOf(sc scope.Scope) *uuid.UUID {
	if sc.UserID == uuid.Nil {
		return nil
	}
	u := sc.UserID
	return &u
}

// ---- artifacts

// CreateArtifact stores a new artifact; a.ID is generated unless set.
func (s *Service) CreateArtifact(ctx context.Context, sc scope.Scope, f Family, a *Artifact) (*Artifact, error) {
	if a.ID == uuid.Nil {
		a.ID = NewID()
	}
	a.Lifecycle = Lifecycle{CreatedAt: s.Now(), CreatedByID: userOf(sc)}
	if err := s.store.CreateArtifact(ctx, sc.ProjectID, f, a); err != nil {
		return nil, err
	}
	return found(s.store.Artifact(ctx, sc.ProjectID, f, a.ID))
}

// Artifact returns the artifact, or nil.
func (s *Service) Artifact(ctx context.Context, sc scope.Scope, f Family, id uuid.UUID) (*Artifact, error) {
	return found(s.store.Artifact(ctx, sc.ProjectID, f, id))
}

// EditArtifact replaces the artifact's header and folder; nil if missing.
func (s *Service) EditArtifact(ctx context.Context, sc scope.Scope, f Family, a *Artifact) (*Artifact, error) {
	a.UpdatedByID = userOf(sc)
	return found(s.store.UpdateArtifact(ctx, sc.ProjectID, f, a))
}

// ArchiveArtifact sets or clears the artifact's archive marker; nil if missing.
func (s *Service) ArchiveArtifact(ctx context.Context, sc scope.Scope, f Family, id uuid.UUID, archived bool) (*Artifact, error) {
	return found(s.store.ArchiveArtifact(ctx, sc.ProjectID, f, id, archived, userOf(sc)))
}

// QueryArtifacts lists artifacts.
func (s *Service) QueryArtifacts(ctx context.Context, sc scope.Scope, f Family, q Query) ([]Artifact, error) {
	return s.store.QueryArtifacts(ctx, sc.ProjectID, f, q)
}

// ---- variants

// CreateVariant stores a new variant of v.ArtifactID.
func (s *Service) CreateVariant(ctx context.Context, sc scope.Scope, f Family, v *Variant) (*Variant, error) {
	if v.ID == uuid.Nil {
		v.ID = NewID()
	}
	v.Lifecycle = Lifecycle{CreatedAt: s.Now(), CreatedByID: userOf(sc)}
	if err := s.store.CreateVariant(ctx, sc.ProjectID, f, v); err != nil {
		return nil, err
	}
	return v, nil
}

// Variant returns the variant, or nil.
func (s *Service) Variant(ctx context.Context, sc scope.Scope, f Family, id uuid.UUID) (*Variant, error) {
	return found(s.store.Variant(ctx, sc.ProjectID, f, id))
}

// DefaultVariant returns the artifact's first variant, or nil.
func (s *Service) DefaultVariant(ctx context.Context, sc scope.Scope, f Family, artifactID uuid.UUID) (*Variant, error) {
	return found(s.store.DefaultVariant(ctx, sc.ProjectID, f, artifactID))
}

// EditVariant replaces the variant's header; nil if missing.
func (s *Service) EditVariant(ctx context.Context, sc scope.Scope, f Family, v *Variant) (*Variant, error) {
	v.UpdatedByID = userOf(sc)
	return found(s.store.UpdateVariant(ctx, sc.ProjectID, f, v))
}

// ArchiveVariant (un)archives the variant and its revisions; nil if missing.
func (s *Service) ArchiveVariant(ctx context.Context, sc scope.Scope, f Family, id uuid.UUID, archived bool) (*Variant, error) {
	return found(s.store.ArchiveVariant(ctx, sc.ProjectID, f, id, archived, userOf(sc)))
}

// QueryVariants lists variants.
func (s *Service) QueryVariants(ctx context.Context, sc scope.Scope, f Family, q Query) ([]Variant, error) {
	return s.store.QueryVariants(ctx, sc.ProjectID, f, q)
}

// ---- revisions

// Commit is one commit: the new revision's header, parents and payload, the
// testcase blobs it points at, and whether it must be the variant's first.
type Commit struct {
	Revision  Revision
	Testcases []Testcase
	Initial   bool
	// Check, if set, runs under the variant lock with the current head.
	Check func(head *Revision, count int) error
	// Prepare, if set, runs under the variant lock after Check and may
	// complete the revision from the head (a delta applied to the head must
	// see the head no concurrent commit can change).
	Prepare func(r *Revision, head *Revision, count int) error
}

// ErrInitialExists is the 409 of an initial commit on a variant that has one.
var ErrInitialExists = errs.New(errs.Conflict, "registry.initial_exists", "An initial revision already exists for this variant.")

// Commit stores the next revision of the variant.
func (s *Service) Commit(ctx context.Context, sc scope.Scope, f Family, c Commit) (*Revision, error) {
	r := c.Revision
	r.ID = NewID()
	if r.Slug == "" {
		r.Slug = NewSlug()
	}
	now := s.Now()
	r.Date, r.Author = now, userOf(sc)
	r.Lifecycle = Lifecycle{CreatedAt: now, CreatedByID: userOf(sc)}
	for i := range c.Testcases {
		c.Testcases[i].CreatedAt, c.Testcases[i].CreatedByID = now, userOf(sc)
	}
	check := c.Check
	if c.Prepare != nil {
		inner := check
		check = func(head *Revision, count int) error {
			if inner != nil {
				if err := inner(head, count); err != nil {
					return err
				}
			}
			return c.Prepare(&r, head, count)
		}
	}
	if c.Initial {
		inner := check
		check = func(head *Revision, count int) error {
			if count > 0 {
				return ErrInitialExists
			}
			if inner != nil {
				return inner(head, count)
			}
			return nil
		}
	}
	return found(s.store.Commit(ctx, sc.ProjectID, f, &r, c.Testcases, check))
}

// Revision returns the revision, or nil.
func (s *Service) Revision(ctx context.Context, sc scope.Scope, f Family, id uuid.UUID) (*Revision, error) {
	return found(s.store.Revision(ctx, sc.ProjectID, f, id))
}

// LatestRevision returns the variant's newest revision, or nil.
func (s *Service) LatestRevision(ctx context.Context, sc scope.Scope, f Family, variantID uuid.UUID) (*Revision, error) {
	return found(s.store.LatestRevision(ctx, sc.ProjectID, f, variantID))
}

// EditRevision replaces the revision's header; nil if missing.
func (s *Service) EditRevision(ctx context.Context, sc scope.Scope, f Family, r *Revision) (*Revision, error) {
	r.UpdatedByID = userOf(sc)
	return found(s.store.UpdateRevision(ctx, sc.ProjectID, f, r))
}

// ArchiveRevision (un)archives one revision; nil if missing.
func (s *Service) ArchiveRevision(ctx context.Context, sc scope.Scope, f Family, id uuid.UUID, archived bool) (*Revision, error) {
	return found(s.store.ArchiveRevision(ctx, sc.ProjectID, f, id, archived, userOf(sc)))
}

// QueryRevisions lists revisions.
func (s *Service) QueryRevisions(ctx context.Context, sc scope.Scope, f Family, q Query) ([]Revision, error) {
	return s.store.QueryRevisions(ctx, sc.ProjectID, f, q)
}

// Testcases returns blobs in the order of ids.
func (s *Service) Testcases(ctx context.Context, sc scope.Scope, ids []uuid.UUID) ([]Testcase, error) {
	return s.store.Testcases(ctx, sc.ProjectID, ids)
}

// TestcasesBySet pages every blob of a testset.
func (s *Service) TestcasesBySet(ctx context.Context, sc scope.Scope, setID uuid.UUID, win *Windowing) ([]Testcase, error) {
	return s.store.TestcasesBySet(ctx, sc.ProjectID, setID, win)
}

// ---- lookups

// Refs names a revision by any combination of artifact, variant and
// revision references.
type Refs struct {
	Artifact, Variant, Revision *Ref
}

// Empty reports whether no ref names anything.
func (r Refs) Empty() bool { return r.Artifact.Empty() && r.Variant.Empty() && r.Revision.Empty() }

// Resolve applies the compatible platform's lookup rules to find one revision
// (a bare artifact means the latest revision of its default variant);
// key is the family's wire name ("testset", "workflow", ...) used in
// messages. It returns nil when nothing is named or nothing matches.
func (s *Service) Resolve(ctx context.Context, sc scope.Scope, f Family, key string, refs Refs) (*Revision, error) {
	if refs.Empty() {
		return nil, nil
	}
	if refs.Variant != nil && !refs.Variant.identifies() && refs.Variant.Version != nil {
		return nil, Invalid(fmt.Sprintf("%s_variant_ref needs an id or a slug; a version alone cannot identify a variant.", key))
	}
	if refs.Revision != nil && !refs.Revision.identifies() && refs.Revision.Version != nil &&
		!refs.Variant.identifies() && !refs.Artifact.identifies() {
		return nil, Invalid(fmt.Sprintf("%s_revision_ref.version needs a %s_variant_ref or %s_ref with an id or a slug.", key, key, key))
	}
	r, err := s.lookup(ctx, sc, f, refs)
	if err != nil || r == nil {
		return nil, err
	}
	if err := consistent(key, refs, r); err != nil {
		return nil, err
	}
	return r, nil
}

func (s *Service) lookup(ctx context.Context, sc scope.Scope, f Family, refs Refs) (*Revision, error) {
	p := sc.ProjectID
	if rr := refs.Revision; rr != nil && rr.ID != nil {
		return found(s.store.Revision(ctx, p, f, *rr.ID))
	}
	if rr := refs.Revision; rr != nil && rr.Slug != nil {
		return found(s.store.RevisionBySlug(ctx, p, f, *rr.Slug))
	}
	v, err := s.ResolveVariant(ctx, sc, f, refs.Artifact, refs.Variant)
	if err != nil || v == nil {
		return nil, err
	}
	if rr := refs.Revision; rr != nil && rr.Version != nil {
		n, err := strconv.Atoi(*rr.Version)
		if err != nil || n < 0 {
			return nil, nil
		}
		return found(s.store.RevisionByVersion(ctx, p, f, v.ID, n))
	}
	return found(s.store.LatestRevision(ctx, p, f, v.ID))
}

// ResolveVariant finds the variant named by variant, else the default
// variant of the artifact named by artifact; nil if none.
func (s *Service) ResolveVariant(ctx context.Context, sc scope.Scope, f Family, artifact, variant *Ref) (*Variant, error) {
	p := sc.ProjectID
	switch {
	case variant != nil && variant.ID != nil:
		return found(s.store.Variant(ctx, p, f, *variant.ID))
	case variant != nil && variant.Slug != nil:
		return found(s.store.VariantBySlug(ctx, p, f, *variant.Slug))
	}
	a, err := s.ResolveArtifact(ctx, sc, f, artifact)
	if err != nil || a == nil {
		return nil, err
	}
	return found(s.store.DefaultVariant(ctx, p, f, a.ID))
}

// ResolveArtifact finds the artifact named by ref; nil if none.
func (s *Service) ResolveArtifact(ctx context.Context, sc scope.Scope, f Family, ref *Ref) (*Artifact, error) {
	switch {
	case ref != nil && ref.ID != nil:
		return found(s.store.Artifact(ctx, sc.ProjectID, f, *ref.ID))
	case ref != nil && ref.Slug != nil:
		return found(s.store.ArtifactBySlug(ctx, sc.ProjectID, f, *ref.Slug))
	}
	return nil, nil
}

// consistent checks every supplied id, slug and version against the
// resolved revision (rule 5).
func consistent(key string, refs Refs, r *Revision) error {
	var msgs []string
	check := func(refName, field string, ref *Ref, id uuid.UUID, slug string) {
		if ref == nil {
			return
		}
		if ref.ID != nil && *ref.ID != id {
			msgs = append(msgs, fmt.Sprintf("%s.id='%s' does not match resolved revision's %s_id='%s'", refName, *ref.ID, field, id))
		}
		if ref.Slug != nil && *ref.Slug != slug {
			msgs = append(msgs, fmt.Sprintf("%s.slug='%s' does not match resolved revision's %s_slug='%s'", refName, *ref.Slug, field, slug))
		}
	}
	check(key+"_ref", "artifact", refs.Artifact, r.ArtifactID, r.ArtifactSlug)
	check(key+"_variant_ref", "variant", refs.Variant, r.VariantID, r.VariantSlug)
	if rr := refs.Revision; rr != nil {
		if rr.ID != nil && *rr.ID != r.ID {
			msgs = append(msgs, fmt.Sprintf("%s_revision_ref.id='%s' does not match resolved revision's id='%s'", key, *rr.ID, r.ID))
		}
		if rr.Slug != nil && *rr.Slug != r.Slug {
			msgs = append(msgs, fmt.Sprintf("%s_revision_ref.slug='%s' does not match resolved revision's slug='%s'", key, *rr.Slug, r.Slug))
		}
		if rr.Version != nil && *rr.Version != strconv.Itoa(r.Version) {
			msgs = append(msgs, fmt.Sprintf("%s_revision_ref.version='%s' does not match resolved revision's version='%d'", key, *rr.Version, r.Version))
		}
	}
	if len(msgs) > 0 {
		return Invalid(strings.Join(msgs, "; "))
	}
	return nil
}

// LogTarget names where a log starts: a revision, else a variant's latest,
// else an artifact's default variant's latest.
type LogTarget struct {
	ArtifactID, VariantID, RevisionID *uuid.UUID
	Depth                             *int
}

// Log returns the target revision and its older non-archived siblings,
// newest first, limited to Depth.
func (s *Service) Log(ctx context.Context, sc scope.Scope, f Family, t LogTarget) ([]Revision, error) {
	if t.Depth != nil && *t.Depth < 1 {
		return []Revision{}, nil
	}
	var from *Revision
	var err error
	switch {
	case t.RevisionID != nil:
		from, err = found(s.store.Revision(ctx, sc.ProjectID, f, *t.RevisionID))
	case t.VariantID != nil:
		from, err = found(s.store.LatestRevision(ctx, sc.ProjectID, f, *t.VariantID))
	case t.ArtifactID != nil:
		var v *Variant
		if v, err = found(s.store.DefaultVariant(ctx, sc.ProjectID, f, *t.ArtifactID)); v != nil {
			from, err = found(s.store.LatestRevision(ctx, sc.ProjectID, f, v.ID))
		}
	}
	if err != nil || from == nil {
		return []Revision{}, err
	}
	depth := 1 << 30
	if t.Depth != nil {
		depth = *t.Depth
	}
	return s.store.Log(ctx, sc.ProjectID, f, from, depth)
}

// Fork creates v on the source variant's artifact and re-commits the
// source lineage, oldest first, up to and including the source revision
// (or the source head): versions restart at 0, slugs get the new variant's
// id as a suffix, data and metadata are copied.
func (s *Service) Fork(ctx context.Context, sc scope.Scope, f Family, v *Variant, source *Ref, upTo *Ref) (*Variant, error) {
	src, err := s.ResolveVariant(ctx, sc, f, nil, source)
	if err != nil {
		return nil, err
	}
	if src == nil {
		return nil, Invalid("Fork source variant could not be resolved.")
	}
	lineage, err := s.store.QueryRevisions(ctx, sc.ProjectID, f, Query{VariantRefs: []Ref{{ID: &src.ID}}})
	if err != nil {
		return nil, err
	}
	// QueryRevisions without windowing has no order; sort oldest first.
	sortByID(lineage)
	if upTo != nil && !upTo.Empty() {
		cut := -1
		for i, r := range lineage {
			if (upTo.ID == nil || *upTo.ID == r.ID) && (upTo.Slug == nil || *upTo.Slug == r.Slug) &&
				(upTo.Version == nil || *upTo.Version == strconv.Itoa(r.Version)) {
				cut = i
			}
		}
		if cut < 0 {
			return nil, Invalid("Fork source revision could not be resolved in the source variant.")
		}
		lineage = lineage[:cut+1]
	}
	v.ArtifactID = src.ArtifactID
	var nv *Variant
	err = s.InTx(ctx, func(tx *Service) error {
		if nv, err = tx.CreateVariant(ctx, sc, f, v); err != nil {
			return err
		}
		suffix := "_" + hex.EncodeToString(nv.ID[:])
		for _, r := range lineage {
			c := r
			c.VariantID, c.Slug = nv.ID, r.Slug+suffix
			if _, err := tx.Commit(ctx, sc, f, Commit{Revision: c}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return nv, nil
}

// Consistent checks every id, slug and version in refs against r, as
// Resolve does (rule 5); environment-backed lookups use it on the revision
// an environment names.
func Consistent(key string, refs Refs, r *Revision) error { return consistent(key, refs, r) }
