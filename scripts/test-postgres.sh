#!/usr/bin/env bash
# A throwaway PostgreSQL cluster on loopback for the sync tests (README § Sync).
#   scripts/test-postgres.sh start DIR PORT   initdb into DIR/pg and start it on 127.0.0.1:PORT;
#                                             prints the URL, postgres://docstore@127.0.0.1:PORT/postgres
#   scripts/test-postgres.sh stop DIR         stop it (fast shutdown)
#   scripts/test-postgres.sh crash DIR        stop it as a crash would (immediate: no
#                                             checkpoint, clients cut off); `resume` starts it
#   scripts/test-postgres.sh resume DIR       start a cluster `stop` stopped, on its port
# PostgreSQL refuses to run as root, so as root the server runs as the `postgres` user the
# Debian package creates. Install PostgreSQL first (scripts/install-deps.sh --postgres).
set -euo pipefail
cmd=${1:?start or stop}
dir=${2:?a directory}
port=${3:-}
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
if [ -z "$bin" ]; then
  echo "test-postgres: PostgreSQL is not installed (scripts/install-deps.sh --postgres installs it)" >&2
  exit 1
fi
as_pg() {
  if [ "$(id -u)" = 0 ]; then su postgres -s /bin/sh -c "$1"; else sh -c "$1"; fi
}
case "$cmd" in
  start)
    : "${port:?a port}"
    mkdir -p "$dir"
    if [ "$(id -u)" = 0 ]; then chown postgres "$dir"; fi
    as_pg "'$bin/initdb' -D '$dir/pg' -A trust -U docstore > '$dir/initdb.log' 2>&1"
    echo "$port" > "$dir/port"
    as_pg "'$bin/pg_ctl' -D '$dir/pg' -o \"-p $port -k '$dir' -c listen_addresses=127.0.0.1 -c max_connections=200\" -l '$dir/pg.log' -w start > /dev/null 2>&1"
    echo "postgres://docstore@127.0.0.1:$port/postgres"
    ;;
  resume)
    port=$(cat "$dir/port")
    as_pg "'$bin/pg_ctl' -D '$dir/pg' -o \"-p $port -k '$dir' -c listen_addresses=127.0.0.1 -c max_connections=200\" -l '$dir/pg.log' -w start > /dev/null 2>&1"
    ;;
  stop)
    as_pg "'$bin/pg_ctl' -D '$dir/pg' -m fast -w stop > /dev/null" || true
    ;;
  crash)
    as_pg "'$bin/pg_ctl' -D '$dir/pg' -m immediate -w stop > /dev/null 2>&1"
    ;;
  *)
    echo "test-postgres: unknown command $cmd" >&2
    exit 2
    ;;
esac
