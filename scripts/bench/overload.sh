#!/usr/bin/env bash
# Overload: at twice the sustainable rate, ingest must
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
# loadgen sends its realistic spans (LLM application traces, its traces.go);
# LOADGEN_FLAGS="-corpus fixed" the one repeated span of earlier figures.
# Usage: scripts/bench/overload.sh [seconds per run, default 20]
set -euo pipefail
source "$(dirname "$0")/pipeline.sh"
secs=${1:-20}
read -ra lgflags <<<"${LOADGEN_FLAGS:-}"
pipeline_init benchov
pipeline_build loadgen
pipeline_start

mem() { # name pid: peak and current RSS
  awk -v n="$1" '/^VmHWM/ { h = $2 } /^VmRSS/ { r = $2 } END { printf "%s: peak RSS %.0f MB (now %.0f MB)\n", n, h / 1024, r / 1024 }' "/proc/$2/status"
}
echo "admission: TRACING_ADMIT_MAX_BYTES=${TRACING_ADMIT_MAX_BYTES:-default} TRACING_ADMIT_PROJECT_SHARE=${TRACING_ADMIT_PROJECT_SHARE:-default}"
echo "== 1. sustainable rate, end to end (4 senders, 500 spans/request, ${secs}s)"
"$work/loadgen" -url "$api_url" -clickhouse "$ch_url" -duration "${secs}s" -workers 4 -batch 500 "${lgflags[@]}" | tee "$work/run1.txt"
mem tracing "$tracing"
mem writer "$writer"
sustained=$(grep -o 'end-to-end: [0-9]*' "$work/run1.txt" | grep -o '[0-9]*$')
echo
echo "== 2. twice that: $((2 * sustained)) spans/s offered (32 senders, 500 spans/request, no retries, ${secs}s)"
"$work/loadgen" -overload -url "$api_url" -clickhouse "$ch_url" -duration "${secs}s" \
  -workers 32 -batch 500 -rate $((2 * sustained)) "${lgflags[@]}"
mem tracing "$tracing"
mem writer "$writer"
