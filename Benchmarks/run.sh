#!/usr/bin/env bash
# Builds and runs the engine benchmark (release). Installs liblz4-dev, liblmdb-dev and
# libsqlite3-dev when missing. Arguments go to the benchmark: --scale 0.1 for a quick run,
# --repeat 3 for medians of three runs.
set -euo pipefail
cd "$(dirname "$0")"
../scripts/install-deps.sh --bench
swift build -c release --product EngineBenchmark
"$(swift build -c release --show-bin-path)/EngineBenchmark" "$@"
