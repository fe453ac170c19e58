-- The span schema on a ClickHouse cluster, applied by chspans.Migrate when
-- <PREFIX>_CLICKHOUSE_CLUSTER names the cluster (remote_servers) instead of
-- the single-node migrations in migrations/. {cluster} and {database} are
-- replaced by the service; {shard} and {replica} are macros each server
-- defines (ClickHouse operators set them). Every statement is idempotent and
-- runs ON CLUSTER, so it waits for every host (a host down at the time makes
-- the start wait up to distributed_ddl_task_timeout). It is the current
-- state of migrations/: a later migration there needs its cluster form here.
-- Tested on two 18.16 replicas and ZooKeeper (pkg/chspans cluster_test.go).

CREATE DATABASE IF NOT EXISTS {database} ON CLUSTER {cluster};

-- Each shard's rows, replicated between the shard's replicas through
-- ZooKeeper (or ClickHouse Keeper). Same columns, version, partitioning and
-- order as the single-node table (pkg/chspans/migrations, current state).
CREATE TABLE IF NOT EXISTS {database}.spans_local ON CLUSTER {cluster} (
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
ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/{database}/spans_local', '{replica}', version)
PARTITION BY (expires, intDiv(start_us, 86400000000))
ORDER BY (project_id, trace_id, span_id)
-- Retention: the writer (WRITER_CLICKHOUSE_CLUSTER set) drops expired
-- partitions of spans_local ON CLUSTER, as it drops those of spans on one
-- server.
SETTINGS index_granularity = 1024;

-- What the services read and write: inserts are routed by the sharding
-- key, so every version of one trace's spans lands on one shard and FINAL
-- (which merges within a shard) still folds re-ingests and tombstones.
CREATE TABLE IF NOT EXISTS {database}.spans ON CLUSTER {cluster} AS {database}.spans_local
ENGINE = Distributed({cluster}, {database}, spans_local, cityHash64(project_id, trace_id));
