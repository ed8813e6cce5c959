"""qccl.torch.ScapeAdamW on 3 ranks (scape_worker.py): with exact codecs every step's parameters
bitwise a plain-PyTorch replay of the update; with int4 gradients and fp8e4m3 parameter changes
every rank's parameters the same, a resumed run the uninterrupted one, bit for bit, and a state
without q (an earlier version's) refused, nothing changed."""
import os

import pytest

from launch import run_ranks

WORKER = os.path.join(os.path.dirname(__file__), "scape_worker.py")


@pytest.mark.parametrize("check", ["reference", "resume"])
def test_scape(check):
    env = {k: v for k, v in os.environ.items() if not k.startswith("QCCL_")}
    for rank, (code, output) in enumerate(run_ranks(WORKER, 3, [check], env=env)):
        assert code == 0, f"rank {rank}:\n{output[-3000:]}"
