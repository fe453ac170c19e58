#!/usr/bin/env bash
# Starts or stops the whole platform locally (make up / make down).
#   up:   dependencies (scripts/deps.sh), the "assay" database, an admin key
#         (ASSAY_ADMIN_KEY, else generated once into .run/admin.key), the
#         registry's vault key (ASSAY_VAULT_KEY, else generated once into
#         .run/vault.key: losing it loses every stored provider key), the web
#         console built when its sources changed (scripts/console.sh
#         build-stale), the six services built into .run/bin; waits for every
#         /ready, creates the first console user (ASSAY_USER_EMAIL, default
#         admin@assay.local) with a generated password printed once and
#         stored nowhere, prints the URLs and the admin key. Services already
#         running are reused; an existing first user is left alone.
#         The data stores get credentials (passwords generated once into
#         .run/*.pw, see dataplane below): PostgreSQL roles from
#         deployments/postgres/roles.sql, ClickHouse users from
#         deployments/clickhouse/users.sh, NATS users from
#         deployments/nats/auth.conf; each service gets only its own.
#   down: stops the services and the dependencies started from this .run/.
#   env SERVICE: prints the variables up gives SERVICE, one K=V a line,
#         secrets included (creating them in .run/ if missing): what a test
#         checks and an operator may look at.
# Each service gets only its own variables and secrets: the token of each
# caller-callee pair it is part of (generated once into .run/tokens/), the
# admin key the gateway only, the vault key the registry only.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
RUN=${ASSAY_RUN_DIR:-$ROOT/.run}
PG_PORT=${ASSAY_PG_PORT:-55432}
CH_PORT=${ASSAY_CH_PORT:-59000}
NATS_PORT=${ASSAY_NATS_PORT:-54222}
CH_HTTP_PORT=${ASSAY_CH_HTTP_PORT:-58123}
SERVICES=(registry runtime tracing writer console gateway) # gateway last: it fronts the others
declare -A PORT=([gateway]=8080 [registry]=8081 [runtime]=8082 [tracing]=8083 [writer]=8084 [console]=8085)
# The service-to-service calls, caller:callee; each pair has its own token.
PAIRS=(gateway:registry gateway:runtime gateway:tracing runtime:registry runtime:tracing tracing:registry registry:tracing)

# Each line says how many seconds make up has taken so far: where a slow
# start spends its time.
log() { printf '==> [%3ss] %s\n' "$SECONDS" "$*" >&2; }

secret() { # file: read it, or create it with 48 random hex digits
  if [ ! -s "$1" ]; then
    (umask 077; od -An -N24 -tx1 /dev/urandom | tr -d ' \n' >"$1")
  fi
  cat "$1"
}

vault_key() { # file: read it, or create it with base64 of 32 random bytes
  if [ ! -s "$1" ]; then
    (umask 077; head -c 32 /dev/urandom | base64 | tr -d '\n' >"$1")
  fi
  cat "$1"
}

