"""One rank of tests/torch/test_collectives.py: every collective through the `qccl` backend
against gloo's result on the same data, for each codec and dtype. Exits non-zero, with the
failing case on stderr, at the first mismatch.

Launched by the test as WORLD_SIZE processes with torchrun's variables (RANK, WORLD_SIZE,
MASTER_ADDR, MASTER_PORT); the default group is gloo, one qccl group per codec. With
QCCL_TEST_DEVICE=cuda the qccl group's tensors are CUDA tensors (gloo's stay on the CPU).
"""
import os
import sys

import torch
import torch.distributed as dist

import qccl.torch

# codec -> bound on the relative L2 error of one reduction (fp32 input) against gloo's
CODECS = {"none": 0.0, "bf16": 0.01, "fp8e4m3": 0.08, "int8": 0.02, "nvfp4": 0.25}
DTYPES = [torch.float32, torch.bfloat16, torch.float16]
N = 4096  # elements per rank and call
DEVICE = os.environ.get("QCCL_TEST_DEVICE", "cpu")


def data(seed, n, dtype, exact):
    g = torch.Generator().manual_seed(seed)
    if exact:  # small integers: every sum and average is exact in any order
        return torch.randint(-8, 8, (n,), generator=g).to(dtype)
    return torch.randn(n, generator=g).to(dtype)


def same_everywhere(t, what):
    """The qccl result is bit for bit the same on every rank (gathered over gloo)."""
    raw = t.view(torch.int16).to(torch.int32) if t.element_size() == 2 else t.view(torch.int32)
    gathered = [torch.empty_like(raw) for _ in range(dist.get_world_size())]
    dist.all_gather(gathered, raw)
    for r, other in enumerate(gathered):
        if not torch.equal(other, raw):
            fail(f"{what}: rank {r}'s result differs from rank {dist.get_rank()}'s")


def fail(message):
    sys.stderr.write(f"rank {dist.get_rank()}: {message}\n")
    sys.exit(1)


def compare(got, want, bound, what):
    if bound == 0.0:
        if not torch.equal(got, want):
            fail(f"{what}: not equal to gloo's exact result")
        return
    err = (got.double() - want.double()).norm() / want.double().norm()
    if os.environ.get("QCCL_TEST_SHOW_ERRORS"):
        print(f"{what}: {err:.5f}", flush=True)
    if not err <= bound:
        fail(f"{what}: relative error {err:.4f} above {bound}")


def run_case(group, codec, bound, dtype, exact):
    rank, size = dist.get_rank(), dist.get_world_size()
    tag = f"{codec} {dtype} {'exact data' if exact else 'random data'}"
    seed = 1000 * rank + (1 if exact else 0)
    for op in [dist.ReduceOp.SUM, dist.ReduceOp.AVG]:
        if op == dist.ReduceOp.AVG and dtype != torch.float32:
            continue  # gloo averages fp32 only
        x = data(seed, N, dtype, exact)
        want, got = x.clone(), x.to(DEVICE)
        dist.all_reduce(want, op=op)
        dist.all_reduce(got, op=op, group=group)
        got = got.cpu()
        compare(got, want, bound, f"all_reduce {op} {tag}")
        same_everywhere(got, f"all_reduce {op} {tag}")
    x = data(seed + 7, N * size, dtype, exact)
    want, got = torch.empty(N, dtype=dtype), torch.empty(N, dtype=dtype, device=DEVICE)
    dist.reduce_scatter_tensor(want, x)
    dist.reduce_scatter_tensor(got, x.to(DEVICE), group=group)
    compare(got.cpu(), want, bound, f"reduce_scatter_tensor {tag}")
    want2, got2 = torch.empty(N, dtype=dtype), torch.empty(N, dtype=dtype, device=DEVICE)
    dist.reduce_scatter(want2, list(x.chunk(size)))
    dist.reduce_scatter(got2, list(x.to(DEVICE).chunk(size)), group=group)
    compare(got2.cpu(), want2, bound, f"reduce_scatter (list) {tag}")
    x = data(seed + 11, N, dtype, exact)
    want, got = torch.empty(N * size, dtype=dtype), torch.empty(N * size, dtype=dtype, device=DEVICE)
    dist.all_gather_into_tensor(want, x)
    dist.all_gather_into_tensor(got, x.to(DEVICE), group=group)
    got = got.cpu()
    compare(got, want, bound, f"all_gather_into_tensor {tag}")
    same_everywhere(got, f"all_gather_into_tensor {tag}")
    outs = [torch.empty(N, dtype=dtype, device=DEVICE) for _ in range(size)]
    dist.all_gather(outs, x.to(DEVICE), group=group)
    compare(torch.cat(outs).cpu(), want, bound, f"all_gather (list) {tag}")


def run_exact_ops(group):
    """Broadcast, all-to-all and barrier are exact whatever the codec."""
    rank, size = dist.get_rank(), dist.get_world_size()
    for root in range(size):
        t = torch.full((33,), float(rank), dtype=torch.float32, device=DEVICE)
        dist.broadcast(t, src=root, group=group)
        if not torch.equal(t.cpu(), torch.full((33,), float(root))):
            fail(f"broadcast from {root}")
    x = torch.arange(size * 5, dtype=torch.int32) + 100 * rank
    want, got = torch.empty_like(x), torch.empty_like(x, device=DEVICE)
    dist.all_to_all_single(want, x)
    dist.all_to_all_single(got, x.to(DEVICE), group=group)
    if not torch.equal(got.cpu(), want):
        fail("all_to_all_single")
    m = torch.tensor([rank, -rank], dtype=torch.int64, device=DEVICE)
    dist.all_reduce(m, op=dist.ReduceOp.MAX, group=group)
    m = m.cpu()
    if m.tolist() != [size - 1, 0]:
        fail(f"all_reduce MAX int64: {m.tolist()}")
    work = dist.barrier(group=group, async_op=True)
    work.wait()


def check_reset_ef(group):
    """The compressed calls left residuals; reset_ef drops every key (the state's header stays)."""
    before = qccl.torch.ef_state(group).numel()
    qccl.torch.reset_ef(group)
    after = qccl.torch.ef_state(group).numel()
    if not (after == EF_STATE_HEADER_BYTES < before):
        fail(f"reset_ef: the state went from {before} to {after} bytes, not to the header alone")


EF_STATE_HEADER_BYTES = 28  # docs/ERROR_FEEDBACK.md, the format: no entries


def main():
    if DEVICE == "cuda":
        torch.cuda.set_device(0)  # every rank on the one GPU: qccl stages them over its host transport
    dist.init_process_group("gloo")
    for codec, bound in CODECS.items():
        group = dist.new_group(backend="qccl", pg_options=qccl.torch.Options(codec=codec,
                                                                                min_bytes=0))
        for dtype in DTYPES:
            # Exact: data whose sums are exact in any order, so gloo's bits are the answer.
            # Compressed: random data, within the codec's bound of gloo's result.
            run_case(group, codec, bound, dtype, exact=codec == "none")
        run_exact_ops(group)
        if codec != "none":
            check_reset_ef(group)
        dist.destroy_process_group(group)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
