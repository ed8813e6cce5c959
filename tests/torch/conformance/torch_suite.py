"""PyTorch's own conformance tests for a ProcessGroup backend, run as PyTorch's
test/distributed/test_distributed_spawn.py runs them for gloo: DistributedTest._DistTestBase from
torch.testing._internal.distributed.distributed_test, every test in WORLD_SIZE spawned processes.

  BACKEND=qccl WORLD_SIZE=2 TEMP_DIR=$(mktemp -d) python3 -m pytest torch_suite.py -k 'test_send'

BACKEND=qccl imports qccl.torch (a build tree has no entry point) and declares qccl's features in
the suite's tables; QCCL_CODEC defaults to none, the exact codec. tests/torch/conformance/run_suite compares qccl's outcome with gloo's.
"""
import os
import sys

import torch
import torch.distributed as dist

torch.backends.cuda.matmul.allow_tf32 = False
if os.environ.get("BACKEND") == "qccl":
    os.environ.setdefault("QCCL_CODEC", "none")
    import qccl.torch  # noqa: F401

from torch.testing._internal.common_distributed import DistTestCases  # noqa: E402
from torch.testing._internal.common_utils import run_tests  # noqa: E402

if os.environ.get("BACKEND") == "qccl":
    # What qccl implements, declared in the suite's tables of backend features, which its test
    # classes read when they are defined (on the import below): device tensors ("gpu"; the tests
    # that need a device still skip without one), DDP and subgroups, as gloo. Tests gated on the
    # name "gloo" itself stay skipped (docs/INTEGRATION.md lists them).
    for feature in ("gpu", "ddp", "subgroup", "plugin"):
        DistTestCases.backend_feature[feature].add("qccl")
from torch.testing._internal.distributed.distributed_test import (  # noqa: E402
    DistributedTest,
    TestDistBackend,
)

if not dist.is_available():
    sys.exit("torch.distributed is not available")

# Tests the suite skips for every backend not named gloo (or mpi/nccl) although the operation they
# test is one qccl implements on CPU tensors: their skip, set on the function by the suite's
# decorators, is lifted for qccl, so that they count for qccl as they do for gloo
# (docs/INTEGRATION.md, "PyTorch's own test-suite").
GATED_ON_BACKEND_NAME = [
    *(f"test_all_reduce_coalesced{group}_{op}" for group in ("", "_full_group")
      for op in ("sum", "product", "min", "max")),
    "test_scatter_object_list",
    "test_get_future",
    "test_grads_same_across_ranks_with_no_sync",
    "test_batch_isend_irecv_gloo",
    "test_batch_isend_irecv_gloo_tags",
    "test_monitored_barrier_gloo",
    "test_monitored_barrier_gloo_subgroup",
    "test_monitored_barrier_gloo_rank_0_timeout",
    "test_barrier_timeout_full_group",
    "test_sparse_all_reduce_sum",
]
if os.environ.get("BACKEND") == "qccl":
    for name in GATED_ON_BACKEND_NAME:
        getattr(DistributedTest._DistTestBase, name).__unittest_skip__ = False


class TestDistBackendWithSpawn(TestDistBackend, DistributedTest._DistTestBase):
    def setUp(self):
        super().setUp()
        self._spawn_processes()


if __name__ == "__main__":
    run_tests()
