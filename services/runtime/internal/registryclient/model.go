package registryclient

import (
	"encoding/json"
	"time"

	"github.com/assayhq/assay/pkg/evaluation"
)

// The records themselves (runs, scenarios, results, metrics) are the
// contract in pkg/evaluation; what is declared here is what only this
// client sends or reads: the claim request, and the testset and query
// shapes of the revisions a run reads.

// Claim asks the registry to mark cells running for one worker.
type Claim struct {
	RunID        string            `json:"run_id"`
	Worker       string            `json:"worker"`
	LeaseSeconds int               `json:"lease_seconds"`
	Statuses     []string          `json:"statuses,omitempty"`
	Overwrite    bool              `json:"overwrite,omitempty"`
	Cells        []evaluation.Cell `json:"cells"`
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
