package queries

import (
	"context"
	"encoding/json"

	"github.com/google/uuid"

	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/services/registry/internal/versioned"
)

// EmptyFlags is the query flag model: it has no fields, so any flags
// object is stored as {}.
func EmptyFlags(f json.RawMessage) json.RawMessage {
	if f == nil {
		return nil
	}
	return json.RawMessage(`{}`)
}

// Simple returns the use cases of /simple/queries.
func (s *Service) Simple() *versioned.Simple {
	return versioned.NewSimple(s.registry(), simpleFamily{})
}

// registry is s.reg; nil for a nil service, so that routes over no
// services can still be listed (the OpenAPI test).
func (s *Service) registry() *versioned.Service {
	if s == nil {
		return nil
	}
	return s.reg
}

// simpleFamily is the query family of the simple surface: (un)archive
// covers the default variant; data is stored as checked.
type simpleFamily struct{}

func (simpleFamily) Family() versioned.Family { return versioned.Queries }

func (simpleFamily) Rules() versioned.SimpleRules { return versioned.SimpleRules{ArchiveVariant: true} }

func (simpleFamily) NarrowFlags(f json.RawMessage) json.RawMessage { return EmptyFlags(f) }

func (simpleFamily) ParseData(raw json.RawMessage, loc []any) (any, error) {
	return ParseData(raw, loc...)
}

func (simpleFamily) CommitData(ctx context.Context, sc scope.Scope, tx *versioned.Service, variantID uuid.UUID, data any, msg string) (*versioned.Revision, error) {
	r := versioned.Revision{VariantID: variantID}
	if msg != "" {
		r.Message = &msg
	}
	if d, ok := data.(json.RawMessage); ok {
		r.Data = d
	}
	return tx.Commit(ctx, sc, versioned.Queries, versioned.Commit{Revision: r})
}

func (simpleFamily) ShownFlags(a *versioned.Artifact, _ *versioned.Revision) json.RawMessage {
	return a.Flags
}

// rules are the query family's rules of the git model: artifact flags
// stored as {}.
type rules struct{ versioned.PlainRules }

func (rules) Family() versioned.Family { return versioned.Queries }

func (rules) CheckArtifact(a *versioned.Artifact) error {
	a.Flags = EmptyFlags(a.Flags)
	return nil
}

// Lineage returns the query git model (artifacts, variants, revisions).
func (s *Service) Lineage() *versioned.Lineage { return s.registry().Lineage(rules{}) }
