#!/usr/bin/env bash
# Runs every fuzz target of the repository, one at a time, each for the given
# time (default 30s), and fails when any target finds an input that breaks it.
#   scripts/fuzz.sh 4s          the short stage `make test` runs
#   scripts/fuzz.sh 10m         a long local or nightly run (`make fuzz FUZZTIME=10m`)
# Environment:
#   FUZZ_TARGETS      regexp of target names to run (default: all)
#   FUZZ_PARALLEL     fuzzing workers per target (default: go's, GOMAXPROCS)
#   FUZZ_MAX_HEAP_MB  live heap one input may reach before the worker panics
#                     (pkg/testutil/fuzzbound; default 2048)
#   FUZZ_VMEM_MB      address-space cap of each fuzzing process, the backstop
#                     for a single huge allocation (default 16384; 0: none)
#   FUZZ_MINIMIZE     -fuzzminimizetime (default 1s for runs under a minute,
#                     else 10s): go's 60s default spends a short run, and the
#                     HTTP targets' long ones, minimising instead of fuzzing
# -fuzztime counts from the start, so a target that first starts servers
# gets the setup time below on top (its workers each start a stack); a run
# that never got past the baseline of its seed corpus fails, so a slow setup
# cannot turn the stage into a pass that fuzzed nothing.
# A failing input is written by go test under the package's
# testdata/fuzz/<FuzzName>/; `go test -run '<FuzzName>/<file>' ./<pkg>`
# replays it. The seed corpora there and the f.Add seeds also run as ordinary
# tests in every `go test`.
set -uo pipefail
cd "$(dirname "$0")/.."
t=${1:-30s}
filter=${FUZZ_TARGETS:-.}
export FUZZ_MAX_HEAP_MB=${FUZZ_MAX_HEAP_MB:-2048}
vmem=${FUZZ_VMEM_MB:-16384}
# The HTTP targets talk to the PostgreSQL and ClickHouse that deps.sh runs.
if [ -z "${TEST_POSTGRES_URL:-}" ] || [ -z "${TEST_CLICKHOUSE_URL:-}" ]; then
  eval "$(scripts/deps.sh env)"
fi
parallel=()
[ -n "${FUZZ_PARALLEL:-}" ] && parallel=(-parallel "$FUZZ_PARALLEL")
declare -A setup=(
  [FuzzIngestHTTP]=5      # embedded NATS, a ClickHouse database
  [FuzzQueryHTTP]=15      # + the writer and registry binaries, seed spans written
  [FuzzRegistryBodies]=40 # a PostgreSQL database, fixtures, ~740 seeds (every route of the registry, evaluations included)
  [FuzzJavaScript]=10     # each input builds a goja sandbox (~1 ms) with esbuild for TypeScript
  [FuzzRender]=8          # jinja2 and mustache inputs render under their time budget
  [FuzzRun]=8             # every evaluator; the similarity ones are quadratic up to their cap
)

# seconds converts go durations such as 8s, 1m30s, 10m, 1h.
seconds() {
  local d=$1 s=0 n
  while [[ $d =~ ^([0-9]+)([hms])(.*)$ ]]; do
    n=${BASH_REMATCH[1]}
    case ${BASH_REMATCH[2]} in h) s=$((s + n * 3600)) ;; m) s=$((s + n * 60)) ;; s) s=$((s + n)) ;; esac
    d=${BASH_REMATCH[3]}
  done
  [ -z "$d" ] || { echo "fuzz.sh: cannot read duration $1" >&2; exit 2; }
  echo "$s"
}
# deadline_race tells whether a failed run's log is go's deadline race (see
# below) and nothing else: the bare message, and no failing input written.
deadline_race() {
  grep -qx '    context deadline exceeded' "$1" && ! grep -q 'Failing input written to' "$1"
}
base=$(seconds "$t")
minimize=${FUZZ_MINIMIZE:-$([ "$base" -lt 60 ] && echo 1s || echo 10s)}

targets=()
while IFS= read -r f; do
  for fn in $(grep -o '^func Fuzz[A-Za-z0-9_]*' "$f" | cut -d' ' -f2); do
    [[ $fn =~ $filter ]] && targets+=("$(dirname "$f") $fn")
  done
done < <(grep -rl --include='*_test.go' '^func Fuzz' pkg services cli | sort)

failed=() summary=()
for target in "${targets[@]}"; do
  read -r dir fn <<<"$target"
  ft=$((base + ${setup[$fn]:-0}))
  log=$(mktemp)
  # A busy machine (or a large cached corpus in GOCACHE/fuzz) can spend the
  # whole budget on the baseline; then the target runs once more with three
  # times the time, and fails only if it still fuzzed nothing.
  baseline_retried=0 race_retried=0
  while :; do
    echo "==> $dir $fn (${ft}s)"
    (
      [ "$vmem" != 0 ] && ulimit -v $((vmem * 1024))
      go test -run '^$' -fuzz "^$fn\$" -fuzztime "${ft}s" -fuzzminimizetime "$minimize" "${parallel[@]}" "./$dir"
    ) 2>&1 | tee "$log"
    rc=${PIPESTATUS[0]}
    # go's fuzz coordinator can fail a run whose -fuzztime expires while it
    # talks to a worker: the bare message "context deadline exceeded", no
    # failing input written, the target not at fault (CI of stop 25:
    # FuzzLookup, a pure function of two strings). Such a run goes once
    # more; a second one, or any other failure, fails. A target's own
    # t.Fatal(ctx.Err()) carries a file:line prefix and is never taken for it.
    if [ "$rc" -ne 0 ] && [ "$race_retried" = 0 ] && deadline_race "$log"; then
      echo "fuzz.sh: $fn: go's coordinator reported its own -fuzztime deadline as a failure, no input written; once more" >&2
      race_retried=1
      continue
    fi
    if [ "$rc" -ne 0 ] || grep -q 'now fuzzing with' "$log"; then break; fi
    if [ "$baseline_retried" = 0 ]; then
      baseline_retried=1
      echo "fuzz.sh: $fn never got past its baseline in ${ft}s; once more with $((ft * 3))s" >&2
      ft=$((ft * 3))
    else
      echo "fuzz.sh: $fn never got past its baseline in ${ft}s: raise its setup time in scripts/fuzz.sh" >&2
      rc=1
      break
    fi
  done
  # The last progress line: total execs over the whole run.
  rate=$(grep -o 'elapsed: [0-9hms.]*, execs: [0-9]*' "$log" | tail -n 1 |
    awk -F'[ ,]+' '{t=$2; s=0; if (t ~ /h/) {split(t,a,"h"); s+=a[1]*3600; t=a[2]} if (t ~ /m/) {split(t,a,"m"); s+=a[1]*60; t=a[2]} sub("s","",t); s+=t; if (s>0) printf "%d execs in %ds (%d/s)", $4, s, $4/s}')
  rm -f "$log"
  if [ "$rc" -ne 0 ]; then
    failed+=("$dir $fn")
    summary+=("FAIL $fn ${rate:-}")
  else
    summary+=("ok   $fn ${rate:-}")
  fi
done

echo
echo "fuzz summary ($t each):"
printf '  %s\n' "${summary[@]}"
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: ${#failed[@]} target(s) found failing inputs (see testdata/fuzz/ in their packages):" >&2
  printf '  %s\n' "${failed[@]}" >&2
  exit 1
fi
