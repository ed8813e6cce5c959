"""One rank of test_masked.py: the shared-mask collectives (docs/ALGORITHMS.md, "Shared-mask
collectives") through qccl.torch's bindings, against numpy: every rank computes what every rank
sent from the definition (the codec's encode and decode through its C API, the sums and the
residuals in numpy) and checks its own result bit for bit; the all-gather's results the same on
every rank; a mask that differs refused on every rank, nothing written. Exits non-zero, naming
what failed.

  masked_worker.py   (3 ranks; the default group gloo for the checks, a qccl group does the work)
"""
import os
import sys

import numpy as np
import torch
import torch.distributed as dist

import qccl.torch
from qccl.torch import _C
from qccl.torch._keys import qccl_backend

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from qccl_ctypes import QcclCodec, load_library  # noqa: E402

F32 = np.float32
SHARD, UNTOUCHED = 2000, F32(-7.0)


def fail(message):
    sys.stderr.write(f"rank {dist.get_rank()}: {message}\n")
    sys.exit(1)


def inputs(rank, call, count):
    return np.random.default_rng(100 * call + rank).standard_normal(count).astype(F32)


def mask_of(call, count, density=0.15):
    return np.random.default_rng(7 + call).random(count) < density


def bitmap(flags):
    return torch.from_numpy(np.packbits(flags, bitorder="little").copy())


def encoded(codec, x, e, at):
    """What a rank with residual e (updated) sends for x's elements `at`: D(Q(x + e))."""
    p = x[at] + e[at]
    d = codec.decode(codec.encode(p), p.size)
    e[at] = np.where(np.isfinite(d), p - d, e[at])
    return d


def reduce_scatter(group, codec, n, rank):
    residuals = [np.zeros(n * SHARD, F32) for _ in range(n)]
    for call in range(2):  # two masks: the residuals must stay at the whole buffer's coordinates
        flags = mask_of(call, n * SHARD)
        want = np.zeros(SHARD, F32)
        at_mine = np.flatnonzero(flags[rank * SHARD:(rank + 1) * SHARD])
        for r in range(n):
            at = r * SHARD + np.flatnonzero(flags[r * SHARD:(r + 1) * SHARD])
            total = np.zeros(at.size, F32)
            for s in range(n):  # in rank order; the own share in full precision
                x = inputs(s, call, n * SHARD)
                total = total + (x[at] if s == r else encoded(codec, x, residuals[s], at))
            if r == rank:
                want[at_mine] = total / F32(n)
        out = torch.full((SHARD,), float(UNTOUCHED))
        _C.masked_reduce_scatter(qccl_backend(group), out, torch.from_numpy(
            inputs(rank, call, n * SHARD)), bitmap(flags), dist.ReduceOp.AVG, 99,
            codec="int4").wait()
        got = out.numpy()
        expected = np.full(SHARD, UNTOUCHED)
        expected[at_mine] = want[at_mine]
        if not np.array_equal(got.view(np.int32), expected.view(np.int32)):
            bad = np.flatnonzero(got.view(np.int32) != expected.view(np.int32))
            fail(f"masked reduce-scatter, call {call}: {bad.size} elements differ from numpy "
                 f"(first {bad[0]}: {got[bad[0]]} not {expected[bad[0]]})")


def all_gather(group, codec, n, rank):
    flags = mask_of(5, n * SHARD, density=0.05)
    out = torch.full((n * SHARD,), float(UNTOUCHED))
    x = inputs(rank, 5, SHARD)
    _C.masked_all_gather(qccl_backend(group), out, torch.from_numpy(x), bitmap(flags), 98,
                         codec="fp8e4m3").wait()
    expected = np.full(n * SHARD, UNTOUCHED)
    for r in range(n):
        at = np.flatnonzero(flags[r * SHARD:(r + 1) * SHARD])
        expected[r * SHARD + at] = encoded(codec, inputs(r, 5, SHARD), np.zeros(SHARD, F32), at)
    if not np.array_equal(out.numpy().view(np.int32), expected.view(np.int32)):
        fail("masked all-gather: not numpy's decode of every rank's values")
    everyone = [torch.empty_like(out) for _ in range(n)]
    dist.all_gather(everyone, out)
    if any(not torch.equal(o.view(torch.int32), out.view(torch.int32)) for o in everyone):
        fail("masked all-gather: the results differ between ranks")


def disagreement(group, n, rank):
    flags = mask_of(9, n * SHARD)
    if rank == 1:
        flags[123] = not flags[123]
    out = torch.full((SHARD,), float(UNTOUCHED))
    try:
        _C.masked_reduce_scatter(qccl_backend(group), out, torch.ones(n * SHARD), bitmap(flags),
                                 dist.ReduceOp.SUM, 97, codec="int4").wait()
        fail("a mask that differs between ranks was accepted")
    except RuntimeError as e:
        if "mask differs" not in str(e):
            fail(f"a differing mask: {e}")
    if not torch.all(out == float(UNTOUCHED)):
        fail("a refused call wrote its output")


def main():
    dist.init_process_group("gloo")
    rank, n = dist.get_rank(), dist.get_world_size()
    group = dist.new_group(backend="qccl", pg_options=qccl.torch.Options(min_bytes=0))
    lib = load_library()
    reduce_scatter(group, QcclCodec(lib, "int4"), n, rank)
    all_gather(group, QcclCodec(lib, "fp8e4m3"), n, rank)
    disagreement(group, n, rank)
    dist.destroy_process_group(group)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
