-- +goose Up
CREATE TABLE IF NOT EXISTS events (
    project_id UUID,
    id         String,
    at         DateTime,
    version    UInt64
) ENGINE = ReplacingMergeTree(version)
PARTITION BY toYYYYMM(at)
ORDER BY (project_id, id);
-- +goose Down
DROP TABLE events;
