// Package pgstore implements the registry's stores on PostgreSQL.
package pgstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/assayhq/assay/pkg/pgxutil"
	"github.com/assayhq/assay/services/registry/internal/versioned"
)

// db is what a pool and a transaction have in common.
type db interface {
	Begin(ctx context.Context) (pgx.Tx, error)
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// Store is the PostgreSQL registry store.
type Store struct {
	pool db
	// lockTimeout bounds how long a commit waits for its variant's row
	// lock; 0 waits as long as PostgreSQL's own lock_timeout allows.
	lockTimeout time.Duration
}

// Option configures a Store.
type Option func(*Store)

// WithLockTimeout bounds the wait of a commit for the variant lock: past
// it the commit fails with versioned.ErrCommitLockTimeout (503) instead of
// queueing behind a stuck writer.
func WithLockTimeout(d time.Duration) Option { return func(s *Store) { s.lockTimeout = d } }

// New returns a store over pool.
func New(pool *pgxpool.Pool, opts ...Option) *Store {
	s := &Store{pool: pool}
	for _, o := range opts {
		o(s)
	}
	return s
}

// InTx runs fn with a store whose every call belongs to one transaction
// (a savepoint when already inside one): a use case that writes several
// rows, like a simple create, lands whole or not at all.
func (s *Store) InTx(ctx context.Context, fn func(versioned.Store) error) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error { return fn(&Store{pool: tx, lockTimeout: s.lockTimeout}) })
}

var _ versioned.Store = (*Store)(nil)

const lifecycleCols = `created_at, updated_at, deleted_at, created_by_id, updated_by_id, deleted_by_id`

func lifecycleDest(l *versioned.Lifecycle) []any {
	return []any{&l.CreatedAt, &l.UpdatedAt, &l.DeletedAt, &l.CreatedByID, &l.UpdatedByID, &l.DeletedByID}
}

func headerDest(h *versioned.Header) []any {
	return []any{&h.Name, &h.Description, &h.Flags, &h.Tags, &h.Meta}
}

// mapWriteErr turns constraint violations into the registry's errors: a
// duplicate slug is a conflict, a missing parent (level "artifact" or
// "variant") a 404 naming it.
func mapWriteErr(err error, slug string, f versioned.Family, parentLevel string, parent uuid.UUID) error {
	switch {
	case err == nil:
		return nil
	case pgxutil.IsUniqueViolation(err):
		return versioned.ErrSlugTaken(slug)
	case pgxutil.IsForeignKeyViolation(err):
		return versioned.ErrParentMissing(f, parentLevel, parent)
	}
	return err
}

// ---- artifacts

const artifactCols = `a.id, a.slug, a.folder_id, a.name, a.description, a.flags, a.tags, a.meta, ` +
	`a.created_at, a.updated_at, a.deleted_at, a.created_by_id, a.updated_by_id, a.deleted_by_id`

func scanArtifact(row pgx.Row) (*versioned.Artifact, error) {
	var a versioned.Artifact
	dest := append([]any{&a.ID, &a.Slug, &a.FolderID}, headerDest(&a.Header)...)
	if err := row.Scan(append(dest, lifecycleDest(&a.Lifecycle)...)...); err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return nil, versioned.ErrNotFound
		}
		return nil, err
	}
	return &a, nil
}

// CreateArtifact inserts a.
func (s *Store) CreateArtifact(ctx context.Context, p uuid.UUID, f versioned.Family, a *versioned.Artifact) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO artifacts (project_id, family, id, slug, folder_id, name, description, flags, tags, meta, created_at, created_by_id)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
		p, f, a.ID, a.Slug, a.FolderID, a.Name, a.Description, a.Flags, a.Tags, a.Meta, a.CreatedAt, a.CreatedByID)
	return mapWriteErr(err, a.Slug, f, "", uuid.Nil)
}

