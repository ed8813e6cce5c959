#!/usr/bin/env bash
# From a fresh clone: installs the dependencies, builds, and runs the main job: the codec
# benchmark (encode / decode / decode-accumulate of 64 MiB against memcpy, one thread), ending
# with a table of each rate as a fraction of memcpy's.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
"${QCCL_BUILD_DIR:-build}"/perf/codec_bench --benchmark_repetitions=3 --benchmark_min_time=0.3 "$@"
