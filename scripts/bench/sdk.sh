#!/usr/bin/env bash
# One standard OpenTelemetry SDK exporter process against tracing's OTLP
# ports (target: >= 20,000 spans/s, an export of 512
# spans answered in <= 25 ms p50 and <= 60 ms p99, the two transports within
# 10 % of each other). Same pipeline as load.sh (private NATS, tracing and
# writer against the ClickHouse of scripts/deps.sh, database benchsdk_<pid>,
# dropped at the end), with tracing's OTLP/HTTP and OTLP/gRPC ports on and
# its API keys in a private PostgreSQL database (dropped at the end). Then
# services/tracing/cmd/sdkbench: the real Go SDK, a batch span processor of
# 512-span batches (one export in flight), ~1.1 KB spans ended at -rate
# spans/s, first over HTTP protobuf, then over gRPC.
# Usage: scripts/bench/sdk.sh [seconds per transport, default 20] [spans/s, default 20000]
set -euo pipefail
source "$(dirname "$0")/pipeline.sh"
secs=${1:-20}
rate=${2:-20000}
drop_pg() { psql "$TEST_POSTGRES_URL" -qc "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null 2>&1; }
on_exit=drop_pg
pipeline_init benchsdk
pg_url=${TEST_POSTGRES_URL%/*}/$db?sslmode=disable
http_port=$((port_base + 2))
grpc_port=$((port_base + 3))
pipeline_build sdkbench
psql "$TEST_POSTGRES_URL" -qc "CREATE DATABASE $db" >/dev/null
read -r project key < <("$work/sdkbench" -provision "$pg_url")
pipeline_start TRACING_POSTGRES_URL="$pg_url" TRACING_OTLP_HTTP_ADDR="127.0.0.1:$http_port" TRACING_OTLP_GRPC_ADDR="127.0.0.1:$grpc_port"

echo "== OpenTelemetry Go SDK exporter, batch span processor of 512 spans, ${rate} spans/s ended, ${secs}s per transport"
"$work/sdkbench" -key "$key" -project "$project" -http "http://127.0.0.1:$http_port" -grpc "127.0.0.1:$grpc_port" \
  -clickhouse "$ch_url" -duration "${secs}s" -rate "$rate"
