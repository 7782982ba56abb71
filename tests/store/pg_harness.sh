#!/usr/bin/env bash
# A real, private PostgreSQL server for the tests of the PostgreSQL store (issue 18): initdb +
# pg_ctl in a temporary directory, listening on a free TCP port on 127.0.0.1 and on a unix
# socket in that directory. Never a mock.
#
#   tests/store/pg_harness.sh run -- COMMAND ARGS...   # server up, COMMAND with
#                                                      # CAVEMAN_TEST_PG_URL set, server down
#   source tests/store/pg_harness.sh; pg_start; ...; pg_stop   # from another test script
#
# pg_start exports PG_URL (postgresql://caveman@127.0.0.1:PORT/caveman), PG_DIR, PG_DATA,
# PG_PORT and defines pg_ctl_as (pg_ctl as the server's user) and pg_restart. initdb refuses to run as
# root, so as root (CI) the server runs as the unprivileged user caveman-test (created with
# useradd when missing), owning the temporary directory; otherwise as the caller.
# A missing PostgreSQL installation is a failure (exit 1), not a skip: scripts/setup
# installs it.

PG_BIN=${PG_BIN:-}
if [[ -z $PG_BIN ]]; then
  for d in /usr/lib/postgresql/*/bin; do [[ -x $d/initdb ]] && PG_BIN=$d; done
fi

pg_fail() {
  echo "pg_harness: $*" >&2
  exit 1
}

# Runs a server binary as the server's user.
pg_as() {
  if [[ -n ${PG_USER:-} ]]; then
    runuser -u "$PG_USER" -- "$@"
  else
    "$@"
  fi
}

pg_ctl_as() { pg_as "$PG_BIN/pg_ctl" -D "$PG_DATA" "$@"; }

pg_free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

pg_server_opts() { echo "-p $PG_PORT -k $PG_DIR/sock -c listen_addresses=127.0.0.1 -c fsync=on -c max_connections=100"; }

# Starts the stopped server again on the same port and data directory.
pg_restart() { pg_ctl_as -w -t 60 -l "$PG_DIR/server.log" -o "$(pg_server_opts)" start >/dev/null 2>&1; }

pg_start() {
  [[ -n $PG_BIN && -x $PG_BIN/initdb && -x $PG_BIN/pg_ctl ]] ||
    pg_fail "PostgreSQL server binaries not found (/usr/lib/postgresql/*/bin/initdb); run scripts/setup (installs postgresql)"
  PG_USER=""
  if [[ $(id -u) -eq 0 ]]; then
    PG_USER=caveman-test
    if ! id -u "$PG_USER" >/dev/null 2>&1; then
      useradd --system --no-create-home --shell /usr/sbin/nologin "$PG_USER" 2>/dev/null ||
        id -u "$PG_USER" >/dev/null 2>&1 || pg_fail "cannot create user $PG_USER"
    fi
  fi
  PG_DIR=$(mktemp -d /tmp/caveman-pg.XXXXXX) || pg_fail "mktemp failed"
  chmod 0755 "$PG_DIR"
  PG_DATA=$PG_DIR/data
  mkdir "$PG_DIR/sock"
  [[ -n $PG_USER ]] && chown -R "$PG_USER" "$PG_DIR"
  pg_as "$PG_BIN/initdb" -D "$PG_DATA" -U caveman --auth=trust -E UTF8 --no-locale >"$PG_DIR/initdb.log" 2>&1 ||
    { cat "$PG_DIR/initdb.log" >&2; pg_fail "initdb failed"; }
  local tries
  for tries in 1 2 3 4 5; do
    PG_PORT=$(pg_free_port)
    if pg_ctl_as -w -t 60 -l "$PG_DIR/server.log" -o "$(pg_server_opts)" start >/dev/null 2>&1; then
      break
    fi
    PG_PORT=""
  done
  [[ -n $PG_PORT ]] || { cat "$PG_DIR/server.log" >&2; pg_fail "pg_ctl start failed"; }
  PG_URL="postgresql://caveman@127.0.0.1:$PG_PORT/caveman"
  pg_as "$PG_BIN/createdb" -h "$PG_DIR/sock" -p "$PG_PORT" -U caveman caveman ||
    pg_fail "createdb failed"
  export PG_URL PG_DIR PG_DATA PG_PORT PG_USER PG_BIN
}

pg_stop() {
  [[ -n ${PG_DATA:-} && -d $PG_DATA ]] && pg_ctl_as -m immediate stop >/dev/null 2>&1
  [[ -n ${PG_DIR:-} && -d $PG_DIR ]] && rm -rf "$PG_DIR"
  PG_DIR=""
  PG_DATA=""
}

# psql against the harness server.
pg_psql() { psql -X -q -t -A -v ON_ERROR_STOP=1 "$PG_URL" "$@"; }

if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
  set -uo pipefail
  [[ ${1:-} == run && ${2:-} == -- && $# -ge 3 ]] || pg_fail "usage: pg_harness.sh run -- COMMAND ARGS..."
  shift 2
  trap pg_stop EXIT
  pg_start
  CAVEMAN_TEST_PG_URL=$PG_URL "$@"
  exit $?
fi
