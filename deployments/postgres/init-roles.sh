#!/bin/sh
# The PostgreSQL image runs this once, when it initialises its data
# (/docker-entrypoint-initdb.d): the services' owner and app roles
# (roles.sql beside it) with the passwords Compose passes in.
set -eu
psql -X -q -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" \
  -v owner=assay_owner -v app=assay_app \
  -v owner_password="$ASSAY_PG_OWNER_PASSWORD" -v app_password="$ASSAY_PG_APP_PASSWORD" \
  -f /assay/postgres/roles.sql
