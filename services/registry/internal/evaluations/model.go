// Package evaluations stores the evaluation records (runs, scenarios, results,
// metrics, queues: the contract in pkg/evaluation) and holds their use cases:
// the closed-run guard, the has_* flags, default queues, progress, and the
// jobs that hand a run to the runtime's workers. The simple surface over the
// records is package simpleevals, the comparison and exports package
// evalreports. Execution itself lives in the runtime.
package evaluations

import "github.com/assayhq/assay/pkg/evaluation"

// The records' shapes and the cell rule are the contract the runtime
// shares (pkg/evaluation); these names keep the package's own spelling of
// them. What is written is validated here (checkRunData, prepareRun and the
// limits), not in the contract.

// Version is the records' schema version, echoed on every run.
const Version = evaluation.Version

// Status is the status of a run, scenario, result, metric or queue.
type Status = evaluation.Status

// The statuses of runs, scenarios and results.
const (
	Pending   = evaluation.Pending
	Queued    = evaluation.Queued
	Running   = evaluation.Running
	Success   = evaluation.Success
	Failure   = evaluation.Failure
	Errors    = evaluation.Errors
	Cancelled = evaluation.Cancelled
)

// Statuses lists every valid status.
var Statuses = evaluation.Statuses

// Step types and origins.
const (
	TypeInput      = evaluation.TypeInput
	TypeInvocation = evaluation.TypeInvocation
	TypeAnnotation = evaluation.TypeAnnotation

	OriginCustom = evaluation.OriginCustom
	OriginHuman  = evaluation.OriginHuman
	OriginAuto   = evaluation.OriginAuto
)

// The records and their parts.
type (
	Lifecycle     = evaluation.Lifecycle
	RunFlags      = evaluation.RunFlags
	Ref           = evaluation.Ref
	StepInput     = evaluation.StepInput
	StepSchemas   = evaluation.StepSchemas
	Step          = evaluation.Step
	MappingColumn = evaluation.MappingColumn
	MappingStep   = evaluation.MappingStep
	Mapping       = evaluation.Mapping
	Concurrency   = evaluation.Concurrency
	RunData       = evaluation.RunData
	Run           = evaluation.Run
	Scenario      = evaluation.Scenario
	Result        = evaluation.Result
	Metric        = evaluation.Metric
	QueueFlags    = evaluation.QueueFlags
	QueueData     = evaluation.QueueData
	Queue         = evaluation.Queue
	Cell          = evaluation.Cell
)

// Expected lists a scenario's expected cells (evaluation.Expected).
func Expected(r *Run, executableOnly bool) []Cell { return evaluation.Expected(r, executableOnly) }
