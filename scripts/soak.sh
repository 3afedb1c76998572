#!/usr/bin/env bash
# The release soak (issue #8's long-running variants): every libFuzzer target for HOURS hours, two
# at a time (one per core), then the process-kill campaigns ROUNDS times. A finding or a failure
# stops it with a nonzero exit; a fuzz reproducer is left in Fuzz/FailCases (add it to the corpus
# and to a unit test). The crash-point, I/O-fault and corruption suites use fixed seeds and give
# the same result every time, so they run once in every test run instead; the fuzzers and the
# kills (whose moments depend on timing) are where more time finds new cases.
#   scripts/soak.sh                  1 hour per target (5 hours on 2 cores), 10 kill rounds
#   scripts/soak.sh 8 50             before a release: 8 hours per target (40 hours), 50 rounds
#   SOAK_SECONDS=20 scripts/soak.sh  a check of the script itself: 20 s per target, 1 round
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
hours=${1:-1}
rounds=${2:-10}
seconds=$(( hours * 3600 ))
if [ -n "${SOAK_SECONDS:-}" ]; then seconds=$SOAK_SECONDS; rounds=1; fi
echo "soak: every fuzz target for ${seconds} s, then ${rounds} rounds of the kill campaigns"
FUZZ_SECONDS=$seconds Fuzz/run --ci
swift build --build-tests
for round in $(seq 1 "$rounds"); do
  echo "kill round $round of $rounds"
  swift test --skip-build --filter ProcessKillTests
done
echo "soak: no finding"
