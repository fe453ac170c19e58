#!/usr/bin/env bash
# Query speed with 10 million spans stored: trace by id
# (target < 50 ms) and a one-day filtered span query (target < 300 ms),
# measured through the tracing API on this machine.
# Starts a private NATS and its own tracing (which creates the schema) on a
# dedicated database bench_q_<pid> of the ClickHouse that scripts/deps.sh
# runs, fills it straight in ClickHouse (INSERT ... SELECT FROM numbers():
# 10 spans per trace, trace t's id is md5(t), ~1 KB of attributes per span,
# 1,000,000 traces spread evenly over the last 30 days, one project), then
# runs loadgen -queries. The database is dropped at the end (it takes about
# 3 GB on disk while it lives).
# Usage: scripts/bench/query.sh [spans, default 10000000] [queries of each kind, default 50]
set -euo pipefail
cd "$(dirname "$0")/../.."
spans=${1:-10000000}
repeat=${2:-50}
scripts/deps.sh up >/dev/null
eval "$(scripts/deps.sh env)"
work=$(mktemp -d)
db=bench_q_$$
ch_url=${TEST_CLICKHOUSE_URL%/*}/$db
chc=(clickhouse-client --port "${CH_PORT:-59000}")
nats_port=$((25000 + $$ % 1000))
api_port=$((19000 + $$ % 1000))
project=00000000-0000-4000-8000-000000000001
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  "${chc[@]}" -q "DROP DATABASE IF EXISTS $db" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

go build -o "$work/tracing" ./services/tracing/cmd/tracing
go build -o "$work/loadgen" ./services/tracing/cmd/loadgen
nats=$(command -v nats-server || echo /usr/sbin/nats-server)
"$nats" -a 127.0.0.1 -p "$nats_port" -js -sd "$work/nats" >"$work/nats.log" 2>&1 &
pids+=($!)
sleep 1
TRACING_NATS_URL=nats://127.0.0.1:$nats_port TRACING_CLICKHOUSE_URL=$ch_url TRACING_ADDR=127.0.0.1:$api_port \
  TRACING_TOKEN_FROM_GATEWAY=bench-token TRACING_TOKEN_TO_REGISTRY=bench-no-registry TRACING_OTLP_HTTP_ADDR= TRACING_OTLP_GRPC_ADDR= TRACING_LOG_LEVEL=warn \
  TRACING_QUERY_TIMEOUT=120s "$work/tracing" >"$work/tracing.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$api_port/ready" >/dev/null && break; sleep 0.2; done

now_us=$(($(date +%s) * 1000000))
traces=$((spans / 10))
base=$((now_us - 30 * 86400 * 1000000))
step=$((30 * 86400 * 1000000 / traces)) # µs between traces
pad=$(printf 'lorem ipsum %.0s' $(seq 40))
chunk=1000000
t0=$(date +%s.%N)
for ((lo = 0; lo < spans; lo += chunk)); do
  cnt=$((spans - lo < chunk ? spans - lo : chunk))
  "${chc[@]}" -d "$db" -q "
INSERT INTO spans (project_id, trace_id, span_id, parent_id, trace_type, span_type, span_kind, span_name,
  start_us, end_us, status_code, status_message, session_id, user_id, agent_id,
  attributes, attr_keys, attr_values, events, event_names, links, links_set, link_trace_ids, link_span_ids, link_keys,
  refs, ref_keys, ref_ids, ref_slugs, ref_versions, hashes, hash_ids, created_us, created_by_id, deleted, version, expires)
SELECT '$project', lower(hex(MD5(toString(intDiv(n, 10))))),
  substring(lower(hex(MD5(concat('s', toString(n))))), 1, 16),
  if(n % 10 = 0, '', substring(lower(hex(MD5(concat('s', toString(n - n % 10))))), 1, 16)),
  'invocation', st, 'SPAN_KIND_INTERNAL', concat('op.', toString(n % 50)),
  s, s + 1000 + n % 5000, if(n % 50 = 0, 'STATUS_CODE_ERROR', 'STATUS_CODE_UNSET'), '',
  concat('session-', toString(intDiv(n, 1000))), concat('user-', toString(n % 1000)), '',
  concat('{\"ag\":{\"data\":{\"inputs\":{\"prompt\":\"', prompt, '\"},\"outputs\":\"', answer, '\"},\"meta\":{\"request\":{\"model\":\"', m,
    '\"}},\"type\":{\"span\":\"', st, '\",\"trace\":\"invocation\"}}}'),
  ['ag.data.inputs.prompt', 'ag.data.outputs', 'ag.meta.request.model', 'ag.type.span', 'ag.type.trace'],
  [prompt, answer, m, st, 'invocation'],
  '', [], '', 0, [], [], [], '', [], [], [], [], '', [], s, '', 0, 1, toDate(toDateTime(intDiv(s, 1000000))) + 31
FROM (
  SELECT number + $lo AS n, ['chat', 'tool', 'agent', 'task', 'embedding'][n % 5 + 1] AS st,
    ['gpt-4o-mini', 'gpt-4o', 'claude-3-5-sonnet'][n % 3 + 1] AS m,
    toInt64($base + intDiv(n, 10) * $step + (n % 10) * 1000) AS s,
    concat(toString(n), ' ', hex(MD5(toString(n))), ' $pad', hex(MD5(concat('p', toString(n))))) AS prompt,
    concat('answer ', hex(MD5(concat('a', toString(n))))) AS answer
  FROM numbers($cnt))"
  echo "filled $((lo + cnt)) spans"
done
t1=$(date +%s.%N)
echo "fill: $spans spans in $(echo "$t1 - $t0" | bc) s"
"${chc[@]}" -q "SELECT count() AS parts, sum(rows) AS rows, formatReadableSize(sum(bytes_on_disk)) AS disk FROM system.parts WHERE database = '$db' AND table = 'spans' AND active FORMAT Vertical" 2>/dev/null ||
  "${chc[@]}" -q "SELECT count() AS parts, sum(rows) AS rows, formatReadableSize(sum(bytes)) AS disk FROM system.parts WHERE database = '$db' AND table = 'spans' AND active FORMAT Vertical"
uptime
"$work/loadgen" -url "http://127.0.0.1:$api_port" -queries "$project" -repeat "$repeat" -traces "$traces"
if [ -n "${BENCH_HOLD:-}" ]; then echo "holding $db for ${BENCH_HOLD}s"; sleep "$BENCH_HOLD"; fi
