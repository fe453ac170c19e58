#!/usr/bin/env bash
# Load test of the span pipeline, everything on this machine:
#   OTLP/HTTP protobuf → tracing → JetStream → writer → ClickHouse.
# Starts a private NATS and its own tracing and writer on spare ports against
# the ClickHouse that scripts/deps.sh runs (database bench_<pid>, dropped at
# the end), then runs services/tracing/cmd/loadgen, whose spans are LLM
# application traces of varied text (its traces.go; LOADGEN_FLAGS="-corpus
# fixed" sends the one repeated span of the figures before them):
#   1. as fast as it can (sustained end-to-end spans/s),
#   2. at 10,000 spans/s (ingest p99 and freshness),
#   3. at 30,000 spans/s (freshness p99),
#   4. 512-span requests one at a time at 20,000 spans/s, as an SDK's batch
#      exporter sends them (request latency p50/p99),
#   5. bytes per span on disk of what runs 1-4 stored,
#   6. raw ClickHouse inserts of the same rows (the ceiling), and the CPU a
#      private ClickHouse server spends per row of them, 20,000 rows per
#      insert, merges included (scripts/bench/chcpu.sh),
#   7. the compatible platform's span path re-created in the PostgreSQL of
#      scripts/deps.sh (loadgen -pg: 18-index table, 50-span transactions
#      of per-row upserts, 2 writers, the same spans) and the ratio of run 1
#      to it,
# and prints a summary of every figure.
# Usage: scripts/bench/load.sh [seconds per run, default 20]
#        scripts/bench/load.sh sustain [seconds, default 300]
# sustain: instead, 10,000 spans/s offered for 5 minutes (8 senders, 100
# spans/request): freshness p50/p99 over the whole window and per minute,
# the backlog every 10 s (accepted − stored, and the writer's
# writer_backlog_* gauges) and whether it grows (its least-squares slope
# above 1 % of the accepted rate), then bytes per span on disk.
# The services inherit the environment: TRACING_ADMIT_MAX_LAG=2s
# scripts/bench/load.sh sustain 300 runs it with ingest refused while the
# writer is more than 2 s behind (docs/benchmarks.md, Sustained load).
# PROFILE_DIR=dir also writes CPU (10 s) and allocation profiles of tracing
# and the writer taken during run 1 (full load) to dir.
set -euo pipefail
source "$(dirname "$0")/pipeline.sh"
source "$(dirname "$0")/chcpu.sh"
on_exit=chcpu_cleanup
mode=all
secs=${1:-20}
if [ "${1:-}" = sustain ]; then
  mode=sustain
  secs=${2:-300}
fi
read -ra lgflags <<<"${LOADGEN_FLAGS:-}"
pipeline_init bench
writer_metrics=127.0.0.1:$((port_base + 3))
tracing_pprof=127.0.0.1:$((port_base + 4))
writer_pprof=127.0.0.1:$((port_base + 5))
pipeline_build loadgen
# The writer's metrics on a port of this run's (its default, 8090, may be
# another bench's).
pipeline_start TRACING_PPROF_ADDR="$tracing_pprof" WRITER_PPROF_ADDR="$writer_pprof" WRITER_METRICS_ADDR="$writer_metrics"

run() { # label, loadgen flags...
  local label=$1
  shift
  "$work/loadgen" -url "$api_url" -clickhouse "$ch_url" -duration "${secs}s" -label "$label" "${lgflags[@]}" "$@" | tee "$work/$label.out"
}

if [ "$mode" = sustain ]; then
  echo "== sustain: 10,000 spans/s offered for ${secs}s (8 senders, 100 spans/request), the backlog every 10 s"
  run sustain -workers 8 -batch 100 -rate 10000 -sample 10s -writer-metrics "http://$writer_metrics/metrics"
  echo
  echo "== storage: bytes per span on disk of what the run stored"
  scripts/bench/storage.sh "$db"
  echo
  echo "($(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg))"
  exit 0
fi

profile() { # during run 1: CPU of both services for 10 s, then their allocations
  sleep $((secs > 14 ? 3 : 1))
  for s in tracing writer; do
    addr=$tracing_pprof
    [ "$s" = writer ] && addr=$writer_pprof
    curl -sf -o "$PROFILE_DIR/$s.cpu.pprof" "http://$addr/debug/pprof/profile?seconds=10" &
  done
  wait
  for s in tracing writer; do
    addr=$tracing_pprof
    [ "$s" = writer ] && addr=$writer_pprof
    curl -sf -o "$PROFILE_DIR/$s.allocs.pprof" "http://$addr/debug/pprof/allocs"
  done
}

