"""One rank of the training tests (test_training.py): a small transformer language model
(about 2 M parameters) on generated data, trained under DDP or FSDP2 over gloo (exact) or the
qccl backend (codec and error feedback from QCCL_CODEC / QCCL_EF). Rank 0 writes the loss of
every step, averaged over the ranks, to OUT as JSON.

  train_worker.py {ddp|fsdp2} {gloo|qccl} STEPS OUT [--save-at K CKPT | --resume CKPT [--drop-ef]]
                  [--times TIMES] [--parameter-changes CODEC]

--save-at K CKPT: every rank also saves model, optimizer and (qccl) error-feedback state after
step K to CKPT.rank<r>.pt. --resume CKPT: loads that and trains on from step K+1 (--drop-ef:
without the error-feedback state, as a control). --parameter-changes CODEC (fsdp2, qccl): the
parameters' all-gathers send changes against a kept replica (compress_fsdp's parameter_changes).
"""
import argparse
import json
import math
import os
import time

import torch
import torch.distributed as dist
from torch import nn

VOCAB, SEQ, DIM, LAYERS, HEADS, BATCH = 256, 32, 192, 4, 4, 8


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(DIM), nn.LayerNorm(DIM)
        self.attn = nn.MultiheadAttention(DIM, HEADS, batch_first=True)
        self.mlp = nn.Sequential(nn.Linear(DIM, 4 * DIM), nn.GELU(), nn.Linear(4 * DIM, DIM))
        self.register_buffer("mask", torch.triu(torch.full((SEQ, SEQ), float("-inf")), 1),
                             persistent=False)

    def forward(self, x):
        h = self.ln1(x)
        x = x + self.attn(h, h, h, attn_mask=self.mask, need_weights=False)[0]
        return x + self.mlp(self.ln2(x))


class LanguageModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, DIM)
        self.pos = nn.Parameter(torch.randn(SEQ, DIM) * 0.02)
        self.blocks = nn.ModuleList(Block() for _ in range(LAYERS))
        self.norm = nn.LayerNorm(DIM)
        self.head = nn.Linear(DIM, VOCAB)

    def forward(self, tokens):
        x = self.embed(tokens) + self.pos
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))


def batch(step, rank):
    """Sequences of a rule x[t+1] = (x[t] + b) mod VOCAB, b per sequence: the model has to read b
    from the context."""
    g = torch.Generator().manual_seed(1_000_003 * step + rank)
    b = torch.randint(1, 8, (BATCH, 1), generator=g)
    x = torch.randint(0, VOCAB, (BATCH, 1), generator=g)
    seq = [x]
    for _ in range(SEQ):
        seq.append((seq[-1] + b) % VOCAB)
    seq = torch.cat(seq, 1)
    return seq[:, :-1], seq[:, 1:]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("framework", choices=["ddp", "fsdp2"])
    p.add_argument("backend", choices=["gloo", "qccl"])
    p.add_argument("steps", type=int)
    p.add_argument("out")
    p.add_argument("--save-at", nargs=2)
    p.add_argument("--resume")
    p.add_argument("--drop-ef", action="store_true", help="resume without the residuals")
    p.add_argument("--times", help="rank 0 writes each step's wall time (s) here, as JSON")
    p.add_argument("--parameter-changes", metavar="CODEC")
    args = p.parse_args()
    torch.set_num_threads(1)
    if args.backend == "qccl":
        import qccl.torch
    dist.init_process_group(args.backend)
    rank = dist.get_rank()
    torch.manual_seed(0)
    model = LanguageModel()
    if args.framework == "ddp":
        # One bucket: DDP lays its buckets out again after the first step, so with several a
        # resumed run would meet differently laid-out buckets under the same keys in its first
        # step (docs/INTEGRATION.md).
        model = nn.parallel.DistributedDataParallel(model, bucket_cap_mb=100)
        if args.backend == "qccl":
            qccl.torch.register_ddp_hook(model)
    else:
        from torch.distributed.fsdp import fully_shard
        for block in model.blocks:
            fully_shard(block)
        fully_shard(model)
        if args.backend == "qccl":
            qccl.torch.compress_fsdp(model, parameter_changes=args.parameter_changes)
    if args.backend == "qccl":
        qccl.torch.attach_ef_state(model)
    # SGD with momentum: Adam's per-coordinate normalisation hides most of what compression and
    # error feedback change (measured: docs/PERFORMANCE.md, "Training").
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    first = 1
    if args.resume:
        ckpt = torch.load(f"{args.resume}.rank{rank}.pt", weights_only=False)
        if args.drop_ef:
            del ckpt["model"][qccl.torch.ef_state_key]
        model.load_state_dict(ckpt["model"])
        opt.load_state_dict(ckpt["opt"])
        first = ckpt["step"] + 1
    losses, times = {}, {}
    for step in range(first, args.steps + 1):
        started = time.perf_counter()
        tokens, targets = batch(step, rank)
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(tokens).reshape(-1, VOCAB), targets.reshape(-1))
        loss.backward()
        opt.step()
        mean = loss.detach().clone()
        dist.all_reduce(mean)
        losses[step] = mean.item() / dist.get_world_size()
        times[step] = time.perf_counter() - started
        if not math.isfinite(losses[step]):
            raise SystemExit(f"step {step}: loss {losses[step]}")
        if args.save_at and step == int(args.save_at[0]):
            torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "step": step},
                       f"{args.save_at[1]}.rank{rank}.pt")
    if rank == 0:
        with open(args.out, "w") as f:
            json.dump(losses, f)
        if args.times:
            with open(args.times, "w") as f:
                json.dump(times, f)
    dist.barrier()  # no rank tears its group down while another still uses it
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