// Artifact returns the artifact with id, or versioned.ErrNotFound.
func (s *Store) Artifact(ctx context.Context, p uuid.UUID, f versioned.Family, id uuid.UUID) (*versioned.Artifact, error) {
	return scanArtifact(s.pool.QueryRow(ctx, `SELECT `+artifactCols+` FROM artifacts a WHERE a.project_id = $1 AND a.family = $2 AND a.id = $3`, p, f, id))
}

// ArtifactBySlug returns the artifact with slug, or versioned.ErrNotFound.
func (s *Store) ArtifactBySlug(ctx context.Context, p uuid.UUID, f versioned.Family, slug string) (*versioned.Artifact, error) {
	return scanArtifact(s.pool.QueryRow(ctx, `SELECT `+artifactCols+` FROM artifacts a WHERE a.project_id = $1 AND a.family = $2 AND a.slug = $3`, p, f, slug))
}

// UpdateArtifact replaces the header and folder of the artifact a.ID.
func (s *Store) UpdateArtifact(ctx context.Context, p uuid.UUID, f versioned.Family, a *versioned.Artifact) (*versioned.Artifact, error) {
	return scanArtifact(s.pool.QueryRow(ctx, `UPDATE artifacts a SET name = $4, description = $5, flags = $6, tags = $7, meta = $8, folder_id = $9,
		updated_at = now(), updated_by_id = $10
		WHERE a.project_id = $1 AND a.family = $2 AND a.id = $3 RETURNING `+artifactCols,
		p, f, a.ID, a.Name, a.Description, a.Flags, a.Tags, a.Meta, a.FolderID, a.UpdatedByID))
}

// ArchiveArtifact sets or clears deleted_at of the artifact only.
func (s *Store) ArchiveArtifact(ctx context.Context, p uuid.UUID, f versioned.Family, id uuid.UUID, archived bool, by *uuid.UUID) (*versioned.Artifact, error) {
	return scanArtifact(s.pool.QueryRow(ctx, `UPDATE artifacts a SET
		deleted_at = CASE WHEN $4 THEN now() END, deleted_by_id = CASE WHEN $4 THEN $5::uuid END,
		updated_at = now(), updated_by_id = $5
		WHERE a.project_id = $1 AND a.family = $2 AND a.id = $3 RETURNING `+artifactCols, p, f, id, archived, by))
}

// QueryArtifacts lists artifacts matching q.
func (s *Store) QueryArtifacts(ctx context.Context, p uuid.UUID, f versioned.Family, q versioned.Query) ([]versioned.Artifact, error) {
	w := newWhere(p, f, "a")
	w.filter("a", q.Filter)
	if q.Filter.HasFolder {
		if q.Filter.FolderID == nil {
			w.add("a.folder_id IS NULL")
		} else {
			w.add("a.folder_id = " + w.arg(*q.Filter.FolderID))
		}
	}
	// On the artifact query, ids and slugs are both applied (AND).
	ids, slugs := refKeys(q.ArtifactRefs)
	if len(ids) > 0 {
		w.add("a.id = ANY(" + w.arg(ids) + ")")
	}
	if len(slugs) > 0 {
		w.add("a.slug = ANY(" + w.arg(slugs) + ")")
	}
	if !q.IncludeArchived {
		w.add("a.deleted_at IS NULL")
	}
	sql := `SELECT ` + artifactCols + ` FROM artifacts a WHERE ` + w.windowed("a", q.Windowing)
	rows, err := s.pool.Query(ctx, sql, w.args...)
	if err != nil {
		return nil, fmt.Errorf("query artifacts: %w", err)
	}
	return collect(rows, scanArtifact)
}

// ---- variants

const variantCols = `v.id, v.artifact_id, a.slug, a.flags, v.slug, v.name, v.description, v.flags, v.tags, v.meta, ` +
	`v.created_at, v.updated_at, v.deleted_at, v.created_by_id, v.updated_by_id, v.deleted_by_id`

const variantFrom = ` FROM variants v JOIN artifacts a ON a.project_id = v.project_id AND a.id = v.artifact_id`

