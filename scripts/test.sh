#!/usr/bin/env bash
# The test command: installs what the build needs, then runs every test suite (unit, golden,
# crash, CLI, fuzz-corpus replay, concurrency stress), then the concurrency stress suite again
# under the thread sanitizer (its own build in .build-tsan; any race report fails the run), then
# every libFuzzer target for 60 s, two at a time (Fuzz/run --ci; a finding fails the run).
# CI runs exactly this (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
swift build --build-tests
swift test --skip-build
swift build --build-tests --sanitize=thread --build-path .build-tsan
TSAN_OPTIONS="halt_on_error=1" swift test --skip-build --sanitize=thread --build-path .build-tsan --filter DocStoreStressTests
Fuzz/run --ci
