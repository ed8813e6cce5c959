"""PyTorch's own conformance tests for a ProcessGroup backend, run as PyTorch's
test/distributed/test_distributed_spawn.py runs them for gloo: DistributedTest._DistTestBase from
torch.testing._internal.distributed.distributed_test, every test in WORLD_SIZE spawned processes.

  BACKEND=qccl WORLD_SIZE=2 TEMP_DIR=$(mktemp -d) python3 -m pytest torch_suite.py -k 'test_send'

BACKEND=qccl imports qccl.torch (a build tree has no entry point); QCCL_CODEC defaults to none,
the exact codec. tests/torch/conformance/run_suite compares qccl's outcome with gloo's.
"""
import os
import sys

import torch
import torch.distributed as dist

torch.backends.cuda.matmul.allow_tf32 = False
if os.environ.get("BACKEND") == "qccl":
    os.environ.setdefault("QCCL_CODEC", "none")
    import qccl.torch  # noqa: F401

from torch.testing._internal.common_utils import run_tests  # noqa: E402
from torch.testing._internal.distributed.distributed_test import (  # noqa: E402
    DistributedTest,
    TestDistBackend,
)

if not dist.is_available():
    sys.exit("torch.distributed is not available")


class TestDistBackendWithSpawn(TestDistBackend, DistributedTest._DistTestBase):
    def setUp(self):
        super().setUp()
        self._spawn_processes()


if __name__ == "__main__":
    run_tests()