func scanVariant(row pgx.Row) (*versioned.Variant, error) {
	var v versioned.Variant
	dest := append([]any{&v.ID, &v.ArtifactID, &v.ArtifactSlug, &v.ArtifactFlags, &v.Slug}, headerDest(&v.Header)...)
	if err := row.Scan(append(dest, lifecycleDest(&v.Lifecycle)...)...); err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return nil, versioned.ErrNotFound
		}
		return nil, err
	}
	return &v, nil
}

// CreateVariant inserts v; a missing artifact is ErrParentMissing.
func (s *Store) CreateVariant(ctx context.Context, p uuid.UUID, f versioned.Family, v *versioned.Variant) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO variants (project_id, family, id, artifact_id, slug, name, description, flags, tags, meta, created_at, created_by_id)
		SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12
		WHERE EXISTS (SELECT 1 FROM artifacts WHERE project_id = $1 AND family = $2 AND id = $4)`,
		p, f, v.ID, v.ArtifactID, v.Slug, v.Name, v.Description, v.Flags, v.Tags, v.Meta, v.CreatedAt, v.CreatedByID)
	if err != nil {
		return mapWriteErr(err, v.Slug, f, "artifact", v.ArtifactID)
	}
	got, err := s.Variant(ctx, p, f, v.ID)
	if errors.Is(err, versioned.ErrNotFound) {
		return versioned.ErrParentMissing(f, "artifact", v.ArtifactID)
	}
	if err != nil {
		return err
	}
	*v = *got
	return nil
}

// Variant returns the variant with id, or versioned.ErrNotFound.
func (s *Store) Variant(ctx context.Context, p uuid.UUID, f versioned.Family, id uuid.UUID) (*versioned.Variant, error) {
	return scanVariant(s.pool.QueryRow(ctx, `SELECT `+variantCols+variantFrom+` WHERE v.project_id = $1 AND v.family = $2 AND v.id = $3`, p, f, id))
}

// VariantBySlug returns the variant with slug, or versioned.ErrNotFound.
func (s *Store) VariantBySlug(ctx context.Context, p uuid.UUID, f versioned.Family, slug string) (*versioned.Variant, error) {
	return scanVariant(s.pool.QueryRow(ctx, `SELECT `+variantCols+variantFrom+` WHERE v.project_id = $1 AND v.family = $2 AND v.slug = $3`, p, f, slug))
}

// DefaultVariant returns the artifact's first variant, or
// versioned.ErrNotFound.
func (s *Store) DefaultVariant(ctx context.Context, p uuid.UUID, f versioned.Family, artifactID uuid.UUID) (*versioned.Variant, error) {
	return scanVariant(s.pool.QueryRow(ctx, `SELECT `+variantCols+variantFrom+`
		WHERE v.project_id = $1 AND v.family = $2 AND v.artifact_id = $3 ORDER BY v.created_at, v.id LIMIT 1`, p, f, artifactID))
}

// UpdateVariant replaces the header of the variant v.ID.
func (s *Store) UpdateVariant(ctx context.Context, p uuid.UUID, f versioned.Family, v *versioned.Variant) (*versioned.Variant, error) {
	tag, err := s.pool.Exec(ctx, `UPDATE variants SET name = $4, description = $5, flags = $6, tags = $7, meta = $8,
		updated_at = now(), updated_by_id = $9 WHERE project_id = $1 AND family = $2 AND id = $3`,
		p, f, v.ID, v.Name, v.Description, v.Flags, v.Tags, v.Meta, v.UpdatedByID)
	if err != nil {
		return nil, err
	}
	if tag.RowsAffected() == 0 {
		return nil, versioned.ErrNotFound
	}
	return s.Variant(ctx, p, f, v.ID)
}

// ArchiveVariant sets or clears deleted_at of the variant and its revisions.
func (s *Store) ArchiveVariant(ctx context.Context, p uuid.UUID, f versioned.Family, id uuid.UUID, archived bool, by *uuid.UUID) (*versioned.Variant, error) {
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		for _, table := range []string{"variants", "revisions"} {
			col := "id"
			if table == "revisions" {
				col = "variant_id"
			}
			if _, err := tx.Exec(ctx, `UPDATE `+table+` SET
				deleted_at = CASE WHEN $4 THEN now() END, deleted_by_id = CASE WHEN $4 THEN $5::uuid END,
				updated_at = now(), updated_by_id = $5
				WHERE project_id = $1 AND family = $2 AND `+col+` = $3`, p, f, id, archived, by); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("archive variant: %w", err)
	}
	return s.Variant(ctx, p, f, id)
}

// QueryVariants lists variants matching q.
func (s *Store) QueryVariants(ctx context.Context, p uuid.UUID, f versioned.Family, q versioned.Query) ([]versioned.Variant, error) {
	w := newWhere(p, f, "v")
	w.filter("v", q.Filter)
	w.parentRefs("a", q.ArtifactRefs)
	w.parentRefs("v", q.VariantRefs)
	if !q.IncludeArchived {
		w.add("v.deleted_at IS NULL")
	}
	sql := `SELECT ` + variantCols + variantFrom + ` WHERE ` + w.windowed("v", q.Windowing)
	rows, err := s.pool.Query(ctx, sql, w.args...)
	if err != nil {
		return nil, fmt.Errorf("query variants: %w", err)
	}
	return collect(rows, scanVariant)
}

// ---- revisions

const revisionCols = `r.id, r.artifact_id, a.slug, r.variant_id, v.slug, r.slug, r.version, r.message, r.author, r.date, r.data, r.testcase_ids, a.flags, ` +
	`r.name, r.description, r.flags, r.tags, r.meta, ` +
	`r.created_at, r.updated_at, r.deleted_at, r.created_by_id, r.updated_by_id, r.deleted_by_id`

const revisionFrom = ` FROM revisions r JOIN variants v ON v.project_id = r.project_id AND v.id = r.variant_id
	JOIN artifacts a ON a.project_id = r.project_id AND a.id = r.artifact_id`

func scanRevision(row pgx.Row) (*versioned.Revision, error) {
	var r versioned.Revision
	var ids []pgtype.UUID
	dest := []any{&r.ID, &r.ArtifactID, &r.ArtifactSlug, &r.VariantID, &r.VariantSlug, &r.Slug, &r.Version,
		&r.Message, &r.Author, &r.Date, &r.Data, &ids, &r.ArtifactFlags}
	dest = append(dest, headerDest(&r.Header)...)
	if err := row.Scan(append(dest, lifecycleDest(&r.Lifecycle)...)...); err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return nil, versioned.ErrNotFound
		}
		return nil, err
	}
	r.TestcaseIDs = fromPG(ids)
	return &r, nil
}

func (s *Store) revisionWhere(ctx context.Context, q pgx.Tx, cond string, args ...any) (*versioned.Revision, error) {
	sql := `SELECT ` + revisionCols + revisionFrom + ` WHERE r.project_id = $1 AND r.family = $2 AND ` + cond
	if q != nil {
		return scanRevision(q.QueryRow(ctx, sql, args...))
	}
	return scanRevision(s.pool.QueryRow(ctx, sql, args...))
}

// Revision returns the revision with id, or versioned.ErrNotFound.
func (s *Store) Revision(ctx context.Context, p uuid.UUID, f versioned.Family, id uuid.UUID) (*versioned.Revision, error) {
	return s.revisionWhere(ctx, nil, `r.id = $3`, p, f, id)
}

// RevisionBySlug returns the revision with slug, or versioned.ErrNotFound.
func (s *Store) RevisionBySlug(ctx context.Context, p uuid.UUID, f versioned.Family, slug string) (*versioned.Revision, error) {
	return s.revisionWhere(ctx, nil, `r.slug = $3`, p, f, slug)
}

// RevisionByVersion returns the variant's revision with version, or
// versioned.ErrNotFound.
func (s *Store) RevisionByVersion(ctx context.Context, p uuid.UUID, f versioned.Family, variantID uuid.UUID, version int) (*versioned.Revision, error) {
	return s.revisionWhere(ctx, nil, `r.variant_id = $3 AND r.version = $4`, p, f, variantID, version)
}

// LatestRevision returns the variant's newest revision (archived included),
// or versioned.ErrNotFound. Newest is the highest version: versions are taken under the
// variant lock, in the order commits land, while ids and stamps are made
// before a commit waits for that lock.
func (s *Store) LatestRevision(ctx context.Context, p uuid.UUID, f versioned.Family, variantID uuid.UUID) (*versioned.Revision, error) {
	return s.revisionWhere(ctx, nil, `r.variant_id = $3 ORDER BY r.version DESC LIMIT 1`, p, f, variantID)
}

// UpdateRevision replaces the header of the revision r.ID; data never changes.
func (s *Store) UpdateRevision(ctx context.Context, p uuid.UUID, f versioned.Family, r *versioned.Revision) (*versioned.Revision, error) {
	tag, err := s.pool.Exec(ctx, `UPDATE revisions SET name = $4, description = $5, flags = $6, tags = $7, meta = $8,
		updated_at = now(), updated_by_id = $9 WHERE project_id = $1 AND family = $2 AND id = $3`,
		p, f, r.ID, r.Name, r.Description, r.Flags, r.Tags, r.Meta, r.UpdatedByID)
	if err != nil {
		return nil, err
	}
	if tag.RowsAffected() == 0 {
		return nil, versioned.ErrNotFound
	}
	return s.Revision(ctx, p, f, r.ID)
}

// ArchiveRevision sets or clears deleted_at of one revision.
func (s *Store) ArchiveRevision(ctx context.Context, p uuid.UUID, f versioned.Family, id uuid.UUID, archived bool, by *uuid.UUID) (*versioned.Revision, error) {
	tag, err := s.pool.Exec(ctx, `UPDATE revisions SET
		deleted_at = CASE WHEN $4 THEN now() END, deleted_by_id = CASE WHEN $4 THEN $5::uuid END,
		updated_at = now(), updated_by_id = $5 WHERE project_id = $1 AND family = $2 AND id = $3`, p, f, id, archived, by)
	if err != nil {
		return nil, err
	}
	if tag.RowsAffected() == 0 {
		return nil, versioned.ErrNotFound
	}
	return s.Revision(ctx, p, f, id)
}

// QueryRevisions lists revisions matching q.
func (s *Store) QueryRevisions(ctx context.Context, p uuid.UUID, f versioned.Family, q versioned.Query) ([]versioned.Revision, error) {
	w := newWhere(p, f, "r")
	w.filter("r", q.Filter)
	w.parentRefs("a", q.ArtifactRefs)
	w.parentRefs("v", q.VariantRefs)
	ids, slugs := refKeys(q.RevisionRefs)
	if len(ids) > 0 {
		w.add("r.id = ANY(" + w.arg(ids) + ")")
	}
	if len(slugs) > 0 {
		w.add("r.slug = ANY(" + w.arg(slugs) + ")")
	}
	if !q.IncludeArchived {
		w.add("r.deleted_at IS NULL")
	}
	sql := `SELECT ` + revisionCols + revisionFrom + ` WHERE ` + w.windowed("r", q.Windowing)
	rows, err := s.pool.Query(ctx, sql, w.args...)
	if err != nil {
		return nil, fmt.Errorf("query revisions: %w", err)
	}
	return collect(rows, scanRevision)
}

// Log returns up to depth revisions of the variant, newest (highest
// version) first, starting at the revision from and skipping archived ones
// other than from itself.
func (s *Store) Log(ctx context.Context, p uuid.UUID, f versioned.Family, from *versioned.Revision, depth int) ([]versioned.Revision, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+revisionCols+revisionFrom+`
		WHERE r.project_id = $1 AND r.family = $2 AND r.variant_id = $3
		  AND (r.id = $4 OR (r.version < $6 AND r.deleted_at IS NULL))
		ORDER BY r.version DESC LIMIT $5`, p, f, from.VariantID, from.ID, depth, from.Version)
	if err != nil {
		return nil, fmt.Errorf("log revisions: %w", err)
	}
	return collect(rows, scanRevision)
}

// Commit inserts r as the next revision of its variant. The variant row is
// locked so versions stay dense and the head checks hold; check runs under
// that lock with the current non-archived head (nil if none) and may refuse
// the commit. Testcase blobs in tcs are inserted if absent, in the same
// transaction.
func (s *Store) Commit(ctx context.Context, p uuid.UUID, f versioned.Family, r *versioned.Revision, tcs []versioned.Testcase, check func(head *versioned.Revision, count int) error) (*versioned.Revision, error) {
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if s.lockTimeout > 0 {
			// is_local: the setting ends with the transaction (or the outer
			// one, when this commit is a savepoint of a larger use case).
			if _, err := tx.Exec(ctx, `SELECT set_config('lock_timeout', $1, true)`,
				fmt.Sprintf("%dms", max(s.lockTimeout.Milliseconds(), 1))); err != nil {
				return fmt.Errorf("set lock_timeout: %w", err)
			}
		}
		var artifactID uuid.UUID
		if err := tx.QueryRow(ctx, `SELECT artifact_id FROM variants WHERE project_id = $1 AND family = $2 AND id = $3 FOR UPDATE`,
			p, f, r.VariantID).Scan(&artifactID); err != nil {
			if errors.Is(err, pgx.ErrNoRows) {
				return versioned.ErrParentMissing(f, "variant", r.VariantID)
			}
			if isLockTimeout(err) {
				return versioned.ErrCommitLockTimeout
			}
			return fmt.Errorf("lock variant: %w", err)
		}
		if r.ArtifactID == uuid.Nil {
			r.ArtifactID = artifactID
		}
		if r.ArtifactID != artifactID {
			return versioned.ErrVariantNotOfArtifact(f, r.ArtifactID, r.VariantID)
		}
		var count int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM revisions WHERE project_id = $1 AND variant_id = $2`, p, r.VariantID).Scan(&count); err != nil {
			return err
		}
		if check != nil {
			head, err := s.revisionWhere(ctx, tx, `r.variant_id = $3 AND r.deleted_at IS NULL ORDER BY r.version DESC LIMIT 1`, p, f, r.VariantID)
			if errors.Is(err, versioned.ErrNotFound) {
				head, err = nil, nil // no head yet: check gets nil
			}
			if err != nil {
				return err
			}
			if err := check(head, count); err != nil {
				return err
			}
		}
		if err := insertTestcases(ctx, tx, p, tcs); err != nil {
			return err
		}
		r.Version = count
		_, err := tx.Exec(ctx, `INSERT INTO revisions (project_id, family, id, artifact_id, variant_id, slug, version,
			name, description, flags, tags, meta, message, author, date, data, testcase_ids, created_at, created_by_id)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19)`,
			p, f, r.ID, r.ArtifactID, r.VariantID, r.Slug, r.Version, r.Name, r.Description, r.Flags, r.Tags, r.Meta,
			r.Message, r.Author, r.Date, r.Data, toPG(r.TestcaseIDs), r.CreatedAt, r.CreatedByID)
		return mapWriteErr(err, r.Slug, f, "variant", r.VariantID)
	})
	if err != nil {
		return nil, err
	}
	return s.Revision(ctx, p, f, r.ID)
}

