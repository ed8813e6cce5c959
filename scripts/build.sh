#!/usr/bin/env bash
# Configures and builds qccl (Release) into ${QCCL_BUILD_DIR:-build}: everything, or only the
# targets named in $QCCL_BUILD_TARGETS. Extra arguments go to cmake.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${QCCL_BUILD_DIR:-build}
python=()
if command -v python3 > /dev/null; then python=(-DPython3_EXECUTABLE="$(command -v python3)"); fi
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release "${python[@]}" "$@"
targets=()
for t in ${QCCL_BUILD_TARGETS:-}; do targets+=(--target "$t"); done
cmake --build "$build" -j "$(nproc)" "${targets[@]}"
