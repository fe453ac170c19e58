package evalclient

import (
	"encoding/json"
	"time"
)

// The records' wire shapes (the registry's evaluations.model), reduced to what
// the worker reads and writes. They are declared here because a service never
// imports another's internal packages; the JSON names are the contract.

// Status values of runs, scenarios and results.
const (
	Pending   = "pending"
	Queued    = "queued"
	Running   = "running"
	Success   = "success"
	Failure   = "failure"
	Errors    = "errors"
	Cancelled = "cancelled"
)

// Step types and origins.
const (
	TypeInput      = "input"
	TypeInvocation = "invocation"
	TypeAnnotation = "annotation"

	OriginCustom = "custom"
	OriginHuman  = "human"
	OriginAuto   = "auto"
)

// Ref names a registry entity.
type Ref struct {
	ID      string `json:"id,omitempty"`
	Slug    string `json:"slug,omitempty"`
	Version string `json:"version,omitempty"`
}

// Step is one step of a run.
type Step struct {
	Key        string         `json:"key"`
	Type       string         `json:"type"`
	Origin     string         `json:"origin"`
	References map[string]Ref `json:"references,omitempty"`
	Inputs     []struct {
		Key string `json:"key"`
	} `json:"inputs,omitempty"`
	Schemas *struct {
		Outputs json.RawMessage `json:"outputs,omitempty"`
	} `json:"schemas,omitempty"`
}

// Concurrency bounds a run's execution (nil fields take the defaults).
type Concurrency struct {
	BatchSize  *int     `json:"batch_size,omitempty"`
	MaxRetries *int     `json:"max_retries,omitempty"`
	RetryDelay *float64 `json:"retry_delay,omitempty"`
}

// RunData is a run's configuration.
type RunData struct {
	Steps       []Step       `json:"steps,omitempty"`
	Repeats     *int         `json:"repeats,omitempty"`
	Concurrency *Concurrency `json:"concurrency,omitempty"`
	// ModelCache false: the run's model calls are never answered from the
	// model-call cache.
	ModelCache *bool `json:"model_cache,omitempty"`
	// Budget is the most the run's model calls may cost (USD, by the
	// price table); a run reaching it is cancelled with the reason.
	Budget *float64 `json:"budget,omitempty"`
}

// RunFlags are a run's flags.
type RunFlags struct {
	IsLive   bool `json:"is_live"`
	IsActive bool `json:"is_active"`
	IsClosed bool `json:"is_closed"`
	IsQueue  bool `json:"is_queue"`
	IsCached bool `json:"is_cached"`
	IsSplit  bool `json:"is_split"`
}

// Run is an evaluation run.
type Run struct {
	ID     string          `json:"id"`
	Flags  RunFlags        `json:"flags"`
	Status string          `json:"status"`
	Data   RunData         `json:"data"`
	Meta   json.RawMessage `json:"meta,omitempty"`
}

// Repeats is the run's repeat count (default 1).
func (r *Run) Repeats() int {
	if r.Data.Repeats == nil || *r.Data.Repeats < 1 {
		return 1
	}
	return *r.Data.Repeats
}

// Scenario is one item of a run.
type Scenario struct {
	ID        string          `json:"id"`
	RunID     string          `json:"run_id"`
	Status    string          `json:"status,omitempty"`
	Meta      json.RawMessage `json:"meta,omitempty"`
	Interval  *int            `json:"interval,omitempty"`
	Timestamp *time.Time      `json:"timestamp,omitempty"`
}

// Result is one cell: (run, scenario, step key, repeat).
type Result struct {
	ID         string          `json:"id,omitempty"`
	RunID      string          `json:"run_id"`
	ScenarioID string          `json:"scenario_id"`
	StepKey    string          `json:"step_key"`
	RepeatIdx  int             `json:"repeat_idx"`
	Status     string          `json:"status"`
	TraceID    string          `json:"trace_id,omitempty"`
	TestcaseID string          `json:"testcase_id,omitempty"`
	HashID     string          `json:"hash_id,omitempty"`
	Error      json.RawMessage `json:"error,omitempty"`
	Interval   *int            `json:"interval,omitempty"`
	Timestamp  *time.Time      `json:"timestamp,omitempty"`
	Meta       json.RawMessage `json:"meta,omitempty"`
}

// Cell names a result cell.
type Cell struct {
	ScenarioID string `json:"scenario_id"`
	StepKey    string `json:"step_key"`
	RepeatIdx  int    `json:"repeat_idx"`
}

// Of is the cell r fills.
func (r Result) Of() Cell {
	return Cell{ScenarioID: r.ScenarioID, StepKey: r.StepKey, RepeatIdx: r.RepeatIdx}
}

// Claim asks the registry to mark cells running for one worker.
type Claim struct {
	RunID        string   `json:"run_id"`
	Worker       string   `json:"worker"`
	LeaseSeconds int      `json:"lease_seconds"`
	Statuses     []string `json:"statuses,omitempty"`
	Overwrite    bool     `json:"overwrite,omitempty"`
	Cells        []Cell   `json:"cells"`
}

// Metric is a run's metric record: global, per scenario or per time bucket.
type Metric struct {
	RunID      string          `json:"run_id"`
	ScenarioID *string         `json:"scenario_id,omitempty"`
	Timestamp  *time.Time      `json:"timestamp,omitempty"`
	Interval   *int            `json:"interval,omitempty"`
	Status     string          `json:"status"`
	Data       json.RawMessage `json:"data,omitempty"`
}

// Testcase is a testcase of a testset revision.
type Testcase struct {
	ID   string         `json:"id"`
	Data map[string]any `json:"data"`
}

// TestsetRevision is a pinned testset revision with its testcase ids.
type TestsetRevision struct {
	ID          string
	TestcaseIDs []string
}

// QueryRevision is a pinned saved query: its filter, and the window it
// was saved with (the batch topology runs it as saved).
type QueryRevision struct {
	ID        string
	Filtering json.RawMessage
	Oldest    *time.Time
	Newest    *time.Time
	// Rate is the share of matching traces kept (windowing.rate, 0..1;
	// nil keeps every one): an online evaluation's sampling rate.
	Rate *float64
}

// Span is a stored span as the tracing API returns it.
type Span struct {
	TraceID    string          `json:"trace_id"`
	SpanID     string          `json:"span_id"`
	ParentID   string          `json:"parent_id,omitempty"`
	StartTime  string          `json:"start_time,omitempty"`
	Attributes map[string]any  `json:"attributes,omitempty"`
	References json.RawMessage `json:"references,omitempty"`
	Links      json.RawMessage `json:"links,omitempty"`
}

// Ag reads attributes.ag.<path…> (nil when absent).
func (s *Span) Ag(path ...string) any {
	var v any = s.Attributes["ag"]
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}
