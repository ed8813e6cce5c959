"""One process of an elastic training run (perf/elastic_training, test_elastic.py): the byte-level LM
of lowcomm_worker.py on the standard library's sources, AdamW inner steps, over a
qccl.torch.ElasticWorld; --loop diloco (the default): a qccl.torch.DiLoCo outer loop
(elastic=True); --loop ddp: DistributedDataParallel with qccl's DDP hook, every step.

A first member (RANK, WORLD_SIZE, MASTER_ADDR/PORT: the driver hosts the store) trains from step 1;
with --joiner the process asks to join and trains from the step the group hands it. Each inner
step samples its batch by (step, rank in the current world). --kill-rank R --kill-step S: the
member of that first rank SIGKILLs itself as step S begins (for diloco S is a synchronisation, a
multiple of --sync-every), so the others lose it inside their allreduce (diloco: the round's; ddp:
the backward's); they shrink, regroup and go on (diloco: the round is redone; ddp: step S is).
--admit-step T: after step T (a synchronisation) the members wait for one process to ask and admit
it (its first step is then T + 1).

After a change, diloco's regroup() hands the global state over (and rank 0's AdamW state to a new
rank); ddp's is the script's own: a new DistributedDataParallel (its constructor broadcasts rank 0's
parameters), then rank 0's step counter and AdamW state (qccl.torch.broadcast_optimizer_state).

Each process writes OUT.<pid>.json: its training losses, each step's wall-clock (seconds, the
synchronisation and any change at it included), the changes it went through (what, when, the size
after, seconds taken), the digest of the global parameters after its last step, and, on
the process that is rank 0 at the end, the validation loss of the global parameters.
"""
import argparse
import gc
import hashlib
import json
import os
import signal
import sys
import time

import torch
import torch.distributed as dist
from torch import nn

import qccl.torch
from byte_lm import VOCAB, ByteLM
from lowcomm_worker import BATCH, LR, MODELS, SEQ, learning_rate
from text_corpus import batch, validation_windows


def main():
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("--joiner", action="store_true")
    p.add_argument("--loop", choices=["diloco", "ddp"], default="diloco")
    p.add_argument("--steps", type=int, default=512)
    p.add_argument("--sync-every", type=int, default=16)
    p.add_argument("--outer", default="sparseloco")
    p.add_argument("--outer-lr", type=float, default=None)
    p.add_argument("--codec", default=None)
    p.add_argument("--ef-decay", type=float, default=None)
    p.add_argument("--model", default="1.26M", choices=list(MODELS))
    p.add_argument("--batch", type=int, default=BATCH)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--eval-windows", type=int, default=256)
    p.add_argument("--kill-rank", type=int, default=None)
    p.add_argument("--kill-step", type=int, default=None)
    p.add_argument("--admit-step", type=int, default=None)
    args = p.parse_args()
    torch.set_num_threads(1)
    store = dist.TCPStore(os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"]),
                          is_master=False)
    torch.manual_seed(args.seed)
    model = ByteLM(**MODELS[args.model], context=SEQ)
    opt = torch.optim.AdamW(model.parameters(), lr=LR, betas=(0.9, 0.95), weight_decay=0.1)
    started = time.perf_counter()
    if args.joiner:
        world = qccl.torch.ElasticWorld.join(store)
        first_rank = None
    else:
        first_rank = int(os.environ["RANK"])
        dist.init_process_group("qccl", store=dist.PrefixStore("init/", store), rank=first_rank,
                                world_size=int(os.environ["WORLD_SIZE"]))
        world = qccl.torch.ElasticWorld(store)
    trainer = (DiLoCoLoop if args.loop == "diloco" else DDPLoop)(model, opt, args)
    losses, times, changes = {}, {}, []

    def note(step):
        for h in world.history[len(changes):]:
            changes.append(dict(h, step=step, at=round(time.perf_counter() - started, 3)))

    step = trainer.steps_done()
    note(step)
    while step < args.steps:
        step += 1
        step_started = time.perf_counter()
        if first_rank == args.kill_rank and step == args.kill_step:
            os.kill(os.getpid(), signal.SIGKILL)
        for group in opt.param_groups:
            group["lr"] = learning_rate(step, args.steps)
        inputs, targets = batch(step, world.rank, args.batch, SEQ, args.seed)
        try:
            losses[step] = trainer.train(inputs, targets)
        except RuntimeError as e:
            print(f"rank {world.rank}, step {step}: {e}", file=sys.stderr, flush=True)
            world.shrink()
            trainer.regroup()
            step = trainer.steps_done()
        if step == args.admit_step and world.admit(wait_for=1):
            trainer.regroup()
        times[step] = round(time.perf_counter() - step_started, 4)
        note(step)
    theta = torch.cat([t.reshape(-1) for t in trainer.finish()])
    result = {"first_rank": first_rank, "rank": world.rank, "size": world.size, "losses": losses,
              "times": times, "changes": changes, "steps": step,
              "theta_digest": hashlib.blake2b(theta.numpy().tobytes(), digest_size=8).hexdigest()}
    if world.rank == 0:
        result["validation"] = model.validation_loss(validation_windows(args.eval_windows, SEQ))
    with open(f"{args.out}.{os.getpid()}.json", "w") as f:
        json.dump(result, f)
    dist.barrier()
    dist.destroy_process_group()


