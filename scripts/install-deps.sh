#!/usr/bin/env bash
# Installs what qccl builds and tests with, from Debian's packages and PyPI. Idempotent; run as
# root or with sudo available.
#
#   scripts/install-deps.sh          everything the tests need (Debian packages, then PyPI)
#   scripts/install-deps.sh --main   only what the main job needs: a compiler, CMake, UCX
set -euo pipefail

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi

packages=(build-essential cmake pkg-config libucx-dev)
main_only=""
[ "${1:-}" = --main ] && main_only=1
if [ -z "$main_only" ]; then
  packages+=(git googletest libgtest-dev libgmock-dev libbenchmark-dev libopenmpi-dev openmpi-bin
             python3 python3-pip python3-dev clang libclang-rt-14-dev)
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: apt-get install ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

[ -z "$main_only" ] || exit 0

# The Python test oracle (numpy, ml_dtypes, run by pytest), and PyTorch for the qccl backend in
# python/ (the version its tests were run with; scikit-build-core for `pip install ./python`;
# DeepSpeed for the ZeRO test; expecttest for PyTorch's own distributed test-suite).
python=$(command -v python3)
pip_packages=(numpy ml_dtypes pytest torch==2.15.0 scikit-build-core deepspeed==0.19.8 expecttest)
if ! "$python" -c "import numpy, ml_dtypes, pytest, scikit_build_core, deepspeed, expecttest, torch
assert torch.__version__.startswith('2.15.0')" 2>/dev/null; then
  echo "install-deps: pip install ${pip_packages[*]}"
  "$python" -m pip install --quiet "${pip_packages[@]}" 2>/dev/null ||
    "$python" -m pip install --quiet --break-system-packages "${pip_packages[@]}"
fi
