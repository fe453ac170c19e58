-- +goose Up
-- The runtime's model-call cache (docs/decisions/0008-model-call-cache-in-postgresql.md):
-- one answer per project and content key (a SHA-256 of the call), read by
-- every runtime replica; rows past expires_at are never read and are
-- deleted a batch at a time by the writes.
CREATE TABLE model_call_cache (
    project_id uuid NOT NULL,
    key        text NOT NULL,
    response   jsonb NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL,
    PRIMARY KEY (project_id, key)
);
CREATE INDEX model_call_cache_expires ON model_call_cache (expires_at);

-- A run's cells waiting on a provider's rate limit, as the runtime reports
-- them: the progress answer shows the waits not yet over.
CREATE TABLE evaluation_provider_waits (
    project_id uuid NOT NULL,
    run_id     uuid NOT NULL,
    provider   text NOT NULL,
    until      timestamptz NOT NULL,
    PRIMARY KEY (project_id, run_id, provider)
);

-- +goose Down
DROP TABLE evaluation_provider_waits;
DROP TABLE model_call_cache;
