-- The two PostgreSQL roles the services use, in the current database:
--   owner  owns the database, its public schema and every table: the
--          gateway and the registry apply their migrations as this role
--          (*_POSTGRES_MIGRATE_URL);
--   app    reads and writes rows and nothing else: the gateway, the
--          registry and tracing run as this role (*_POSTGRES_URL). It is no
--          superuser, creates no role, database or table.
-- Run it as a superuser (or a role that may create roles and is a member of
-- the owner role), in the services' database, before they start; it is
-- idempotent, so run it again after changing a password:
--   psql -v ON_ERROR_STOP=1 -v owner=assay_owner -v owner_password=... \
--        -v app=assay_app -v app_password=... -d assay -f roles.sql
-- Used by scripts/platform.sh (make up), the compose PostgreSQL's init script
-- (init-roles.sh) and tested by pkg/pgxutil (TestRolesLeastPrivilege).
\set ON_ERROR_STOP on

SELECT format('CREATE ROLE %I', r) FROM unnest(ARRAY[:'owner', :'app']) AS r
  WHERE NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = r) \gexec
SELECT format('ALTER ROLE %I LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS PASSWORD %L', :'owner', :'owner_password') \gexec
SELECT format('ALTER ROLE %I LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS PASSWORD %L', :'app', :'app_password') \gexec

-- The owner owns the database and its schema; a database that was migrated
-- by another role before (make up did so as postgres) hands its objects over.
SELECT format('ALTER DATABASE %I OWNER TO %I', current_database(), :'owner') \gexec
SELECT format('ALTER SCHEMA public OWNER TO %I', :'owner') \gexec
SELECT format('ALTER TABLE public.%I OWNER TO %I', c.relname, :'owner')
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
  WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p', 'v', 'm', 'f')
    AND pg_get_userbyid(c.relowner) <> :'owner' \gexec
SELECT format('ALTER SEQUENCE public.%I OWNER TO %I', c.relname, :'owner')
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
  WHERE n.nspname = 'public' AND c.relkind = 'S'
    AND pg_get_userbyid(c.relowner) <> :'owner'
    AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.objid = c.oid AND d.deptype IN ('a', 'i')) \gexec
SELECT format('ALTER FUNCTION %s OWNER TO %I', p.oid::regprocedure, :'owner')
  FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
  WHERE n.nspname = 'public' AND pg_get_userbyid(p.proowner) <> :'owner' \gexec

-- Nobody else connects or creates objects; the app role connects, and uses
-- the schema's rows and sequences, of today's tables and of every table the
-- owner's migrations create later.
SELECT format('REVOKE ALL ON DATABASE %I FROM PUBLIC', current_database()) \gexec
SELECT format('GRANT CONNECT ON DATABASE %I TO %I', current_database(), :'app') \gexec
REVOKE CREATE ON SCHEMA public FROM PUBLIC;
SELECT format('GRANT USAGE ON SCHEMA public TO %I', :'app') \gexec
SELECT format('GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO %I', :'app') \gexec
SELECT format('GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA public TO %I', :'app') \gexec
SELECT format('ALTER DEFAULT PRIVILEGES FOR ROLE %I IN SCHEMA public GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO %I', :'owner', :'app') \gexec
SELECT format('ALTER DEFAULT PRIVILEGES FOR ROLE %I IN SCHEMA public GRANT USAGE, SELECT, UPDATE ON SEQUENCES TO %I', :'owner', :'app') \gexec
