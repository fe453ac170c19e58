package workflows

import (
	"context"

	"github.com/google/uuid"

	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/services/registry/internal/versioned"
)

// HeaderEdit is a partial edit of a workflow artifact: only non-nil
// fields change; SetFlags replaces the flags (with the role's flag
// forced), clearing them when Header.Flags is nil and the role is set.
type HeaderEdit struct {
	Header   versioned.Header
	FolderID *uuid.UUID
	SetFlags bool
}

// EditHeader is the workflow family's partial artifact edit for the role
// key ("workflow", "application", "evaluator"). A missing artifact gives
// nil, except for workflows, where it (and a deleted one) is a 404;
// evaluators may not be renamed.
func (s *Service) EditHeader(ctx context.Context, sc scope.Scope, key string, id uuid.UUID, e HeaderEdit) (*versioned.Artifact, error) {
	cur, err := s.reg.Artifact(ctx, sc, versioned.Workflows, id)
	if err != nil {
		return nil, err
	}
	if cur == nil || key == "workflow" && cur.DeletedAt != nil {
		if key == "workflow" {
			return nil, versioned.NotFound("Workflow not found.")
		}
		return nil, nil
	}
	h := e.Header
	if key == "evaluator" && h.Name != nil && cur.Name != nil && *h.Name != *cur.Name {
		return nil, versioned.Invalid("Renaming evaluators is temporarily disabled. Current evaluator name is '" + *cur.Name + "'.")
	}
	next := *cur
	if h.Name != nil {
		next.Name = h.Name
	}
	if h.Description != nil {
		next.Description = h.Description
	}
	if h.Tags != nil {
		next.Tags = h.Tags
	}
	if h.Meta != nil {
		next.Meta = h.Meta
	}
	if e.FolderID != nil {
		next.FolderID = e.FolderID
	}
	if e.SetFlags {
		role := simpleFamily{key: key}.role()
		next.Flags = ArtifactFlags(h.Flags, role)
		if h.Flags == nil && role != "" {
			next.Flags = nil
		}
	}
	return s.reg.EditArtifact(ctx, sc, versioned.Workflows, &next)
}

// Resolve returns the revision refs name in the role key, or nil.
func (s *Service) Resolve(ctx context.Context, sc scope.Scope, key string, refs versioned.Refs) (*versioned.Revision, error) {
	return s.reg.Resolve(ctx, sc, versioned.Workflows, key, refs)
}
