package evaluations

import (
	"github.com/assayhq/assay/pkg/errs"
)

// ErrNotFound is the store's sentinel for an absent record; the service
// maps it to the empty envelope (reads) or a 404 (writes by path id).
var ErrNotFound = errs.New(errs.NotFound, "evaluations.not_found", "Evaluation record not found.")

// ErrIDTaken is the 409 of a create whose id is already used.
var ErrIDTaken = errs.New(errs.Conflict, "evaluations.id_taken", "A record with this id already exists.")

// ErrDefaultTaken is the 409 of a second default queue on one run.
var ErrDefaultTaken = errs.Message(errs.Conflict, "evaluations.default_queue_exists",
	"This run already has a default queue.", nil)

// ErrUnknownScenario is the 422 of a result or metric whose scenario is
// not a scenario of its run.
var ErrUnknownScenario = errs.Field("Scenario not found in this run", nil, "body", "scenario_id")

// ErrJobsUnavailable is the 503 of a route that publishes a job while the
// registry has no job stream configured.
var ErrJobsUnavailable = errs.New(errs.Unavailable, "evaluations.jobs_unavailable", "jobs unavailable")

// ClosedRun is the compatible platform's 409 for a write to a closed run or to its
// scenarios, results, metrics or queues.
func ClosedRun(runID string) error {
	return errs.Message(errs.Conflict, "evaluations.run_closed", "Cannot modify a closed evaluation.",
		map[string]any{"run_id": runID})
}

// RunNotFound is the 404 of a write aimed at a run that does not exist.
func RunNotFound(runID string, loc ...any) error {
	if len(loc) > 0 {
		return errs.Field("Run not found", runID, loc...)
	}
	return errs.Message(errs.NotFound, "evaluations.run_not_found", "Evaluation run not found.", map[string]any{"run_id": runID})
}

// errDefaultQueueDemote is the 409 of an edit that turns a default queue
// into a plain one, and of a hard delete of a default queue.
var errDefaultQueueDemote = errs.Message(errs.Conflict, "evaluations.default_queue",
	"A default queue cannot be demoted or deleted; archive it instead.", nil)
