#!/usr/bin/env bash
# Makes sure a PostgreSQL server for the tests answers on loopback and prints
# its URL as the last line of stdout (progress goes to stderr).
#
#   test-postgres.sh          find a server, or start the private cluster
#   test-postgres.sh --stop   stop the private cluster (3. below) if it runs;
#                             a server this script did not start is left alone
#
# Order of preference:
#   1. $MAILASSAY_TEST_PG_URL, when it is set and answers;
#   2. a server on 127.0.0.1:5432 (the Debian cluster), adding the test role
#      and database through `su postgres -c psql` when missing (skipped when
#      MAILASSAY_PG_PRIVATE=1: scripts/check-fresh shares the machine's
#      loopback and must not use its server);
#   3. a private cluster in ${MAILASSAY_PG_DIR:-/tmp/mailassay-pg}, created
#      with Debian's postgresql-15 binaries and started on 127.0.0.1 only, on
#      the first free port from ${MAILASSAY_PG_PORT:-55432}.
# Idempotent: run it as often as you like; it reuses what already exists
# (the private cluster's data stays in its directory across --stop).
set -euo pipefail

role=mailassay
password=mailassay
database=mailassay_test
pg_bin=${MAILASSAY_PG_BIN:-/usr/lib/postgresql/15/bin}
pg_dir=${MAILASSAY_PG_DIR:-/tmp/mailassay-pg}
first_port=${MAILASSAY_PG_PORT:-55432}
export PGCONNECT_TIMEOUT=3

log() { echo "test-postgres: $*" >&2; }
die() {
  log "error: $*"
  exit 1
}

url_for() { echo "postgresql://$role:$password@127.0.0.1:$1/$database"; }

answers() { psql "$1" -Atqc 'SELECT 1' >/dev/null 2>&1; }

# Runs a shell command as the postgres user (we are usually root). The lock
# descriptor is closed so a server started here does not hold it forever.
as_postgres() {
  if [ "$(id -u)" = 0 ]; then
    (cd / && su postgres -s /bin/sh -c "$1") 9>&-
  else
    (cd / && sh -c "$1") 9>&-
  fi
}

port_busy() { (: </dev/tcp/127.0.0.1/"$1") 2>/dev/null; }

data="$pg_dir/data"
socket="$pg_dir/socket"

# Stops the private cluster (fast shutdown: open sessions are ended).
stop() {
  [ -f "$data/PG_VERSION" ] || return 0
  [ -x "$pg_bin/pg_ctl" ] || die "$pg_bin/pg_ctl not found (postgresql-15)"
  # Not while another run of this script is starting it.
  exec 9>"$pg_dir.lock"
  flock 9
  as_postgres "'$pg_bin/pg_ctl' -D '$data' status" >/dev/null 2>&1 || return 0
  log "stopping the cluster in $data"
  as_postgres "'$pg_bin/pg_ctl' -D '$data' -w -t 30 stop -m fast" >/dev/null ||
    die "stop failed, see $pg_dir/server.log"
}

if [ "${1:-}" = --stop ]; then
  stop
  exit 0
fi

# Creates the role and database through psql options $1 (run as postgres).
ensure_role_and_database() {
  local psql_cmd="psql -X -q -v ON_ERROR_STOP=1 $1 -d postgres"
  as_postgres "$psql_cmd" <<SQL
SET client_min_messages = warning;
DO \$\$ BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '$role') THEN
    CREATE ROLE $role LOGIN PASSWORD '$password';
  ELSE
    ALTER ROLE $role LOGIN PASSWORD '$password';
  END IF;
END \$\$;
SELECT 'CREATE DATABASE $database OWNER $role'
  WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = '$database')
\gexec
SQL
}

# 1. The caller's URL.
if [ -n "${MAILASSAY_TEST_PG_URL:-}" ]; then
  if answers "$MAILASSAY_TEST_PG_URL"; then
    echo "$MAILASSAY_TEST_PG_URL"
    exit 0
  fi
  log "MAILASSAY_TEST_PG_URL does not answer; looking for another server"
fi

command -v psql >/dev/null || die "psql not found: apt-get install postgresql"

# Two runs at once (parallel test scripts) must not both run initdb.
mkdir -p "$(dirname "$pg_dir")"
exec 9>"$pg_dir.lock"
flock 9

# 2. A server on the standard port.
if [ "${MAILASSAY_PG_PRIVATE:-0}" != 1 ] && pg_isready -q -h 127.0.0.1 -p 5432; then
  url=$(url_for 5432)
  if ! answers "$url"; then
    log "adding role $role and database $database on 127.0.0.1:5432"
    ensure_role_and_database "-p 5432" ||
      log "could not prepare the server on 5432"
  fi
  if answers "$url"; then
    echo "$url"
    exit 0
  fi
  log "the server on 127.0.0.1:5432 refuses $role; using a private cluster"
fi

# 3. A private cluster.
[ -x "$pg_bin/initdb" ] || die "$pg_bin/initdb not found (postgresql-15)"
if [ ! -f "$data/PG_VERSION" ]; then
  port=$first_port
  while port_busy "$port"; do port=$((port + 1)); done
  log "creating a cluster in $data on 127.0.0.1:$port"
  if [ -d "$data" ] && [ -n "$(ls -A "$data")" ]; then
    die "$data is not empty but holds no cluster; remove it by hand"
  fi
  mkdir -p "$data" "$socket"
  [ "$(id -u)" = 0 ] && chown -R postgres:postgres "$pg_dir"
  chmod 700 "$data"
  as_postgres "'$pg_bin/initdb' -D '$data' -U postgres -E UTF8 \
    --auth-local=trust --auth-host=scram-sha-256" >/dev/null
  cat >>"$data/postgresql.conf" <<CONF
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = '$socket'
fsync = off
synchronous_commit = off
full_page_writes = off
max_connections = 100
CONF
fi
port=$(sed -n 's/^port = \([0-9]*\)$/\1/p' "$data/postgresql.conf" | tail -n 1)
[ -n "$port" ] || die "no port in $data/postgresql.conf"

if ! as_postgres "'$pg_bin/pg_ctl' -D '$data' status" >/dev/null 2>&1; then
  port_busy "$port" && die "port $port is taken by another program"
  log "starting the cluster in $data"
  as_postgres "'$pg_bin/pg_ctl' -D '$data' -l '$pg_dir/server.log' -w \
    -t 30 start" >/dev/null || die "start failed, see $pg_dir/server.log"
fi

url=$(url_for "$port")
if ! answers "$url"; then
  ensure_role_and_database "-h '$socket' -p $port -U postgres" >/dev/null
fi
answers "$url" || die "$url does not answer"
echo "$url"
