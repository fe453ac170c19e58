package versioned

import (
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/assayhq/assay/pkg/errs"
)

// ErrSlugTaken is the compatible platform's 409 for a duplicate slug.
func ErrSlugTaken(slug string) error {
	return errs.Message(errs.Conflict, "registry.slug_taken",
		"A resource with slug '"+slug+"' already exists in this project.",
		map[string]any{"conflict": map[string]any{"slug": slug}})
}

// ErrParentMissing is the 404 of a write naming, as its parent, an
// artifact or variant (level "artifact" or "variant") that does not exist
// in the caller's project; one of another project is answered the same,
// so its existence is not disclosed. The compatible platform answers 409 "Entity
// with same keys already exists." (its foreign-key violation); a client
// cannot fix a missing parent by changing keys, so we name it instead.
func ErrParentMissing(f Family, level string, id uuid.UUID) error {
	key, what := string(f)+"_id", string(f)
	if level == "variant" {
		key, what = string(f)+"_variant_id", string(f)+" variant"
	}
	return errs.Message(errs.NotFound, "registry.parent_missing",
		fmt.Sprintf("%s%s '%s' was not found in this project.", strings.ToUpper(what[:1]), what[1:], id),
		map[string]any{"reference": map[string]any{key: id.String()}})
}

// ErrVariantNotOfArtifact is the 404 of a commit naming an artifact and a
// variant that belongs to another artifact (or to none in this project).
func ErrVariantNotOfArtifact(f Family, artifact, variant uuid.UUID) error {
	what := string(f)
	return errs.Message(errs.NotFound, "registry.parent_missing",
		fmt.Sprintf("%s%s variant '%s' was not found under %s '%s' in this project.", strings.ToUpper(what[:1]), what[1:], variant, what, artifact),
		map[string]any{"reference": map[string]any{what + "_id": artifact.String(), what + "_variant_id": variant.String()}})
}

// Invalid is a 400 whose detail is the plain message, as the compatible platform's
// explicit HTTP exceptions are.
func Invalid(msg string) error { return errs.New(errs.Invalid, "registry.invalid", msg) }

// NotFound is a 404 whose detail is the plain message.
func NotFound(msg string) error { return errs.New(errs.NotFound, "registry.not_found", msg) }

// ErrNotFound is what a Store returns for a row that does not exist (or
// lies in another project or family): its getters and its updates and
// archives of a missing row return nil, ErrNotFound. The Service maps it
// back to nil, nil in one place (found), which is what its callers turn
// into their own answer (a 404, an empty list, a {count: 0}). It is a
// NotFound kind with a code of its own, so one that escapes the mapping
// still renders as a 404 rather than a 500, and errs.Is on
// NotFound(msg) (code "registry.not_found") does not match it.
var ErrNotFound = errs.New(errs.NotFound, "registry.row_not_found", "The resource was not found in this project.")

// ErrCommitLockTimeout is the 503 of a commit that waited too long for the
// variant lock (another commit on the same variant holds it): nothing was
// written, and retrying later is safe.
var ErrCommitLockTimeout = errs.Message(errs.Unavailable, "registry.commit_lock_timeout",
	"Another commit on this variant is in progress. No revision was committed; retry shortly.",
	map[string]any{"code": "commit_lock_timeout", "retryable": true})
