"""Every collective DDP and FSDP2 use, through the `qccl` torch.distributed backend, against gloo
on the same data: fp32 / bf16 / fp16, 2 and 4 ranks, codecs none (bit for bit, on data whose
sums are exact in any order), bf16, fp8e4m3, int8, nvfp4 (within each codec's bound), every
reduction's result identical on every rank; broadcast, all-to-all, MAX on int64 and barrier
exact (collectives_worker.py)."""
import os

import pytest

from launch import run_ranks

WORKER = os.path.join(os.path.dirname(__file__), "collectives_worker.py")


@pytest.mark.parametrize("world_size", [2, 4])
def test_collectives_match_gloo(world_size):
    results = run_ranks(WORKER, world_size, timeout=300)
    for rank, (code, out) in enumerate(results):
        assert code == 0, f"rank {rank}:\n{out[-3000:]}"
