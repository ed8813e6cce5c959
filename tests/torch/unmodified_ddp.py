"""A training script written for gloo that knows nothing of qccl: its backend comes from a flag,
as in PyTorch's own examples. tests/torch/check_pip_install.sh runs it under torchrun with
--backend qccl (and a device mapping string) from an environment where qccl is installed, so the
`qccl` backend must come from torch's autoload entry point. Prints the final loss and the result
of a few collectives that a script like this makes.

  torchrun --nproc-per-node 4 unmodified_ddp.py --backend qccl
"""
import argparse

import torch
import torch.distributed as dist
from torch import nn


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--backend", default="gloo")
    p.add_argument("--steps", type=int, default=20)
    args = p.parse_args()
    dist.init_process_group(backend=args.backend)
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    model = nn.parallel.DistributedDataParallel(
        nn.Sequential(nn.Linear(32, 64), nn.Tanh(), nn.Linear(64, 1)))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    g = torch.Generator().manual_seed(rank)
    for _ in range(args.steps):
        x = torch.randn(64, 32, generator=g)
        loss = ((model(x) - x.sum(1, keepdim=True).sin()) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    total = loss.detach().clone()
    dist.all_reduce(total)
    ranks = [None] * world
    dist.all_gather_object(ranks, rank)
    dist.barrier()
    if rank == 0:
        print(f"backend {dist.get_backend()} ranks {ranks} final loss {total.item() / world:.6f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
