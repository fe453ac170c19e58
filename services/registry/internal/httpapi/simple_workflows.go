package httpapi

import (
	"encoding/json"

	"github.com/assayhq/assay/services/registry/internal/workflows"
)

// playgroundBuildKit is the additional_context of GET
// /simple/applications/{id}, as the compatible platform's playground reads it.
// agent_template_overlay is a partial agent-template (catalog type
// "agent-template") the playground merges over an agent application's
// configuration: the tools, skills and MCP servers the platform itself
// contributes. We contribute none, so the overlay names those lists empty; the
// shape stays what clients read.
var playgroundBuildKit = json.RawMessage(`{"playground_build_kit":{"agent_template_overlay":{"tools":[],"skills":[],"mcps":[]}}}`)

// newSimpleWorkflows returns the simple surface of one workflow role.
func newSimpleWorkflows(wf *workflows.Service, a *workflowAPI) *simpleAPI {
	key := a.key()
	s := &simpleAPI{k: a.git.k, uc: wf.Simple(key)}
	switch key {
	case "application", "workflow":
		s.mismatch400 = true
		if key == "application" {
			s.additionalContext = playgroundBuildKit
		}
	case "evaluator":
		s.noRevisionIDs = true
	}
	return s
}
