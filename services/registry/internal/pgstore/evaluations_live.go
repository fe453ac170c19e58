package pgstore

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	ev "github.com/assayhq/assay/services/registry/internal/evaluations"
)

var _ ev.LiveRuns = (*Evaluations)(nil)

// ActiveLiveRuns lists the active, open live runs of every project (the
// live ticker's once-a-minute read; migration 00005 indexes it).
func (e *Evaluations) ActiveLiveRuns(ctx context.Context) ([]ev.LiveRun, error) {
	rows, err := e.pool.Query(ctx, `
SELECT project_id, id, created_by_id FROM evaluation_runs
WHERE (flags->>'is_live')::boolean AND (flags->>'is_active')::boolean
  AND NOT coalesce((flags->>'is_closed')::boolean, false) AND deleted_at IS NULL
ORDER BY project_id, id`)
	if err != nil {
		return nil, fmt.Errorf("list live runs: %w", err)
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (ev.LiveRun, error) {
		var r ev.LiveRun
		var user *uuid.UUID
		err := row.Scan(&r.ProjectID, &r.RunID, &user)
		r.UserID = user
		return r, err
	})
}
