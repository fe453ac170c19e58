package workflows

import (
	"context"
	"encoding/json"

	"github.com/google/uuid"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/services/registry/internal/versioned"
)

// Simple returns the use cases of the simple surface of one workflow role
// (key "workflow", "application" or "evaluator"). Evaluator data is hydrated from the catalog;
// application and workflow records keep their data across edits that send
// none.
func (s *Service) Simple(key string) *versioned.Simple {
	var reg *versioned.Service
	if s != nil { // routes over no services are still listed (the OpenAPI test)
		reg = s.reg
	}
	return versioned.NewSimple(reg, simpleFamily{s: s, key: key})
}

type simpleFamily struct {
	s   *Service
	key string
}

func (simpleFamily) Family() versioned.Family { return versioned.Workflows }

func (f simpleFamily) Rules() versioned.SimpleRules {
	r := versioned.SimpleRules{KeepData: true, SlugCheck: CheckSlug}
	if role := f.role(); role != "" {
		r.ForceFlags = json.RawMessage(`{"` + role + `":true}`)
	}
	switch f.key {
	case "application", "workflow":
		r.PartialEdit = true
	case "evaluator":
		r.ArchiveVariant = true
		r.EditCheck = func(cur *versioned.Artifact, h versioned.Header) error {
			if h.Name != nil && cur.Name != nil && *h.Name != *cur.Name {
				return versioned.Invalid("Renaming evaluators is temporarily disabled. Current evaluator name is '" + *cur.Name + "'.")
			}
			return nil
		}
	}
	return r
}

// role is the is_<role> flag the simple create always sets; "" for
// plain workflows.
func (f simpleFamily) role() string {
	if f.key == "workflow" {
		return ""
	}
	return "is_" + f.key
}

func (f simpleFamily) NarrowFlags(fl json.RawMessage) json.RawMessage {
	if fl == nil && f.role() != "" {
		fl = json.RawMessage(`{}`) // the simple create always sets the role
	}
	return ArtifactFlags(fl, f.role())
}

func (f simpleFamily) ParseData(raw json.RawMessage, loc []any) (any, error) {
	d, err := Decode(raw)
	if err != nil || d == nil {
		return nil, errs.Field("Input should be a valid dictionary", raw, loc...)
	}
	if err := Validate(d, loc...); err != nil {
		return nil, err
	}
	if f.key == "evaluator" {
		d = f.s.Hydrate(d)
	}
	// loc is nil for the head's data that an edit without data keeps: the
	// client did not send it, so a revision committed before parameters
	// were checked does not make a metadata edit fail.
	if loc != nil {
		if err := f.s.CheckParameters(d, loc...); err != nil {
			return nil, err
		}
	}
	return d, nil
}

func (f simpleFamily) CommitData(ctx context.Context, sc scope.Scope, tx *versioned.Service, variantID uuid.UUID, data any, msg string) (*versioned.Revision, error) {
	ci := CommitInput{Key: f.key, VariantID: variantID}
	if msg != "" {
		ci.Message = &msg
	}
	if d, ok := data.(Data); ok {
		ci.Data = d
	}
	r, _, err := f.s.With(tx).Commit(ctx, sc, ci)
	return r, err
}

func (simpleFamily) ShownFlags(a *versioned.Artifact, r *versioned.Revision) json.RawMessage {
	cp := *r
	cp.ArtifactFlags, cp.ArtifactSlug = a.Flags, a.Slug
	return RevisionFlags(&cp)
}

// rules are the rules of the git model of one workflow role: reserved
// slugs are refused, and the role's flag is forced on artifacts and on
// the artifact query.
type rules struct{ key string }

func (rules) Family() versioned.Family { return versioned.Workflows }

func (r rules) CheckArtifact(a *versioned.Artifact) error {
	if err := CheckSlug(a.Slug); a.Slug != "" && err != nil {
		return err
	}
	a.Flags = ArtifactFlags(a.Flags, simpleFamily{key: r.key}.role())
	return nil
}

func (rules) CheckVariantSlug(slug string) error { return CheckSlug(slug) }

func (r rules) ForceFlags() json.RawMessage { return simpleFamily{key: r.key}.Rules().ForceFlags }

// Lineage returns the git model of the role key ("workflow",
// "application", "evaluator").
func (s *Service) Lineage(key string) *versioned.Lineage {
	var reg *versioned.Service
	if s != nil { // routes over no services are still listed (the OpenAPI test)
		reg = s.reg
	}
	return reg.Lineage(rules{key: key})
}
