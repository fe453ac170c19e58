#!/usr/bin/env bash
# Runs every fuzz target for the given time (default 30s) each.
set -euo pipefail
cd "$(dirname "$0")/.."
t=${1:-30s}
grep -rl --include='*_test.go' '^func Fuzz' pkg services | while read -r f; do
  dir=$(dirname "$f")
  for fn in $(grep -o '^func Fuzz[A-Za-z0-9_]*' "$f" | cut -d' ' -f2); do
    echo "==> $dir $fn"
    go test -run '^$' -fuzz "^$fn\$" -fuzztime "$t" "./$dir"
  done
done