// isLockTimeout reports PostgreSQL's lock_not_available (55P03), raised
// when lock_timeout expires.
func isLockTimeout(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "55P03"
}

// ---- query helpers

// where builds a WHERE clause with numbered arguments.
type where struct {
	conds []string
	args  []any
}

func newWhere(p uuid.UUID, f versioned.Family, alias string) *where {
	return &where{conds: []string{alias + ".project_id = $1", alias + ".family = $2"}, args: []any{p, f}}
}

func (w *where) arg(v any) string {
	w.args = append(w.args, v)
	return fmt.Sprintf("$%d", len(w.args))
}

func (w *where) add(cond string) { w.conds = append(w.conds, cond) }

func (w *where) sql() string { return strings.Join(w.conds, " AND ") }

func (w *where) filter(alias string, f versioned.Filter) {
	col := func(c string) string { return alias + "." + c }
	if f.Name != nil {
		w.add(col("name") + " ILIKE " + w.arg("%"+likeEscape(*f.Name)+"%"))
	}
	if f.Description != nil {
		w.add(col("description") + " ILIKE " + w.arg("%"+likeEscape(*f.Description)+"%"))
	}
	if f.Slug != nil {
		w.add(col("slug") + " = " + w.arg(*f.Slug))
	}
	if f.Slugs != nil {
		w.add(col("slug") + " = ANY(" + w.arg(f.Slugs) + ")")
	}
	if f.Flags != nil {
		w.add(col("flags") + " @> " + w.arg(f.Flags) + "::jsonb")
	}
	if f.Tags != nil {
		w.add(col("tags") + " @> " + w.arg(f.Tags) + "::jsonb")
	}
	if f.Author != nil {
		w.add(col("author") + " = " + w.arg(*f.Author))
	}
	if f.Authors != nil {
		w.add(col("author") + " = ANY(" + w.arg(toPG(f.Authors)) + ")")
	}
	if f.Date != nil {
		w.add(col("date") + " = " + w.arg(*f.Date))
	}
	if f.Dates != nil {
		w.add(col("date") + " = ANY(" + w.arg(f.Dates) + ")")
	}
	if f.Message != nil {
		w.add(col("message") + " ILIKE " + w.arg("%"+likeEscape(*f.Message)+"%"))
	}
}

