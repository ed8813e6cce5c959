"""One rank of test_elastic.py's state handover test, on 3 ranks of a `qccl` group:
qccl.torch.broadcast_state and broadcast_optimizer_state as a membership change uses them.
Rank 2 plays the new rank (its AdamW has no state), rank 1 a member that keeps its own
(keep=True), rank 0 the source. Exits non-zero, naming what failed.
"""
import sys

import torch
import torch.distributed as dist
from torch import nn

import qccl.torch


def fail(what):
    print(f"rank {dist.get_rank()}: FAIL {what}", file=sys.stderr, flush=True)
    sys.exit(1)


def expect_error(fn, words, what):
    """fn must raise RuntimeError naming `words`, on every rank."""
    try:
        fn()
    except RuntimeError as e:
        if words not in str(e):
            fail(f"{what}: {e}")
        return
    fail(f"{what}: no error")


def adamw_state(opt):
    return {(i, k): v.clone() for i, p in enumerate(opt.param_groups[0]["params"])
            for k, v in opt.state[p].items()}


def main():
    dist.init_process_group("qccl")
    rank = dist.get_rank()
    torch.manual_seed(0)  # the same initial model everywhere
    model = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 3))
    opt = torch.optim.AdamW(model.parameters(), lr=0.01)

    def train_step(seed):
        g = torch.Generator().manual_seed(seed)
        opt.zero_grad()
        model(torch.randn(4, 8, generator=g)).square().mean().backward()
        opt.step()

    # broadcast_state: rank 0's tensors everywhere, bit for bit (NaN and a 0-dim tensor included).
    mine = {"w": torch.full((5,), float(rank)), "s": torch.tensor(float(rank) + 0.5)}
    if rank == 0:
        mine["w"][3] = float("nan")
    qccl.torch.broadcast_state(mine)
    if not (torch.equal(mine["w"][:3], torch.zeros(3)) and mine["w"][3].isnan()
            and mine["s"].item() == 0.5):
        fail(f"broadcast_state: {mine}")
    # Ranks that disagree on the layout: an error on every rank, nothing written.
    odd = {"w": torch.full((5 + (rank == 2),), float(rank))}
    expect_error(lambda: qccl.torch.broadcast_state(odd), "ranks [2] differ", "layout mismatch")
    if not torch.equal(odd["w"], torch.full((5 + (rank == 2),), float(rank))):
        fail("a refused broadcast_state wrote")

    # The members trained (on different data); rank 2 is new.
    if rank != 2:
        for s in range(3):
            train_step(100 * rank + s)
    before = adamw_state(opt)
    qccl.torch.broadcast_optimizer_state(opt, keep=(rank == 1))
    after = adamw_state(opt)
    source = [None]
    if rank == 0:
        source = [{f"{i}.{k}": v for (i, k), v in after.items()}]
    dist.broadcast_object_list(source, group_src=0)
    expected = {tuple(key.split(".", 1)): v for key, v in source[0].items()}
    expected = {(int(i), k): v for (i, k), v in expected.items()}
    if rank == 1:
        if after.keys() != before.keys() or not all(torch.equal(after[k], before[k])
                                                    for k in before):
            fail("keep=True: the member's own state was overwritten")
    elif after.keys() != expected.keys() or not all(torch.equal(after[k], expected[k])
                                                     for k in expected):
        fail(f"rank {rank}'s state is not rank 0's: {sorted(after)} vs {sorted(expected)}")
    if rank == 2 and after[(0, "step")].item() != 3.0:
        fail(f"the new rank's AdamW step is {after[(0, 'step')]}")
    # With rank 0's parameters and state, the new rank's next step is rank 0's, bit for bit.
    with torch.no_grad():
        for p in model.parameters():
            dist.broadcast(p, group_src=0)
    train_step(7)
    flat = torch.cat([p.detach().reshape(-1) for p in model.parameters()])
    every = [torch.empty_like(flat) for _ in range(dist.get_world_size())]
    dist.all_gather(every, flat)
    if not torch.equal(every[0], every[2]):
        fail("the new rank's step differs from rank 0's")
    if torch.equal(every[0], every[1]):
        fail("the member that kept its own moments stepped like rank 0 (the test shows nothing)")

    # Optimizers over different parameters: an error on every rank.
    other = torch.optim.AdamW(model.parameters() if rank != 1 else [model[0].weight], lr=0.01)
    expect_error(lambda: qccl.torch.broadcast_optimizer_state(other), "ranks [1] differ",
                 "parameter mismatch")
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
