package httpapi

import "github.com/assayhq/assay/services/registry/internal/wire"

// kind is how a family's records are named and listed on the wire.
type kind = wire.Entity

var (
	testsetKind     = wire.Testset
	environmentKind = wire.Environment
	queryKind       = wire.Query
	workflowKind    = wire.Workflow
)
