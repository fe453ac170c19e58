#!/usr/bin/env bash
# ClickHouse CPU per inserted span row (docs/benchmarks.md): a private
# clickhouse-server (the binary scripts/deps.sh runs, its own data directory
# and ports, nothing else connected to it), the span schema applied by
# loadgen -migrate, then loadgen -raw: the rows the pipeline stores (loadgen's
# spans normalised as tracing does: its realistic corpus, or with
# LOADGEN_FLAGS="-corpus fixed" its one repeated span), through the writer's insert path
# (chspans.Insert), ROWS_PER_INSERT per insert, one insert at a time.
# The figure is the server's CPU time (utime + stime of /proc/<pid>/stat,
# every thread) from before the first insert until its background merges
# have settled, minus what it spends idle over as long, divided by the rows:
# the inserts and the merges they cause. CPU time rather than wall time, so
# the figure holds on a machine shared with other work (the load average is
# printed with it). The server is stopped and its data removed at the end.
# CHCPU_STOP_MERGES=1 stops merges during the inserts (SYSTEM STOP MERGES),
# to tell the inserts' own cost from that of the merges they cause.
# CHCPU_PROFILE=1 also prints where the server's time went (chcpu_profile):
# user and system CPU apart (fields 14 and 15 of /proc/<pid>/stat), the
# deltas of system.events over the inserts, the whole run and the full
# merge, parts, page faults, RSS and I/O (/proc/<pid>/stat, status, io;
# status's context switches are the main thread's only), and with
# CHCPU_STRACE=1 the system calls of its threads during the inserts
# (strace -c -f; strace slows the server, so CPU figures of such a run are
# not comparable with others).
# CHCPU_URL_PARAMS (e.g. "compress=lz4") is appended to the inserts' URL:
# clickhouse-go options, or settings of the insert (any other parameter).
# CHCPU_CONFIG_SED edits the server's config.xml (a sed expression, e.g.
# 's|</yandex>|<merge_tree>...</merge_tree></yandex>|').
# CHCPU_MALLOC_CONF replaces the server's jemalloc options that deps.sh
# sets (MALLOC_CONF in its server.env; empty: jemalloc's defaults).
# CHCPU_LOADGEN names a loadgen binary to use instead of building one (to
# compare two builds of the insert path in one session).
# Usage: scripts/bench/chcpu.sh [rows, default 500000] [rows per insert, default 20000 (WRITER_BATCH_ROWS)]
# Sourced (load.sh's summary): chcpu_measure ROWS PER_INSERT sets chcpu_us
# (µs of ClickHouse CPU per row) and chcpu_line.
set -euo pipefail

# chcpu_cleanup stops the private server and removes its data, also when a
# step failed (load.sh names it as its on_exit).
chcpu_cleanup() {
  [ -z "${chcpu_pid:-}" ] || { kill "$chcpu_pid" 2>/dev/null; wait "$chcpu_pid" 2>/dev/null; }
  [ -z "${chcpu_dir:-}" ] || rm -rf "$chcpu_dir"
  chcpu_pid= chcpu_dir=
}

# chcpu_snap saves the server's counters to files prefixed $1: its CPU
# (utime, stime in ticks; the whole process, every thread), /proc status and io, system.events, parts.
chcpu_snap() {
  awk '{ print "utime", $14; print "stime", $15; print "minflt", $10; print "majflt", $12 }' "/proc/$pid/stat" >"$1.proc"
  awk -F':[ \t]*' '/^(voluntary_ctxt_switches|nonvoluntary_ctxt_switches)/ { print $1, $2 } /^VmRSS/ { split($2, a, " "); print "VmRSS_kB", a[1] }' "/proc/$pid/status" >>"$1.proc"
  tr -d ':' <"/proc/$pid/io" >>"$1.proc" 2>/dev/null || true
  $q -q "SELECT event, value FROM system.events" >"$1.events"
  $q -q "SELECT 'parts_active', count() FROM system.parts WHERE database = 'chcpu' AND active UNION ALL SELECT 'parts_all', count() FROM system.parts WHERE database = 'chcpu'" >"$1.parts"
}

