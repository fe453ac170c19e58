#!/usr/bin/env bash
# One standard OpenTelemetry SDK exporter process against tracing's OTLP
# ports (issue 16, point 2; target: >= 20,000 spans/s, an export of 512
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
cd "$(dirname "$0")/../.."
secs=${1:-20}
rate=${2:-20000}
scripts/deps.sh up >/dev/null
eval "$(scripts/deps.sh env)"
work=$(mktemp -d)
db=benchsdk_$$
ch_url=${TEST_CLICKHOUSE_URL%/*}/$db
pg_url=${TEST_POSTGRES_URL%/*}
pg_url=${pg_url}/$db?sslmode=disable
nats_port=$((26000 + $$ % 1000))
api_port=$((27000 + $$ % 1000))
http_port=$((28000 + $$ % 1000))
grpc_port=$((29000 + $$ % 1000))
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  clickhouse-client --port "${CH_PORT:-59000}" -q "DROP DATABASE IF EXISTS $db" 2>/dev/null || true
  psql "$TEST_POSTGRES_URL" -qc "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

go build -o "$work/tracing" ./services/tracing/cmd/tracing
go build -o "$work/writer" ./services/writer/cmd/writer
go build -o "$work/sdkbench" ./services/tracing/cmd/sdkbench

psql "$TEST_POSTGRES_URL" -qc "CREATE DATABASE $db" >/dev/null
read -r project key < <("$work/sdkbench" -provision "$pg_url")

nats=$(command -v nats-server || echo /usr/sbin/nats-server)
"$nats" -a 127.0.0.1 -p "$nats_port" -js -sd "$work/nats" >"$work/nats.log" 2>&1 &
pids+=($!)
sleep 1
WRITER_NATS_URL=nats://127.0.0.1:$nats_port WRITER_CLICKHOUSE_URL=$ch_url WRITER_ADDR=127.0.0.1:0 \
  WRITER_LOG_LEVEL=warn "$work/writer" >"$work/writer.log" 2>&1 &
pids+=($!)
TRACING_NATS_URL=nats://127.0.0.1:$nats_port TRACING_CLICKHOUSE_URL=$ch_url TRACING_ADDR=127.0.0.1:$api_port \
  TRACING_INTERNAL_TOKEN=bench-token TRACING_POSTGRES_URL=$pg_url \
  TRACING_OTLP_HTTP_ADDR=127.0.0.1:$http_port TRACING_OTLP_GRPC_ADDR=127.0.0.1:$grpc_port TRACING_LOG_LEVEL=warn \
  "$work/tracing" >"$work/tracing.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$api_port/ready" >/dev/null && break; sleep 0.2; done

echo "== OpenTelemetry Go SDK exporter, batch span processor of 512 spans, ${rate} spans/s ended, ${secs}s per transport"
"$work/sdkbench" -key "$key" -project "$project" -http "http://127.0.0.1:$http_port" -grpc "127.0.0.1:$grpc_port" \
  -clickhouse "$ch_url" -duration "${secs}s" -rate "$rate"