class DiLoCoLoop:
    """AdamW inner steps, a DiLoCo outer loop every --sync-every (its post-step hook)."""

    def __init__(self, model, opt, args):
        self.model, self.opt = model, opt
        self.outer = qccl.torch.DiLoCo(model, opt, args.sync_every, outer=args.outer,
                                       outer_lr=args.outer_lr, codec=args.codec,
                                       ef_decay=args.ef_decay, elastic=True, joining=args.joiner)

    def steps_done(self):
        return self.outer.step

    def train(self, inputs, targets):
        """One inner step; raises RuntimeError when its synchronisation lost a peer."""
        self.opt.zero_grad()
        loss = self.model.loss(inputs, targets)
        loss.backward()
        nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
        self.opt.step()  # every sync_every-th step also synchronises
        return loss.item()

    def regroup(self):
        self.outer.regroup()

    def finish(self):
        """The global parameters; the model holds them afterwards (for validation)."""
        self.outer.finish()
        self.outer.load_global_into_model()
        return self.outer.global_parameters()


class DDPLoop:
    """DistributedDataParallel with qccl's hook; after a change it is made again and rank 0's
    AdamW state and step counter handed over (a new rank's optimizer has none yet)."""

    def __init__(self, model, opt, args):
        self.model, self.opt, self.step = model, opt, 0
        self._make()
        if args.joiner:
            self._hand_over()

    def _make(self):
        self.ddp = None
        gc.collect()  # the old DDP's reducer, and its hooks on the parameters, go first
        self.ddp = nn.parallel.DistributedDataParallel(self.model, bucket_cap_mb=100)
        qccl.torch.register_ddp_hook(self.ddp)

    def _hand_over(self):
        counter = torch.tensor([self.step])
        dist.broadcast(counter, group_src=0)
        self.step = int(counter)
        qccl.torch.broadcast_optimizer_state(self.opt)

    def steps_done(self):
        return self.step

    def train(self, inputs, targets):
        """One step; raises RuntimeError when its backward's allreduce lost a peer."""
        self.opt.zero_grad()
        loss = nn.functional.cross_entropy(self.ddp(inputs).reshape(-1, VOCAB),
                                           targets.reshape(-1))
        loss.backward()
        nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
        self.opt.step()
        self.step += 1
        return loss.item()

    def regroup(self):
        self._make()
        self._hand_over()

    def finish(self):
        return [p.detach() for p in self.model.parameters()]

if __name__ == "__main__":
    main()
