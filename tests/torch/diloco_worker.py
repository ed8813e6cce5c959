"""One rank of the outer-loop tests (test_diloco.py): a tiny byte-level LM trained with AdamW
under qccl.torch.DiLoCo on the standard library's text, with every option on the command line.
Each rank writes OUT.rank<r>.pt: its training losses, the global parameters θ after every inner
step and after finish(); or the error the loop raised.

  diloco_worker.py OUT STEPS [--outer R] [--codec C] [--ef-decay B] [--sync-every H]
                   [--fragments F] [--overlap O] [--outer-lr L] [--algorithm A] [--device D]
                   [--save-at K CKPT] [--resume CKPT] [--diverge-at K]

--save-at K CKPT: after step K every rank saves model, inner optimizer and loop state to
CKPT.rank<r>.pt. --resume CKPT: loads that and trains on to STEPS. --diverge-at K: rank 1 changes
one element of its θ after step K (the next update must be refused on every rank).
"""
import argparse

import torch
import torch.distributed as dist

from byte_lm import ByteLM
from text_corpus import batch

TINY = dict(dim=16, layers=1, heads=2, context=8)
BATCH, SEQ, LR = 4, 8, 1e-2


def tiny_model():
    torch.manual_seed(0)
    return ByteLM(**TINY)


def inner_optimizer(model):
    return torch.optim.AdamW(model.parameters(), lr=LR)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("steps", type=int)
    p.add_argument("--outer", default="nesterov")
    p.add_argument("--codec", default=None)
    p.add_argument("--ef-decay", type=float, default=None)
    p.add_argument("--sync-every", type=int, default=4)
    p.add_argument("--fragments", type=int, default=1)
    p.add_argument("--overlap", type=int, default=0, help="0: none, else the delay in steps")
    p.add_argument("--outer-lr", type=float, default=None)
    p.add_argument("--algorithm", default=None)
    p.add_argument("--device", default="cpu")
    p.add_argument("--save-at", nargs=2)
    p.add_argument("--resume")
    p.add_argument("--diverge-at", type=int)
    args = p.parse_args()
    torch.set_num_threads(1)
    import qccl.torch
    device = torch.device(args.device)
    if device.type == "cuda":
        torch.cuda.set_device(0)
    dist.init_process_group("qccl", pg_options=qccl.torch.Options(algorithm=args.algorithm))
    rank = dist.get_rank()
    model = tiny_model().to(device)
    opt = inner_optimizer(model)
    outer = qccl.torch.DiLoCo(model, opt, args.sync_every, args.outer, codec=args.codec,
                              ef_decay=args.ef_decay, fragments=args.fragments,
                              overlap=args.overlap or False, outer_lr=args.outer_lr)
    first = 1
    if args.resume:
        state = torch.load(f"{args.resume}.rank{rank}.pt", weights_only=False)
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["opt"])
        outer.load_state_dict(state["outer"])
        first = state["step"] + 1
    result = {"losses": {}, "theta": {}}
    try:
        for step in range(first, args.steps + 1):
            inputs, targets = batch(step, rank, BATCH, SEQ)
            opt.zero_grad()
            loss = model.loss(inputs.to(device), targets.to(device))
            loss.backward()
            opt.step()
            result["losses"][step] = loss.item()
            result["theta"][step] = torch.cat([f.theta.cpu() for f in outer.fragments])
            if args.save_at and step == int(args.save_at[0]):
                torch.save({"model": model.state_dict(), "opt": opt.state_dict(),
                            "outer": outer.state_dict(), "step": step},
                           f"{args.save_at[1]}.rank{rank}.pt")
            if args.diverge_at == step and rank == 1:
                outer.fragments[0].theta[0] += 1e-3
        outer.finish()
        result["final"] = torch.cat([f.theta.cpu() for f in outer.fragments])
    except RuntimeError as e:
        result["error"] = str(e)
    torch.save(result, f"{args.out}.rank{rank}.pt")
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
