"""qccl.torch.gather_changes on 3 ranks as ZeRO-1/2 calls it (zero_worker.py): after every in-place
all-gather every rank's buffer bitwise the same, the own shard within the codec's error of the
exact values and equal to them once they stop changing, fewer bytes than the exact all-gather;
misuse refused with a message; gather_quantized's values the same on every rank, the codec's
error off the exact ones at every step."""
import os

import pytest

from launch import run_ranks

WORKER = os.path.join(os.path.dirname(__file__), "zero_worker.py")


@pytest.mark.parametrize("codec", ["fp8e4m3", "int4"])
def test_gather_changes(codec):
    env = {k: v for k, v in os.environ.items() if not k.startswith("QCCL_")}
    for rank, (code, output) in enumerate(run_ranks(WORKER, 3, [codec], env=env)):
        assert code == 0, f"rank {rank}:\n{output[-3000:]}"
        if rank == 0:
            print(output.strip())
