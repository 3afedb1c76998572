#!/usr/bin/env bash
# Builds and runs DocStore's engine benchmark (release) against LMDB and SQLite in one process.
# Every argument goes to the benchmark:
#   Benchmarks/run.sh                  full scale: N = 1 000 000 keys (a few minutes)
#   Benchmarks/run.sh --scale 0.1      quick run
#   Benchmarks/run.sh --repeat 3       medians of three runs (these machines vary 10-40 % run to run)
#   JOBS=1 Benchmarks/run.sh …         build with one job (on a machine shared with other builds)
# Installs the C libraries it needs when their headers are missing (Debian/Ubuntu, apt-get).
set -euo pipefail
cd "$(dirname "$0")/.."   # the repository root

missing=()
[ -f /usr/include/lz4.h ] || missing+=(liblz4-dev)         # the engine itself links liblz4
[ -f /usr/include/lmdb.h ] || missing+=(liblmdb-dev)
[ -f /usr/include/sqlite3.h ] || missing+=(libsqlite3-dev)
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "run.sh: installing ${missing[*]}" >&2
  # The package lists are refreshed only when the install cannot find the packages.
  if ! $sudo apt-get install -y "${missing[@]}"; then
    $sudo apt-get update
    $sudo apt-get install -y "${missing[@]}"
  fi
fi

exec swift run -c release ${JOBS:+-j "$JOBS"} --package-path Benchmarks EngineBenchmark "$@"
