package versioned

import (
	"context"
	"encoding/json"

	"github.com/google/uuid"

	"github.com/assayhq/assay/pkg/scope"
)

// FamilyRules is what a family adds to the shared git model; the rest of
// the model (query, fetch, edit, archive, fork, log) is the same for all.
type FamilyRules interface {
	// Family names the family whose rows the lineage reads and writes.
	Family() Family
	// CheckArtifact checks an artifact before it is created or edited and
	// narrows what is stored (role flags, reserved slugs).
	CheckArtifact(a *Artifact) error
	// CheckVariantSlug checks the slug of a new variant (fork included).
	CheckVariantSlug(slug string) error
	// ForceFlags is always part of the artifact query's flag filter (nil:
	// none); applications and evaluators list only their role.
	ForceFlags() json.RawMessage
}

// PlainRules are the rules of a family that checks nothing: embed it and
// override what differs.
type PlainRules struct{}

// CheckArtifact accepts every artifact.
func (PlainRules) CheckArtifact(*Artifact) error { return nil }

// CheckVariantSlug accepts every slug.
func (PlainRules) CheckVariantSlug(string) error { return nil }

// ForceFlags forces no flag.
func (PlainRules) ForceFlags() json.RawMessage { return nil }

// Lineage holds the git-model use cases of one family: its artifacts,
// variants and revisions, under the family's rules.
type Lineage struct {
	reg   *Service
	rules FamilyRules
	fam   Family
}

// Lineage returns the git model of the family r rules. s may be nil for a
// lineage that only lists its routes.
func (s *Service) Lineage(r FamilyRules) *Lineage { return &Lineage{reg: s, rules: r, fam: r.Family()} }

// CreateArtifact checks a and creates it.
func (l *Lineage) CreateArtifact(ctx context.Context, sc scope.Scope, a *Artifact) (*Artifact, error) {
	if err := l.rules.CheckArtifact(a); err != nil {
		return nil, err
	}
	return l.reg.CreateArtifact(ctx, sc, l.fam, a)
}

// Artifact returns the artifact, or nil.
func (l *Lineage) Artifact(ctx context.Context, sc scope.Scope, id uuid.UUID) (*Artifact, error) {
	return l.reg.Artifact(ctx, sc, l.fam, id)
}

// EditArtifact checks a and full-replaces the stored header; nil if missing.
func (l *Lineage) EditArtifact(ctx context.Context, sc scope.Scope, a *Artifact) (*Artifact, error) {
	if err := l.rules.CheckArtifact(a); err != nil {
		return nil, err
	}
	return l.reg.EditArtifact(ctx, sc, l.fam, a)
}

// ArchiveArtifact (un)archives the artifact; nil if missing.
func (l *Lineage) ArchiveArtifact(ctx context.Context, sc scope.Scope, id uuid.UUID, archived bool) (*Artifact, error) {
	return l.reg.ArchiveArtifact(ctx, sc, l.fam, id, archived)
}

// QueryArtifacts lists artifacts; the family's forced flags join q's filter.
func (l *Lineage) QueryArtifacts(ctx context.Context, sc scope.Scope, q Query) ([]Artifact, error) {
	if force := l.rules.ForceFlags(); force != nil {
		q.Filter.Flags = mergeFlags(q.Filter.Flags, force)
	}
	return l.reg.QueryArtifacts(ctx, sc, l.fam, q)
}

// CreateVariant checks the slug and creates the variant; a variant
// without a name is named after its slug.
func (l *Lineage) CreateVariant(ctx context.Context, sc scope.Scope, v *Variant) (*Variant, error) {
	if err := l.rules.CheckVariantSlug(v.Slug); err != nil {
		return nil, err
	}
	if v.Name == nil {
		slug := v.Slug
		v.Name = &slug
	}
	return l.reg.CreateVariant(ctx, sc, l.fam, v)
}

// Variant returns the variant, or nil.
func (l *Lineage) Variant(ctx context.Context, sc scope.Scope, id uuid.UUID) (*Variant, error) {
	return l.reg.Variant(ctx, sc, l.fam, id)
}

// EditVariant full-replaces the variant's header; nil if missing.
func (l *Lineage) EditVariant(ctx context.Context, sc scope.Scope, v *Variant) (*Variant, error) {
	return l.reg.EditVariant(ctx, sc, l.fam, v)
}

// ArchiveVariant (un)archives the variant; nil if missing.
func (l *Lineage) ArchiveVariant(ctx context.Context, sc scope.Scope, id uuid.UUID, archived bool) (*Variant, error) {
	return l.reg.ArchiveVariant(ctx, sc, l.fam, id, archived)
}

// QueryVariants lists variants.
func (l *Lineage) QueryVariants(ctx context.Context, sc scope.Scope, q Query) ([]Variant, error) {
	return l.reg.QueryVariants(ctx, sc, l.fam, q)
}

// Fork checks the new variant's slug (a variant without a name is named
// after it) and forks source up to upTo into it.
func (l *Lineage) Fork(ctx context.Context, sc scope.Scope, v *Variant, source, upTo *Ref) (*Variant, error) {
	if err := l.rules.CheckVariantSlug(v.Slug); err != nil {
		return nil, err
	}
	if v.Name == nil {
		slug := v.Slug
		v.Name = &slug
	}
	return l.reg.Fork(ctx, sc, l.fam, v, source, upTo)
}

// Revision returns the revision, or nil.
func (l *Lineage) Revision(ctx context.Context, sc scope.Scope, id uuid.UUID) (*Revision, error) {
	return l.reg.Revision(ctx, sc, l.fam, id)
}

// EditRevision replaces the revision's header; nil if missing.
func (l *Lineage) EditRevision(ctx context.Context, sc scope.Scope, r *Revision) (*Revision, error) {
	return l.reg.EditRevision(ctx, sc, l.fam, r)
}

// ArchiveRevision (un)archives the revision; nil if missing.
func (l *Lineage) ArchiveRevision(ctx context.Context, sc scope.Scope, id uuid.UUID, archived bool) (*Revision, error) {
	return l.reg.ArchiveRevision(ctx, sc, l.fam, id, archived)
}

// QueryRevisions lists revisions.
func (l *Lineage) QueryRevisions(ctx context.Context, sc scope.Scope, q Query) ([]Revision, error) {
	return l.reg.QueryRevisions(ctx, sc, l.fam, q)
}

// Log walks a revision's history.
func (l *Lineage) Log(ctx context.Context, sc scope.Scope, t LogTarget) ([]Revision, error) {
	return l.reg.Log(ctx, sc, l.fam, t)
}

// mergeFlags adds the members of force to a flag filter object.
func mergeFlags(filter, force json.RawMessage) json.RawMessage {
	m := map[string]any{}
	_ = json.Unmarshal(filter, &m)
	var f map[string]any
	_ = json.Unmarshal(force, &f)
	for k, v := range f {
		m[k] = v
	}
	out, _ := json.Marshal(m)
	return out
}

// CheckVariantSlug checks the slug of a new variant; CreateVariant and
// Fork check it too, this lets a handler refuse it before other fields.
func (l *Lineage) CheckVariantSlug(slug string) error { return l.rules.CheckVariantSlug(slug) }
