#!/usr/bin/env bash
# Checks the Helm chart's Prometheus alert rules with promtool itself
# (Debian: apt-get install prometheus), and runs their unit tests
# (deployments/helm/testdata/alert-rules-test.yaml: each alert fires on the
# series the services export, and stays quiet when all is well). CI checks
# the rules without the
# binary: deployments/helm's TestAlertRulesAreValid parses them with
# Prometheus' own rulefmt and PromQL parser.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v promtool >/dev/null; then
  echo "promtool not found: apt-get install prometheus, or run go test -run TestAlertRulesAreValid ./deployments/helm/" >&2
  exit 1
fi
promtool check rules deployments/helm/assay/files/prometheus/assay-rules.yaml
promtool test rules deployments/helm/testdata/alert-rules-test.yaml
