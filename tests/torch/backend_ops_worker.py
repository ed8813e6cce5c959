"""One rank of tests/torch/test_backend_ops.py: the ProcessGroup operations beyond the
collectives (reduce, gather, scatter, send / recv with tags, isend / irecv, all_to_all and
all_to_all_single with uneven splits, the object collectives, a sparse all_reduce, monitored_barrier,
the bitwise ops)
on a `qccl` group with the exact codec, each against gloo's result on the same data. Exits
non-zero, naming the operation, at the first difference.
"""
import datetime
import os
import sys

import torch
import torch.distributed as dist

import qccl.torch  # noqa: F401  (the build tree has no entry point to register the backend)

DEVICE = os.environ.get("QCCL_TEST_DEVICE", "cpu")


def fail(what):
    print(f"rank {dist.get_rank()}: FAIL {what}", file=sys.stderr, flush=True)
    sys.exit(1)


def same(q, g, what):
    if not torch.equal(q.cpu(), g.cpu()):
        fail(f"{what}: qccl {q.flatten()[:6].tolist()} != gloo {g.flatten()[:6].tolist()}")


def data(seed, n, dtype=torch.float32):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(-50, 50, (n,), generator=g).to(dtype)


def on_both(fn, *tensors):
    """fn(group, *copies) on the qccl group (tensors on DEVICE) and on gloo (CPU)."""
    q = [t.clone().to(DEVICE) for t in tensors]
    g = [t.clone() for t in tensors]
    fn(QCCL, *q)
    fn(None, *g)
    return q, g


