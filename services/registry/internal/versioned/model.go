// Package versioned is the versioned-artifact domain shared by every family
// (testsets, workflows, environments, queries): artifacts hold variants,
// variants hold immutable revisions, and the lookup rules of the compatible platform's
// "git" model resolve references to one revision. It holds the model, the
// Store it needs (pgstore implements it), the Service over it, and the
// family-parameterised use cases the families plug into: Lineage (the git
// model under a family's FamilyRules), CreateRecord (the one
// create-in-one-transaction) and Simple (the flat simple surface under a
// family's SimpleFamily).
package versioned

import (
	"encoding/json"
	"time"

	"github.com/google/uuid"
)

// Family names one versioned entity family. Families share the tables; the
// slug namespace is per family and project.
type Family string

// The families. Applications and evaluators are workflows with a role flag,
// so they share the workflow family and its slug namespace.
const (
	Testsets     Family = "testset"
	Workflows    Family = "workflow"
	Environments Family = "environment"
	Queries      Family = "query"
)

// Lifecycle is the creation, edit and archive record of a row.
type Lifecycle struct {
	CreatedAt   time.Time
	UpdatedAt   *time.Time
	DeletedAt   *time.Time
	CreatedByID *uuid.UUID
	UpdatedByID *uuid.UUID
	DeletedByID *uuid.UUID
}

// Header is the editable metadata of artifacts, variants and revisions.
// Flags, tags and meta are raw JSON objects; nil means null (omitted).
type Header struct {
	Name        *string
	Description *string
	Flags       json.RawMessage
	Tags        json.RawMessage
	Meta        json.RawMessage
}

// Artifact is the top of a lineage: a testset, a workflow, an environment or
// a query.
type Artifact struct {
	ID       uuid.UUID
	Slug     string
	FolderID *uuid.UUID
	Header
	Lifecycle
}

// Variant is a branch of an artifact.
type Variant struct {
	ID           uuid.UUID
	ArtifactID   uuid.UUID
	ArtifactSlug string
	// ArtifactFlags are the parent artifact's flags, read with the variant:
	// workflow-family variants show them as their own.
	ArtifactFlags json.RawMessage
	Slug          string
	Header
	Lifecycle
}

// Revision is one immutable commit on a variant. Data holds the family's
// payload; testset revisions keep their ordered testcase ids in TestcaseIDs
// instead (nil: the revision carries no data at all).
type Revision struct {
	ID           uuid.UUID
	ArtifactID   uuid.UUID
	ArtifactSlug string
	VariantID    uuid.UUID
	VariantSlug  string
	Slug         string
	Version      int
	Message      *string
	Author       *uuid.UUID
	Date         time.Time
	Data         json.RawMessage
	TestcaseIDs  []uuid.UUID
	// ArtifactFlags are the parent artifact's flags: workflow-family
	// revisions merge the role flags from there on read.
	ArtifactFlags json.RawMessage
	Header
	Lifecycle
}

// HasData reports whether the revision carries a payload.
func (r *Revision) HasData() bool { return r.Data != nil || r.TestcaseIDs != nil }

// Ref names an entity by id, slug and, for revisions, version. Any one is
// enough; all that are given must agree.
type Ref struct {
	ID      *uuid.UUID `json:"id,omitempty"`
	Slug    *string    `json:"slug,omitempty"`
	Version *string    `json:"version,omitempty"`
}

// Empty reports whether the ref names nothing.
func (r *Ref) Empty() bool { return r == nil || r.ID == nil && r.Slug == nil && r.Version == nil }

// identifies reports whether the ref carries an id or a slug.
func (r *Ref) identifies() bool { return r != nil && (r.ID != nil || r.Slug != nil) }

// Windowing orders and pages query results.
type Windowing struct {
	Newest   *time.Time `json:"newest,omitempty"`
	Oldest   *time.Time `json:"oldest,omitempty"`
	Next     *uuid.UUID `json:"next,omitempty"`
	Limit    *int       `json:"limit,omitempty"`
	Order    *string    `json:"order,omitempty"`
	Interval *int       `json:"interval,omitempty"`
	Rate     *float64   `json:"rate,omitempty"`
}

// Ascending reports whether the windowing asks for oldest first.
func (w *Windowing) Ascending() bool { return w != nil && w.Order != nil && *w.Order == "ascending" }

// LimitValue is the page size, clamped to at least 1; 0 means no limit.
func (w *Windowing) LimitValue() int {
	if w == nil || w.Limit == nil {
		return 0
	}
	return max(*w.Limit, 1)
}

// Filter selects artifacts, variants or revisions by their header.
type Filter struct {
	Name        *string
	Description *string
	Slug        *string
	Slugs       []string
	Flags       json.RawMessage
	Tags        json.RawMessage
	// Revisions only.
	Author  *uuid.UUID
	Authors []uuid.UUID
	Date    *time.Time
	Dates   []time.Time
	Message *string
	// Artifacts only: HasFolder tells whether folder_id was sent at all (a
	// null folder means the root).
	HasFolder bool
	FolderID  *uuid.UUID
}

// Query is a query over one level of a family.
type Query struct {
	Filter          Filter
	ArtifactRefs    []Ref
	VariantRefs     []Ref
	RevisionRefs    []Ref
	IncludeArchived bool
	Windowing       *Windowing
}

// Testcase is an immutable content-addressed row of a testset. Data is the
// row's JSON object exactly as committed.
type Testcase struct {
	ID          uuid.UUID
	SetID       *uuid.UUID
	Data        json.RawMessage
	Flags       json.RawMessage
	Tags        json.RawMessage
	Meta        json.RawMessage
	CreatedAt   time.Time
	CreatedByID *uuid.UUID
}