# chcpu_profile prints the deltas between the snapshots s0 (before the
# inserts), s1 (after them), s2 (merges settled) and s3 (after the full
# merge, OPTIMIZE FINAL): inserts, inserts and merges, the full merge alone.
# system.events counts the query threads only: a background merge shows in
# the process's figures (utime, stime, minflt, io) but not in them.
chcpu_profile() {
  local dir=$1 rows=$2
  echo "chcpu profile: inserts | inserts and merges | the full merge, per row (rows $rows)"
  for f in proc events; do
    awk -v r="$rows" -v tick="$tick" -F'\t| ' 'FNR == 1 { k++ }
      { v[k, $1] = $2; if (!($1 in seen)) { seen[$1] = 1; order[++n] = $1 } }
      END { for (i = 1; i <= n; i++) { e = order[i]; d1 = v[2, e] - v[1, e]; d2 = v[3, e] - v[1, e]; d3 = v[4, e] - v[3, e]
        if (d2 == 0 && d1 == 0 && d3 == 0) continue
        if (e == "VmRSS_kB") { printf "  %-45s %14d -> %d -> %d -> %d\n", e, v[1, e], v[2, e], v[3, e], v[4, e]; continue }
        if (e == "utime" || e == "stime") printf "  %-45s %14.1f %14.1f %14.1f µs/row\n", e, d1 / tick / r * 1e6, d2 / tick / r * 1e6, d3 / tick / r * 1e6
        else printf "  %-45s %14d %14d %14d  (%.2f | %.2f | %.2f per row)\n", e, d1, d2, d3, d1 / r, d2 / r, d3 / r } }' \
      "$dir/s0.$f" "$dir/s1.$f" "$dir/s2.$f" "$dir/s3.$f"
  done
  paste "$dir/s1.parts" "$dir/s2.parts" | awk '{ print "  " $1 " after inserts: " $2 ", merges settled: " $4 }'
  if [ -f "$dir/strace" ]; then echo "  strace -c -f during the inserts:"; head -30 "$dir/strace" | sed 's/^/    /'; fi
}

