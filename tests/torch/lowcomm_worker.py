"""One rank of a low-communication training run (perf/lowcomm_compare, test_lowcomm_training.py):
the byte-level LM (byte_lm.py) on the standard library's sources (text_corpus.py), AdamW, 4 ranks
by default, in one of three modes:

  ddp     DistributedDataParallel, every step; over gloo, or qccl with its DDP hook (codec and
          error feedback from QCCL_CODEC / QCCL_EF)
  diloco  qccl.torch.DiLoCo around the same loop (--outer, --sync-every, --codec, --ef-decay,
          --fragments, --overlap, --outer-lr)
  local   the same steps with no communication at all: the compute floor
  zero2   DeepSpeed ZeRO stage 2 around the same AdamW; over qccl with --param-codec, its
          parameter all-gathers send changes (qccl.torch.compress_zero_parameters; "none":
          exact, counted the same way; --param-values: the values themselves, as ZeRO++'s
          quantized weights), gradients as QCCL_CODEC says
  fsdp2   FSDP2 (each block and the whole model sharded); over qccl with --param-codec, the
          parameters by their changes against a kept replica (compress_fsdp's
          parameter_changes), gradients through FSDP's own reduce-scatter on the group; every
          rank takes part in the validation passes (the forward gathers parameters)
  scape   qccl.torch.ScapeAdamW (same AdamW settings) at --density, gradients in --codec,
          parameter changes in --param-codec (none given: exact); --density 1 with no codecs
          is dense ZeRO-1 AdamW, the reference; each rank clips its own gradients first;
          --outside local: validation of the synchronized copy (the model every rank agrees on)

Every rank writes OUT.rank<r>.json: its training loss per step, the wall time of every step, the
bytes its qccl collectives sent in the budget's steps (qcclCommWireBytes; the bootstrap and the
initial broadcast of the parameters left out; zero2 with --param-codec: also the part its
parameter all-gathers sent) and, where the process has one, its eth0's
transmitted bytes over the timed steps (perf/cluster's links). Rank 0 also records the validation
loss of the model every --eval-every steps (the global parameters for diloco) and at the end.

The learning rate warms up over 64 steps, then follows a cosine to 10 % at --budget steps and stays
there; --steps may go past the budget (up to twice), and --target stops a run once its validation
loss reaches it, after the budget.
"""
import argparse
import json
import math
import os
import time

import torch
import torch.distributed as dist
from torch import nn

from byte_lm import VOCAB, ByteLM
from text_corpus import batch, validation_windows

BATCH, SEQ, LR, WARMUP = 16, 64, 2e-3, 64
# --model: the measurements' LM, and a small one for the CI test (test_lowcomm_training.py).
MODELS = {"1.26M": dict(dim=128, layers=6, heads=4), "0.14M": dict(dim=64, layers=2, heads=4)}


def learning_rate(step, budget):
    if step <= WARMUP:
        return LR * step / WARMUP
    progress = min(1.0, (step - WARMUP) / max(1, budget - WARMUP))
    return LR * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * progress)))


def link_tx_bytes():
    try:
        with open("/sys/class/net/eth0/statistics/tx_bytes") as f:
            return int(f.read())
    except OSError:
        return None


def qccl_wire_bytes(group=None):
    """Bytes this rank's qccl collectives on `group` (None: the default one) have sent so far
    (qcclCommWireBytes)."""
    from qccl.torch import _C
    from qccl.torch._keys import qccl_backend
    return _C.wire_bytes(qccl_backend(group))[0]


def zero2(model, opt, args):
    """DeepSpeed's ZeRO-2 engine around `model` and the AdamW `opt` (its wrapped optimizer keeps
    the param groups the schedule sets); parameters by their changes with --param-codec."""
    import deepspeed
    config = {"train_micro_batch_size_per_gpu": args.batch, "gradient_clipping": 1.0,
              "zero_optimization": {"stage": 2}, "zero_allow_untested_optimizer": True,
              "steps_per_print": 1_000_000}
    engine, optimizer, _, _ = deepspeed.initialize(model=model, optimizer=opt, config=config)
    if args.param_codec:
        import qccl.torch
        qccl.torch.compress_zero_parameters(engine, codec=args.param_codec,
                                            changes=not args.param_values)
    return engine, optimizer


