package evaluations

import (
	"context"
	"encoding/json"
	"time"

	"github.com/google/uuid"

	"github.com/assayhq/assay/services/registry/internal/versioned"
)

// Kind names a record table for the store's generic queries and deletes.
type Kind string

// The record kinds.
const (
	KindRun      Kind = "run"
	KindScenario Kind = "scenario"
	KindResult   Kind = "result"
	KindMetric   Kind = "metric"
	KindQueue    Kind = "queue"
)

// Filter selects records of one kind; every set field narrows (AND), a
// list matches any of its values. Fields a kind has no column for are
// refused by the service before they reach the store.
type Filter struct {
	IDs         []uuid.UUID
	RunIDs      []uuid.UUID
	ScenarioIDs []uuid.UUID
	StepKeys    []string
	RepeatIdxs  []int
	Statuses    []Status
	TraceIDs    []string
	TestcaseIDs []uuid.UUID
	HashIDs     []string
	// Flags, Tags and Meta keep records whose object contains them.
	Flags json.RawMessage
	Tags  json.RawMessage
	Meta  json.RawMessage
	// References (runs) keeps runs whose flattened references contain
	// every listed object (e.g. [{"id": "<testset revision id>"}]).
	References json.RawMessage
	Timestamps []time.Time
	// TimestampFrom and TimestampBefore keep records whose timestamp is in
	// [from, before) (results only); a record without one is dropped. A
	// live run's workers read one day's cells with them
	// (services/runtime/internal/evalrun/dailybudget.go), not every cell
	// the run ever had.
	TimestampFrom, TimestampBefore *time.Time
	Intervals                      []int
	// HasScenario and HasTimestamp keep records whose scenario (or
	// timestamp) is set (true) or not (false); nil does not filter. The
	// compatible clients send them as scenario_ids / timestamps: true|false
	// to ask for run-level, per-scenario or temporal metrics.
	HasScenario, HasTimestamp *bool
	// Name and Description match case-insensitive substrings (runs, queues).
	Name        *string
	Description *string
	// IncludeArchived keeps archived queues (queues only).
	IncludeArchived bool
	// IsDefault keeps only default queues (queues only).
	IsDefault *bool
	Windowing *versioned.Windowing
}

// ClaimCell is one cell a worker asks to claim.
type ClaimCell struct {
	ScenarioID uuid.UUID
	StepKey    string
	RepeatIdx  int
}

// Claim is a worker's claim request (see Store.ClaimResults).
type Claim struct {
	RunID     uuid.UUID
	Worker    string
	Until     time.Time
	Statuses  []Status
	Overwrite bool
	Cells     []ClaimCell
	UserID    *uuid.UUID
}

// Counts are records counted by status, with their total.
type Counts map[Status]int

// ScenarioData is a per-scenario metric's data: {step_key: {path: stats}}.
type ScenarioData struct {
	ScenarioID string
	Data       []byte
}

