#!/usr/bin/env bash
# The device check: on a machine with a GPU, configures and builds qccl with CUDA, runs the GPU
# tests (the codec kernels against the CPU's bits; device collectives at 2-4 ranks on one GPU
# against the host path; NCCL at one rank, a compressed call captured into a CUDA graph; the
# asynchronous error), times the device codecs against the device's copy bandwidth, checks the
# LD_PRELOAD interposer (NCCL's API timed without and with it; PyTorch DDP and FSDP2 at world
# size 1 without and with it, where PyTorch is installed), runs the qccl torch backend and its
# outer loops on CUDA tensors, and ends with one table. Logs and the codec table go to $OUT (the device tool's output folder) or the
# build folder. About 7 minutes on one H200 with 16 cores (not yet run: no session has had one).
#
# Where GoogleTest is not installed, it builds the sources in .gtest/ (ignored by git); from a
# machine that has Debian's googletest: cp -r /usr/src/googletest .gtest, and carry .gtest.
set -uo pipefail
cd "$(dirname "$0")/.."
build=${QCCL_GPU_BUILD_DIR:-build-gpu}
out=${OUT:-$build}
mkdir -p "$build" "$out"
start=$(date +%s)
elapsed() { echo "$(( $(date +%s) - start )) s"; }

gtest=()
if [ ! -e /usr/include/gtest/gtest.h ] && [ -d .gtest ]; then
  gtest=(-DQCCL_GTEST_SOURCE_DIR="$PWD/.gtest")
fi
rows=()
if ! cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DQCCL_WITH_CUDA=ON \
     -DCMAKE_CUDA_ARCHITECTURES="${QCCL_CUDA_ARCHITECTURES:-90}" -DQCCL_SANITIZER_TESTS=OFF \
     "${gtest[@]}" > "$out/configure.log" 2>&1 ||
   ! cmake --build "$build" -j "$(nproc)" --target gpu_element_tests gpu_codec_tests \
     gpu_collective_tests gpu_codec_bench standin_nccl > "$out/build.log" 2>&1; then
  tail -n 30 "$out/configure.log" "$out/build.log" 2>/dev/null
  echo "| build | FAILED ($(elapsed)) |"
  exit 1
fi
rows+=("| build (CUDA, sm_${QCCL_CUDA_ARCHITECTURES:-90}) | ok | $(elapsed) |")
# The interposer and NCCL's own API driver (the driver needs nccl.h and libnccl).
cmake --build "$build" -j "$(nproc)" --target qccl_nccl nccl_api_bench >> "$out/build.log" 2>&1 ||
  rows+=("| build: qccl_nccl, nccl_api_bench | FAILED (build.log) | |")
nvidia-smi -L 2>/dev/null | head -n 1

# name binary filter: one row with the passed/failed/skipped counts of a GPU test binary.
status=0
check() {
  local name=$1 binary=$2 filter=$3 log="$out/$2.log" t0=$(date +%s)
  env -u QCCL_NCCL_LIB "$build/tests/$binary" --gtest_filter="$filter" > "$log" 2>&1
  local rc=$?
  local passed failed skipped
  passed=$(grep -c '^\[       OK \]' "$log")
  failed=$(grep -c '^\[  FAILED  \].*(' "$log")
  skipped=$(grep -c '^\[  SKIPPED \].*(' "$log")
  [ "$rc" -ne 0 ] && status=1
  rows+=("| $name | $passed passed, $failed failed, $skipped skipped | $(( $(date +%s) - t0 )) s |")
  grep -A3 '^\[  FAILED  \].*(' "$log" | head -n 20
}
check "element conversions vs host" gpu_element_tests '*'
check "codec kernels vs CPU kernels" gpu_codec_tests '*'
check "device collectives vs host path, 2-4 ranks" gpu_collective_tests 'Cases/*'
check "device buffers staged over a host transport" gpu_collective_tests 'DeviceStaged.*'
check "NCCL, 1 rank: exact, compressed, CUDA graph" gpu_collective_tests 'DeviceNccl.*'
check "disagreement: asynchronous error" gpu_collective_tests 'DeviceMisuse.*'
check "codec API on device buffers" gpu_collective_tests 'DeviceCodecApi.*'

t0=$(date +%s)
"$build/perf/gpu_codec_bench" 256 > "$out/gpu_codec_bench.md" 2>&1 || status=1
rows+=("| device codec throughput (gpu_codec_bench.md) | $(tail -n 1 "$out/gpu_codec_bench.md") | $(( $(date +%s) - t0 )) s |")

