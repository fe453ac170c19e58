#!/usr/bin/env bash
# Load test of the span pipeline, everything on this machine:
#   OTLP/HTTP protobuf → tracing → JetStream → writer → ClickHouse.
# Starts a private NATS and its own tracing and writer on spare ports against
# the ClickHouse that scripts/deps.sh runs (database bench_<pid>, dropped at
# the end), then runs services/tracing/cmd/loadgen:
#   1. as fast as it can (sustained end-to-end spans/s),
#   2. at 10,000 spans/s (ingest p99 and freshness p99),
#   3. bytes per span on disk of what runs 1 and 2 stored,
#   4. raw ClickHouse inserts of the same rows (the ceiling),
#   5. the compatible platform's span path re-created in the PostgreSQL of
#      scripts/deps.sh (loadgen -pg: 18-index table, 50-span transactions
#      of per-row upserts, 2 writers, the same spans) and the ratio of run 1
#      to it.
# Usage: scripts/bench/load.sh [seconds per run, default 20]
set -euo pipefail
cd "$(dirname "$0")/../.."
secs=${1:-20}
scripts/deps.sh up >/dev/null
eval "$(scripts/deps.sh env)"
work=$(mktemp -d)
db=bench_$$
ch_url=${TEST_CLICKHOUSE_URL%/*}/$db
nats_port=$((24000 + $$ % 1000))
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  clickhouse-client --port "${CH_PORT:-59000}" -q "DROP DATABASE IF EXISTS $db" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

go build -o "$work/tracing" ./services/tracing/cmd/tracing
go build -o "$work/writer" ./services/writer/cmd/writer
go build -o "$work/loadgen" ./services/tracing/cmd/loadgen

nats=$(command -v nats-server || echo /usr/sbin/nats-server)
"$nats" -a 127.0.0.1 -p "$nats_port" -js -sd "$work/nats" >"$work/nats.log" 2>&1 &
pids+=($!)
sleep 1

WRITER_NATS_URL=nats://127.0.0.1:$nats_port WRITER_CLICKHOUSE_URL=$ch_url WRITER_ADDR=127.0.0.1:0 \
  WRITER_LOG_LEVEL=warn "$work/writer" >"$work/writer.log" 2>&1 &
pids+=($!)
TRACING_NATS_URL=nats://127.0.0.1:$nats_port TRACING_CLICKHOUSE_URL=$ch_url TRACING_ADDR=127.0.0.1:18083 \
  TRACING_INTERNAL_TOKEN=bench-token TRACING_OTLP_HTTP_ADDR= TRACING_OTLP_GRPC_ADDR= TRACING_LOG_LEVEL=warn \
  "$work/tracing" >"$work/tracing.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do curl -sf http://127.0.0.1:18083/ready >/dev/null && break; sleep 0.2; done

echo "== 1. sustained end-to-end, as fast as possible (4 senders, 500 spans/request, ${secs}s)"
"$work/loadgen" -clickhouse "$ch_url" -duration "${secs}s" -workers 4 -batch 500 | tee "$work/run1.txt"
echo
echo "== 2. latency at 10,000 spans/s (100 spans/request, ${secs}s)"
"$work/loadgen" -clickhouse "$ch_url" -duration "${secs}s" -workers 8 -batch 100 -rate 10000
echo
echo "== 3. storage: bytes per span on disk, compressed (the compatible platform: 3.4 KB)"
scripts/bench/storage.sh "$db"
echo
echo "== 4. raw ClickHouse insert ceiling (same rows, writer's insert path, no pipeline running)"
kill "${pids[1]}" "${pids[2]}" 2>/dev/null || true
"$work/loadgen" -clickhouse "$ch_url" -duration 0s -raw 500000 2>/dev/null | grep raw
echo
echo "== 5. the compatible platform's span path on this machine (PostgreSQL, ${secs}s)"
"$work/loadgen" -pg "$TEST_POSTGRES_URL" -duration "${secs}s" -batch 500 | tee "$work/pg.txt"
ours=$(grep -o 'end-to-end: [0-9]*' "$work/run1.txt" | grep -o '[0-9]*$' || true)
theirs=$(grep -o 'pg path: [0-9]* spans/s' "$work/pg.txt" | grep -o '[0-9]* ' | tr -d ' ' || true)
if [ -n "$ours" ] && [ -n "$theirs" ] && [ "$theirs" -gt 0 ]; then
  awk -v a="$ours" -v b="$theirs" 'BEGIN { printf "ratio: %d/%d = %.1f×\n", a, b, a / b }'
fi