// parentRefs keeps rows whose parent (alias a or v) matches any ref by id or slug.
func (w *where) parentRefs(alias string, refs []versioned.Ref) {
	ids, slugs := refKeys(refs)
	switch {
	case len(ids) > 0 && len(slugs) > 0:
		w.add("(" + alias + ".id = ANY(" + w.arg(ids) + ") OR " + alias + ".slug = ANY(" + w.arg(slugs) + "))")
	case len(ids) > 0:
		w.add(alias + ".id = ANY(" + w.arg(ids) + ")")
	case len(slugs) > 0:
		w.add(alias + ".slug = ANY(" + w.arg(slugs) + ")")
	}
}

// window adds the cursor conditions, order and limit; without windowing the
// compatible platform applies none.
func (w *where) window(alias string, win *versioned.Windowing) string {
	if win == nil {
		return ""
	}
	asc := win.Ascending()
	if win.Next != nil {
		op := " < "
		if asc {
			op = " > "
		}
		w.add(alias + ".id" + op + w.arg(*win.Next))
	}
	if win.Newest != nil {
		w.add(alias + ".created_at <= " + w.arg(*win.Newest))
	}
	if win.Oldest != nil {
		w.add(alias + ".created_at >= " + w.arg(*win.Oldest))
	}
	tail := " ORDER BY " + alias + ".id DESC"
	if asc {
		tail = " ORDER BY " + alias + ".id ASC"
	}
	if n := win.LimitValue(); n > 0 {
		tail += fmt.Sprintf(" LIMIT %d", n)
	}
	return tail
}

// windowed is the WHERE clause plus the windowing tail.
func (w *where) windowed(alias string, win *versioned.Windowing) string {
	tail := w.window(alias, win)
	return w.sql() + tail
}

// refKeys splits refs into ids and slugs. The ids go to pgx as
// pgtype.UUID: a []uuid.UUID would be encoded element by element through
// driver.Valuer as text, the slowest path for long lists.
func refKeys(refs []versioned.Ref) (ids []pgtype.UUID, slugs []string) {
	for _, r := range refs {
		if r.ID != nil {
			ids = append(ids, pgtype.UUID{Bytes: *r.ID, Valid: true})
		}
		if r.Slug != nil {
			slugs = append(slugs, *r.Slug)
		}
	}
	return ids, slugs
}

func likeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

func collect[T any](rows pgx.Rows, scan func(pgx.Row) (*T, error)) ([]T, error) {
	defer rows.Close()
	out := []T{}
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *v)
	}
	return out, rows.Err()
}
