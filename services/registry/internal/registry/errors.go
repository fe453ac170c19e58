package registry

import (
	"github.com/google/uuid"

	"github.com/assayhq/assay/pkg/errs"
)

// ErrSlugTaken is the reference's 409 for a duplicate slug.
func ErrSlugTaken(slug string) error {
	return errs.Message(errs.Conflict, "registry.slug_taken",
		"A resource with slug '"+slug+"' already exists in this project.",
		map[string]any{"conflict": map[string]any{"slug": slug}})
}

// ErrParentMissing is the reference's 409 for a row whose parent does not
// exist (its foreign-key violation becomes a conflict).
func ErrParentMissing(key string, id uuid.UUID) error {
	return errs.Message(errs.Conflict, "registry.parent_missing", "Entity with same keys already exists.",
		map[string]any{"conflict": map[string]any{key: id.String()}})
}

// Invalid is a 400 whose detail is the plain message, as the reference's
// explicit HTTP exceptions are.
func Invalid(msg string) error { return errs.New(errs.Invalid, "registry.invalid", msg) }

// NotFound is a 404 whose detail is the plain message.
func NotFound(msg string) error { return errs.New(errs.NotFound, "registry.not_found", msg) }

// ErrCommitLockTimeout is the 503 of a commit that waited too long for the
// variant lock (another commit on the same variant holds it): nothing was
// written, and retrying later is safe.
var ErrCommitLockTimeout = errs.Message(errs.Unavailable, "registry.commit_lock_timeout",
	"Another commit on this variant is in progress. No revision was committed; retry shortly.",
	map[string]any{"code": "commit_lock_timeout", "retryable": true})
