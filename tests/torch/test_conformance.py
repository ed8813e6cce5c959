"""CI's subset of PyTorch's own distributed conformance tests (conformance/torch_suite.py; the full
run and its counts against gloo: docs/INTEGRATION.md, "PyTorch's own test-suite"): point-to-point
with and without tags and from any source, under each profiler, reduce, barrier, a barrier's
timeout, monitored_barrier, a subgroup's all_gather_object (torch checks sequence numbers there),
all_reduce_coalesced, a sparse all_reduce, on 2 ranks with the exact codec; on 3 ranks,
monitored_barrier with a rank that never comes (the third rank must hear of it as gloo words it).
Each must pass, not be skipped."""
import os
import subprocess
import sys
import tempfile

SUITE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "conformance", "torch_suite.py")
# Each test starts its own ranks (about 7 s on CI's 2 cores): one of each kind, the rest in the
# full run.
TESTS = ["test_send_recv", "test_send_recv_with_tag", "test_send_recv_autograd_profiler",
         "test_send_recv_with_tag_torch_profiler", "test_reduce_sum", "test_barrier",
         "test_send_recv_any_source", "test_barrier_timeout_full_group",
         "test_monitored_barrier_gloo_rank_0_timeout", "test_all_gather_object_subgroup",
         "test_all_reduce_coalesced_sum", "test_sparse_all_reduce_sum"]


def run_subset(tests, world_size):
    with tempfile.TemporaryDirectory() as temp:
        env = dict(os.environ, BACKEND="qccl", WORLD_SIZE=str(world_size), TEMP_DIR=temp)
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rs",
             *[f"{SUITE}::TestDistBackendWithSpawn::{t}" for t in tests]],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=900)
    summary = done.stdout.strip().splitlines()[-1]
    assert done.returncode == 0 and summary.startswith(f"{len(tests)} passed"), done.stdout[-6000:]


def test_pytorch_conformance_subset_on_two_ranks():
    run_subset(TESTS, 2)


def test_pytorch_monitored_barrier_on_three_ranks():
    run_subset(["test_monitored_barrier_gloo"], 3)