# dataplane_setup generates the data stores' passwords (once, into
# $RUN/*.pw), writes NATS' users before it starts, and, once the stores run,
# creates the PostgreSQL roles and the ClickHouse users. The superuser
# postgres and ClickHouse's default user stay open on loopback for the test
# harness (scripts/deps.sh); the services never use them.
dataplane_setup() {
  mkdir -p "$RUN/nats"
  local u conf
  conf=$(cat "$ROOT/deployments/nats/auth.conf")
  for u in registry runtime tracing writer; do
    conf=${conf//\$${u^^}_NATS_PASSWORD/\"$(secret "$RUN/nats-$u.pw")\"}
  done
  (umask 077; printf '%s\n' "$conf" >"$RUN/nats/auth.conf.new") && mv "$RUN/nats/auth.conf.new" "$RUN/nats/auth.conf"
}

dataplane_users() {
  # NATS: a server started before auth.conf existed (make test, an older
  # make up) lets anyone in; restart ours with the users.
  if ! nats_requires_auth; then
    if [ -f "$RUN/nats/nats.pid" ]; then
      log "NATS runs without the services' users: restarting it"
      "$ROOT/scripts/deps.sh" stop-nats
      "$ROOT/scripts/deps.sh" up
    else
      log "NATS on 127.0.0.1:$NATS_PORT was not started from $RUN and lets anyone in; stop it and run make up again"; exit 1
    fi
  fi
  # PostgreSQL: passwords, not trust, for every role but postgres.
  if [ -d "$RUN/pg/data" ] && ! grep -q scram-sha-256 "$RUN/pg/data/pg_hba.conf"; then
    "$ROOT/scripts/deps.sh" pg-hba
    psql -q "postgres://postgres@127.0.0.1:$PG_PORT/postgres" -c 'SELECT pg_reload_conf()' >/dev/null
  fi
  # Variables through stdin, not the command line (ps).
  { printf '\\set owner assay_owner\n\\set app assay_app\n'
    printf "\\set owner_password '%s'\n\\set app_password '%s'\n" "$(secret "$RUN/pg-owner.pw")" "$(secret "$RUN/pg-app.pw")"
    cat "$ROOT/deployments/postgres/roles.sql"
  } | psql -X -q "postgres://postgres@127.0.0.1:$PG_PORT/assay" -f - >/dev/null
  # ClickHouse: users.d beside deps.sh's users.xml; the server reloads it.
  mkdir -p "$RUN/clickhouse/users.d"
  (umask 077; ASSAY_CH_WRITER_PASSWORD=$(secret "$RUN/ch-writer.pw") ASSAY_CH_TRACING_PASSWORD=$(secret "$RUN/ch-tracing.pw") \
    ASSAY_CH_READER_PASSWORD=$(secret "$RUN/ch-reader.pw") "$ROOT/deployments/clickhouse/users.sh" >"$RUN/clickhouse/users.d/assay.xml")
  local ok=
  for _ in $(seq 60); do
    if curl -fsS -o /dev/null -H @<(printf 'X-ClickHouse-User: assay_writer\nX-ClickHouse-Key: %s\n' "$(secret "$RUN/ch-writer.pw")") \
      "http://127.0.0.1:$CH_HTTP_PORT/?query=SELECT%201" 2>/dev/null; then ok=1; break; fi
    sleep 0.5
  done
  [ -n "$ok" ] || { log "ClickHouse did not take the users of $RUN/clickhouse/users.d/assay.xml (is it the server deps.sh started from $RUN?)"; exit 1; }
}

nats_requires_auth() { # the server's INFO line says whether it asks for a user
  local info
  info=$(timeout 3 bash -c "exec 3<>/dev/tcp/127.0.0.1/$NATS_PORT; head -c 4096 <&3 | head -n 1" 2>/dev/null) || true
  [[ $info == *'"auth_required":true'* ]]
}

# dataplane_env SERVICE prints the service's data-store variables, one a
# line: its own users and passwords only.
dataplane_env() {
  local pg="127.0.0.1:$PG_PORT/assay?sslmode=disable" ch="127.0.0.1:$CH_PORT/assay" nats="nats://127.0.0.1:$NATS_PORT"
  local app="postgres://assay_app:$(secret "$RUN/pg-app.pw")@$pg" owner="postgres://assay_owner:$(secret "$RUN/pg-owner.pw")@$pg"
  local P=${1^^}
  case $1 in
    gateway | registry) printf '%s\n' "${P}_POSTGRES_URL=$app" "${P}_POSTGRES_MIGRATE_URL=$owner" ;;
  esac
  case $1 in
    tracing) printf '%s\n' "TRACING_POSTGRES_URL=$app" \
      "TRACING_CLICKHOUSE_URL=clickhouse://assay_tracing:$(secret "$RUN/ch-tracing.pw")@$ch" \
      "TRACING_CLICKHOUSE_READ_URL=clickhouse://assay_reader:$(secret "$RUN/ch-reader.pw")@$ch" ;;
    writer) printf '%s\n' "WRITER_CLICKHOUSE_URL=clickhouse://assay_writer:$(secret "$RUN/ch-writer.pw")@$ch" ;;
  esac
  case $1 in
    registry | runtime | tracing | writer)
      printf '%s\n' "${P}_NATS_URL=$nats" "${P}_NATS_USER=$1" "${P}_NATS_PASSWORD=$(secret "$RUN/nats-$1.pw")" ;;
  esac
}

