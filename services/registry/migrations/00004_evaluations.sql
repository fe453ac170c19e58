-- +goose Up
-- Evaluation records (docs/decisions/0006): runs, their scenarios, result cells,
-- metrics and annotation queues. project_id leads every key and index, and
-- every child refers to its run (and scenario) through keys that include
-- the project, so a row can never point into another project. Deleting a
-- run removes everything under it.
CREATE TABLE evaluation_runs (
    project_id    uuid        NOT NULL,
    id            uuid        NOT NULL,
    version       text        NOT NULL,
    name          text,
    description   text,
    flags         jsonb       NOT NULL,
    tags          jsonb,
    meta          jsonb,
    status        text        NOT NULL,
    data          jsonb       NOT NULL,
    -- The flattened step references ({id, slug, version} of every step
    -- reference, plus "key": the step key), recomputed on every write: it
    -- backs run.references queries with one containment test.
    "references"  jsonb       NOT NULL DEFAULT '[]',
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz,
    deleted_at    timestamptz,
    created_by_id uuid,
    updated_by_id uuid,
    deleted_by_id uuid,
    PRIMARY KEY (project_id, id),
    CHECK (status IN ('pending', 'queued', 'running', 'success', 'failure', 'errors', 'cancelled'))
);
CREATE INDEX evaluation_runs_created ON evaluation_runs (project_id, created_at, id);

CREATE TABLE evaluation_scenarios (
    project_id    uuid        NOT NULL,
    id            uuid        NOT NULL,
    run_id        uuid        NOT NULL,
    status        text        NOT NULL,
    flags         jsonb,
    tags          jsonb,
    meta          jsonb,
    interval_min  integer,
    ts            timestamptz,
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz,
    deleted_at    timestamptz,
    created_by_id uuid,
    updated_by_id uuid,
    deleted_by_id uuid,
    PRIMARY KEY (project_id, id),
    -- The results' and metrics' foreign key: a cell's scenario is of its run.
    UNIQUE (project_id, run_id, id),
    FOREIGN KEY (project_id, run_id) REFERENCES evaluation_runs (project_id, id) ON DELETE CASCADE,
    CHECK (status IN ('pending', 'queued', 'running', 'success', 'failure', 'errors', 'cancelled'))
);
CREATE INDEX evaluation_scenarios_ts ON evaluation_scenarios (project_id, run_id, ts) WHERE ts IS NOT NULL;

-- One row per cell: (run, scenario, step key, repeat).
CREATE TABLE evaluation_results (
    project_id    uuid        NOT NULL,
    id            uuid        NOT NULL,
    run_id        uuid        NOT NULL,
    scenario_id   uuid        NOT NULL,
    step_key      text        NOT NULL,
    repeat_idx    integer     NOT NULL DEFAULT 0,
    status        text        NOT NULL,
    trace_id      text,
    testcase_id   uuid,
    hash_id       text,
    error         jsonb,
    interval_min  integer,
    ts            timestamptz,
    flags         jsonb,
    tags          jsonb,
    meta          jsonb,
    -- Until when the worker that claimed this running cell owns it
    -- (meta.claim shows it too; this column is what claims compare, so a
    -- client's meta can never make a claim fail or succeed).
    claim_until   timestamptz,
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz,
    deleted_at    timestamptz,
    created_by_id uuid,
    updated_by_id uuid,
    deleted_by_id uuid,
    PRIMARY KEY (project_id, id),
    UNIQUE (project_id, run_id, scenario_id, step_key, repeat_idx),
    FOREIGN KEY (project_id, run_id) REFERENCES evaluation_runs (project_id, id) ON DELETE CASCADE,
    FOREIGN KEY (project_id, run_id, scenario_id) REFERENCES evaluation_scenarios (project_id, run_id, id) ON DELETE CASCADE,
    CHECK (repeat_idx >= 0),
    CHECK (status IN ('pending', 'queued', 'running', 'success', 'failure', 'errors', 'cancelled'))
);
-- A run's results page in id order (windowing) without sorting the run.
CREATE INDEX evaluation_results_run ON evaluation_results (project_id, run_id, id);
-- A trace links back to its cell (results query by trace_id).
CREATE INDEX evaluation_results_trace ON evaluation_results (project_id, trace_id) WHERE trace_id IS NOT NULL;
-- The result cache (is_cached) looks cells up by hash.
CREATE INDEX evaluation_results_hash ON evaluation_results (project_id, hash_id) WHERE hash_id IS NOT NULL;

-- Metrics come in three shapes, each unique per run with its own partial
-- index (the upsert's conflict target): global (no scenario, no
-- timestamp), variational (a scenario) and temporal (a timestamp).
CREATE TABLE evaluation_metrics (
    project_id    uuid        NOT NULL,
    id            uuid        NOT NULL,
    run_id        uuid        NOT NULL,
    scenario_id   uuid,
    ts            timestamptz,
    interval_min  integer,
    status        text        NOT NULL,
    data          jsonb,
    flags         jsonb,
    tags          jsonb,
    meta          jsonb,
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz,
    deleted_at    timestamptz,
    created_by_id uuid,
    updated_by_id uuid,
    deleted_by_id uuid,
    PRIMARY KEY (project_id, id),
    FOREIGN KEY (project_id, run_id) REFERENCES evaluation_runs (project_id, id) ON DELETE CASCADE,
    FOREIGN KEY (project_id, run_id, scenario_id) REFERENCES evaluation_scenarios (project_id, run_id, id) ON DELETE CASCADE,
    CHECK (scenario_id IS NULL OR ts IS NULL),
    CHECK (status IN ('pending', 'queued', 'running', 'success', 'failure', 'errors', 'cancelled'))
);
CREATE UNIQUE INDEX evaluation_metrics_global ON evaluation_metrics (project_id, run_id)
    WHERE scenario_id IS NULL AND ts IS NULL;
CREATE UNIQUE INDEX evaluation_metrics_variational ON evaluation_metrics (project_id, run_id, scenario_id)
    WHERE scenario_id IS NOT NULL;
CREATE UNIQUE INDEX evaluation_metrics_temporal ON evaluation_metrics (project_id, run_id, ts)
    WHERE ts IS NOT NULL AND scenario_id IS NULL;

-- Annotation queues over a run; deleted_at marks an archived queue. A run
-- has at most one default queue (archived or not).
CREATE TABLE evaluation_queues (
    project_id    uuid        NOT NULL,
    id            uuid        NOT NULL,
    run_id        uuid        NOT NULL,
    name          text,
    description   text,
    is_default    boolean     NOT NULL DEFAULT false,
    flags         jsonb       NOT NULL,
    status        text        NOT NULL,
    data          jsonb       NOT NULL,
    tags          jsonb,
    meta          jsonb,
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz,
    deleted_at    timestamptz,
    created_by_id uuid,
    updated_by_id uuid,
    deleted_by_id uuid,
    PRIMARY KEY (project_id, id),
    FOREIGN KEY (project_id, run_id) REFERENCES evaluation_runs (project_id, id) ON DELETE CASCADE,
    CHECK (status IN ('pending', 'queued', 'running', 'success', 'failure', 'errors', 'cancelled'))
);
CREATE UNIQUE INDEX evaluation_queues_default ON evaluation_queues (project_id, run_id) WHERE is_default;
CREATE INDEX evaluation_queues_run ON evaluation_queues (project_id, run_id);

-- +goose Down
DROP TABLE evaluation_queues;
DROP TABLE evaluation_metrics;
DROP TABLE evaluation_results;
DROP TABLE evaluation_scenarios;
DROP TABLE evaluation_runs;
