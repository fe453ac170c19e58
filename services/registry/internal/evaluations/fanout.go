package evaluations

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"github.com/assayhq/assay/pkg/errs"
	"github.com/assayhq/assay/pkg/evaluation"
	"github.com/assayhq/assay/pkg/scope"
)

// MaxFanOut bounds the jobs of one fan-out request: a run job publishes
// one process job per chunk of scenarios, and the worker sends them in
// requests of at most this many.
const MaxFanOut = 1000

// FanOut publishes the process jobs a run job fans out in the evaluation
// worker. Only the registry may publish on the EVALS stream (see
// deployments/nats/auth.conf), so the worker hands its jobs here. Each job
// keeps the id the worker derived from its own job's id, so a redelivered
// run job that fans out again is stored once by the stream's duplicate
// window. A job is published only for a run of the caller's project, as
// the user the caller acts for, and only as a process job: the worker
// starts no other kind of job.
func (s *Service) FanOut(ctx context.Context, sc scope.Scope, jobs []evaluation.Job) error {
	if len(jobs) > MaxFanOut {
		return errs.WithDetail(errs.Invalid, "evaluations.too_many_jobs", "Too many jobs",
			fmt.Sprintf("jobs: %d jobs, at most %d per request", len(jobs), MaxFanOut))
	}
	user := ""
	if sc.UserID != uuid.Nil {
		user = sc.UserID.String()
	}
	runs := map[string]bool{}
	for i, j := range jobs {
		at := fmt.Sprintf("jobs[%d]", i)
		switch {
		case j.Kind != evaluation.KindProcess:
			return errs.WithDetail(errs.Invalid, "evaluations.job_kind", "Invalid job",
				fmt.Sprintf("%s.kind: %q; only %q jobs are fanned out", at, j.Kind, evaluation.KindProcess))
		case j.ProjectID != sc.ProjectID.String():
			return errs.WithDetail(errs.Invalid, "evaluations.job_project", "Invalid job",
				fmt.Sprintf("%s.project_id: %q is not the caller's project", at, j.ProjectID))
		case j.UserID != user:
			return errs.WithDetail(errs.Invalid, "evaluations.job_user", "Invalid job",
				fmt.Sprintf("%s.user_id: %q is not the caller's user", at, j.UserID))
		}
		if runs[j.RunID] {
			continue
		}
		id, err := uuid.Parse(j.RunID)
		if err != nil {
			return errs.WithDetail(errs.Invalid, "evaluations.job_run", "Invalid job",
				fmt.Sprintf("%s.run_id: %q is not a uuid", at, j.RunID))
		}
		r, err := s.Run(ctx, sc, id)
		if err != nil {
			return err
		}
		if r == nil {
			return RunNotFound(j.RunID)
		}
		runs[j.RunID] = true
	}
	if s.jobs == nil {
		return ErrJobsUnavailable
	}
	for _, j := range jobs {
		if err := s.jobs.Publish(ctx, j); err != nil {
			return err
		}
	}
	return nil
}