# The interposer: NCCL's API at one rank without and with the preload (compressed although nothing
# travels: QCCL_COMPRESS_ONE_RANK=1).
interposer="$build/src/libqccl_nccl.so"
if [ -x "$build/perf/nccl_api_bench" ] && [ -e "$interposer" ]; then
  t0=$(date +%s)
  env -u QCCL_NCCL_LIB "$build/perf/nccl_api_bench" 16 256 > "$out/nccl_api_plain.md" 2>&1 || status=1
  env -u QCCL_NCCL_LIB LD_PRELOAD="$interposer" QCCL_CODEC=fp8e4m3 QCCL_COMPRESS_ONE_RANK=1 \
    QCCL_DEBUG=INFO QCCL_DEBUG_FILE="$out/nccl_api_preload.log" \
    "$build/perf/nccl_api_bench" 16 256 > "$out/nccl_api_preload.md" 2>&1 || status=1
  compressed=$(grep -o 'summary: [0-9]* calls compressed' "$out/nccl_api_preload.log" | head -n 1)
  rows+=("| NCCL API without / with LD_PRELOAD (nccl_api_*.md) | ${compressed:-interposer NOT reached} | $(( $(date +%s) - t0 )) s |")
  [ -z "$compressed" ] && status=1
fi
if python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
  # The qccl torch backend on CUDA tensors (2 ranks on the GPU, staged over UCX), where the build
  # found torch (QCCL_WITH_TORCH=AUTO).
  t0=$(date +%s)
  if cmake --build "$build" -j "$(nproc)" --target qccl_torch >> "$out/build.log" 2>&1; then
    PYTHONPATH="$build/python" python3 -m pytest -q -p no:cacheprovider \
      tests/torch/test_collectives.py -k cuda > "$out/torch_backend_cuda.log" 2>&1
    rc=$?
    [ "$rc" -ne 0 ] && status=1
    rows+=("| qccl torch backend, CUDA tensors vs gloo (torch_backend_cuda.log) | $(tail -n 1 "$out/torch_backend_cuda.log") | $(( $(date +%s) - t0 )) s |")
    # The outer loops (qccl.torch.DiLoCo) on CUDA replicas: ranks agree, resume exactly.
    t0=$(date +%s)
    QCCL_TEST_DEVICE=cuda PYTHONPATH="$build/python" python3 -m pytest -q -p no:cacheprovider \
      tests/torch/test_diloco.py > "$out/diloco_cuda.log" 2>&1 || status=1
    QCCL_TEST_DEVICE=cuda PYTHONPATH="$build/python" python3 -m pytest -q -p no:cacheprovider \
      tests/torch/test_backend_ops.py > "$out/backend_ops_cuda.log" 2>&1 || status=1
    rows+=("| reduce, gather, scatter, p2p, all_to_all on CUDA tensors (backend_ops_cuda.log) | $(tail -n 1 "$out/backend_ops_cuda.log") | |")
    rows+=("| DiLoCo / SparseLoCo on CUDA tensors (diloco_cuda.log) | $(tail -n 1 "$out/diloco_cuda.log") | $(( $(date +%s) - t0 )) s |")
  else
    rows+=("| qccl torch backend | not built (build.log: torch not found by CMake?) | |")
  fi
  t0=$(date +%s)
  env -u QCCL_NCCL_LIB python3 perf/interposer_torch_check.py --interposer "$interposer" \
    > "$out/torch_interposer.md" 2> "$out/torch_interposer.log"
  rc=$?
  [ "$rc" -ne 0 ] && status=1
  rows+=("| PyTorch DDP, FSDP2 with LD_PRELOAD (torch_interposer.md) | $([ "$rc" -eq 0 ] && echo ok || echo FAILED) | $(( $(date +%s) - t0 )) s |")
else
  rows+=("| PyTorch DDP, FSDP2 with LD_PRELOAD | skipped: no torch with CUDA | |")
fi

echo
for table in nccl_api_plain nccl_api_preload torch_interposer; do
  [ -e "$out/$table.md" ] && { echo "$table:"; cat "$out/$table.md"; echo; }
done
cat "$out/gpu_codec_bench.md"
echo
echo "| check | result | time |"
echo "|---|---|---|"
printf '%s\n' "${rows[@]}"
echo "total $(elapsed), $(date -u +%Y-%m-%d)"
exit $status
