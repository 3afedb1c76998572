#!/usr/bin/env bash
# The test command: installs what the build needs (liblz4-dev, PostgreSQL), starts a throwaway
# PostgreSQL cluster on loopback for the sync tests, then runs every test suite (unit, golden,
# crash, CLI, fuzz-corpus replay, sync against real docstore-server processes), then the
# concurrency stress suite under the thread sanitizer (a package of its own, Stress/, so that
# build compiles only the object layer; any race report fails the run), then every libFuzzer target for 60 s, two at a time (Fuzz/run --ci; a finding fails the run), and
# last the object benchmark as a smoke run (debug build, a few thousand notes, its main table
# twice, its batch and import workloads once: each must run to its end with every subject
# agreeing; no timing is judged).
# CI runs exactly this (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --postgres --bench
# A throwaway PostgreSQL on loopback for the sync tests (they start their own when this is unset).
pgdir=$(mktemp -d)
pgport=$(( 20000 + RANDOM % 20000 ))
DOCSTORE_TEST_POSTGRES=$(scripts/test-postgres.sh start "$pgdir" "$pgport")
export DOCSTORE_TEST_POSTGRES
trap 'scripts/test-postgres.sh stop "$pgdir"; rm -rf "$pgdir"' EXIT
swift build --build-tests
swift test --skip-build
swift build --build-tests --sanitize=thread --package-path Stress --build-path Stress/.build-tsan
TSAN_OPTIONS="halt_on_error=1" swift test --skip-build --sanitize=thread --package-path Stress --build-path Stress/.build-tsan
Fuzz/run --ci
swift build --package-path Benchmarks --product ObjectBenchmark
Benchmarks/.build/debug/ObjectBenchmark --scale 0.01 --repeat 2
Benchmarks/.build/debug/ObjectBenchmark batch --notes 2000
Benchmarks/.build/debug/ObjectBenchmark importWhileReading --notes 2000 --batch 200
