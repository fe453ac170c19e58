package httpapi

import (
	"encoding/json"

	"github.com/assayhq/assay/services/registry/internal/versioned"
	"github.com/assayhq/assay/services/registry/internal/wire"
)

// kind describes one family's wire names: the entity key ("testset") and
// its plural, and which alias ids its revisions carry.
type kind struct {
	fam    versioned.Family
	key    string // testset, workflow, application, evaluator, environment, query
	plural string
	// generic: revisions and variants also carry artifact_id/variant_id
	// (every family but testsets).
	generic bool
	// alias is a second entity prefix the ids are also sent under
	// ("workflow" for applications and evaluators).
	alias string
	// revFlags and varFlags, when set, compute the flags a revision or a
	// variant shows (workflow revisions merge the artifact's role flags;
	// workflow variants show the artifact's flags as their own).
	revFlags func(r *versioned.Revision) json.RawMessage
	varFlags func(v *versioned.Variant) json.RawMessage
	// noWindowing: list responses never carry windowing.
	noWindowing bool
	// variantWindowing: variant lists carry windowing too (only the
	// workflow family's, evaluators excepted; testset variant lists never do).
	variantWindowing bool
	// urlQuery names the query levels ("artifact", "variant", "revision")
	// that also take URL query parameters (reference §1.4).
	urlQuery map[string]bool
	// forkByQuery: fork also takes the source variant as
	// ?<e>_variant_id= (evaluators, reference §5); a body ref wins.
	forkByQuery bool
}

var testsetKind = kind{fam: versioned.Testsets, key: "testset", plural: "testsets"}

// ent is how k's records are named and rendered on the wire.
func (k kind) ent() wire.Entity {
	return wire.Entity{Key: k.key, Generic: k.generic, Alias: k.alias, RevisionFlags: k.revFlags, VariantFlags: k.varFlags}
}
