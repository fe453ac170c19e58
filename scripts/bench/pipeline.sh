# Sourced by the span-pipeline benches (load.sh, cpu.sh, overload.sh,
# sdk.sh): a private NATS, the writer and tracing, built from this tree,
# against a private database of the ClickHouse that scripts/deps.sh runs;
# everything started is stopped and dropped on exit.
#   pipeline_init PREFIX   deps up, a work directory, database PREFIX_<pid>,
#                          ports from the pid (two benches can run at once)
#   pipeline_build CMD...  go build tracing, the writer and CMD (a command
#                          of services/tracing/cmd) into $work; BENCH_WRITER_BIN
#                          or BENCH_TRACING_BIN: that binary instead (before/after
#                          comparisons)
#   pipeline_start [VAR=value...]
#                          NATS, the writer, then tracing with VAR=value added
#                          to its environment (WRITER_* ones go to the writer);
#                          waits for tracing's /ready
# After pipeline_start: $work, $db, $ch_url, $api_url (tracing's API), the
# pids $tracing and $writer, and $port_base + 2..5 free for the caller.
# A caller's own teardown goes in on_exit (a function name).
# shellcheck shell=bash

pipeline_init() {
  cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 1
  scripts/deps.sh up >/dev/null
  eval "$(scripts/deps.sh env)"
  work=$(mktemp -d)
  db=${1}_$$
  ch_url=${TEST_CLICKHOUSE_URL%/*}/$db
  port_base=$((20000 + ($$ % 1000) * 10))
  api_url=http://127.0.0.1:$((port_base + 1))
  pids=()
  on_exit=${on_exit:-}
  trap pipeline_cleanup EXIT
}

pipeline_cleanup() {
  local rc=$?
  # On a failure, the services' logs (the work directory goes).
  [ "$rc" = 0 ] || tail -n 20 "$work/writer.log" "$work/tracing.log" >&2 2>/dev/null || true
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  [ -z "$on_exit" ] || "$on_exit" || true
  clickhouse-client --port "${CH_PORT:-59000}" -q "DROP DATABASE IF EXISTS $db" 2>/dev/null || true
  rm -rf "$work"
}

pipeline_build() {
  go build -o "$work/tracing" ./services/tracing/cmd/tracing
  go build -o "$work/writer" ./services/writer/cmd/writer
  [ -z "${BENCH_WRITER_BIN:-}" ] || cp "$BENCH_WRITER_BIN" "$work/writer"
  [ -z "${BENCH_TRACING_BIN:-}" ] || cp "$BENCH_TRACING_BIN" "$work/tracing"
  for c in "$@"; do go build -o "$work/$c" "./services/tracing/cmd/$c"; done
}

pipeline_start() {
  local wenv=() tenv=() kv nats
  for kv in "$@"; do
    case $kv in WRITER_*) wenv+=("$kv") ;; *) tenv+=("$kv") ;; esac
  done
  nats=$(command -v nats-server || echo /usr/sbin/nats-server)
  "$nats" -a 127.0.0.1 -p "$port_base" -js -sd "$work/nats" >"$work/nats.log" 2>&1 &
  pids+=($!)
  sleep 1
  env WRITER_NATS_URL="nats://127.0.0.1:$port_base" WRITER_CLICKHOUSE_URL="$ch_url" WRITER_ADDR=127.0.0.1:0 \
    WRITER_LOG_LEVEL=warn "${wenv[@]}" "$work/writer" >"$work/writer.log" 2>&1 &
  writer=$!
  pids+=($writer)
  env TRACING_NATS_URL="nats://127.0.0.1:$port_base" TRACING_CLICKHOUSE_URL="$ch_url" \
    TRACING_ADDR="${api_url#http://}" TRACING_TOKEN_FROM_GATEWAY=bench-token TRACING_TOKEN_TO_REGISTRY=bench-no-registry TRACING_OTLP_HTTP_ADDR= TRACING_OTLP_GRPC_ADDR= \
    TRACING_LOG_LEVEL=warn "${tenv[@]}" "$work/tracing" >"$work/tracing.log" 2>&1 &
  tracing=$!
  pids+=($tracing)
  for _ in $(seq 100); do curl -sf "$api_url/ready" >/dev/null && break; sleep 0.2; done
}
