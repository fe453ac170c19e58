#!/usr/bin/env bash
# Sizing figures for deployments/README.md: spans per CPU-second of the
# tracing service and of the writer, i.e. what one core of each sustains.
# Same pipeline as load.sh (private NATS, tracing and writer against the
# ClickHouse of scripts/deps.sh, OTLP/HTTP protobuf through loadgen, as fast
# as it goes), and the CPU time each process used (utime + stime from
# /proc) over the run. Dividing by CPU time rather than wall time makes the
# figure hold on a machine shared with the load generator, NATS and
# ClickHouse, which a per-core wall-clock rate would not.
# The ClickHouse server's CPU over the same run is printed per stored row
# too: it is the server of scripts/deps.sh, shared with whatever else runs
# against it (scripts/bench/chcpu.sh measures a private one).
# loadgen sends its realistic spans (LLM application traces, its traces.go);
# LOADGEN_FLAGS="-corpus fixed" the one repeated span of earlier figures.
# Usage: scripts/bench/cpu.sh [seconds, default 20]
set -euo pipefail
source "$(dirname "$0")/pipeline.sh"
secs=${1:-20}
read -ra lgflags <<<"${LOADGEN_FLAGS:-}"
pipeline_init benchcpu
pipeline_build loadgen
pipeline_start

tick=$(getconf CLK_TCK)
cpu() { awk -v t="$tick" '{print ($14 + $15) / t}' "/proc/$1/stat"; }
chpid=$(ss -ltnpH "sport = :${CH_PORT:-59000}" | sed -n 's/.*pid=\([0-9]*\).*/\1/p' | head -1)
t0=$(cpu "$tracing"); w0=$(cpu "$writer"); c0=$(cpu "$chpid")
"$work/loadgen" -url "$api_url" -clickhouse "$ch_url" -duration "${secs}s" -workers 4 -batch 500 "${lgflags[@]}" | tee "$work/out"
t1=$(cpu "$tracing"); w1=$(cpu "$writer")
# The rows are all in when loadgen returns; their merges are not: wait
# until none has run for 3 s (at most 60 s), so that they count too.
quiet=0
for _ in $(seq 120); do
  if [ "$(clickhouse-client --port "${CH_PORT:-59000}" -q "SELECT count() FROM system.merges WHERE database = '$db'")" = 0 ]; then quiet=$((quiet + 1)); else quiet=0; fi
  [ $quiet -ge 6 ] && break
  sleep 0.5
done
c1=$(cpu "$chpid")
stored=$(sed -n 's/.*stored \([0-9]*\)$/\1/p' "$work/out" | head -1)
echo
echo "cores: $(nproc), load average before the end: $(cut -d' ' -f1-3 /proc/loadavg)"
awk -v s="$stored" -v t="$(echo "$t1 - $t0" | bc)" -v w="$(echo "$w1 - $w0" | bc)" 'BEGIN {
  printf "tracing: %.1f CPU-s for %d spans = %.0f spans per CPU-second\n", t, s, s / t
  printf "writer:  %.1f CPU-s for %d spans = %.0f spans per CPU-second\n", w, s, s / w }'
awk -v s="$stored" -v c="$(echo "$c1 - $c0" | bc)" 'BEGIN {
  printf "clickhouse (shared server, its merges included): %.1f CPU-s for %d spans = %.1f µs per row\n", c, s, c / s * 1e6 }'
for p in tracing:$tracing writer:$writer; do
  awk -v n="${p%%:*}" '/^VmHWM/ { printf "%s: peak RSS %.0f MB\n", n, $2 / 1024 }' "/proc/${p#*:}/status"
done
