"""Every collective DDP and FSDP2 use, through the `qccl` torch.distributed backend, against gloo
on the same data: fp32 / bf16 / fp16, 2 and 4 ranks, codecs none (bit for bit, on data whose
sums are exact in any order), bf16, fp8e4m3, int8, nvfp4 (within each codec's bound), every
reduction's result identical on every rank; broadcast, all-to-all, MAX on int64 and barrier
exact (collectives_worker.py)."""
import os

import pytest
import torch

from launch import run_ranks

WORKER = os.path.join(os.path.dirname(__file__), "collectives_worker.py")


@pytest.mark.parametrize("world_size", [2, 4])
def test_collectives_match_gloo(world_size):
    results = run_ranks(WORKER, world_size, timeout=300)
    for rank, (code, out) in enumerate(results):
        assert code == 0, f"rank {rank}:\n{out[-3000:]}"


def test_bad_calls_are_refused_with_a_message():
    results = run_ranks(os.path.join(os.path.dirname(__file__), "misuse_worker.py"), 2,
                        timeout=120)
    for rank, (code, out) in enumerate(results):
        assert code == 0, f"rank {rank}:\n{out[-3000:]}"


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
def test_collectives_on_cuda_tensors_match_gloo():
    """The same on CUDA tensors, 2 ranks on one GPU: NCCL refuses two ranks on one device, so
    qccl stages the device buffers through pinned memory over UCX (QCCL_TRANSPORT=ucx)."""
    env = dict(os.environ, QCCL_TEST_DEVICE="cuda", QCCL_TRANSPORT="ucx")
    results = run_ranks(WORKER, 2, env=env, timeout=300)
    for rank, (code, out) in enumerate(results):
        assert code == 0, f"rank {rank}:\n{out[-3000:]}"
