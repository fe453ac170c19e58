package environments

import (
	"context"
	"encoding/json"

	"github.com/google/uuid"

	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/services/registry/internal/versioned"
)

// GuardFlags narrows environment artifact flags to {is_guarded}.
func GuardFlags(f json.RawMessage) json.RawMessage {
	if f == nil {
		return nil
	}
	var m map[string]any
	_ = json.Unmarshal(f, &m)
	g, _ := m["is_guarded"].(bool)
	if g {
		return json.RawMessage(`{"is_guarded":true}`)
	}
	return json.RawMessage(`{"is_guarded":false}`)
}

// Simple returns the use cases of /simple/environments.
func (s *Service) Simple() *versioned.Simple {
	return versioned.NewSimple(s.registry(), simpleFamily{s})
}

// registry is s.reg; nil for a nil service, so that routes over no
// services can still be listed (the OpenAPI test).
func (s *Service) registry() *versioned.Service {
	if s == nil {
		return nil
	}
	return s.reg
}

// simpleFamily is the environment family of the simple surface: (un)archive
// covers the default variant, and an edit without data leaves the head with
// no references.
type simpleFamily struct{ s *Service }

func (simpleFamily) Family() versioned.Family { return versioned.Environments }

func (simpleFamily) Rules() versioned.SimpleRules { return versioned.SimpleRules{ArchiveVariant: true} }

func (simpleFamily) NarrowFlags(f json.RawMessage) json.RawMessage { return GuardFlags(f) }

func (simpleFamily) ParseData(raw json.RawMessage, loc []any) (any, error) {
	return ParseData(raw, loc...)
}

func (f simpleFamily) CommitData(ctx context.Context, sc scope.Scope, tx *versioned.Service, variantID uuid.UUID, data any, msg string) (*versioned.Revision, error) {
	cm := Commit{VariantID: variantID}
	if msg != "" {
		cm.Message = &msg
	} else {
		// An edit without data leaves the head with no references, as
		// the compatible platform does; create without data likewise.
		cm.Data = &Data{}
	}
	if d, ok := data.(*Data); ok {
		cm.Data = d
	}
	return f.s.With(tx).Commit(ctx, sc, cm)
}

func (simpleFamily) ShownFlags(a *versioned.Artifact, _ *versioned.Revision) json.RawMessage {
	return a.Flags
}

// Guard sets or clears is_guarded, rewriting the artifact's other fields
// unchanged, and returns the simple record; nil when the environment is
// missing.
func (s *Service) Guard(ctx context.Context, sc scope.Scope, id uuid.UUID, on bool) (*versioned.Record, error) {
	rec, err := s.Simple().Current(ctx, sc, id)
	if err != nil || rec == nil {
		return nil, err
	}
	next := *rec.Artifact
	next.Flags = GuardFlags(json.RawMessage(`{}`))
	if on {
		next.Flags = json.RawMessage(`{"is_guarded":true}`)
	}
	if rec.Artifact, err = s.reg.EditArtifact(ctx, sc, versioned.Environments, &next); err != nil {
		return nil, err
	}
	return rec, nil
}

// Resolve returns the environment revision refs name, or nil.
func (s *Service) Resolve(ctx context.Context, sc scope.Scope, refs versioned.Refs) (*versioned.Revision, error) {
	return s.reg.Resolve(ctx, sc, versioned.Environments, "environment", refs)
}

// rules are the environment family's rules of the git model: artifact
// flags narrowed to {is_guarded}.
type rules struct{ versioned.PlainRules }

func (rules) Family() versioned.Family { return versioned.Environments }

func (rules) CheckArtifact(a *versioned.Artifact) error {
	a.Flags = GuardFlags(a.Flags)
	return nil
}

// Lineage returns the environment git model (artifacts, variants, revisions).
func (s *Service) Lineage() *versioned.Lineage { return s.registry().Lineage(rules{}) }