// Store is the persistence of the evaluation records; pgstore implements it
// on PostgreSQL. Every method is scoped to one project: a record of another
// project is absent. Methods that read several records are bounded by the
// filter's windowing (the service always sets a limit) and return an empty
// list when nothing matches; the methods that address one record
// (UpdateRun, UpdateQueue, DefaultQueue) return ErrNotFound when it is
// absent. Constraint violations come back as the package's errors
// (ErrIDTaken, ErrDefaultTaken, ErrUnknownScenario); a deadlock inside InTx
// is a retryable 503.
type Store interface {
	// InTx runs fn with a store whose calls belong to one transaction; the
	// closed-run guard and the write it guards commit together.
	InTx(ctx context.Context, fn func(Store) error) error

	// LockRuns returns the runs ids that exist, locked until the end of the
	// transaction: FOR UPDATE when exclusive (run edits, close, settle),
	// else FOR SHARE (writes to a run's children, which may run side by
	// side but never beside a close). Outside InTx the lock ends at once.
	LockRuns(ctx context.Context, p uuid.UUID, ids []uuid.UUID, exclusive bool) ([]Run, error)
	// InsertRuns inserts runs in one statement; an id already used in the
	// project is ErrIDTaken.
	InsertRuns(ctx context.Context, p uuid.UUID, runs []Run) error
	// UpdateRun replaces the run's header, flags, status, data, tags, meta
	// and update stamps (and its references); ErrNotFound when absent.
	UpdateRun(ctx context.Context, p uuid.UUID, r Run) (*Run, error)
	// Runs returns the runs matching f, in windowing order.
	Runs(ctx context.Context, p uuid.UUID, f Filter) ([]Run, error)
	// Delete removes the records of kind with ids (with everything under
	// them) and returns the ids it removed.
	Delete(ctx context.Context, p uuid.UUID, kind Kind, ids []uuid.UUID) ([]uuid.UUID, error)

	// InsertScenarios inserts scenarios whose id is not taken yet and
	// returns, for every id in order, the stored scenario: the new one, or
	// the one that already had that id (whatever its run: the caller
	// decides whether that is a conflict).
	InsertScenarios(ctx context.Context, p uuid.UUID, ss []Scenario) ([]Scenario, error)
	// UpdateScenarios replaces each scenario's status, flags, tags, meta,
	// interval and timestamp (a full PUT) and returns the updated ones;
	// absent ids are skipped.
	UpdateScenarios(ctx context.Context, p uuid.UUID, ss []Scenario) ([]Scenario, error)
	// Scenarios returns the scenarios matching f.
	Scenarios(ctx context.Context, p uuid.UUID, f Filter) ([]Scenario, error)
	// RecomputeScenarios sets the status of the run's scenarios ids from
	// their cells: errors if any cell is failure or errors, else pending
	// if any expected cell is missing or pending, queued or running, else
	// cancelled if any cell is cancelled (a stopped run's cell that never
	// ran), else success. Unchanged rows are not written.
	RecomputeScenarios(ctx context.Context, p, run uuid.UUID, ids []uuid.UUID, expected []Cell) error
	// RecomputeRun is RecomputeScenarios over every scenario of the run.
	RecomputeRun(ctx context.Context, p, run uuid.UUID, expected []Cell) error

	// UpsertResults writes each result on its cell (run, scenario, step
	// key, repeat) in one statement: a new cell is inserted with r.ID, an
	// existing one keeps its id and creation stamps and has every other
	// field replaced. The cells must be distinct. A scenario that is not of
	// the result's run is ErrUnknownScenario.
	UpsertResults(ctx context.Context, p uuid.UUID, rs []Result) ([]Result, error)
	// Results returns the results matching f.
	Results(ctx context.Context, p uuid.UUID, f Filter) ([]Result, error)
	// ClaimResults marks running, with meta.claim = {worker, until}, each
	// listed cell of an active, open run that has no result, or is pending,
	// or is running with an expired claim, or has one of c.Statuses, or
	// any cell when c.Overwrite, and returns exactly the cells it marked.
	// It is one statement: of two concurrent claims of a cell, one wins.
	ClaimResults(ctx context.Context, p uuid.UUID, c Claim) ([]Result, error)
	// RenewClaims moves claim_until (and meta.claim.until) to c.Until on
	// each listed cell that is running with a claim of c.Worker, and
	// returns how many it moved; other cells are left as they are.
	RenewClaims(ctx context.Context, p uuid.UUID, c Claim) (int, error)
	// ResultCounts counts the run's results and scenarios by status.
	ResultCounts(ctx context.Context, p, run uuid.UUID) (scenarios, results Counts, err error)
	// PendingExecutable reports whether any of the run's scenarios lacks a
	// cell of expected, or has one pending, queued or running.
	PendingExecutable(ctx context.Context, p, run uuid.UUID, expected []Cell) (bool, error)
	// MarkUnrun sets to st, in one statement, every cell of the run's
	// scenarios that has not run: those pending or cancelled, and the
	// cells of expected a scenario has no result for (inserted). Cells
	// running (in flight: their worker writes them), done or failed are
	// left as they are. It returns how many cells it wrote.
	MarkUnrun(ctx context.Context, p, run uuid.UUID, expected []Cell, st Status) (int, error)
	// CellKeys returns the distinct (step key, repeat) of the run's
	// results whose key is not in except, ordered by both, at most limit.
	CellKeys(ctx context.Context, p, run uuid.UUID, except []string, limit int) ([]Cell, error)
	// DropSteps deletes the run's cells of the dropped step keys and the
	// scenarios that had a cell of droppedInputs and have none of
	// keptInputs; it returns how many of each it deleted.
	DropSteps(ctx context.Context, p, run uuid.UUID, dropped, droppedInputs, keptInputs []string) (cells, scenarios int, err error)

	// UpsertMetrics writes metrics on their shape's unique key (global,
	// variational, temporal); an existing metric keeps its id.
	UpsertMetrics(ctx context.Context, p uuid.UUID, ms []Metric) ([]Metric, error)
	// Metrics returns the metrics matching f.
	Metrics(ctx context.Context, p uuid.UUID, f Filter) ([]Metric, error)
	// ScenarioMetricData returns the data of the run's per-scenario
	// metrics (not archived), at most limit of them: all a comparison
	// reads of them.
	ScenarioMetricData(ctx context.Context, p, run uuid.UUID, limit int) ([]ScenarioData, error)
	// MetricKeys returns the distinct (step key, path) of the run's
	// per-scenario metrics that have a per-scenario value (a numeric
	// metric's mean, a binary one's counted frequencies: evalreports.scenarioValue),
	// sorted bytewise, at most limit.
	MetricKeys(ctx context.Context, p, run uuid.UUID, limit int) ([][2]string, error)

	// InsertQueue inserts q; a second default queue of a run is
	// ErrDefaultTaken, an id in use ErrIDTaken.
	InsertQueue(ctx context.Context, p uuid.UUID, q Queue) error
	// UpdateQueue replaces the queue's name, description, flags, status,
	// data, tags, meta, archive marker and update stamps.
	UpdateQueue(ctx context.Context, p uuid.UUID, q Queue) (*Queue, error)
	// Queues returns the queues matching f.
	Queues(ctx context.Context, p uuid.UUID, f Filter) ([]Queue, error)
	// DefaultQueue returns the run's default queue, archived or not.
	DefaultQueue(ctx context.Context, p, run uuid.UUID) (*Queue, error)
}
