#!/usr/bin/env bash
# Resume benchmark (target: a killed worker's run done within 30 s of the
# kill). The end-to-end test TestWorkerKilledMidRunIsResumed starts the
# whole platform as real binaries (gateway, registry, tracing, writer and
# two runtimes with the shipped RUNTIME_EVAL_ACK_WAIT and RUNTIME_EVAL_LEASE),
# runs an evaluation of 30 testcases × a completion application on the
# local model server (150 ms an answer) × an evaluator in process jobs of 5
# scenarios, kills one runtime with SIGKILL mid-run and starts another; it
# prints how long after the kill the cells the killed worker held were done
# and the run finished. Needs scripts/deps.sh up.
#
#   scripts/bench/evalresume.sh [runs]    # default 2 runs
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
eval "$(scripts/deps.sh env)"
for i in $(seq "${1:-2}"); do
  echo "run $i:"
  go test -count=1 -v -run 'TestWorkerKilledMidRunIsResumed$' ./services/runtime/internal/evalrun/ 2>&1 |
    grep -E 'killed after|^--- |^(ok|FAIL)'
done
