"""The `qccl` backend's operations beyond the collectives (reduce, gather, scatter, point-to-point
with tags, uneven all-to-all, the object collectives, monitored_barrier, bitwise ops), each against
gloo on the same data, on 2 and 3 ranks (backend_ops_worker.py)."""
import os

import pytest

from launch import run_ranks

WORKER = os.path.join(os.path.dirname(__file__), "backend_ops_worker.py")


@pytest.mark.parametrize("ranks", [2, 3])
def test_every_operation_agrees_with_gloo(ranks):
    env = {k: v for k, v in os.environ.items() if not k.startswith("QCCL_")}
    if "QCCL_TEST_DEVICE" in os.environ:
        env["QCCL_TEST_DEVICE"] = os.environ["QCCL_TEST_DEVICE"]
    for rank, (code, output) in enumerate(run_ranks(WORKER, ranks, env=env, timeout=600)):
        assert code == 0, f"rank {rank}:\n{output[-3000:]}"
