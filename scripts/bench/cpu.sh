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
source "$(dirname "$0")/pipeline.sh"
secs=${1:-20}
pipeline_init benchcpu
pipeline_build loadgen
pipeline_start

tick=$(getconf CLK_TCK)
cpu() { awk -v t="$tick" '{print ($14 + $15) / t}' "/proc/$1/stat"; }
t0=$(cpu "$tracing"); w0=$(cpu "$writer")
"$work/loadgen" -url "$api_url" -clickhouse "$ch_url" -duration "${secs}s" -workers 4 -batch 500 | tee "$work/out"
t1=$(cpu "$tracing"); w1=$(cpu "$writer")
stored=$(sed -n 's/.*stored \([0-9]*\)$/\1/p' "$work/out" | head -1)
echo
echo "cores: $(nproc), load average before the end: $(cut -d' ' -f1-3 /proc/loadavg)"
awk -v s="$stored" -v t="$(echo "$t1 - $t0" | bc)" -v w="$(echo "$w1 - $w0" | bc)" 'BEGIN {
  printf "tracing: %.1f CPU-s for %d spans = %.0f spans per CPU-second\n", t, s, s / t
  printf "writer:  %.1f CPU-s for %d spans = %.0f spans per CPU-second\n", w, s, s / w }'