# settings fills admin, vault and common (every service's plain settings,
# each variable prefixed with its service's name), creating the run folder
# and the secrets that are missing.
settings() {
  mkdir -p "$RUN/bin" "$RUN/logs" "$RUN/pids" "$RUN/tokens"
  if [ -n "${ASSAY_ADMIN_KEY:-}" ]; then admin=$ASSAY_ADMIN_KEY; else admin=$(secret "$RUN/admin.key"); fi
  if [ -n "${ASSAY_VAULT_KEY:-}" ]; then vault=$ASSAY_VAULT_KEY; else vault=$(vault_key "$RUN/vault.key"); fi
  rm -f "$RUN/internal.token" # the one token all services shared before the pair tokens
  common=(
    "GATEWAY_CONSOLE_URL=http://127.0.0.1:${PORT[console]}"
    # loopback only, as printed below; its /metrics on a port of its own
    "GATEWAY_ADDR=127.0.0.1:${PORT[gateway]}" "GATEWAY_METRICS_ADDR=127.0.0.1:8086"
    # Private model servers the runtime may call (e.g. a local Ollama:
    # ASSAY_EGRESS_ALLOW=127.0.0.1:11434); empty: public https only.
    "RUNTIME_EGRESS_ALLOW=${ASSAY_EGRESS_ALLOW:-}"
  )
}

# service_env SERVICE prints SERVICE's variables: its own of the common
# settings, its own data-store users (dataplane_env), the token of each pair
# it is part of, and the admin key (gateway) or the vault key (registry).
# Run settings first.
service_env() {
  local s=$1 P=${1^^} kv pair caller callee
  for kv in "${common[@]}"; do
    if [[ $kv == "${P}_"* ]]; then printf '%s\n' "$kv"; fi
  done
  dataplane_env "$s"
  # No load balancer to wait for in front of a local run: `make down` stops
  # each service as soon as its requests have drained.
  printf '%s_SHUTDOWN_DELAY=0s\n' "$P"
  for pair in "${PAIRS[@]}"; do
    caller=${pair%%:*} callee=${pair##*:}
    if [ "$s" = "$caller" ]; then printf '%s_TOKEN_TO_%s=%s\n' "$P" "${callee^^}" "$(secret "$RUN/tokens/$caller-$callee.token")"; fi
    if [ "$s" = "$callee" ]; then printf '%s_TOKEN_FROM_%s=%s\n' "$P" "${caller^^}" "$(secret "$RUN/tokens/$caller-$callee.token")"; fi
  done
  case $s in
    gateway) printf 'GATEWAY_ADMIN_KEY=%s\n' "$admin" ;;
    registry) printf 'REGISTRY_VAULT_KEY=%s\n' "$vault" ;;
  esac
}

alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

