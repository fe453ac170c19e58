-- +goose Up
-- Spans, one row per (project_id, trace_id, span_id) once merged. version is
-- the ingest time: a re-ingest replaces a span, a redelivered batch changes
-- nothing, and a tombstone (deleted = 1) hides it. Readers use FINAL.
-- Partitions are the expiry day, so retention is a partition drop and
-- projects with different retention periods share the table.
CREATE TABLE IF NOT EXISTS spans (
    project_id String,
    trace_id String,
    span_id String,
    parent_id String,
    trace_type String,
    span_type String,
    span_kind String,
    span_name String,
    start_us Int64,
    end_us Int64,
    status_code String,
    status_message String,
    session_id String,
    user_id String,
    agent_id String,
    attributes String,
    attr_keys Array(String),
    attr_values Array(String),
    events String,
    event_names Array(String),
    links String,
    links_set UInt8,
    link_trace_ids Array(String),
    link_span_ids Array(String),
    link_keys Array(String),
    refs String,
    ref_keys Array(String),
    ref_ids Array(String),
    ref_slugs Array(String),
    ref_versions Array(String),
    hashes String,
    hash_ids Array(String),
    created_us Int64,
    created_by_id String,
    deleted UInt8,
    version UInt64,
    expires Date
) ENGINE = ReplacingMergeTree(version)
PARTITION BY expires
ORDER BY (project_id, trace_id, span_id);
