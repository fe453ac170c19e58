#!/usr/bin/env bash
# Sizing figures for deployments/README.md: spans per CPU-second of the
# tracing service and of the writer, i.e. what one core of each sustains.
# Same pipeline as load.sh (private NATS, tracing and writer against the
# ClickHouse of scripts/deps.sh, OTLP/HTTP protobuf through loadgen, as fast
# as it goes), and the CPU time each process used (utime + stime from
# /proc) over the run. Dividing by CPU time rather than wall time makes the
# figure hold on a machine shared with the load generator, NATS and
# ClickHouse, which a per-core wall-clock rate would not.
# Usage: scripts/bench/cpu.sh [seconds, default 20]
set -euo pipefail
cd "$(dirname "$0")/../.."
secs=${1:-20}
scripts/deps.sh up >/dev/null
eval "$(scripts/deps.sh env)"
work=$(mktemp -d)
db=benchcpu_$$
ch_url=${TEST_CLICKHOUSE_URL%/*}/$db
nats_port=$((25000 + $$ % 1000))
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
TRACING_NATS_URL=nats://127.0.0.1:$nats_port TRACING_CLICKHOUSE_URL=$ch_url TRACING_ADDR=127.0.0.1:18093 \
  TRACING_INTERNAL_TOKEN=bench-token TRACING_OTLP_HTTP_ADDR= TRACING_OTLP_GRPC_ADDR= TRACING_LOG_LEVEL=warn \
  "$work/tracing" >"$work/tracing.log" 2>&1 &
tracing=$!
pids+=($tracing)
for _ in $(seq 100); do curl -sf http://127.0.0.1:18093/ready >/dev/null && break; sleep 0.2; done

tick=$(getconf CLK_TCK)
cpu() { awk -v t="$tick" '{print ($14 + $15) / t}' "/proc/$1/stat"; }
t0=$(cpu "$tracing"); w0=$(cpu "$writer")
"$work/loadgen" -url http://127.0.0.1:18093 -clickhouse "$ch_url" -duration "${secs}s" -workers 4 -batch 500 | tee "$work/out"
t1=$(cpu "$tracing"); w1=$(cpu "$writer")
stored=$(sed -n 's/.*stored \([0-9]*\)$/\1/p' "$work/out" | head -1)
echo
echo "cores: $(nproc), load average before the end: $(cut -d' ' -f1-3 /proc/loadavg)"
awk -v s="$stored" -v t="$(echo "$t1 - $t0" | bc)" -v w="$(echo "$w1 - $w0" | bc)" 'BEGIN {
  printf "tracing: %.1f CPU-s for %d spans = %.0f spans per CPU-second\n", t, s, s / t
  printf "writer:  %.1f CPU-s for %d spans = %.0f spans per CPU-second\n", w, s, s / w }'
