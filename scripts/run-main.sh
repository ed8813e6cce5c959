#!/usr/bin/env bash
# From a fresh clone: installs what the main job needs (Debian packages only), builds only that
# (libqccl with its UCX transport, qcclrun, allreduce_compare) in build-main/, and runs it:
# compressed against exact allreduce on 4 local ranks started by qcclrun (UCX over shared memory),
# printing codec, time, speedup, wire bytes per rank and error. Arguments go to allreduce_compare
# (size in MiB, then codecs). The tests' build (scripts/run-tests.sh) is build/, apart.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --main
build=${QCCL_BUILD_DIR:-build-main}
QCCL_BUILD_DIR=$build QCCL_BUILD_TARGETS="qcclrun allreduce_compare" scripts/build.sh \
  -DBUILD_TESTING=OFF -DQCCL_WITH_CUDA=OFF -DQCCL_WITH_MPI=OFF -DQCCL_WITH_TORCH=OFF
QCCL_TRANSPORT=${QCCL_TRANSPORT:-ucx} "$build"/src/qcclrun -n 4 "$build"/perf/allreduce_compare "$@"
