package httpapi

import (
	"context"
	"encoding/json"

	"github.com/google/uuid"

	"github.com/assayhq/assay/pkg/scope"
	"github.com/assayhq/assay/services/registry/internal/versioned"
	"github.com/assayhq/assay/services/registry/internal/workflows"
)

// playgroundBuildKit is the additional_context of GET
// /simple/applications/{id} (reference §4). agent_template_overlay is a
// partial agent-template (catalog type "agent-template") the playground
// merges over an agent application's configuration: the tools, skills
// and MCP servers the platform itself contributes. We contribute none, so
// the overlay names those lists empty; the shape stays what clients read.
var playgroundBuildKit = json.RawMessage(`{"playground_build_kit":{"agent_template_overlay":{"tools":[],"skills":[],"mcps":[]}}}`)

// newSimpleWorkflows returns the simple surface of one workflow role.
// Evaluator data is hydrated from the catalog; application and workflow
// records keep their data across edits that send none.
func newSimpleWorkflows(reg *versioned.Service, wf *workflows.Service, a *workflowAPI) *simpleAPI {
	key := a.key()
	s := &simpleAPI{k: a.git.k, reg: reg, keepData: true, slugCheck: workflows.CheckSlug, forceFlags: a.git.forceFlags,
		narrow: func(f json.RawMessage) json.RawMessage {
			if f == nil && a.role != "" {
				f = json.RawMessage(`{}`) // the simple create always sets the role
			}
			return workflows.ArtifactFlags(f, a.role)
		},
		flags: func(ar *versioned.Artifact, r *versioned.Revision) json.RawMessage {
			cp := *r
			cp.ArtifactFlags, cp.ArtifactSlug = ar.Flags, ar.Slug
			return workflows.RevisionFlags(&cp)
		},
	}
	s.parse = func(raw json.RawMessage, loc []any) (any, error) {
		if isNull(raw) {
			return nil, nil
		}
		d, err := workflows.Decode(raw)
		if err != nil || d == nil {
			return nil, fieldInvalid("Input should be a valid dictionary", raw, loc...)
		}
		if err := workflows.Validate(d, loc...); err != nil {
			return nil, err
		}
		if key == "evaluator" {
			d = wf.Hydrate(d)
		}
		// loc is nil for the head's data that an edit without data keeps:
		// the client did not send it, so a revision committed before
		// parameters were checked does not make a metadata edit fail.
		if loc != nil {
			if err := wf.CheckParameters(d, loc...); err != nil {
				return nil, err
			}
		}
		return d, nil
	}
	s.commit = func(ctx context.Context, sc scope.Scope, tx *versioned.Service, variantID uuid.UUID, data any, msg string) (*versioned.Revision, error) {
		ci := workflows.CommitInput{Key: key, VariantID: variantID}
		if msg != "" {
			ci.Message = &msg
		}
		if d, ok := data.(workflows.Data); ok {
			ci.Data = d
		}
		r, _, err := wf.With(tx).Commit(ctx, sc, ci)
		return r, err
	}
	switch key {
	case "application", "workflow":
		s.partialEdit, s.mismatch400 = true, true
		if key == "application" {
			s.additionalContext = playgroundBuildKit
		}
	case "evaluator":
		s.archiveVariant, s.noRevisionIDs = true, true
		s.editCheck = func(cur *versioned.Artifact, h versioned.Header) error {
			if h.Name != nil && cur.Name != nil && *h.Name != *cur.Name {
				return versioned.Invalid("Renaming evaluators is temporarily disabled. Current evaluator name is '" + *cur.Name + "'.")
			}
			return nil
		}
	}
	return s
}
