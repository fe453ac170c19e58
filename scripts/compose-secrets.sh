#!/usr/bin/env bash
# Writes the secrets docker-compose.yml requires into .env beside it, once:
# a variable already in .env (or set in the environment) is left alone, so
# running it again changes nothing. Like make up, it generates the admin
# key, the registry's vault key (keep it: it seals the stored provider keys)
# one token per caller-callee pair (ASSAY_TOKEN_<CALLER>_<CALLEE>) and the
# data stores' passwords (URL-safe hex: they are placed in URLs; keep them,
# the data stores keep the passwords they were first given).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
ENV_FILE=${ASSAY_ENV_FILE:-$ROOT/.env}
PAIRS=(gateway:registry gateway:runtime gateway:tracing runtime:registry runtime:tracing tracing:registry registry:tracing)

hex() { od -An -N24 -tx1 /dev/urandom | tr -d ' \n'; }

(umask 077; touch "$ENV_FILE")
add() { # name value: append NAME=value unless .env or the environment has it
  if grep -q "^$1=" "$ENV_FILE" || [ -n "${!1:-}" ]; then return; fi
  printf '%s=%s\n' "$1" "$2" >>"$ENV_FILE"
  echo "added $1 to $ENV_FILE" >&2
}

add ASSAY_ADMIN_KEY "$(hex)"
add ASSAY_VAULT_KEY "$(head -c 32 /dev/urandom | base64 | tr -d '\n')"
for pair in "${PAIRS[@]}"; do
  caller=${pair%%:*} callee=${pair##*:}
  add "ASSAY_TOKEN_${caller^^}_${callee^^}" "$(hex)"
done
for v in ASSAY_POSTGRES_PASSWORD ASSAY_PG_OWNER_PASSWORD ASSAY_PG_APP_PASSWORD \
  ASSAY_CH_WRITER_PASSWORD ASSAY_CH_TRACING_PASSWORD ASSAY_CH_READER_PASSWORD \
  ASSAY_NATS_REGISTRY_PASSWORD ASSAY_NATS_RUNTIME_PASSWORD ASSAY_NATS_TRACING_PASSWORD ASSAY_NATS_WRITER_PASSWORD; do
  add "$v" "$(hex)"
done
