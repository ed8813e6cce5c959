#!/usr/bin/env bash
# From a fresh clone: installs the dependencies, builds, and runs the whole test suite (ctest,
# which includes the pytest suite). Ends with ctest's summary line.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
build=${QCCL_BUILD_DIR:-build}
set +e
ctest --test-dir "$build" -j "$(nproc)" --output-on-failure 2>&1 | tee "$build/ctest.log"
status=${PIPESTATUS[0]}
set -e
# ctest lists skipped tests (the GPU ones, without a GPU) after its summary: repeat the summary
# so that it is the last line.
grep -E '^[0-9]+% tests passed' "$build/ctest.log" | tail -n 1
exit "$status"
