-- +goose Up
-- The live ticker reads the active, open live runs of every project once a
-- minute (on every registry replica): a partial index keeps that read to
-- the few rows it returns.
CREATE INDEX evaluation_runs_live ON evaluation_runs (project_id, id)
    WHERE (flags->>'is_live')::boolean AND (flags->>'is_active')::boolean
      AND NOT coalesce((flags->>'is_closed')::boolean, false) AND deleted_at IS NULL;

-- +goose Down
DROP INDEX evaluation_runs_live;
