"""qccl.torch.ScapeAdamW on 3 ranks (scape_worker.py), the coordinates outside the mask held or
moved locally: with exact codecs every step's parameters bitwise a plain-PyTorch replay of the
update; with int4 gradients and fp8e4m3 parameter changes the synchronized copy the same on every
rank, a resumed run the uninterrupted one, bit for bit, and a state without q (an earlier
version's) or saved with the other `outside` refused, nothing changed."""
import os

import pytest

from launch import run_ranks

WORKER = os.path.join(os.path.dirname(__file__), "scape_worker.py")


@pytest.mark.parametrize("outside", ["hold", "local"])
@pytest.mark.parametrize("check", ["reference", "resume"])
def test_scape(check, outside):
    env = {k: v for k, v in os.environ.items() if not k.startswith("QCCL_")}
    for rank, (code, output) in enumerate(run_ranks(WORKER, 3, [check, outside], env=env)):
        assert code == 0, f"rank {rank}:\n{output[-3000:]}"