echo "== 1. sustained end-to-end, as fast as possible (4 senders, 500 spans/request, ${secs}s)"
if [ -n "${PROFILE_DIR:-}" ]; then
  mkdir -p "$PROFILE_DIR"
  cp "$work/tracing" "$work/writer" "$PROFILE_DIR/"
  profile &
  prof=$!
fi
run full -workers 4 -batch 500
if [ -n "${PROFILE_DIR:-}" ]; then wait "$prof" || echo "(a profile could not be taken)"; fi
echo
echo "== 2. latency at 10,000 spans/s (8 senders, 100 spans/request, ${secs}s)"
run 10k -workers 8 -batch 100 -rate 10000
echo
echo "== 3. freshness at 30,000 spans/s (8 senders, 500 spans/request, ${secs}s)"
run 30k -workers 8 -batch 500 -rate 30000
echo
echo "== 4. 512-span export requests, one in flight, at 20,000 spans/s (${secs}s)"
run sdk20k -workers 1 -batch 512 -rate 20000
echo
echo "== 5. storage: bytes per span on disk, compressed (the compatible platform: 3.4 KB)"
scripts/bench/storage.sh "$db"
echo
echo "== 6. raw ClickHouse insert ceiling (same rows, writer's insert path, no pipeline running)"
kill "$tracing" "$writer" 2>/dev/null || true
"$work/loadgen" -clickhouse "$ch_url" -duration 0s -raw 500000 "${lgflags[@]}" 2>/dev/null | grep raw | tee "$work/raw.out"
chcpu_measure 200000 20000 >/dev/null
echo "ClickHouse CPU: $chcpu_line"
echo
echo "== 7. the compatible platform's span path on this machine (PostgreSQL, ${secs}s)"
"$work/loadgen" -pg "$TEST_POSTGRES_URL" -duration "${secs}s" -batch 500 "${lgflags[@]}" | tee "$work/pg.out"

# One figure per target; field=value pairs come from loadgen's summary line.
get() { sed -n "s/^summary $1 \(.* \)\{0,1\}$2=\([^ ]*\).*/\2/p" "$work/$1.out"; }
ours=$(get full e2e)
theirs=$(sed -n 's|^pg path: \([0-9]*\) spans/s$|\1|p' "$work/pg.out")
ratio=$(awk -v a="${ours:-0}" -v b="${theirs:-0}" 'BEGIN { if (b > 0) printf "%.1f×", a / b; else print "n/a" }')
echo
echo "== summary ($(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg), ${secs}s per run)"
printf '%-58s %s\n' \
  "1. end to end, as fast as possible (target ≥ 40,000/s)" "$ours spans/s stored (tracing accepted $(get full accepted_rate)/s); missing $(get full missing), duplicates before merge $(get full dup_unmerged)" \
  "1. the compatible platform's path, same spans, same run" "${theirs:-?} spans/s; ratio ${ours:-?}/${theirs:-?} = $ratio (target 10×)" \
  "2. 512-span request, one in flight at 20k/s (≤ 25/60 ms)" "p50 $(get sdk20k p50), p99 $(get sdk20k p99) at $(get sdk20k accepted_rate) spans/s accepted" \
  "4. ingest at 10,000/s, 100-span requests (p99 < 50 ms)" "p50 $(get 10k p50), p99 $(get 10k p99); freshness p99 $(get 10k fresh_p99)" \
  "4. freshness at 30,000/s (p99 < 2 s)" "p50 $(get 30k fresh_p50), p99 $(get 30k fresh_p99) at $(get 30k accepted_rate) spans/s accepted; ingest p99 $(get 30k p99)" \
  "   raw ClickHouse insert ceiling" "$(sed -n 's/.*ceiling: \([0-9]*\) rows.*/\1/p' "$work/raw.out") rows/s" \
  "5. ClickHouse CPU per row, 20k-row inserts, merges included" "${chcpu_us:-?} µs (private server, scripts/bench/chcpu.sh)"
missing=0
for r in full 10k 30k sdk20k; do missing=$((missing + $(get $r missing))); done
echo "every accepted span stored: $([ "$missing" = 0 ] && echo yes || echo "NO, $missing missing")"
