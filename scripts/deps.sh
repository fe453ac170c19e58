#!/usr/bin/env bash
# Installs (when missing) and starts the platform's dependencies natively, with
# their data under .run/ and on non-default loopback ports, so they never clash
# with a system PostgreSQL or ClickHouse:
#   PostgreSQL  127.0.0.1:${ASSAY_PG_PORT:-55432}   (user postgres trusted on loopback, for
#               the tests; every other role signs in with its password: pg_hba below)
#   ClickHouse  127.0.0.1:${ASSAY_CH_PORT:-59000}   (native; HTTP on ${ASSAY_CH_HTTP_PORT:-58123})
#   NATS        127.0.0.1:${ASSAY_NATS_PORT:-54222} (JetStream, store in .run/nats; with
#               the services' users when .run/nats/auth.conf exists: make up writes it)
# Usage: scripts/deps.sh up [test]|down|env ("up test" also installs what only
# the tests need: ZooKeeper with a Java runtime, Chromium)
# Idempotent: "up" reuses servers that already answer; "down" stops only what
# runs from this .run/ folder.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
RUN=${ASSAY_RUN_DIR:-$ROOT/.run}
PG_PORT=${ASSAY_PG_PORT:-55432}
CH_PORT=${ASSAY_CH_PORT:-59000}
CH_HTTP_PORT=${ASSAY_CH_HTTP_PORT:-58123}
NATS_PORT=${ASSAY_NATS_PORT:-54222}

log() { printf '==> %s\n' "$*" >&2; }

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

pg_bin() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1; }

