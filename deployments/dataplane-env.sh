#!/usr/bin/env bash
# Adds the data stores' passwords that docker-compose.yml requires to a .env
# file (default: .env at the repo root, where Compose reads it), each a new
# random value, and leaves the ones already there alone: run it before the
# first `docker compose up`, and keep the file (the data stores keep the
# passwords they were first given). Usage: deployments/dataplane-env.sh [FILE]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
file=${1:-$ROOT/.env}
touch "$file"
chmod 600 "$file"
for v in ASSAY_POSTGRES_PASSWORD ASSAY_PG_OWNER_PASSWORD ASSAY_PG_APP_PASSWORD \
  ASSAY_CH_WRITER_PASSWORD ASSAY_CH_TRACING_PASSWORD ASSAY_CH_READER_PASSWORD \
  ASSAY_NATS_REGISTRY_PASSWORD ASSAY_NATS_RUNTIME_PASSWORD ASSAY_NATS_TRACING_PASSWORD ASSAY_NATS_WRITER_PASSWORD; do
  grep -q "^$v=" "$file" || printf '%s=%s\n' "$v" "$(od -An -N24 -tx1 /dev/urandom | tr -d ' \n')" >>"$file"
done
echo "data-store passwords in $file"
