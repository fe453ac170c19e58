// Package evaluation is the evaluation records' contract shared by the
// registry, which stores them (services/registry/internal/evaluations), and
// the runtime, which executes them (services/runtime/internal/evalrun): the
// record shapes, the rule for which cells a run has (cells.go) and the
// jobs of the EVALS stream (job.go). The JSON names are the wire contract,
// in the compatible platform's shapes. It imports no driver (NATS,
// PostgreSQL, ClickHouse, HTTP framework), so either side may use it
// anywhere (docs/decisions/0010-one-evaluation-contract.md).
package evaluation

import (
	"encoding/json"
	"time"
)

// Version is the records' schema version, echoed on every run.
const Version = "2025-07-14"

// Status is the status of a run, scenario, result, metric or queue.
type Status string

// The statuses of runs, scenarios and results, the compatible platform's.
const (
	Pending   Status = "pending"
	Queued    Status = "queued"
	Running   Status = "running"
	Success   Status = "success"
	Failure   Status = "failure"
	Errors    Status = "errors"
	Cancelled Status = "cancelled"
)

// Statuses lists every valid status.
var Statuses = []Status{Pending, Queued, Running, Success, Failure, Errors, Cancelled}

// Step types and origins.
const (
	TypeInput      = "input"
	TypeInvocation = "invocation"
	TypeAnnotation = "annotation"

	OriginCustom = "custom"
	OriginHuman  = "human"
	OriginAuto   = "auto"
)

// Lifecycle is the audit part of every record; nil fields are omitted.
type Lifecycle struct {
	CreatedAt   *time.Time `json:"created_at,omitempty"`
	UpdatedAt   *time.Time `json:"updated_at,omitempty"`
	DeletedAt   *time.Time `json:"deleted_at,omitempty"`
	CreatedByID *string    `json:"created_by_id,omitempty"`
	UpdatedByID *string    `json:"updated_by_id,omitempty"`
	DeletedByID *string    `json:"deleted_by_id,omitempty"`
}

// RunFlags are a run's flags. The Has* flags are derived from the steps on
// every write (Derive); what a client sends for them is ignored.
type RunFlags struct {
	IsLive   bool `json:"is_live"`
	IsActive bool `json:"is_active"`
	IsClosed bool `json:"is_closed"`
	IsQueue  bool `json:"is_queue"`
	IsCached bool `json:"is_cached"`
	IsSplit  bool `json:"is_split"`

	HasQueries    bool `json:"has_queries"`
	HasTestsets   bool `json:"has_testsets"`
	HasTraces     bool `json:"has_traces"`
	HasTestcases  bool `json:"has_testcases"`
	HasEvaluators bool `json:"has_evaluators"`
	HasCustom     bool `json:"has_custom"`
	HasHuman      bool `json:"has_human"`
	HasAuto       bool `json:"has_auto"`
}

// Ref points at a registry entity (a step reference).
type Ref struct {
	ID      *string `json:"id,omitempty"`
	Slug    *string `json:"slug,omitempty"`
	Version *string `json:"version,omitempty"`
}

// StepInput names what a step reads: another step's key, or
// __all_inputs__ / __all_invocations__.
type StepInput struct {
	Key string `json:"key"`
}

// StepSchemas holds a step's outputs schema (inferred from traces when
// the evaluator has none).
type StepSchemas struct {
	Outputs json.RawMessage `json:"outputs,omitempty"`
}

// Step is one step of a run: an input (testset, query, traces,
// testcases), an invocation (application) or an annotation (evaluator).
// References are keyed by entity kind: testset, testset_variant,
// testset_revision, query…, application…, evaluator….
type Step struct {
	Key        string         `json:"key"`
	Type       string         `json:"type"`
	Origin     string         `json:"origin"`
	References map[string]Ref `json:"references,omitempty"`
	Inputs     []StepInput    `json:"inputs,omitempty"`
	Schemas    *StepSchemas   `json:"schemas,omitempty"`
}

// MappingColumn and MappingStep make a Mapping: a column of the results
// table and where in a step's trace its value is.
type MappingColumn struct {
	Kind string `json:"kind"`
	Name string `json:"name"`
}

// MappingStep is the step and path a mapping reads.
type MappingStep struct {
	Key  string `json:"key"`
	Path string `json:"path"`
}

// Mapping maps a step's trace path to a column.
type Mapping struct {
	Column MappingColumn `json:"column"`
	Step   MappingStep   `json:"step"`
}

// Concurrency bounds a run's execution (the compatible platform's run
// settings): batch_size cells at once (default 10), max_retries retries of a
// failed cell, retry_delay seconds between them.
type Concurrency struct {
	BatchSize  *int     `json:"batch_size,omitempty"`
	MaxRetries *int     `json:"max_retries,omitempty"`
	RetryDelay *float64 `json:"retry_delay,omitempty"`
}

