-- Assay's span schema for a ClickHouse cluster (issue 17 point 4): NOT the
-- default, NOT applied by the services, and NOT TESTED here (no replicated
-- ClickHouse ran in this repository's tests). See cluster.md.
--
-- {cluster} is the cluster name in remote_servers (write it out where the
-- server does not expand the macro in ON CLUSTER); {shard} and {replica}
-- are macros each server defines (the ClickHouse operators set them).
-- Apply once, from any node, before starting tracing and the writer with
-- TRACING_CLICKHOUSE_MIGRATE=false and WRITER_CLICKHOUSE_MIGRATE=false.

CREATE DATABASE IF NOT EXISTS assay ON CLUSTER '{cluster}';

-- Each shard's rows, replicated between the shard's replicas through
-- ZooKeeper (or ClickHouse Keeper). Same columns, version, partitioning and
-- order as the single-node table (pkg/chspans/migrations, current state).
CREATE TABLE IF NOT EXISTS assay.spans_local ON CLUSTER '{cluster}' (
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
)
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/assay/spans_local', '{replica}', version)
PARTITION BY (expires, intDiv(start_us, 86400000000))
ORDER BY (project_id, trace_id, span_id)
-- Retention: the writer drops expired partitions of the table named spans,
-- which here is the Distributed table and has no parts, so it drops nothing.
-- On ClickHouse 19.6 or later, let each replica expire rows itself by adding,
-- before SETTINGS above:  TTL expires
-- (or drop partitions from cron: ALTER TABLE assay.spans_local ON CLUSTER
-- '{cluster}' DROP PARTITION ...; see cluster.md).
SETTINGS index_granularity = 1024;

-- What the services read and write: inserts are routed by the sharding
-- key, so every version of one trace's spans lands on one shard and FINAL
-- (which merges within a shard) still folds re-ingests and tombstones.
CREATE TABLE IF NOT EXISTS assay.spans ON CLUSTER '{cluster}' AS assay.spans_local
ENGINE = Distributed('{cluster}', assay, spans_local, cityHash64(project_id, trace_id));
