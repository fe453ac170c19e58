#!/usr/bin/env bash
# Fairness benchmark (target: one project's small run takes at most twice
# its solo time while another project has 4,000 cells queued). The
# end-to-end test TestSmallRunIsNotStarvedByAFlood starts the whole
# platform as real binaries (one runtime, the shipped defaults), times a
# run of 6 testcases × a completion application on the instantly answering
# local model server alone, then queues RUNS runs of TESTCASES testcases
# (one application cell each, batch_size 32) in another project and times
# the small run again; it prints both times and how many of the other
# project's cells ran before the small run was done. Needs
# scripts/deps.sh up.
#
#   scripts/bench/evalfair.sh [runs] [RUNS] [TESTCASES]   # default 2 runs of 20 × 200
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
eval "$(scripts/deps.sh env)"
for i in $(seq "${1:-2}"); do
  echo "run $i:"
  EVALRUN_FAIR_RUNS=${2:-20} EVALRUN_FAIR_TESTCASES=${3:-200} EVALRUN_FAIR_DELAY=0s \
    go test -count=1 -v -timeout 20m -run 'TestSmallRunIsNotStarvedByAFlood$' ./services/runtime/internal/evalrun/ 2>&1 |
    grep -E 'small run of|^--- |^(ok|FAIL)|Error:|Messages:'
done
