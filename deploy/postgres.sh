#!/usr/bin/env bash
# The compose cluster's PostgreSQL (Debian's postgresql-15 in assay-postgres): a fresh cluster
# on first start, role and database `assay` (password `assay`: it listens on compose's network
# only, nothing publishes it), then the server in the foreground as the postgres user.
set -euo pipefail
PGBIN=/usr/lib/postgresql/15/bin
DATA=/var/lib/postgresql/data
mkdir -p "$DATA" /run/postgresql
chown postgres:postgres "$DATA" /run/postgresql
if [ ! -s "$DATA/PG_VERSION" ]; then
  echo assay > /tmp/pw && chown postgres /tmp/pw
  su postgres -s /bin/sh -c "$PGBIN/initdb -D $DATA -U assay --pwfile=/tmp/pw --auth-local=trust --auth-host=scram-sha-256" >/dev/null
  rm /tmp/pw
  echo "host all all 0.0.0.0/0 scram-sha-256" >> "$DATA/pg_hba.conf"
  su postgres -s /bin/sh -c "$PGBIN/pg_ctl -D $DATA -o '-c listen_addresses=' -w start" >/dev/null
  su postgres -s /bin/sh -c "$PGBIN/createdb -U assay assay"
  su postgres -s /bin/sh -c "$PGBIN/pg_ctl -D $DATA -m fast -w stop" >/dev/null
fi
exec su postgres -s /bin/sh -c "exec $PGBIN/postgres -D $DATA -c listen_addresses='*' -c max_connections=200"
