-- +goose Up
-- Retention counts from ingest time, not from a span's own start time:
-- expires was the start day plus the project's retention, so a
-- span dated before the retention (a backfill, a replay, a fixture with a
-- fixed timestamp) was acknowledged, hidden from every read at once and
-- dropped by the next retention run. The writer now computes expires from
-- the batch's received time, which is also the row's version (ns); this
-- migration gives the rows already written the expiry the writer would have
-- given them. The retention a row was given is its expiry minus its start
-- day, so its new expiry is the old one plus (ingest day - start day):
-- whole days added to a Date, no time zone involved, the same on 18.16 and
-- current ClickHouse.
--
-- expires is in the partition key, so the table is copied and swapped, as
-- in migration 2 (apply it with the writer stopped; the writer applies it
-- itself before consuming). The new table's expires column carries a
-- COMMENT: that is how a second run (after an interruption between the
-- swap and the migration's record) knows the rows in spans are already
-- shifted, and copies them unchanged instead of shifting them twice. Every
-- statement can run again after an interruption at any point; a repeated
-- copy inserts identical rows, which ReplacingMergeTree collapses.
--
-- A tombstone written before this migration carried its span's start time,
-- so it moves to its own ingest day's expiry, later than its span's: it
-- leaves the span's partition but outlives it, and every read takes the
-- latest version across partitions. Tombstones written from now on carry
-- the expiry of the span they replace and stay in its partition.
DROP TABLE IF EXISTS spans_v2_old;
CREATE TABLE IF NOT EXISTS spans_v3_new (
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
    expires Date COMMENT 'the day the row is dropped: its ingest day (version) plus its project''s retention, plus one'
) ENGINE = ReplacingMergeTree(version)
PARTITION BY (expires, intDiv(start_us, 86400000000))
ORDER BY (project_id, trace_id, span_id)
SETTINGS index_granularity = 1024;
INSERT INTO spans_v3_new (project_id, trace_id, span_id, parent_id, trace_type, span_type, span_kind, span_name, start_us, end_us, status_code, status_message, session_id, user_id, agent_id, attributes, attr_keys, attr_values, events, event_names, links, links_set, link_trace_ids, link_span_ids, link_keys, refs, ref_keys, ref_ids, ref_slugs, ref_versions, hashes, hash_ids, created_us, created_by_id, deleted, version, expires)
SELECT project_id, trace_id, span_id, parent_id, trace_type, span_type, span_kind, span_name, start_us, end_us, status_code, status_message, session_id, user_id, agent_id, attributes, attr_keys, attr_values, events, event_names, links, links_set, link_trace_ids, link_span_ids, link_keys, refs, ref_keys, ref_ids, ref_slugs, ref_versions, hashes, hash_ids, created_us, created_by_id, deleted, version, expires + if((SELECT count() FROM system.columns WHERE database = currentDatabase() AND table = 'spans' AND name = 'expires' AND comment != '') > 0, 0, intDiv(version, 86400000000000) - intDiv(start_us, 86400000000)) FROM spans;
RENAME TABLE spans TO spans_v2_old, spans_v3_new TO spans;
DROP TABLE IF EXISTS spans_v2_old;
