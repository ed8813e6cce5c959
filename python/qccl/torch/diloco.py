"""Low-communication outer loops around an unchanged training loop: DiLoCo, SparseLoCo and
Streaming DiLoCo (docs/INTEGRATION.md, "Outer loops").

    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    outer = qccl.torch.DiLoCo(model, opt, sync_every=16, outer="sparseloco")
    for batch in data:                     # the loop stays as it was
        model.loss(batch).backward()
        opt.step()                         # every 16th step also synchronises (a post-step hook)
        opt.zero_grad()
    outer.finish()                         # applies what is still in flight

Every worker trains its own replica with the inner optimizer; every H inner steps a fragment of
the parameters is synchronised. With θ the global parameters (the same bits on every rank) and θ_r
this worker's replica, the pseudo-gradient is Δ_r = θ − θ_r, and the workers average it with one
qccl allreduce (Avg, the codec of the outer rule, error feedback under a key per fragment):

- "nesterov" (DiLoCo): Δ̄ = allreduce(Δ_r); m ← μ·m + Δ̄; θ ← θ − lr·(Δ̄ + μ·m): outer SGD with
  Nesterov momentum, as torch.optim.SGD(nesterov=True) computes it. Any codec: exact (the
  default), int8, int4 with error feedback, ...
- "sparseloco": the worker's residual e is its accumulator. The allreduce encodes
  p = Δ_r + β·e (qccl's error-feedback decay β), sends the codec's top-k of p (2-bit values by
  default) and keeps e ← p − sent; its result is the mean of what the workers sent, and
  θ ← θ − lr·mean. No other momentum. With the group's algorithm "gather" the mean is exactly
  (1/n)·Σ sent; with "sra" each chunk's owner sparsifies the sum again (its own residual, decayed
  alike) and the ranks send half as many bytes at 4 ranks (docs/ALGORITHMS.md).

After the outer step the replica restarts from θ: θ_r ← θ. The inner optimizer's state is kept.

fragments=F splits the parameters (in model order) into F fragments of about equal size;
fragment f synchronises at inner steps ⌊(f+1)·H/F⌋ + k·H, so some fragment moves every H/F steps
(Streaming DiLoCo). overlap=True lets a fragment's allreduce run during the next H inner steps
and applies it one round late, at the fragment's next synchronisation (overlap=τ: τ inner steps
after it starts, 1 ≤ τ ≤ H); the replica then keeps the progress it made meanwhile:
θ_r ← θ + (θ_r − θ_r at the start of the allreduce). The step at which each update lands is fixed,
not "whenever the bytes arrive", so a run gives the same bits every time.

check_replicas=True (the default) compares a hash of each fragment's θ across the ranks after
every update (with overlap, by the fragment's next update) and raises RuntimeError on every rank
when one differs. state_dict() holds θ, the
outer momentum, what is in flight, the step counter and the group's error-feedback residuals (the
sparseloco accumulators): with the model's and the inner optimizer's state dicts, a run resumed
from it continues bit for bit.
"""
import hashlib
import os
from typing import Optional, Union

import torch
import torch.distributed as dist

from . import _C
from ._keys import key_of, qccl_backend
from .ef_state import ef_state, load_ef_state

OUTER_RULES = ("nesterov", "sparseloco")


def _fragments(params, count):
    """count contiguous groups of params (model order) of about equal element counts."""
    if not 1 <= count <= len(params):
        raise ValueError(f"DiLoCo: fragments={count}: must be between 1 and the number of "
                         f"parameters ({len(params)})")
    total = sum(p.numel() for p in params)
    groups, current, filled = [], [], 0
    for i, p in enumerate(params):
        current.append(p)
        filled += p.numel()
        left_groups = count - len(groups) - 1
        left_params = len(params) - i - 1
        if left_groups and (filled * count >= total * (len(groups) + 1) or
                            left_params == left_groups):
            groups.append(current)
            current = []
    groups.append(current)
    return groups


class _Fragment:
    """One synchronised group of parameters: its global copy θ (flat fp32), outer momentum, and
    the allreduce in flight."""

    def __init__(self, index, params, offset):
        self.index = index
        self.params = params
        self.offset = offset  # the fragment's first synchronisation step
        self.theta = torch.cat([p.detach().reshape(-1).float() for p in params])
        self.momentum = None  # nesterov, after the first update
        self.last_round = None  # elastic: what undoes the last update (DiLoCo.regroup)
        self.pending = None   # the allreduce: {"work", "delta", "snapshot", "apply_at"}
        self.check = None     # the replica check in flight: (work, hashes, step)

    def local(self):
        return torch.cat([p.detach().reshape(-1).float() for p in self.params])

    def write_local(self, flat):
        offset = 0
        with torch.no_grad():
            for p in self.params:
                n = p.numel()
                p.copy_(flat[offset:offset + n].view_as(p))
                offset += n