up() {
  mkdir -p "$RUN/bin" "$RUN/logs" "$RUN/pids"
  dataplane_setup
  "$ROOT/scripts/deps.sh" up
  local pg=postgres://postgres@127.0.0.1:$PG_PORT
  psql "$pg/postgres" -tAc "SELECT 1 FROM pg_database WHERE datname = 'assay'" | grep -q 1 ||
    psql -q "$pg/postgres" -c 'CREATE DATABASE assay'
  dataplane_users
  settings
  local start=() others=() s
  for s in "${SERVICES[@]}"; do
    if alive "$RUN/pids/$s.pid"; then log "$s already running"; continue; fi
    start+=("$s")
    [ "$s" = console ] || others+=("./services/$s/cmd/$s")
  done
  # The console binary embeds web/dist: build it (only when a source changed
  # since the last build) while Go compiles the other services, which do not
  # need it; npm ci mostly waits on the network, go build on the CPU.
  local web=
  if [[ " ${start[*]} " == *" console "* ]]; then "$ROOT/scripts/console.sh" build-stale & web=$!; fi
  # One go build for all of them: it compiles the shared packages once and
  # links the binaries in parallel (-o DIR/ names each after its package).
  if [ ${#others[@]} -gt 0 ]; then
    log "building ${others[*]}"
    (cd "$ROOT" && go build -trimpath -o "$RUN/bin/" "${others[@]}") || { [ -z "$web" ] || wait "$web" || true; exit 1; }
  fi
  if [ -n "$web" ]; then
    wait "$web" || { log "the console build failed (scripts/console.sh build)"; exit 1; }
    log "building ./services/console/cmd/console"
    (cd "$ROOT" && go build -trimpath -o "$RUN/bin/console" ./services/console/cmd/console)
  fi
  log "built"
  for s in "${start[@]}"; do
    log "starting $s on 127.0.0.1:${PORT[$s]}"
    local senv; mapfile -t senv < <(service_env "$s")
    # The services inherit the shell's environment (PATH, provider keys),
    # less the platform secrets a user may have exported for this script.
    env -u ASSAY_ADMIN_KEY -u ASSAY_VAULT_KEY "${senv[@]}" setsid nohup "$RUN/bin/$s" </dev/null >>"$RUN/logs/$s.log" 2>&1 &
    echo $! >"$RUN/pids/$s.pid"
  done
  for s in "${SERVICES[@]}"; do
    local ok=
    for _ in $(seq 120); do
      if curl -fsS "http://127.0.0.1:${PORT[$s]}/ready" >/dev/null 2>&1; then ok=1; break; fi
      alive "$RUN/pids/$s.pid" || break
      sleep 0.5
    done
    if [ -z "$ok" ]; then log "$s is not ready; last lines of $RUN/logs/$s.log:"; tail -n 20 "$RUN/logs/$s.log" >&2; exit 1; fi
  done
  log "every service is ready"
  local user; user=$(first_user "$admin")
  cat <<MSG

Assay is running.
  Console:    http://127.0.0.1:8080/console/
  $user
  URL:        http://127.0.0.1:8080
  Admin key:  $admin
  Docs:       http://127.0.0.1:8080/api/docs
  OTLP:       http://127.0.0.1:4318/v1/traces (HTTP), 127.0.0.1:4317 (gRPC); Authorization: ApiKey <key>
  Metrics:    http://127.0.0.1:8086/metrics (gateway); 8087 registry, 8088 runtime, 8089 tracing, 8090 writer, 8091 console
  Logs:       $RUN/logs/

Create an account and its first API key:
  curl -s -X POST http://127.0.0.1:8080/api/admin/simple/accounts/ \\
    -H 'Authorization: Access $admin' -H 'Content-Type: application/json' \\
    -d '{"accounts": {"me": {"user": {"email": "me@example.com"}}}}'
MSG
}

# first_user creates the first console user through the admin API (an
# email:password identity, no API key) and prints one line about it. The
# password is random and shown only here: nothing stores it in clear (the
# gateway keeps its bcrypt hash). If it is lost, delete the user
# (DELETE /api/admin/simple/accounts with its email, which also deletes its
# organization) and run make up again.
first_user() {
  local admin=$1 email=${ASSAY_USER_EMAIL:-admin@assay.local} password resp status
  password=$(head -c 18 /dev/urandom | base64 | tr '+/' '-_')
  # body and admin key through stdin and a descriptor, not the command line (ps)
  resp=$(printf '{"accounts":{"first":{"user":{"email":"%s"},"user_identities":[{"method":"email:password","subject":"%s","password":"%s","verified":true}],"options":{"create_api_keys":false}}}}' \
      "$email" "$email" "$password" |
    curl -sS -w '\n%{http_code}' -X POST "http://127.0.0.1:${PORT[gateway]}/api/admin/simple/accounts" \
      -H @<(printf 'Authorization: Access %s\nContent-Type: application/json\n' "$admin") --data-binary @-) || true
  status=${resp##*$'\n'}
  case $status in
    200) echo "Sign in as: $email / $password   (shown once, stored nowhere)" ;;
    409) echo "Sign in as: $email (created earlier; its password was shown then)" ;;
    *) log "could not create the first user $email: ${resp%$'\n'*} ($status)"; echo "Sign in as: (no user: see the message above)" ;;
  esac
}

down() {
  for s in gateway "${SERVICES[@]}"; do
    local f=$RUN/pids/$s.pid
    [ -f "$f" ] || continue
    local pid; pid=$(cat "$f")
    if kill "$pid" 2>/dev/null; then
      log "stopping $s ($pid)"
      for _ in $(seq 250); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done # drains up to 25 s
      kill -9 "$pid" 2>/dev/null || true
    fi
    rm -f "$f"
  done
  "$ROOT/scripts/deps.sh" down
}

case ${1:-} in
  up) up ;;
  down) down ;;
  env)
    [[ " ${SERVICES[*]} " == *" ${2:-none} "* ]] || { echo "usage: $0 env registry|runtime|tracing|writer|console|gateway" >&2; exit 2; }
    settings
    service_env "$2"
    ;;
  *) echo "usage: $0 up|down|env SERVICE" >&2; exit 2 ;;
esac
