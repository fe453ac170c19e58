package evaluation

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Stream is the EVALS work-queue stream's name: the registry (and the
// runtime itself) publishes jobs on it, the runtime's workers consume them
// (docs/decisions/0006). Its configuration and the publishing helper are
// in pkg/evaljob, the only part that needs JetStream.
const Stream = "EVALS"

// SubjectPrefix prefixes every job subject: evals.<project id>.
const SubjectPrefix = "evals."

// Subject is the subject of project's jobs.
func Subject(project string) string { return SubjectPrefix + project }

// Kind says what a job asks a worker to do.
type Kind string

const (
	// KindRun sources a started run's items (testset revision, query,
	// or the live window), mints its scenarios and input cells, and
	// fans the rest out as KindProcess jobs.
	KindRun Kind = "run"
	// KindProcess executes the cells of Slice that are not done yet (or
	// whose status is in Statuses; every cell of the slice when Overwrite).
	KindProcess Kind = "process"
	// KindWindow runs a live run over [Oldest, Newest): one per minute.
	KindWindow Kind = "window"
	// KindMetrics recomputes the run's metrics (metrics/refresh, refresh).
	KindMetrics Kind = "metrics"
)

// Slice narrows a job to some scenarios, steps and repeats; an empty list
// means all of them.
type Slice struct {
	ScenarioIDs []string `json:"scenario_ids,omitempty"`
	StepKeys    []string `json:"step_keys,omitempty"`
	RepeatIdxs  []int    `json:"repeat_idxs,omitempty"`
}

// Job is one message of the EVALS stream. It is JSON (docs/decisions/0006):
// it is small, written once per slice of a run, and read by one Go consumer.
type Job struct {
	Kind      Kind   `json:"kind"`
	ProjectID string `json:"project_id"`
	// UserID is who started the run: the worker writes results and
	// invokes on behalf of this user in ProjectID, with the internal token.
	UserID string `json:"user_id,omitempty"`
	RunID  string `json:"run_id"`
	Slice  Slice  `json:"slice,omitzero"`
	// Statuses re-processes the cells whose current status is one of
	// these (for example failure and errors); empty means pending only.
	Statuses  []string `json:"statuses,omitempty"`
	Overwrite bool     `json:"overwrite,omitempty"`
	// Oldest and Newest bound a KindWindow job's query window.
	Oldest *time.Time `json:"oldest,omitempty"`
	Newest *time.Time `json:"newest,omitempty"`
	// ID names the job for JetStream's duplicate window (Nats-Msg-Id):
	// a publisher that retries, or several replicas publishing the same
	// live window, store it once. Empty means no de-duplication.
	ID string `json:"id,omitempty"`
}

// DecodeJob reads a job message; subject must be the job's project subject.
func DecodeJob(subject string, data []byte) (Job, error) {
	var j Job
	if err := json.Unmarshal(data, &j); err != nil {
		return j, fmt.Errorf("evaluation: job: %w", err)
	}
	if j.ProjectID == "" || j.RunID == "" || strings.TrimPrefix(subject, SubjectPrefix) != j.ProjectID {
		return j, fmt.Errorf("evaluation: job for project %q on subject %q", j.ProjectID, subject)
	}
	return j, nil
}