def main():
    global QCCL
    dist.init_process_group("gloo")
    QCCL = dist.new_group(backend="qccl", pg_options=qccl.torch.Options(codec="none"))
    rank, n = dist.get_rank(), dist.get_world_size()
    for dtype in (torch.float32, torch.bfloat16, torch.int32, torch.int64, torch.uint8):
        x = data(rank, 1000, dtype)
        for root in range(n):
            for op in (dist.ReduceOp.SUM, dist.ReduceOp.MAX):
                q, g = on_both(lambda grp, t: dist.reduce(t, root, op=op, group=grp), x)
                if rank == root:
                    same(q[0], g[0], f"reduce {dtype} root {root} {op}")
            outs = [torch.empty_like(x) for _ in range(n)] if rank == root else None
            qo = [t.to(DEVICE) for t in outs] if outs else None
            dist.gather(x.to(DEVICE), qo, dst=root, group=QCCL)
            dist.gather(x, outs, dst=root)
            if rank == root:
                for p in range(n):
                    same(qo[p], outs[p], f"gather {dtype} root {root} block {p}")
            ins = [data(100 * root + p, 1000, dtype) for p in range(n)] if rank == root else None
            qout, gout = torch.empty_like(x).to(DEVICE), torch.empty_like(x)
            dist.scatter(qout, [t.to(DEVICE) for t in ins] if ins else None, src=root, group=QCCL)
            dist.scatter(gout, ins, src=root)
            same(qout, gout, f"scatter {dtype} root {root}")
    for op in (dist.ReduceOp.BAND, dist.ReduceOp.BOR, dist.ReduceOp.BXOR):
        x = torch.randint(0, 1 << 30, (777,), generator=torch.Generator().manual_seed(rank))
        q, g = on_both(lambda grp, t: dist.all_reduce(t, op=op, group=grp), x)
        same(q[0], g[0], f"all_reduce {op}")
    # Point-to-point: two tags from each rank to the next, received in the other order.
    right, left = (rank + 1) % n, (rank - 1) % n
    for grp in (QCCL, None):
        dev = DEVICE if grp is QCCL else "cpu"
        a, b = data(rank, 300).to(dev), data(rank + 50, 4000).to(dev)
        ra, rb = torch.empty(300, device=dev), torch.empty(4000, device=dev)
        works = [dist.isend(a, right, group=grp, tag=1), dist.isend(b, right, group=grp, tag=2),
                 dist.irecv(rb, left, group=grp, tag=2), dist.irecv(ra, left, group=grp, tag=1)]
        for w in works:
            w.wait()
        same(ra, data(left, 300), f"irecv tag 1 ({'qccl' if grp else 'gloo'})")
        same(rb, data(left + 50, 4000), f"irecv tag 2 ({'qccl' if grp else 'gloo'})")
        if rank == 0:
            dist.send(a, 1, group=grp)
        elif rank == 1:
            got = torch.empty(300, device=dev)
            dist.recv(got, 0, group=grp)
            same(got, data(0, 300), "blocking send / recv")
    # all_to_all_single with uneven splits: rank r sends p + r + 1 rows to rank p.
    in_splits = [p + rank + 1 for p in range(n)]
    out_splits = [rank + p + 1 for p in range(n)]
    x = data(rank, sum(in_splits) * 3).view(-1, 3)
    q, g = on_both(lambda grp, o, i: dist.all_to_all_single(o, i, out_splits, in_splits, group=grp),
                   torch.empty(sum(out_splits), 3), x)
    same(q[0], g[0], "all_to_all_single, uneven")
    q, g = on_both(lambda grp, o, i: dist.all_to_all_single(o, i, group=grp),
                   torch.empty(4 * n), data(rank, 4 * n))
    same(q[0], g[0], "all_to_all_single, even")
    ins = [data(10 * rank + p, 5) for p in range(n)]  # gloo's list form takes equal sizes
    qo = [torch.empty(5).to(DEVICE) for _ in range(n)]
    go = [torch.empty(5) for _ in range(n)]
    dist.all_to_all(qo, [t.to(DEVICE) for t in ins], group=QCCL)
    dist.all_to_all(go, ins)
    for p in range(n):
        same(qo[p], go[p], f"all_to_all block {p}")
    # The object collectives, through the above.
    objects = [None] * n
    dist.all_gather_object(objects, {"rank": rank, "text": "x" * rank}, group=QCCL)
    if objects != [{"rank": r, "text": "x" * r} for r in range(n)]:
        fail(f"all_gather_object: {objects}")
    listed = [f"from {rank}", rank] if rank == 0 else [None, None]
    dist.broadcast_object_list(listed, src=0, group=QCCL)
    if listed != ["from 0", 0]:
        fail(f"broadcast_object_list: {listed}")
    gathered = [None] * n if rank == n - 1 else None
    dist.gather_object(("g", rank), gathered, dst=n - 1, group=QCCL)
    if rank == n - 1 and gathered != [("g", r) for r in range(n)]:
        fail(f"gather_object: {gathered}")
    # all_reduce of a sparse COO tensor (SUM, uncoalesced: coordinates that ranks share and
    # repeat), on the CPU; another op refused with a message.
    coords = torch.tensor([[rank % 3, 2, rank % 3], [0, rank, 0]])
    sparse = torch.sparse_coo_tensor(coords, torch.tensor([1.5, -2.0, float(rank)]), (4, 5))
    if DEVICE == "cpu":
        q, g = on_both(lambda grp, t: dist.all_reduce(t, group=grp), sparse)
        same(q[0].to_dense(), g[0].to_dense(), "sparse all_reduce")
        try:
            dist.all_reduce(sparse.clone(), op=dist.ReduceOp.MAX, group=QCCL)
            fail("sparse all_reduce with MAX was accepted")
        except (RuntimeError, ValueError) as e:
            if "sums" not in str(e):
                fail(f"sparse all_reduce with MAX: {e}")
    # monitored_barrier: everyone in time; then the last rank late, named in rank 0's error.
    dist.monitored_barrier(group=QCCL, timeout=datetime.timedelta(seconds=30))
    if rank == n - 1:
        import time
        time.sleep(3)
    try:
        dist.monitored_barrier(group=QCCL, timeout=datetime.timedelta(seconds=1))
        if rank == 0:
            fail("monitored_barrier: the late rank was not reported")
    except RuntimeError as e:
        if rank == 0 and f"Rank {n - 1} failed to pass monitoredBarrier" not in str(e):
            fail(f"monitored_barrier's error: {e}")
    dist.barrier()  # gloo: every rank is past the late barrier
    print(f"rank {rank}: all backend operations agree with gloo", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
