package pgstore

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/assayhq/assay/services/registry/internal/simpleevals"
)

var _ simpleevals.LiveRuns = (*Evaluations)(nil)

// ActiveLiveRuns lists the active, open live runs of every project (the
// live ticker's once-a-minute read; migration 00005 indexes it).
func (e *Evaluations) ActiveLiveRuns(ctx context.Context) ([]simpleevals.LiveRun, error) {
	rows, err := e.pool.Query(ctx, `
SELECT project_id, id, created_by_id FROM evaluation_runs
WHERE (flags->>'is_live')::boolean AND (flags->>'is_active')::boolean
  AND NOT coalesce((flags->>'is_closed')::boolean, false) AND deleted_at IS NULL
ORDER BY project_id, id`)
	if err != nil {
		return nil, fmt.Errorf("list live runs: %w", err)
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (simpleevals.LiveRun, error) {
		var r simpleevals.LiveRun
		var user *uuid.UUID
		err := row.Scan(&r.ProjectID, &r.RunID, &user)
		r.UserID = user
		return r, err
	})
}
