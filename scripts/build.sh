#!/usr/bin/env bash
# Configures and builds qccl (Release) into ${QCCL_BUILD_DIR:-build}. Extra arguments go to cmake.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${QCCL_BUILD_DIR:-build}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DPython3_EXECUTABLE="$(command -v python3)" "$@"
cmake --build "$build" -j "$(nproc)"
