#!/usr/bin/env bash
# Overload (issue 16, point 6): at twice the sustainable rate, ingest must
# answer 429 or 503 with Retry-After (never a time-out), keep its memory
# bounded, and lose no accepted span. Same pipeline as load.sh (private
# NATS, tracing and writer against the ClickHouse of scripts/deps.sh,
# database benchov_<pid>, dropped at the end):
#   1. the sustainable rate: loadgen as fast as it goes (4 senders, 500
#      spans/request), end to end;
#   2. twice that, offered by 32 senders that never retry (loadgen
#      -overload): every answer classified, every accepted span checked;
#   3. tracing's and the writer's peak RSS (VmHWM of /proc/<pid>/status)
#      after each.
# tracing runs with its admission defaults (TRACING_ADMIT_*); set them in
# the environment to try others, e.g. TRACING_ADMIT_MAX_BYTES=0 to see the
# same overload without admission control.
# Usage: scripts/bench/overload.sh [seconds per run, default 20]
set -euo pipefail
cd "$(dirname "$0")/../.."
secs=${1:-20}
scripts/deps.sh up >/dev/null
eval "$(scripts/deps.sh env)"
work=$(mktemp -d)
db=benchov_$$
ch_url=${TEST_CLICKHOUSE_URL%/*}/$db
nats_port=$((30000 + $$ % 1000))
api_port=$((31000 + $$ % 1000))
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
writer=$!
pids+=($writer)
TRACING_NATS_URL=nats://127.0.0.1:$nats_port TRACING_CLICKHOUSE_URL=$ch_url TRACING_ADDR=127.0.0.1:$api_port \
  TRACING_INTERNAL_TOKEN=bench-token TRACING_OTLP_HTTP_ADDR= TRACING_OTLP_GRPC_ADDR= TRACING_LOG_LEVEL=warn \
  "$work/tracing" >"$work/tracing.log" 2>&1 &
tracing=$!
pids+=($tracing)
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$api_port/ready" >/dev/null && break; sleep 0.2; done

mem() { # name pid: peak and current RSS
  awk -v n="$1" '/^VmHWM/ { h = $2 } /^VmRSS/ { r = $2 } END { printf "%s: peak RSS %.0f MB (now %.0f MB)\n", n, h / 1024, r / 1024 }' "/proc/$2/status"
}
echo "admission: TRACING_ADMIT_MAX_BYTES=${TRACING_ADMIT_MAX_BYTES:-default} TRACING_ADMIT_PROJECT_SHARE=${TRACING_ADMIT_PROJECT_SHARE:-default}"
echo "== 1. sustainable rate, end to end (4 senders, 500 spans/request, ${secs}s)"
"$work/loadgen" -url "http://127.0.0.1:$api_port" -clickhouse "$ch_url" -duration "${secs}s" -workers 4 -batch 500 | tee "$work/run1.txt"
mem tracing "$tracing"
mem writer "$writer"
sustained=$(grep -o 'end-to-end: [0-9]*' "$work/run1.txt" | grep -o '[0-9]*$')
echo
echo "== 2. twice that: $((2 * sustained)) spans/s offered (32 senders, 500 spans/request, no retries, ${secs}s)"
"$work/loadgen" -overload -url "http://127.0.0.1:$api_port" -clickhouse "$ch_url" -duration "${secs}s" \
  -workers 32 -batch 500 -rate $((2 * sustained))
mem tracing "$tracing"
mem writer "$writer"