// RunData is a run's configuration. Steps is always rendered, as [] when
// empty (MarshalJSON): a run edited down to no steps says so, where an
// absent key would read as "steps unknown" to the compatible clients.
type RunData struct {
	Steps       []Step       `json:"steps"`
	Repeats     *int         `json:"repeats,omitempty"`
	Concurrency *Concurrency `json:"concurrency,omitempty"`
	Mappings    []Mapping    `json:"mappings,omitempty"`
	// ModelCache false turns the model-call cache off for the run's cells
	// (every model call is made); absent or true, identical calls are
	// answered from the project's cache.
	ModelCache *bool `json:"model_cache,omitempty"`
	// Budget caps what the run's model calls may cost (USD, by the price
	// table): the worker cancels a run whose spend reaches it, naming the
	// budget under meta.stop (services/runtime/internal/evalrun/budget.go).
	Budget *float64 `json:"budget,omitempty"`
}

// MarshalJSON renders d with steps as a list, never null.
func (d RunData) MarshalJSON() ([]byte, error) {
	type plain RunData
	if d.Steps == nil {
		d.Steps = []Step{}
	}
	return json.Marshal(plain(d))
}

// Run is an evaluation run.
type Run struct {
	ID          string          `json:"id"`
	Version     string          `json:"version"`
	Name        *string         `json:"name,omitempty"`
	Description *string         `json:"description,omitempty"`
	Flags       RunFlags        `json:"flags"`
	Tags        json.RawMessage `json:"tags,omitempty"`
	Meta        json.RawMessage `json:"meta,omitempty"`
	Status      Status          `json:"status"`
	Data        RunData         `json:"data"`
	Lifecycle
}

// Scenario is one item of a run (a testcase, a trace, a time window).
type Scenario struct {
	ID        string          `json:"id"`
	RunID     string          `json:"run_id"`
	Status    Status          `json:"status"`
	Flags     json.RawMessage `json:"flags,omitempty"`
	Tags      json.RawMessage `json:"tags,omitempty"`
	Meta      json.RawMessage `json:"meta,omitempty"`
	Interval  *int            `json:"interval,omitempty"`
	Timestamp *time.Time      `json:"timestamp,omitempty"`
	Lifecycle
}

// Result is one cell: (run, scenario, step key, repeat), unique.
type Result struct {
	ID         string          `json:"id"`
	RunID      string          `json:"run_id"`
	ScenarioID string          `json:"scenario_id"`
	StepKey    string          `json:"step_key"`
	RepeatIdx  int             `json:"repeat_idx"`
	Status     Status          `json:"status"`
	TraceID    *string         `json:"trace_id,omitempty"`
	TestcaseID *string         `json:"testcase_id,omitempty"`
	HashID     *string         `json:"hash_id,omitempty"`
	Error      json.RawMessage `json:"error,omitempty"`
	Interval   *int            `json:"interval,omitempty"`
	Timestamp  *time.Time      `json:"timestamp,omitempty"`
	Flags      json.RawMessage `json:"flags,omitempty"`
	Tags       json.RawMessage `json:"tags,omitempty"`
	Meta       json.RawMessage `json:"meta,omitempty"`
	Lifecycle
}

// Metric is a run's metrics: global (no scenario, no timestamp),
// variational (scenario) or temporal (timestamp). Data is
// {step_key: {path: {type, count, sum, mean, min, max, …}}}.
type Metric struct {
	ID         string          `json:"id"`
	RunID      string          `json:"run_id"`
	ScenarioID *string         `json:"scenario_id,omitempty"`
	Timestamp  *time.Time      `json:"timestamp,omitempty"`
	Interval   *int            `json:"interval,omitempty"`
	Status     Status          `json:"status"`
	Data       json.RawMessage `json:"data,omitempty"`
	Flags      json.RawMessage `json:"flags,omitempty"`
	Tags       json.RawMessage `json:"tags,omitempty"`
	Meta       json.RawMessage `json:"meta,omitempty"`
	Lifecycle
}

// QueueFlags are a queue's flags.
type QueueFlags struct {
	IsSequential bool `json:"is_sequential"`
	IsDefault    bool `json:"is_default"`
}

// QueueData is what an annotation queue covers and who works it:
// UserIDs holds one list of assignees per repeat.
type QueueData struct {
	UserIDs     [][]string `json:"user_ids,omitempty"`
	ScenarioIDs []string   `json:"scenario_ids,omitempty"`
	StepKeys    []string   `json:"step_keys,omitempty"`
	BatchSize   *int       `json:"batch_size,omitempty"`
	BatchOffset *int       `json:"batch_offset,omitempty"`
}

// Queue is an annotation queue over a run.
type Queue struct {
	ID          string          `json:"id"`
	RunID       string          `json:"run_id"`
	Name        *string         `json:"name,omitempty"`
	Description *string         `json:"description,omitempty"`
	Flags       QueueFlags      `json:"flags"`
	Status      Status          `json:"status"`
	Data        QueueData       `json:"data"`
	Tags        json.RawMessage `json:"tags,omitempty"`
	Meta        json.RawMessage `json:"meta,omitempty"`
	Lifecycle
}
