#!/usr/bin/env bash
# The package as a user meets it (docs/INTEGRATION.md, "Installing the package"):
# 1. `pip install ./python`, with pip's build isolation, in a fresh virtual environment that has
#    torch (made with --system-site-packages over the interpreter that has it), builds qccl against
#    that torch and installs it; qccl.torch imports from there;
# 2. `pip wheel` there makes a wheel, which installs into a second fresh environment and runs an
#    unmodified gloo script (tests/torch/unmodified_ddp.py) under torchrun (python -m torch.distributed.run) on 4 ranks with
#    --backend qccl and with --backend cpu:qccl: torch's autoload entry point registers the
#    backend, no `import qccl` anywhere; and the 2-rank collective check against gloo.
# 3. A libqccl whose UCX library does not load fails `import qccl.torch` with an ImportError that
#    names the library, and an unmodified script's init_process_group with the same message.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
free_port() { python3 -c "import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])"; }
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
cd "$scratch"
python3 -m venv --system-site-packages a
a/bin/pip install --quiet --config-settings=build-dir="$scratch/build" "$root/python"
a/bin/python -c "import qccl.torch, sys; assert qccl.torch.__file__.startswith('$scratch/a/'), qccl.torch.__file__"
a/bin/pip wheel --quiet --no-deps -w dist --config-settings=build-dir="$scratch/build" "$root/python"
python3 -m venv --system-site-packages b
b/bin/pip install --quiet --no-deps dist/qccl-*.whl
for backend in qccl cpu:qccl; do
  out=$(b/bin/python -m torch.distributed.run --nproc-per-node 4 --master-port "$(free_port)" "$root/tests/torch/unmodified_ddp.py" \
        --backend "$backend" 2>&1) || { echo "$out" | tail -n 30; exit 1; }
  echo "$out" | grep -q "ranks \[0, 1, 2, 3\] final loss" || { echo "$out" | tail -n 30; exit 1; }
  echo "torchrun --backend $backend: $(echo "$out" | grep 'final loss')"
done
out=$(b/bin/python -m torch.distributed.run --nproc-per-node 4 --master-port "$(free_port)" "$root/tests/torch/unmodified_ddp.py" 2>&1) &&
  gloo=$(echo "$out" | grep 'final loss') || { echo "$out" | tail -n 30; exit 1; }
echo "torchrun --backend gloo: $gloo"
b/bin/python - "$root/tests/torch" <<'PY'
import sys
sys.path.append(sys.argv[1])  # launch.py; qccl comes from the wheel in venv b
from launch import run_ranks
for rank, (code, out) in enumerate(run_ranks(sys.argv[1] + "/collectives_worker.py", 2)):
    assert code == 0, f"rank {rank}:\n{out[-3000:]}"
print("the wheel in a second venv passes the 2-rank collective check")
PY
# A UCX that does not load: an empty libucp.so.0 ahead of the real one.
mkdir broken && : > broken/libucp.so.0
msg=$(LD_LIBRARY_PATH="$scratch/broken" b/bin/python -c "import qccl.torch" 2>&1) && exit 1
echo "$msg" | grep -q "ImportError: qccl.torch: its extension does not load: .*libucp.so.0" ||
  { echo "$msg" | tail -n 5; exit 1; }
echo "a broken UCX: $(echo "$msg" | grep -o 'ImportError: qccl.torch.*libucp.so.0[^:]*')"