class DiLoCo:
    def __init__(self, model: torch.nn.Module, inner_optimizer: torch.optim.Optimizer,
                 sync_every: int, outer: str = "nesterov", *, outer_lr: Optional[float] = None,
                 outer_momentum: float = 0.9, codec: Optional[str] = None,
                 ef_decay: Optional[float] = None, fragments: int = 1,
                 overlap: Union[bool, int] = False, check_replicas: bool = True, group=None,
                 name: str = "diloco", elastic: bool = False, joining: bool = False):
        if outer not in OUTER_RULES:
            raise ValueError(f"DiLoCo: outer={outer!r} is not one of {OUTER_RULES}")
        if not isinstance(sync_every, int) or sync_every < 1:
            raise ValueError(f"DiLoCo: sync_every={sync_every!r} must be a positive integer")
        if fragments > sync_every:
            raise ValueError(f"DiLoCo: fragments={fragments} exceeds sync_every={sync_every}")
        delay = sync_every if overlap is True else int(overlap)
        if overlap is not False and not 1 <= delay <= sync_every:
            raise ValueError(f"DiLoCo: overlap={overlap!r}: True or 1 to sync_every steps")
        if outer == "sparseloco" and os.environ.get("QCCL_EF") == "0":
            raise ValueError("DiLoCo: sparseloco keeps its accumulator in qccl's error-feedback "
                             "residuals, and QCCL_EF=0 turns them off")
        self.outer = outer
        self.sync_every = sync_every
        self.delay = delay if overlap is not False else 0
        self.outer_lr = outer_lr if outer_lr is not None else (0.7 if outer == "nesterov" else 1.0)
        self.outer_momentum = outer_momentum
        self.codec = codec if codec is not None else ("topk0.02+int2" if outer == "sparseloco"
                                                      else "none")
        # sparseloco's β; nesterov leaves the group's (QCCL_EF_DECAY, default 1) unless given.
        self.ef_decay = ef_decay if ef_decay is not None or outer != "sparseloco" else 0.9
        self.check_replicas = check_replicas
        # Elastic runs keep what undoes each fragment's last update (its θ and momentum before, the
        # replica it started from: three copies of the parameters), so that regroup() can redo a
        # round that some survivors finished and others did not.
        self.keep_last_round = elastic
        self.group = group if group is not None else dist.group.WORLD
        self.name = name
        self.step = 0
        params = [p for p in model.parameters() if p.requires_grad]
        if not params:
            raise ValueError("DiLoCo: the model has no trainable parameters")
        self.device = params[0].device
        self.backend = qccl_backend(self.group, self.device)
        if not joining:
            with torch.no_grad():  # every replica starts from rank 0's parameters
                for p in params:
                    dist.broadcast(p.data, group_src=0, group=self.group)
        self.fragments = [
            _Fragment(f, g, ((f + 1) * sync_every) // fragments)
            for f, g in enumerate(_fragments(params, fragments))]
        self.inner_optimizer = inner_optimizer
        if joining:
            self.keep_last_round = True
            self._redo_failed_rounds()
            self._hand_over(joining=True)
        self._hook = inner_optimizer.register_step_post_hook(lambda *_: self._after_step())

    # ---- the schedule ------------------------------------------------------------------------

    def _after_step(self):
        self.step += 1
        for f in self.fragments:
            if f.pending is not None and f.pending["apply_at"] == self.step:
                self._land(f)
        for f in self.fragments:
            if self.step >= f.offset and (self.step - f.offset) % self.sync_every == 0:
                self._start(f)

    def _start(self, f):
        snapshot = f.local()
        delta = f.theta - snapshot
        work = _C.all_reduce(self.backend, delta, dist.ReduceOp.AVG,
                             self._key(f), codec=self.codec,
                             ef_decay=self.ef_decay, any_size=True)
        f.pending = {"work": work, "delta": delta, "snapshot": snapshot,
                     "apply_at": self.step + self.delay}
        if self.delay == 0:
            self._land(f)

    def _key(self, f):
        return key_of(f"{self.name}.fragment{f.index}")

    def _land(self, f):
        """Waits for the fragment's allreduce, applies the outer rule to θ and moves the replica
        onto it (keeping what it trained since the allreduce started, with overlap)."""
        pending = f.pending
        if pending["work"] is not None:
            pending["work"].wait()  # raises when a peer is lost: the round stays for regroup()
        f.pending = None
        self._resolve_check(f)
        if self.keep_last_round:
            f.last_round = {"snapshot": pending["snapshot"], "theta": f.theta.clone(),
                            "momentum": None if f.momentum is None else f.momentum.clone()}
        self._outer_step(f, pending["delta"])
        if self.check_replicas:
            self._start_check(f)
            if not self.delay:
                self._resolve_check(f)
        if self.delay:
            f.write_local(f.theta + (f.local() - pending["snapshot"]))
        else:
            f.write_local(f.theta)

    def _outer_step(self, f, average):
        if self.outer == "sparseloco":
            f.theta.add_(average, alpha=-self.outer_lr)
            return
        # torch.optim.SGD(momentum=μ, nesterov=True, dampening=0), step for step.
        if f.momentum is None:
            f.momentum = average.clone()
        else:
            f.momentum.mul_(self.outer_momentum).add_(average)
        f.theta.add_(average.add(f.momentum, alpha=self.outer_momentum), alpha=-self.outer_lr)

    def _start_check(self, f):
        """Gathers every rank's hash of the fragment's θ. With overlap the comparison waits until
        the fragment's next landing: the gather queues behind allreduces still in flight, and
        waiting for it now would wait for them."""
        digest = hashlib.blake2b(f.theta.cpu().numpy().tobytes(), digest_size=8).digest()
        mine = torch.tensor([int.from_bytes(digest, "little", signed=True)], dtype=torch.int64,
                            device=self.device)
        hashes = torch.empty(dist.get_world_size(self.group), dtype=torch.int64,
                             device=self.device)
        work = dist.all_gather_into_tensor(hashes, mine, group=self.group, async_op=True)
        f.check = (work, hashes, self.step)

    def _resolve_check(self, f):
        if f.check is None:
            return
        (work, hashes, step), f.check = f.check, None
        work.wait()
        values = hashes.tolist()
        differ = [r for r, h in enumerate(values) if h != values[0]]
        if differ:
            raise RuntimeError(
                f"DiLoCo: the global parameters of fragment {f.index} differ across ranks after "
                f"the update of inner step {step}: group ranks {differ} disagree with rank 0 (a "
                f"replica diverged: resumed from another checkpoint, or changed outside the outer "
                f"loop)")

    # ---- elastic membership (qccl.torch.ElasticWorld) ------------------------------------

    def regroup(self, group=None):
        """After the world changed (ElasticWorld.shrink or admit), every member calls it at the
        same point, and every new rank makes its DiLoCo there with joining=True (both need
        elastic=True from the start). A round whose allreduce failed on any survivor (the lost
        peer's) runs again over the new group, from the same replicas (the survivors keep what
        they trained; those that had finished it undo it first); then rank 0 hands θ, the outer
        momentum and the step counter to every rank (checked by hash) and every replica restarts
        from θ; when new ranks joined, they take rank 0's inner optimizer state too (the members
        keep theirs). Each member's sparseloco accumulator (its worker error-feedback residuals)
        carries over into the new communicator, except a redone round's: it holds that round's Δ
        where the round finished and half an update where it failed, so it starts from zero on
        every member, as everything does on a new rank (docs/ERROR_FEEDBACK.md, "Across a shrink
        or a grow")."""
        if not self.keep_last_round:
            raise RuntimeError("DiLoCo.regroup: make the loop with elastic=True")
        self.group = group if group is not None else dist.group.WORLD
        self.backend = qccl_backend(self.group, self.device)
        self._redo_failed_rounds()
        self._hand_over()

    def _redo_failed_rounds(self):
        """Every rank of the new group learns which fragments' rounds failed anywhere, and they
        redo those together."""
        if self.delay:
            raise RuntimeError("DiLoCo: elastic membership is not supported with overlap (a "
                               "round in flight on the old group cannot be redone)")
        failed = torch.tensor([f.pending is not None for f in self.fragments], dtype=torch.int64)
        dist.all_reduce(failed, op=dist.ReduceOp.MAX, group=self.group)
        for f, redo in zip(self.fragments, failed.tolist()):
            f.check = None  # its gather ran on the old group
            if not redo:
                continue
            if f.pending is None and f.last_round is None:  # a new rank: no round to redo
                raise RuntimeError("DiLoCo: a round failed on the members before this rank "
                                   "joined (the members regroup() after a shrink, then admit)")
            if f.pending is None:  # finished here, failed elsewhere: undo it
                f.theta, f.momentum = f.last_round["theta"], f.last_round["momentum"]
                f.write_local(f.last_round["snapshot"])
            else:
                f.write_local(f.pending["snapshot"])
                f.pending = None
            _C.reset_ef(self.backend, self._key(f))
            self._start(f)

    def _hand_over(self, joining=False):
        """Rank 0's θ, outer momentum and step counter to every rank of the group (collective);
        the replicas restart from θ. New ranks take rank 0's inner optimizer state: with none,
        AdamW's first steps are full-size (bias correction at step 1) and pull their replica far
        from the others' (perf/elastic_training measured the churn run with and without)."""
        from .elastic import broadcast_optimizer_state, broadcast_state

        joined = torch.tensor([int(joining)], dtype=torch.int64)
        dist.all_reduce(joined, op=dist.ReduceOp.MAX, group=self.group)
        if joined.item():
            broadcast_optimizer_state(self.inner_optimizer, group=self.group, keep=not joining)

        header = torch.tensor([self.step] + [f.momentum is not None for f in self.fragments],
                              dtype=torch.int64)
        dist.broadcast(header, group_src=0, group=self.group)
        self.step = int(header[0])
        state = {}
        for f, has_momentum in zip(self.fragments, header[1:].tolist()):
            state[f"theta{f.index}"] = f.theta
            if has_momentum:
                if f.momentum is None:
                    f.momentum = torch.empty_like(f.theta)
                state[f"momentum{f.index}"] = f.momentum
            else:
                f.momentum = None
        broadcast_state(state, group=self.group)
        for f in self.fragments:
            f.write_local(f.theta)

    # ---- what users call -----------------------------------------------------------------

    def finish(self):
        """Waits for every allreduce in flight and applies it (overlap), now, and for every
        replica check."""
        for f in self.fragments:
            if f.pending is not None:
                self._land(f)
        for f in self.fragments:
            self._resolve_check(f)

    def global_parameters(self):
        """θ as a list of tensors shaped like the model's parameters (copies)."""
        out = []
        for f in self.fragments:
            offset = 0
            for p in f.params:
                out.append(f.theta[offset:offset + p.numel()].view_as(p).to(p.dtype).clone())
                offset += p.numel()
        return out

    def load_global_into_model(self):
        """Writes θ into the model's parameters (for evaluation, or the end of training)."""
        for f in self.fragments:
            f.write_local(f.theta)

    def state_dict(self):
        fragments = []
        for f in self.fragments:
            self._resolve_check(f)
            pending = None
            if f.pending is not None:
                if f.pending["work"] is not None:
                    f.pending["work"].wait()
                    f.pending["work"] = None
                pending = {k: v for k, v in f.pending.items() if k != "work"}
            fragments.append({"theta": f.theta.clone(), "momentum": f.momentum,
                              "pending": pending})
        return {"outer": self.outer, "sync_every": self.sync_every, "fragments": fragments,
                "step": self.step, "ef_state": ef_state(self.group)}

    def load_state_dict(self, state):
        if (state["outer"], state["sync_every"], len(state["fragments"])) != (
                self.outer, self.sync_every, len(self.fragments)):
            raise ValueError(
                f"DiLoCo: the state is of outer={state['outer']!r}, sync_every="
                f"{state['sync_every']}, {len(state['fragments'])} fragments; this loop has "
                f"{self.outer!r}, {self.sync_every}, {len(self.fragments)}")
        for f, s in zip(self.fragments, state["fragments"]):
            if s["theta"].numel() != f.theta.numel():
                raise ValueError(f"DiLoCo: fragment {f.index} holds {f.theta.numel()} elements, "
                                 f"the state {s['theta'].numel()}")
            f.theta = s["theta"].to(self.device).clone()
            f.momentum = None if s["momentum"] is None else s["momentum"].to(self.device).clone()
            f.pending = None
            if s["pending"] is not None:
                f.pending = {k: (v.to(self.device).clone() if torch.is_tensor(v) else v)
                             for k, v in s["pending"].items()}
                f.pending["work"] = None
        self.step = state["step"]
        load_ef_state(state["ef_state"], self.group)
