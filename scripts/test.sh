#!/usr/bin/env bash
# The test command: installs what the build needs, then runs every test suite (unit, golden,
# crash, CLI, fuzz-corpus replay). CI runs exactly this (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
swift build --build-tests
swift test --skip-build
