#!/usr/bin/env bash
# The engine, object-graph and concurrency suites under AddressSanitizer and ThreadSanitizer: run
# before a release and after any change to memory handling or concurrency. Not in CI, which
# already takes about 23 of its 30 minutes on 2 cores: the address run alone takes about 21
# minutes here (5 to build, 16 to test), the thread run about as long (see README § Reliability
# for the last figures). CI runs the concurrency stress suite under the thread sanitizer, and
# every fuzz target under the address sanitizer.
#   scripts/sanitizers.sh            both
#   scripts/sanitizers.sh address    one of them
#   scripts/sanitizers.sh thread
# Left out: ProcessKillTests (its liveness floor of acknowledged saves is a timing figure that
# instrumented child processes miss; its kills run unsanitized in CI), CLI tests (the tool's
# processes), macro expansion tests. LeakSanitizer is on, with scripts/lsan.supp naming what it
# cannot trace (pointers with Swift's tag bits: weak-reference side tables, enum payloads) and
# XCTest's own allocations; it found a retain cycle in custom migration stages.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
suites="DocStoreEngineTests|CrashPointTests|IOErrorTests|CorruptionTests|DocStoreTests"
# The concurrency stress suite is its own package (Stress/), run under each sanitizer too.
which=${1:-both}
if [ "$which" = both ] || [ "$which" = address ]; then
  swift build --build-tests --sanitize=address --build-path .build-asan
  ASAN_OPTIONS=detect_leaks=1:halt_on_error=1 LSAN_OPTIONS=suppressions=$PWD/scripts/lsan.supp \
    swift test --skip-build --sanitize=address --build-path .build-asan --filter "$suites"
  swift build --build-tests --sanitize=address --package-path Stress --build-path Stress/.build-asan
  ASAN_OPTIONS=detect_leaks=1:halt_on_error=1 LSAN_OPTIONS=suppressions=$PWD/scripts/lsan.supp \
    swift test --skip-build --sanitize=address --package-path Stress --build-path Stress/.build-asan
fi
if [ "$which" = both ] || [ "$which" = thread ]; then
  swift build --build-tests --sanitize=thread --build-path .build-tsan
  TSAN_OPTIONS=halt_on_error=1 swift test --skip-build --sanitize=thread --build-path .build-tsan --filter "$suites"
  swift build --build-tests --sanitize=thread --package-path Stress --build-path Stress/.build-tsan
  TSAN_OPTIONS=halt_on_error=1 swift test --skip-build --sanitize=thread --package-path Stress --build-path Stress/.build-tsan
fi
