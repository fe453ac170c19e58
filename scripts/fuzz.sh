#!/usr/bin/env bash
# Runs every fuzz target of the repository, one at a time, each for the given
# time (default 30s), and fails when any target finds an input that breaks it.
#   scripts/fuzz.sh 8s          the short stage `make test` runs
#   scripts/fuzz.sh 10m         a long local or nightly run (`make fuzz FUZZTIME=10m`)
# Environment:
#   FUZZ_TARGETS      regexp of target names to run (default: all)
#   FUZZ_PARALLEL     fuzzing workers per target (default: go's, GOMAXPROCS)
#   FUZZ_MAX_HEAP_MB  live heap one input may reach before the worker panics
#                     (pkg/testutil/fuzzbound; default 2048)
#   FUZZ_VMEM_MB      address-space cap of each fuzzing process, the backstop
#                     for a single huge allocation (default 16384; 0: none)
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

targets=()
while IFS= read -r f; do
  for fn in $(grep -o '^func Fuzz[A-Za-z0-9_]*' "$f" | cut -d' ' -f2); do
    [[ $fn =~ $filter ]] && targets+=("$(dirname "$f") $fn")
  done
done < <(grep -rl --include='*_test.go' '^func Fuzz' pkg services | sort)

failed=() summary=()
for target in "${targets[@]}"; do
  read -r dir fn <<<"$target"
  echo "==> $dir $fn ($t)"
  log=$(mktemp)
  (
    [ "$vmem" != 0 ] && ulimit -v $((vmem * 1024))
    go test -run '^$' -fuzz "^$fn\$" -fuzztime "$t" "${parallel[@]}" "./$dir"
  ) 2>&1 | tee "$log"
  rc=${PIPESTATUS[0]}
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