chcpu_measure() {
  local rows=$1 per=$2 dir port pid tick ch0 idle t0 t1 w0 w1 merges quiet lgflags
  read -ra lgflags <<<"${LOADGEN_FLAGS:-}"
  dir=$(mktemp -d)
  chcpu_dir=$dir
  # Below the kernel's ephemeral ports (32768 and up), which a client's
  # connection may hold: a port there was once taken when the server started.
  port=$((10000 + ($$ % 1000) * 10))
  "$(dirname "${BASH_SOURCE[0]}")/../deps.sh" clickhouse-config "$dir" "$port" "$((port + 1))"
  [ -z "${CHCPU_CONFIG_SED:-}" ] || sed -i "$CHCPU_CONFIG_SED" "$dir/config.xml"
  [ -z "${CHCPU_MALLOC_CONF+set}" ] || printf 'MALLOC_CONF=%s\n' "$CHCPU_MALLOC_CONF" >"$dir/server.env"
  env $(cat "$dir/server.env") "$(command -v clickhouse-server || echo /usr/sbin/clickhouse-server)" --config-file="$dir/config.xml" >/dev/null 2>&1 &
  pid=$!
  chcpu_pid=$pid
  local q="clickhouse-client --port $port"
  for _ in $(seq 120); do $q -q 'SELECT 1' >/dev/null 2>&1 && break; sleep 0.5; done
  if ! $q -q 'SELECT 1' >/dev/null 2>&1; then
    echo "chcpu: the private ClickHouse server did not answer on port $port:" >&2
    tail -5 "$dir"/*.err.log >&2 2>/dev/null
    return 1
  fi
  $q -q 'CREATE DATABASE chcpu'
  "$work/loadgen" -clickhouse "clickhouse://default@127.0.0.1:$port/chcpu" -migrate -raw 1 -raw-batch 1 -duration 0s >/dev/null
  $q -q 'TRUNCATE TABLE chcpu.spans'
  [ -z "${CHCPU_STOP_MERGES:-}" ] || $q -q 'SYSTEM STOP MERGES'
  tick=$(getconf CLK_TCK)
  ch0() { awk -v t="$tick" '{ print ($14 + $15) / t }' "/proc/$pid/stat"; }
  # Idle: the server's own CPU over 5 s with nothing to do.
  w0=$(date +%s.%N); t0=$(ch0); sleep 5; t1=$(ch0); w1=$(date +%s.%N)
  idle=$(echo "($t1 - $t0) / ($w1 - $w0)" | bc -l)
  [ -z "${CHCPU_PROFILE:-}" ] || chcpu_snap "$dir/s0"
  local spid=
  if [ -n "${CHCPU_STRACE:-}" ]; then
    strace -c -f -p "$pid" -o "$dir/strace" 2>/dev/null &
    spid=$!
    sleep 1
  fi
  w0=$(date +%s.%N); t0=$(ch0)
  "$work/loadgen" -clickhouse "clickhouse://default@127.0.0.1:$port/chcpu${CHCPU_URL_PARAMS:+?$CHCPU_URL_PARAMS}" -raw "$rows" -raw-batch "$per" -duration 0s "${lgflags[@]}" | tee "$dir/raw.out"
  local ti; ti=$(ch0)
  if [ -n "$spid" ]; then kill -INT "$spid"; wait "$spid" 2>/dev/null || true; fi
  [ -z "${CHCPU_PROFILE:-}" ] || chcpu_snap "$dir/s1"
  # Until no merge has run for 3 s (at most 120 s): the parts an insert
  # creates are merged later, and that CPU is the insert's too.
  quiet=0
  for _ in $(seq 240); do
    merges=$($q -q "SELECT count() FROM system.merges")
    if [ "$merges" = 0 ]; then quiet=$((quiet + 1)); else quiet=0; fi
    [ $quiet -ge 6 ] && break
    sleep 0.5
  done
  t1=$(ch0); w1=$(date +%s.%N)
  [ -z "${CHCPU_PROFILE:-}" ] || chcpu_snap "$dir/s2"
  local parts; parts=$($q -q "SELECT count() FROM system.parts WHERE database = 'chcpu' AND table = 'spans' AND active")
  # One full merge of what was inserted: background merges rewrite each
  # row a few times over its life (parts of similar size are merged into
  # larger ones), each time about this much.
  [ -z "${CHCPU_STOP_MERGES:-}" ] || $q -q 'SYSTEM START MERGES'
  local m0 m1; m0=$(ch0)
  $q -q 'OPTIMIZE TABLE chcpu.spans FINAL'
  m1=$(ch0)
  if [ -n "${CHCPU_PROFILE:-}" ]; then
    chcpu_snap "$dir/s3"
    chcpu_profile "$dir" "$rows"
  fi
  chcpu_cleanup
  read -r chcpu_us chcpu_line < <(awk -v a="$t0" -v i="$ti" -v b="$t1" -v idle="$idle" -v w="$(echo "$w1 - $w0" | bc -l)" -v r="$rows" -v p="$per" -v parts="$parts" -v m="$(echo "$m1 - $m0" | bc -l)" 'BEGIN {
    c = b - a - idle * w; ci = i - a
    printf "%.1f %.1f µs of ClickHouse CPU per row (inserts and the merges they started; %.1f µs during the inserts alone), %d rows, %d per insert, %d active parts left; one full merge of them: %.1f µs per row\n", c / r * 1e6, c / r * 1e6, ci / r * 1e6, r, p, parts, m / r * 1e6 }')
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  cd "$(dirname "$0")/../.."
  work=$(mktemp -d)
  trap 'chcpu_cleanup; rm -rf "$work"' EXIT
  if [ -n "${CHCPU_LOADGEN:-}" ]; then cp "$CHCPU_LOADGEN" "$work/loadgen"; else go build -o "$work/loadgen" ./services/tracing/cmd/loadgen; fi
  chcpu_measure "${1:-500000}" "${2:-20000}"
  echo "chcpu: $chcpu_line"
  echo "cores: $(nproc), load average: $(cut -d' ' -f1-3 /proc/loadavg)"
fi
