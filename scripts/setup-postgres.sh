#!/usr/bin/env bash
# PostgreSQL for the sql verifier's tests: installs the server if missing, starts a cluster that
# listens on loopback only, and creates two roles and a test database:
#   assay     owns the database assay_test (tests load their fixtures through it)
#   assay_ro  may only SELECT (what the verifier connects as); read-only by default, no TEMP, no CREATE
# Idempotent and non-interactive: a second run changes nothing.
# The tests read ASSAY_SQL_TEST_POSTGRES (owner URL) and ASSAY_SQL_TEST_POSTGRES_RO (reader URL);
# their defaults match what this script creates.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
PORT=${ASSAY_PG_PORT:-5432}

if ! ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1; then
  echo "setup-postgres: installing postgresql"
  apt-get update -q
  apt-get install -y -q --no-install-recommends postgresql
fi
VER=$(ls /usr/lib/postgresql | sort -V | tail -1)

if ! pg_lsclusters -h | awk '{print $1"/"$2}' | grep -qx "$VER/main"; then
  echo "setup-postgres: creating cluster $VER/main on port $PORT"
  pg_createcluster "$VER" main --port "$PORT" -- --auth-local=peer --auth-host=scram-sha-256 >/dev/null
fi
CONF=/etc/postgresql/$VER/main/postgresql.conf
# loopback only, whatever the distribution's default says
grep -q "^listen_addresses = '127.0.0.1'" "$CONF" || echo "listen_addresses = '127.0.0.1'" >>"$CONF"

if ! pg_lsclusters -h | awk -v v="$VER" '$1==v && $2=="main" {print $4}' | grep -q online; then
  echo "setup-postgres: starting cluster $VER/main"
  pg_ctlcluster "$VER" main start
fi
for _ in $(seq 1 60); do pg_isready -q -h 127.0.0.1 -p "$PORT" && break; sleep 0.5; done
pg_isready -h 127.0.0.1 -p "$PORT"

psql_su() { su postgres -c "psql -p $PORT -v ON_ERROR_STOP=1 -qAt $*"; }
psql_su "-c \"SELECT 1 FROM pg_roles WHERE rolname='assay'\"" | grep -q 1 ||
  psql_su "-c \"CREATE ROLE assay LOGIN PASSWORD 'assay'\""
psql_su "-c \"SELECT 1 FROM pg_roles WHERE rolname='assay_ro'\"" | grep -q 1 ||
  psql_su "-c \"CREATE ROLE assay_ro LOGIN PASSWORD 'assay_ro' NOSUPERUSER NOCREATEDB NOCREATEROLE\""
psql_su "-c \"SELECT 1 FROM pg_database WHERE datname='assay_test'\"" | grep -q 1 ||
  psql_su "-c \"CREATE DATABASE assay_test OWNER assay\""
# The reader: connect and SELECT, nothing else; every session read-only unless it says otherwise
# (the verifier also runs each query in a READ ONLY transaction).
psql_su "-d assay_test" <<'SQL'
REVOKE ALL ON DATABASE assay_test FROM PUBLIC;
GRANT CONNECT, TEMPORARY ON DATABASE assay_test TO assay;
GRANT CONNECT ON DATABASE assay_test TO assay_ro;
REVOKE CREATE ON SCHEMA public FROM PUBLIC;
GRANT USAGE, CREATE ON SCHEMA public TO assay;
GRANT USAGE ON SCHEMA public TO assay_ro;
GRANT SELECT ON ALL TABLES IN SCHEMA public TO assay_ro;
ALTER DEFAULT PRIVILEGES FOR ROLE assay IN SCHEMA public GRANT SELECT ON TABLES TO assay_ro;
-- no TEMP and no CREATE anywhere: a temporary table or an object in a schema on the search path
-- could shadow a real table (Assay refuses to start with a role that has them)
REVOKE TEMPORARY, CREATE ON DATABASE assay_test FROM assay_ro;
REVOKE CREATE ON SCHEMA public FROM assay_ro;
ALTER ROLE assay_ro SET default_transaction_read_only = on;
ALTER ROLE assay_ro SET statement_timeout = '30s';
SQL
# the check Assay makes at start-up (src/sql/postgres.ts), here so a wrong grant fails the setup
BAD=$(psql_su "-d assay_test -c \"SELECT concat_ws(' ', CASE WHEN has_database_privilege('assay_ro', 'assay_test', 'TEMPORARY') THEN 'TEMPORARY' END, CASE WHEN has_database_privilege('assay_ro', 'assay_test', 'CREATE') THEN 'CREATE' END, (SELECT string_agg('CREATE ON SCHEMA ' || nspname, ' ') FROM pg_namespace WHERE has_schema_privilege('assay_ro', oid, 'CREATE') AND nspname !~ '^pg_(toast_)?temp_'))\"")
if [ -n "$BAD" ]; then echo "setup-postgres: role assay_ro still has: $BAD" >&2; exit 1; fi
echo "setup-postgres: ready on 127.0.0.1:$PORT (database assay_test; roles assay, assay_ro)"
