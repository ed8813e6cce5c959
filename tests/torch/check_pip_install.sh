#!/usr/bin/env bash
# `pip install ./python` from this checkout into a scratch folder (scikit-build-core building the
# CMake project with the PyTorch backend), then the package, imported from there alone, runs a
# 2-rank collective check against gloo.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
python3 -m pip install --quiet --no-build-isolation --no-deps --target "$scratch/site" \
  --config-settings=build-dir="$scratch/build" "$root/python"
test -e "$scratch/site/qccl/torch/__init__.py"
ls "$scratch"/site/qccl/torch/_C.*.so "$scratch"/site/qccl/libqccl.so.* > /dev/null
cd "$scratch"
PYTHONPATH="$scratch/site" python3 - "$root/tests/torch" <<'PY'
import sys
sys.path.append(sys.argv[1])  # launch.py; qccl itself comes from the scratch install
import qccl.torch
import os
assert qccl.torch.__file__.startswith(os.environ["PYTHONPATH"]), qccl.torch.__file__
from launch import run_ranks
for rank, (code, out) in enumerate(run_ranks(sys.argv[1] + "/collectives_worker.py", 2)):
    assert code == 0, f"rank {rank}:\n{out[-3000:]}"
print("pip install ./python: qccl.torch from", qccl.torch.__file__, "passes the 2-rank check")
PY