# install_missing [test] installs, in one apt transaction, what is missing of
# what the platform needs to run (make up); with "test" also what only the
# tests need (make test). ZooKeeper's Java runtime and Chromium are most of
# a fresh machine's download, so make up leaves them out.
install_missing() {
  local pkgs=()
  [ -n "$(pg_bin)" ] && [ -x "$(pg_bin)/initdb" ] || pkgs+=(postgresql)
  [ -x /usr/sbin/clickhouse-server ] || command -v clickhouse-server >/dev/null || pkgs+=(clickhouse-server clickhouse-client)
  command -v clickhouse-client >/dev/null || pkgs+=(clickhouse-client)
  command -v nats-server >/dev/null || [ -x /usr/sbin/nats-server ] || pkgs+=(nats-server)
  # The runtime's custom code sandbox (services/runtime/internal/codebox):
  # bubblewrap, and Debian's python3 (/usr/bin/python3, RUNTIME_CODE_PYTHON)
  # whose files the sandbox's unprivileged user can read.
  command -v bwrap >/dev/null || pkgs+=(bubblewrap)
  [ -x /usr/bin/python3 ] || pkgs+=(python3)
  # Node and npm build the web console (scripts/console.sh, same check):
  # installed here so that a fresh machine pays for one apt-get update.
  command -v npm >/dev/null && command -v node >/dev/null || pkgs+=(nodejs npm)
  if [ "${1:-}" = test ]; then
    # ZooKeeper (with a Java runtime) coordinates the replicated ClickHouse
    # of the cluster-schema test (services/writer, pkg/testutil/zktest); not
    # run as a service here.
    [ -f /usr/share/java/zookeeper.jar ] && command -v java >/dev/null || pkgs+=(zookeeper default-jre-headless)
    # Chromium runs the web console's end-to-end tests (services/console/e2e,
    # driven by chromedp); Debian's package, never a downloaded browser.
    command -v chromium >/dev/null || pkgs+=(chromium)
  fi
  if [ ${#pkgs[@]} -gt 0 ]; then
    log "installing ${pkgs[*]} (Debian packages)"
    as_root apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${pkgs[@]}" >/dev/null
  fi
}

wait_for() { # name, tries, command...
  local name=$1 tries=$2; shift 2
  for _ in $(seq "$tries"); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    sleep 0.5
  done
  log "$name did not come up; see its log under $RUN"
  return 1
}

tcp_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# PostgreSQL refuses to run as root: as root, run it as the postgres user,
# which must be able to reach the data folder (mktemp folders are 0700).
pg_user_run() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

# pg_hba: the superuser postgres is trusted on loopback (the test harness,
# TEST_POSTGRES_URL, and make up's own set-up); any other role, the services'
# among them (deployments/postgres/roles.sql), must give its password.
pg_hba() {
  cat >"$RUN/pg/data/pg_hba.conf" <<'HBA'
# Written by scripts/deps.sh.
host all postgres 127.0.0.1/32 trust
host all postgres ::1/128      trust
host all all      127.0.0.1/32 scram-sha-256
host all all      ::1/128      scram-sha-256
HBA
  if [ "$(id -u)" = 0 ]; then chown postgres: "$RUN/pg/data/pg_hba.conf"; fi
}

start_postgres() {
  local bin; bin=$(pg_bin)
  if "$bin/pg_isready" -q -h 127.0.0.1 -p "$PG_PORT"; then return 0; fi
  mkdir -p "$RUN/pg"
  if [ "$(id -u)" = 0 ]; then
    chown postgres: "$RUN/pg"
    local d=$RUN
    while [ "$d" != / ]; do chmod o+x "$d" 2>/dev/null || true; d=$(dirname "$d"); done
  fi
  if [ ! -f "$RUN/pg/data/PG_VERSION" ]; then
    log "initialising PostgreSQL in $RUN/pg/data"
    pg_user_run "$bin/initdb" -D "$RUN/pg/data" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 >"$RUN/pg/initdb.log"
  fi
  pg_hba
  log "starting PostgreSQL on 127.0.0.1:$PG_PORT"
  pg_user_run "$bin/pg_ctl" -D "$RUN/pg/data" -l "$RUN/pg/postgres.log" -w -t 60 start \
    -o "-p $PG_PORT -c listen_addresses=127.0.0.1 -c unix_socket_directories='' -c max_connections=300 -c shared_buffers=256MB" >/dev/null
  wait_for postgres 60 "$bin/pg_isready" -q -h 127.0.0.1 -p "$PG_PORT"
}

# clickhouse_config DIR TCP_PORT HTTP_PORT writes a single-node ClickHouse
# configuration with its data under DIR (also used by scripts/bench/chcpu.sh
# for its private server: `scripts/deps.sh clickhouse-config ...`).
# Every merge is vertical (column by column) instead of only those of
# 131,072 rows and more: a merge of all the columns at once holds blocks
# of 8,192 whole span rows, about 100 MB, in fresh memory each time, and
# a full merge of the spans cost 130 µs of CPU a row instead of 44
# (docs/benchmarks.md, ClickHouse's CPU per inserted row: where it goes).
# It also writes DIR/server.env, the environment the server runs with:
# Debian's 18.16 links the system's jemalloc with its defaults, which give
# every allocation over 8 MiB (a column of an insert, a merge's buffers) to
# an arena that returns it to the kernel at once, so each insert faulted
# its memory in afresh (5 page faults a span row, half the server's CPU in
# the kernel). oversize_threshold:0 keeps those allocations in the normal
# arenas, returned after jemalloc's usual decay (10 s): ClickHouse's CPU
# per row 0.58-0.65x (docs/benchmarks.md, ClickHouse's memory allocator).
# Current ClickHouse releases bundle and configure their own jemalloc.
clickhouse_config() {
  local dir=$1 tcp=$2 http=$3
  mkdir -p "$dir/data"
  printf 'MALLOC_CONF=oversize_threshold:0\n' >"$dir/server.env"
  cat >"$dir/config.xml" <<XML
<?xml version="1.0"?>
<yandex>
  <logger><level>warning</level><log>$dir/server.log</log><errorlog>$dir/server.err.log</errorlog></logger>
  <http_port>$http</http_port>
  <tcp_port>$tcp</tcp_port>
  <listen_host>127.0.0.1</listen_host>
  <path>$dir/data/</path>
  <tmp_path>$dir/data/tmp/</tmp_path>
  <user_files_path>$dir/data/user_files/</user_files_path>
  <format_schema_path>$dir/data/format_schemas/</format_schema_path>
  <users_config>$dir/users.xml</users_config>
  <default_profile>default</default_profile>
  <default_database>default</default_database>
  <mark_cache_size>268435456</mark_cache_size>
  <max_concurrent_queries>200</max_concurrent_queries>
  <timezone>UTC</timezone>
  <merge_tree><vertical_merge_algorithm_min_rows_to_activate>1</vertical_merge_algorithm_min_rows_to_activate></merge_tree>
</yandex>
XML
  cat >"$dir/users.xml" <<'XML'
<?xml version="1.0"?>
<yandex>
  <profiles><default><max_memory_usage>8000000000</max_memory_usage></default></profiles>
  <users><default><password></password><networks><ip>127.0.0.1</ip><ip>::1</ip></networks><profile>default</profile><quota>default</quota></default></users>
  <quotas><default><interval><duration>3600</duration><queries>0</queries><errors>0</errors><result_rows>0</result_rows><read_rows>0</read_rows><execution_time>0</execution_time></interval></default></quotas>
</yandex>
XML
}

start_clickhouse() {
  if clickhouse-client --port "$CH_PORT" -q 'SELECT 1' >/dev/null 2>&1; then return 0; fi
  local dir=$RUN/clickhouse
  clickhouse_config "$dir" "$CH_PORT" "$CH_HTTP_PORT"
  log "starting ClickHouse on 127.0.0.1:$CH_PORT"
  local server; server=$(command -v clickhouse-server || echo /usr/sbin/clickhouse-server)
  env $(cat "$dir/server.env") "$server" --config-file="$dir/config.xml" --pid-file="$dir/clickhouse.pid" --daemon
  wait_for clickhouse 120 clickhouse-client --port "$CH_PORT" -q 'SELECT 1'
}

start_nats() {
  if tcp_open "$NATS_PORT"; then return 0; fi
  mkdir -p "$RUN/nats"
  log "starting NATS JetStream on 127.0.0.1:$NATS_PORT"
  local server; server=$(command -v nats-server || echo /usr/sbin/nats-server)
  # One JetStream message carries one ingest request (up to 10 MiB of OTLP,
  # zstd-compressed); the 1 MiB default payload would refuse the largest.
  # A fixed store limit: JetStream's default, 75 % of the disk free at start,
  # refuses the span stream's 4 GiB reservation on a nearly full disk.
  printf 'max_payload: 16777216\njetstream { store_dir: "%s", max_file_store: 68719476736 }\n' "$RUN/nats/data" >"$RUN/nats/nats.conf"
  # The services' users and permissions (deployments/nats/auth.conf with
  # make up's passwords): no anonymous client once make up has run.
  if [ -f "$RUN/nats/auth.conf" ]; then printf 'include "auth.conf"\n' >>"$RUN/nats/nats.conf"; fi
  setsid nohup "$server" -c "$RUN/nats/nats.conf" -a 127.0.0.1 -p "$NATS_PORT" \
    -P "$RUN/nats/nats.pid" -l "$RUN/nats/nats.log" </dev/null >/dev/null 2>&1 &
  wait_for nats 60 tcp_open "$NATS_PORT"
}

stop_pidfile() { # name, pidfile
  [ -f "$2" ] || return 0
  local pid; pid=$(cat "$2")
  if kill "$pid" 2>/dev/null; then
    log "stopping $1 ($pid)"
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  fi
  rm -f "$2"
}

# check_sandbox warns when bubblewrap cannot set up the runtime's code
# sandbox as an unprivileged user (user.max_user_namespaces=0, or Ubuntu's
# kernel.apparmor_restrict_unprivileged_userns=1): the runtime then refuses
# custom code with 422 runtime.sandbox_unavailable and its sandbox tests fail.
check_sandbox() {
  local as=()
  [ "$(id -u)" = 0 ] && as=(setpriv --reuid=1000000 --regid=1000000 --clear-groups)
  if ! "${as[@]}" bwrap --unshare-all --unshare-user --die-with-parent --ro-bind /usr /usr \
      --symlink usr/bin /bin --symlink usr/lib /lib --symlink usr/lib64 /lib64 /usr/bin/true >/dev/null 2>&1; then
    log "WARNING: bwrap cannot create unprivileged user namespaces here; custom code will be refused"
  fi
}

case ${1:-} in
  up)
    # up test: also the test-only packages (make test)
    [ "${2:-test}" = test ] || { echo "usage: $0 up [test]" >&2; exit 2; }
    install_missing "${2:-}"
    check_sandbox
    start_postgres
    start_clickhouse
    start_nats
    ;;
  down)
    stop_pidfile nats "$RUN/nats/nats.pid"
    stop_pidfile clickhouse "$RUN/clickhouse/clickhouse.pid"
    if [ -f "$RUN/pg/data/postmaster.pid" ]; then
      log "stopping PostgreSQL"
      pg_user_run "$(pg_bin)/pg_ctl" -D "$RUN/pg/data" -m fast -w stop >/dev/null || true
    fi
    ;;
  pg-hba)
    pg_hba
    ;;
  stop-nats)
    stop_pidfile nats "$RUN/nats/nats.pid"
    ;;
  clickhouse-config)
    clickhouse_config "$2" "$3" "$4"
    ;;
  env)
    echo "export TEST_POSTGRES_URL='postgres://postgres@127.0.0.1:$PG_PORT/postgres?sslmode=disable'"
    echo "export TEST_CLICKHOUSE_URL='clickhouse://default@127.0.0.1:$CH_PORT/default'"
    ;;
  *) echo "usage: $0 up [test]|down|env|pg-hba|stop-nats|clickhouse-config DIR TCP_PORT HTTP_PORT" >&2; exit 2 ;;
esac
