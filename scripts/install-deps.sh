#!/usr/bin/env bash
# Installs the system libraries DocStore builds against, when they are missing (Debian/Ubuntu).
# liblz4-dev: the LZ4 compression library the engine links (Sources/CLZ4).
# --postgres adds PostgreSQL (sync tests), --browser chromium, --bench LMDB and SQLite; several
# may be given.
set -euo pipefail
need=()
[ -f /usr/include/lz4.h ] || need+=(liblz4-dev)
for flag in "$@"; do
  case "$flag" in
    --browser)
      # A headless browser for scripts/html-report-check.sh.
      command -v chromium >/dev/null || need+=(chromium) ;;
    --postgres)
      # PostgreSQL: the sync server's database, started by scripts/test-postgres.sh for the tests.
      ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || need+=(postgresql) ;;
    --bench)
      # The benchmark package's other subjects (Benchmarks/).
      [ -f /usr/include/lmdb.h ] || need+=(liblmdb-dev)
      [ -f /usr/include/sqlite3.h ] || need+=(libsqlite3-dev) ;;
    *) echo "install-deps: unknown flag $flag" >&2; exit 2 ;;
  esac
done
if [ ${#need[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq "${need[@]}"
fi
