"""The shared-mask collectives against numpy on 3 ranks (masked_worker.py): the reduce-scatter's
values and error feedback across masks that change, the all-gather the same on every rank, a mask
that differs refused on every rank with nothing written."""
import os

from launch import run_ranks

WORKER = os.path.join(os.path.dirname(__file__), "masked_worker.py")


def test_masked_collectives_match_numpy():
    env = {k: v for k, v in os.environ.items() if not k.startswith("QCCL_")}
    for rank, (code, output) in enumerate(run_ranks(WORKER, 3, env=env)):
        assert code == 0, f"rank {rank}:\n{output[-3000:]}"
