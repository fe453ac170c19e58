#!/usr/bin/env bash
# Prints a ClickHouse users.d file (XML, ClickHouse 18.16 and later) with the
# services' users, to place as users.d/assay.xml beside the server's
# users.xml (the server reloads it by itself). Passwords come from the
# environment, never the command line, and are stored as SHA-256 only:
#   ASSAY_CH_WRITER_PASSWORD   user assay_writer: the writer (inserts spans,
#                              applies the schema, drops expired partitions)
#   ASSAY_CH_TRACING_PASSWORD  user assay_tracing: tracing (writes delete
#                              tombstones, deletes a purged project's spans)
#   ASSAY_CH_READER_PASSWORD   user assay_reader: tracing's span queries, in
#                              a read-only profile (readonly=2: reads and
#                              per-query settings only)
#   ASSAY_CH_DATABASE          the one database they may use (default assay)
#   ASSAY_CH_NETWORKS          client addresses, space separated (default
#                              127.0.0.1 ::1)
# ClickHouse 18.16 has no SQL GRANT: each user is confined to the database
# (allow_databases) and to its profile; only assay_reader is read-only,
# because the other two also alter tables (mutations, partitions), which
# 18.16 counts as DDL. Used by scripts/platform.sh (make up); tested by
# pkg/chx (TestServiceUsers).
set -euo pipefail
db=${ASSAY_CH_DATABASE:-assay}
networks=${ASSAY_CH_NETWORKS:-127.0.0.1 ::1}
sha() { printf '%s' "$1" | sha256sum | cut -d' ' -f1; }
nets=$(for n in $networks; do printf '<ip>%s</ip>' "$n"; done)
user() { # name, password, profile
  [ ${#2} -ge 16 ] || { echo "users.sh: the password of $1 is shorter than 16 characters" >&2; exit 1; }
  printf '    <%s><password_sha256_hex>%s</password_sha256_hex><networks>%s</networks><profile>%s</profile><quota>default</quota><allow_databases><database>%s</database></allow_databases></%s>\n' \
    "$1" "$(sha "$2")" "$nets" "$3" "$db" "$1"
}
cat <<XML
<?xml version="1.0"?>
<yandex>
  <profiles>
    <assay_rw><readonly>0</readonly><allow_ddl>1</allow_ddl><max_memory_usage>8000000000</max_memory_usage></assay_rw>
    <assay_ro><readonly>2</readonly><allow_ddl>0</allow_ddl><max_memory_usage>8000000000</max_memory_usage></assay_ro>
  </profiles>
  <users>
$(user assay_writer "${ASSAY_CH_WRITER_PASSWORD:?}" assay_rw)
$(user assay_tracing "${ASSAY_CH_TRACING_PASSWORD:?}" assay_rw)
$(user assay_reader "${ASSAY_CH_READER_PASSWORD:?}" assay_ro)
  </users>
</yandex>
XML
