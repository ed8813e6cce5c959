#!/usr/bin/env bash
# From a fresh clone: installs the dependencies, builds, and runs the main job: compressed
# against exact allreduce on 4 local ranks started by qcclrun (UCX over shared memory), printing
# codec, time, speedup, wire bytes per rank and error. Arguments go to allreduce_compare
# (size in MiB, then codecs).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
build=${QCCL_BUILD_DIR:-build}
QCCL_TRANSPORT=${QCCL_TRANSPORT:-ucx} "$build"/src/qcclrun -n 4 "$build"/perf/allreduce_compare "$@"