def fsdp2(model, args):
    """Shards `model` with FSDP2 and returns its AdamW (made over the sharded parameters)."""
    from torch.distributed.fsdp import fully_shard
    for block in model.blocks:
        fully_shard(block)
    fully_shard(model)
    if args.param_codec:
        import qccl.torch
        qccl.torch.compress_fsdp(model, reduce_scatter=False, parameter_changes=args.param_codec)
    return torch.optim.AdamW(model.parameters(), lr=LR, betas=(0.9, 0.95), weight_decay=0.1)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("mode", choices=["ddp", "diloco", "local", "zero2", "fsdp2", "scape"])
    p.add_argument("out")
    p.add_argument("--backend", default="qccl", choices=["gloo", "qccl"])
    p.add_argument("--steps", type=int, default=1024)
    p.add_argument("--budget", type=int, default=None, help="the schedule's length (--steps)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--eval-every", type=int, default=32, help="0: only at the end")
    p.add_argument("--eval-windows", type=int, default=256)
    p.add_argument("--target", type=float, default=None)
    p.add_argument("--sync-every", type=int, default=16)
    p.add_argument("--outer", default="nesterov")
    p.add_argument("--outer-lr", type=float, default=None)
    p.add_argument("--codec", default=None)
    p.add_argument("--ef-decay", type=float, default=None)
    p.add_argument("--fragments", type=int, default=1)
    p.add_argument("--overlap", default="0", help="0, 1 (one round late) or a step count")
    p.add_argument("--timed-from", type=int, default=2, help="link bytes counted from this step")
    p.add_argument("--model", default="1.26M", choices=list(MODELS))
    p.add_argument("--batch", type=int, default=BATCH)
    p.add_argument("--param-codec", default=None, help="zero2 over qccl: the parameters' changes")
    p.add_argument("--density", type=float, default=1.0, help="scape: the masks' density")
    p.add_argument("--outside", default="hold", choices=("hold", "local"),
                   help="scape: the coordinates outside the mask between their updates")
    p.add_argument("--local-beta1", type=float, default=None,
                   help="scape --outside local: the local moves' first-moment β1")
    p.add_argument("--density-warmup", type=int, default=0,
                   help="scape: the steps over which the masks' density falls from 1")
    p.add_argument("--local-lr-scale", type=float, default=1.0,
                   help="scape --outside local: the local moves' learning rate, a fraction of lr")
    p.add_argument("--param-values", action="store_true",
                   help="zero2: the parameters themselves in --param-codec (ZeRO++'s qwZ)")
    args = p.parse_args()
    budget = args.budget or args.steps
    torch.set_num_threads(1)
    if args.backend == "qccl":
        import qccl.torch
    dist.init_process_group(args.backend)
    rank = dist.get_rank()
    torch.manual_seed(args.seed)
    model = ByteLM(**MODELS[args.model], context=SEQ)
    opt = torch.optim.AdamW(model.parameters(), lr=LR, betas=(0.9, 0.95), weight_decay=0.1)
    trained = model
    outer = None
    if args.mode == "ddp":
        trained = nn.parallel.DistributedDataParallel(model, bucket_cap_mb=100)
        if args.backend == "qccl":
            qccl.torch.register_ddp_hook(trained)
    elif args.mode == "diloco":
        overlap = {"0": False, "1": True}.get(args.overlap, None)
        outer = qccl.torch.DiLoCo(model, opt, args.sync_every, args.outer, outer_lr=args.outer_lr,
                                  codec=args.codec, ef_decay=args.ef_decay,
                                  fragments=args.fragments,
                                  overlap=int(args.overlap) if overlap is None else overlap)
    counted = None  # the group whose bytes count: DeepSpeed's data-parallel one for zero2
    if args.mode == "zero2":
        trained, opt = zero2(model, opt, args)
        counted = trained.optimizer.real_dp_process_group[0]
    elif args.mode == "fsdp2":
        opt = fsdp2(model, args)
    elif args.mode == "scape":
        opt = qccl.torch.ScapeAdamW(model.parameters(), lr=LR, betas=(0.9, 0.95),
                                    weight_decay=0.1, density=args.density, codec=args.codec,
                                    param_codec=args.param_codec, outside=args.outside,
                                    local_beta1=args.local_beta1,
                                    local_lr_scale=args.local_lr_scale,
                                    density_warmup=args.density_warmup)
    evaluating = rank == 0 or args.mode == "fsdp2"
    windows = validation_windows(args.eval_windows, SEQ) if evaluating else None

    def validate():
        if args.mode == "scape" and args.outside == "local":  # the model every rank agrees on
            own = opt.flat.clone()
            opt.use_synchronized()
            loss = model.validation_loss(windows)
            opt.flat.copy_(own)
            return loss
        if outer is None:
            return model.validation_loss(windows)
        replica = [q.detach().clone() for q in model.parameters()]
        outer.load_global_into_model()
        loss = model.validation_loss(windows)
        with torch.no_grad():
            for q, r in zip(model.parameters(), replica):
                q.copy_(r)
        return loss

    wire_start = qccl_wire_bytes(counted) if args.backend == "qccl" else None
    wire_budget = param_budget = None
    losses, times, validation = {}, {}, {}
    tx_start = tx_end = None
    step = 0
    while step < args.steps:
        step += 1
        if step == args.timed_from:
            tx_start = link_tx_bytes()
        started = time.perf_counter()
        for group in opt.param_groups:
            group["lr"] = learning_rate(step, budget)
        inputs, targets = batch(step, rank, args.batch, SEQ, args.seed)
        if args.mode == "zero2":  # DeepSpeed clips (its config) and zeroes the gradients
            loss = nn.functional.cross_entropy(trained(inputs).reshape(-1, VOCAB),
                                               targets.reshape(-1))
            trained.backward(loss)
            trained.step()
        else:
            opt.zero_grad()
            if args.mode == "ddp":
                loss = nn.functional.cross_entropy(trained(inputs).reshape(-1, VOCAB),
                                                   targets.reshape(-1))
            else:
                loss = model.loss(inputs, targets)
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
        times[step] = time.perf_counter() - started
        losses[step] = loss.item()
        if step == budget and wire_start is not None:  # the budget's traffic, its last sync in
            wire_budget = qccl_wire_bytes(counted) - wire_start
            if args.mode in ("zero2", "fsdp2") and args.param_codec:
                param_budget = qccl.torch.changes_sent_bytes(counted)
        if step == args.steps:
            tx_end = link_tx_bytes()
        if not math.isfinite(losses[step]):
            raise SystemExit(f"rank {rank} step {step}: loss {losses[step]}")
        last = step == args.steps
        if last and outer is not None:  # every rank, before any other collective
            outer.finish()
        if evaluating and (last or (args.eval_every and step % args.eval_every == 0)):
            validation[step] = validate()
        reached = args.target is not None and rank == 0 and step in validation and \
            validation[step] <= args.target and step >= budget
        if args.target is not None and step >= budget and step % args.eval_every == 0:
            # Every rank learns whether rank 0 reached the target (a tensor of one flag).
            flag = torch.tensor([1 if reached else 0], dtype=torch.int32)
            dist.broadcast(flag, src=0)
            if flag.item():
                break
    if outer is not None:
        outer.finish()
        if rank == 0 and step not in validation:
            validation[step] = validate()
    result = {"losses": losses, "times": times, "validation": validation, "steps": step,
              "budget": budget,
              "link_tx_bytes": None if tx_start is None or tx_end is None else tx_end - tx_start,
              "timed_steps": step - args.timed_from + 1}
    if wire_budget is not None:
        result["wire_sent_budget"] = int(wire_budget)
    if param_budget is not None:
        result["param_sent_budget"] = int(param_budget)
    with open(f"{args.out}.rank{rank}.json", "w") as f:
        json.dump(result, f)
    dist.barrier()  # no rank tears its group down while another still uses it
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
