#!/bin/sh
# Installs what the service needs and is missing: npm packages (Bun among them) and redis-server; for
# the tests, PostgreSQL too (the harness starts a private cluster from its binaries) unless
# TEST_DATABASE_URL names a server, and for the local cluster (`setup.sh cluster`) unless DATABASE_URL
# does; for the tests, Chromium, which the browser console's test drives (Debian's
# package, never a browser download).
# Idempotent and quiet when everything is already there. Installs exactly the lockfile (npm ci), so
# the tree stays clean; the lockfile carries every platform's optional packages.
set -e
cd "$(dirname "$0")/.."

if [ ! -x node_modules/.bin/bun ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "setup: installing npm packages (Bun included)…"
  npm ci --no-audit --no-fund --loglevel=error
fi

if { [ "$1" = "test" ] || [ -z "$REDIS_URL" ]; } && ! command -v redis-server >/dev/null 2>&1; then
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    echo "setup: installing redis-server from Debian's packages…"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null
    apt-get install -y -qq --no-install-recommends redis-server >/dev/null
  else
    echo "setup: redis-server is missing: install it (Debian/Ubuntu: apt-get install redis-server) or set REDIS_URL." >&2
    exit 1
  fi
fi

needs_postgres=false
if [ "$1" = "test" ] && [ -z "$TEST_DATABASE_URL" ]; then needs_postgres=true; fi
if [ "$1" = "cluster" ] && [ -z "$DATABASE_URL" ]; then needs_postgres=true; fi
if [ "$needs_postgres" = true ] && [ -z "$PG_BIN" ] && ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    echo "setup: installing postgresql from Debian's packages…"
    export DEBIAN_FRONTEND=noninteractive
    # The tests and the local cluster start clusters of their own: no system cluster on port 5432 is wanted. A snippet in
    # createcluster.d (which the packaged createcluster.conf includes) says so without touching
    # the package's own configuration file.
    mkdir -p /etc/postgresql-common/createcluster.d
    echo "create_main_cluster = false" >/etc/postgresql-common/createcluster.d/tds-no-main-cluster.conf
    apt-get update -qq >/dev/null
    apt-get install -y -qq --no-install-recommends postgresql >/dev/null
  else
    echo "setup: PostgreSQL is missing: install it (Debian/Ubuntu: apt-get install postgresql), set PG_BIN to its binaries or $([ "$1" = "test" ] && echo TEST_DATABASE_URL || echo DATABASE_URL) to a server." >&2
    exit 1
  fi
fi

if [ "$1" = "test" ] && [ ! -x /usr/bin/chromium ]; then
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    echo "setup: installing chromium from Debian's packages…"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null
    apt-get install -y -qq --no-install-recommends chromium >/dev/null
  else
    # Only the browser test needs it, and it skips itself (saying so) without: not worth stopping for.
    echo "setup: chromium is missing (Debian/Ubuntu: apt-get install chromium); the browser console test will skip." >&2
  fi
fi
