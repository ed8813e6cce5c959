"""ScapeAdamW: ZeRO-1-style sharded AdamW with SCAPE-style shared-mask sparse gradients (arXiv
2607.01678) over a qccl group (docs/INTEGRATION.md, "SCAPE-style sparse sharded AdamW").

    opt = qccl.torch.ScapeAdamW(model.parameters(), lr=2e-3, density=0.01, codec="int4")
    for batch in data:
        model.loss(*batch).backward(); opt.step(); opt.zero_grad()

The trainable parameters live in one flat fp32 buffer that every rank holds the same (the model's
parameters become views into it), split into one shard per rank. Rank r owns shard r: its exact
fp32 values, AdamW's moments, its own gradient's second moment q and each coordinate's last update
step. A step t, with M the mask every rank holds (chosen by the owners one step earlier; all of it
at the first step):

1. a ← a + g, this rank's flat gradient added to its accumulator of what it has not sent yet;
   on the owned shard q ← β2·q + (1−β2)·g², the second moment of this rank's own gradient;
2. ĝ = masked reduce-scatter of a under M (Avg, `codec`, qccl's error feedback for the codec's
   error), a[M] ← 0: a coordinate outside the mask keeps its gradient in a until it is sent, so
   ĝ is the sum of the group's mean gradients over the k steps since the coordinate last moved;
3. on the owned shard, at the masked coordinates only, the k steps taken at once with the mean
   gradient ĝ/k (at density 1, k = 1: AdamW's equations):
   m ← β1^k·m + (1−β1^k)·ĝ/k;   v ← β2^k·v + (1−β2^k)·(ĝ/k)²;
   v̂ = (v + (1 − 1/k)·q/N) / (1−β2^t)   (N ranks);
   θ ← θ·Π(1 − lr_s·λ) − Σlr_s·(m / (1−β1^t)) / (√v̂ + ε),   s over the k steps missed;
   outside the mask m, v and θ stay as they are, to be caught up when the coordinate is sent.
   The missed steps' own learning rates, not k times the present one: under a schedule's warm-up
   that would move a coordinate too far, under its decay not far enough;
   Why v̂: AdamW's v estimates the group's mean gradient's second moment per step, μ² + σ²; the
   mean of k steps' means has μ² + σ²/k, which alone would let pure noise move k steps, and the
   σ² it averaged away comes from q: the ranks' batches are independent, so one rank's own
   gradient has N·σ² of noise and q/N ≈ μ²/N + σ². A catch-up then moves a steady coordinate k
   steps and a noisy one √k, as AdamW would over the same k steps;
4. the next mask: on the owned shard, the ⌈d·S⌉ largest (|a| + w·|m̂|) / (√v̂ + ε) with w
   the steps the coordinate will have waited (`_score`): how far its catch-up would move it, the
   first moment (the group's) predicting the steady part, a (this rank's) what is new; sent to
   every rank in the background (qcclMaskExchangeStart) and applied at the next step. d is
   `density`, or over the first W = `density_warmup` steps density^(t/W), from 1 down
   geometrically (deep gradient compression's warm-up, arXiv 1712.01887): the first steps, where
   every coordinate moves far, send more of them;
5. the parameters: each owner's change under M, θ − replica, by the masked all-gather
   (`param_codec`; exact: the values themselves), added to every rank's replica, so that the
   replica stays bitwise the same on every rank and what a codec left out goes with a later step;
6. outside="hold" (the default): the replica is the model's parameters, every rank's the same.
   outside="local": the model's parameters w are this rank's own; every coordinate outside M moves
   on by AdamW on this rank's gradient g alone, with moments of its own over the whole vector
   and their own β1' (`local_beta1`; None: β1) and rate lr' = lr·`local_lr_scale`,
   m' ← β1'·m' + (1−β1')·g;  v' ← β2·v' + (1−β2)·g²;
   w ← w·(1 − lr'·λ) − lr'·(m' / (1−β1'^t)) / (√(v' / (1−β2^t)) + ε)   outside M,
   w ← replica   under M,
   so that the next gradients are taken at a point that has moved since a coordinate's last
   update (at 99 % sparsity a coordinate waits about a hundred steps) rather than where it
   stood; what a rank moved on its own is replaced by the group's value at the coordinate's next
   update. A smaller β1' follows the present gradient more closely: the moves are replaced at
   the next update, so they need not average a longer history; a smaller lr' keeps the noise
   of a quarter of the batch from carrying a rank far. The ranks' parameters differ
   outside the mask; `synchronized` is the replica, the same on every rank: the model the group
   agrees on (`use_synchronized()` loads it).
"""
import math
from typing import Iterable, Optional

import torch
import torch.distributed as dist

from . import _C
from ._keys import key_of, qccl_backend
from .ef_state import ef_state, load_ef_state

_MASK_TAG = 0x5CA9E  # the mask exchange's point-to-point tag on the group


def _bits(flags: torch.Tensor) -> torch.Tensor:
    """A bool tensor as a uint8 bitmap, element i at bit i % 8 of byte i // 8."""
    padded = torch.zeros((flags.numel() + 7) // 8 * 8, dtype=torch.uint8)
    padded[:flags.numel()] = flags.to(torch.uint8)
    weights = torch.tensor([1 << i for i in range(8)], dtype=torch.uint8)
    return (padded.view(-1, 8) * weights).sum(dim=1, dtype=torch.uint8)


def _flags(bits: torch.Tensor, count: int) -> torch.Tensor:
    """A uint8 bitmap as count bools."""
    shifts = torch.arange(8, dtype=torch.uint8)
    return ((bits.view(-1, 1) >> shifts) & 1).view(-1)[:count].bool()


class ScapeAdamW:
    """ZeRO-1-style AdamW over the qccl `group` (None: the default group) whose gradients travel
    as the values under a mask every rank knows (density: the fraction of each shard), encoded
    with `codec` (None: the group's); parameters by their changes under the same mask, encoded
    with `param_codec` (None: exact); `outside`: what the coordinates outside the mask do between
    their updates ("hold": stay, "local": move by this rank's own AdamW, its first moment at
    `local_beta1`, None: betas[0], its rate lr·`local_lr_scale`); `density_warmup`: the steps
    over which the masks' density falls from 1 to `density` (0: none). The module docstring gives
    the update."""

    def __init__(self, params: Iterable[torch.nn.Parameter], lr: float = 1e-3,
                 betas=(0.9, 0.999), eps: float = 1e-8, weight_decay: float = 0.01,
                 density: float = 0.01, codec: Optional[str] = None,
                 param_codec: Optional[str] = None, group=None, name: str = "scape",
                 outside: str = "hold", local_beta1: Optional[float] = None,
                 local_lr_scale: float = 1.0, density_warmup: int = 0):
        if not 0 < density <= 1:
            raise ValueError(f"ScapeAdamW: density must be in (0, 1], not {density}")
        if not isinstance(density_warmup, int) or density_warmup < 0:
            raise ValueError("ScapeAdamW: density_warmup is a number of steps, an int >= 0, not "
                             f"{density_warmup!r}")
        if outside not in ("hold", "local"):
            raise ValueError(f"ScapeAdamW: outside must be 'hold' or 'local', not {outside!r}")
        if local_beta1 is not None and (outside != "local" or not 0 <= local_beta1 < 1):
            raise ValueError("ScapeAdamW: local_beta1 is the local moves' (outside='local') and "
                             f"in [0, 1), not {local_beta1} with outside={outside!r}")
        if local_lr_scale != 1 and (outside != "local" or not 0 < local_lr_scale <= 1):
            raise ValueError("ScapeAdamW: local_lr_scale is the local moves' (outside='local') "
                             f"and in (0, 1], not {local_lr_scale} with outside={outside!r}")
        self.params = [p for p in params if p.requires_grad]
        if not self.params or any(p.device.type != "cpu" or p.dtype != torch.float32
                                  for p in self.params):
            raise ValueError("ScapeAdamW: trainable float32 CPU parameters (its collectives run "
                             "on host transports)")
        # param_groups: one group, so that a learning-rate schedule sets "lr" as on torch's.
        self.param_groups = [{"lr": lr}]
        self.betas, self.eps, self.weight_decay = betas, eps, weight_decay
        self.local_beta1 = betas[0] if local_beta1 is None else local_beta1
        self.local_lr_scale = local_lr_scale
        self.density, self.codec, self.param_codec = density, codec, param_codec
        self.density_warmup = density_warmup
        self.group = group
        self.backend = qccl_backend(group)
        self.rank, self.size = dist.get_rank(group), dist.get_world_size(group)
        self.keys = key_of(f"{name}.gradients"), key_of(f"{name}.parameters")
        total = sum(p.numel() for p in self.params)
        self.shard = -(-total // self.size)
        self.flat = torch.zeros(self.shard * self.size)
        # Every rank starts from rank 0's parameters; the model's parameters become views.
        offset = 0
        for p in self.params:
            self.flat[offset:offset + p.numel()].copy_(p.detach().view(-1))
            offset += p.numel()
        dist.broadcast(self.flat, src=dist.get_global_rank(group, 0) if group else 0, group=group)
        offset = 0
        for p in self.params:
            p.data = self.flat[offset:offset + p.numel()].view_as(p)
            offset += p.numel()
        own = slice(self.rank * self.shard, (self.rank + 1) * self.shard)
        self.own = own
        self.master = self.flat[own].clone()
        self.m = torch.zeros(self.shard)
        self.v = torch.zeros(self.shard)
        self.q = torch.zeros(self.shard)  # this rank's own gradient's second moment (step 1)
        self.last = torch.zeros(self.shard, dtype=torch.int64)  # step of the last update
        # The learning rates the steps ran at (step 3): row s holds the running sums, over steps
        # 1..s, of lr and of log(1 − lr·λ); grown by doubling.
        self.rate_sums = torch.zeros(64, 2, dtype=torch.float64)
        self.unsent = torch.zeros_like(self.flat)
        self.gradient = torch.zeros_like(self.flat)  # the step's flat gradient, kept between steps
        self.outside = outside
        # The replica the masked all-gathers keep, the same on every rank: the parameters
        # themselves, or beside this rank's own (step 6) with the moments they move by.
        self.synchronized = self.flat.clone() if self.local else self.flat
        if self.local:
            self.local_m, self.local_v = torch.zeros_like(self.flat), torch.zeros_like(self.flat)
        self.mask = _bits(torch.ones(self.flat.numel(), dtype=torch.bool))  # the first step: all
        self.next_mask = torch.zeros_like(self.mask)
        self.own_mask = torch.zeros((self.shard + 7) // 8, dtype=torch.uint8)
        self.exchange = None
        self.steps = 0

    @property
    def local(self) -> bool:
        return self.outside == "local"

    def zero_grad(self, set_to_none: bool = True) -> None:
        for p in self.params:
            if set_to_none:
                p.grad = None
            elif p.grad is not None:
                p.grad.zero_()

    @torch.no_grad()
    def step(self) -> None:
        t = self.steps + 1
        beta1, beta2 = self.betas
        gradient = self.gradient  # 1. what this rank has not sent yet
        offset = 0
        for p in self.params:
            part = gradient[offset:offset + p.numel()]
            if p.grad is None:
                part.zero_()
            else:
                part.copy_(p.grad.view(-1))
            offset += p.numel()
        self.unsent += gradient
        own_gradient = gradient[self.own]
        self.q = beta2 * self.q + (1 - beta2) * (own_gradient * own_gradient)
        if self.exchange is not None:  # the mask the owners chose last step
            self.exchange.wait()
            self.exchange = None
            self.mask.copy_(self.next_mask)
        masked = _flags(self.mask, self.flat.numel())
        mine = masked[self.own]

        summed = torch.zeros(self.shard)  # 2. the masked reduce-scatter
        _C.masked_reduce_scatter(self.backend, summed, self.unsent, self.mask, dist.ReduceOp.AVG,
                                 self.keys[0], codec=self.codec).wait()
        self.unsent[masked] = 0

        # 3. the k steps each masked coordinate missed, taken at once with the mean gradient
        lr = self.param_groups[0]["lr"]
        last = self.last[mine]
        lr_sum, decay = self._since(last, t, lr)
        k = (t - last).double()
        self.last[mine] = t
        g = summed[mine]
        mean = g / k.float()
        self.m[mine] = (beta1 ** k).float() * self.m[mine] + (1 - beta1 ** k).float() * mean
        self.v[mine] = (beta2 ** k).float() * self.v[mine] + (1 - beta2 ** k).float() * (
            mean * mean)
        m_hat = self.m[mine] / (1 - beta1 ** t)
        v_hat = self._v_hat(self.v[mine], self.q[mine], k.float(), t)
        decayed = self.master[mine] * decay
        self.master[mine] = decayed - lr_sum * m_hat / (v_hat.sqrt() + self.eps)

        # 4. the next mask, sent while the next step computes
        score = self._score(t)
        count = max(1, math.ceil(self._density(t) * self.shard))
        chosen = torch.zeros(self.shard, dtype=torch.bool)
        chosen[torch.topk(score, count, sorted=False).indices] = True
        self.own_mask.copy_(_bits(chosen))
        self.exchange = _C.start_mask_exchange(self.backend, self.own_mask, self.next_mask,
                                               self.shard, _MASK_TAG)

        # 5. the parameters under this step's mask, the same on every rank
        replica = self.synchronized
        if self.param_codec is None:
            # Written at the masked coordinates only: straight into the copy.
            _C.masked_all_gather(self.backend, replica, self.master, self.mask, self.keys[1],
                                 codec="none").wait()
        else:
            change = torch.zeros_like(replica)
            _C.masked_all_gather(self.backend, change, self.master - replica[self.own], self.mask,
                                 self.keys[1], codec=self.param_codec,
                                 error_feedback=False).wait()
            replica[masked] += change[masked]
        if self.local:  # 6. this rank's own parameters
            self._move_locally(t, lr * self.local_lr_scale, masked)
        self.steps += 1

    def _move_locally(self, t: int, lr: float, masked: torch.Tensor) -> None:
        beta1, beta2 = self.local_beta1, self.betas[1]
        g = self.gradient
        self.local_m = beta1 * self.local_m + (1 - beta1) * g
        self.local_v = beta2 * self.local_v + (1 - beta2) * (g * g)
        m_hat = self.local_m / (1 - beta1 ** t)
        v_hat = self.local_v / (1 - beta2 ** t)
        moved = self.flat * (1 - lr * self.weight_decay) - lr * m_hat / (v_hat.sqrt() + self.eps)
        self.flat.copy_(torch.where(masked, self.synchronized, moved))

    def use_synchronized(self) -> None:
        """Loads the replica every rank holds the same into the model's parameters (outside="local":
        what this rank moved on its own since each coordinate's last update is dropped; "hold":
        they are the replica already), e.g. to evaluate or save the model the group agrees on."""
        if self.local:
            self.flat.copy_(self.synchronized)

    def _since(self, last: torch.Tensor, t: int, lr: float):
        """Records step t's learning rate, and returns for coordinates last updated at steps
        `last` the sum of the learning rates of steps last+1..t and the product of their weight
        decay factors (1 − lr·λ): what AdamW would have moved them by over those steps."""
        if t == self.rate_sums.shape[0]:
            self.rate_sums = torch.cat([self.rate_sums, torch.zeros_like(self.rate_sums)])
        self.rate_sums[t] = self.rate_sums[t - 1] + torch.tensor(
            [lr, math.log1p(-lr * self.weight_decay)], dtype=torch.float64)
        since = self.rate_sums[t] - self.rate_sums[last]
        return since[:, 0].float(), since[:, 1].exp().float()

    def _density(self, t: int) -> float:
        """The density of the mask chosen at step t (step 4): from 1 down to `density`,
        geometrically, over the first `density_warmup` steps."""
        if t >= self.density_warmup:
            return self.density
        return self.density ** (t / self.density_warmup)

    def _v_hat(self, v: torch.Tensor, q: torch.Tensor, k: torch.Tensor, t: int) -> torch.Tensor:
        """AdamW's bias-corrected second moment for a catch-up of k steps (step 3)."""
        return (v + (1 - 1 / k) * q / self.size) / (1 - self.betas[1] ** t)

    def _score(self, t: int) -> torch.Tensor:
        """Each owned coordinate's predicted catch-up at the next step, in units of its gradient's
        scale (√v̂) rather than raw, so that layers whose gradients are small are chosen too: the
        unsent gradient grows as it waits, so that no coordinate waits for ever, and the first
        moment, times the wait, keeps choosing a coordinate whose gradient is steady."""
        wait = (t + 1 - self.last).float()
        scale = self._v_hat(self.v, self.q, wait, t).sqrt()
        m_hat = self.m.abs() / (1 - self.betas[0] ** t)
        return (self.unsent[self.own].abs() + wait * m_hat) / (scale + self.eps)

    def state_dict(self) -> dict:
        """This rank's state (each rank saves its own): the owned shard's exact values, moments
        (q included) and last update steps, the unsent gradients, the mask in use and the next
        one, the step count and the steps' learning rates, and the group's error-feedback
        residuals (the codec's error under the masks); outside="local": also the replica and
        this rank's own moments."""
        pending = self.exchange is not None
        if pending:  # its mask is in next_mask now, still to be applied at the next step
            self.exchange.wait()
            self.exchange = _Done()
        return {"master": self.master.clone(), "m": self.m.clone(), "v": self.v.clone(),
                "q": self.q.clone(),
                "last": self.last.clone(), "unsent": self.unsent.clone(),
                "mask": self.mask.clone(), "next_mask": self.next_mask.clone(),
                "pending": pending, "steps": self.steps, "flat": self.flat.clone(),
                "rate_sums": self.rate_sums[:self.steps + 1].clone(),
                "ef_state": ef_state(self.group), "rank": self.rank, "size": self.size,
                **({"synchronized": self.synchronized.clone(), "local_m": self.local_m.clone(),
                    "local_v": self.local_v.clone()} if self.local else {})}

    def load_state_dict(self, state: dict) -> None:
        if state["rank"] != self.rank or state["size"] != self.size:
            raise ValueError(f"ScapeAdamW: a state of rank {state['rank']} of {state['size']}, "
                             f"loaded on rank {self.rank} of {self.size}")
        if state["flat"].numel() != self.flat.numel():
            raise ValueError("ScapeAdamW: the state is of other parameters "
                             f"({state['flat'].numel()} elements, not {self.flat.numel()})")
        saved_outside = "local" if "synchronized" in state else "hold"
        if saved_outside != self.outside:
            raise ValueError(f"ScapeAdamW: a state saved with outside={saved_outside!r}, loaded "
                             f"with outside={self.outside!r}")
        names = ("master", "m", "v", "q", "last", "unsent", "mask", "next_mask", "flat",
                 "rate_sums")
        if self.local:
            names += ("synchronized", "local_m", "local_v")
        missing = [name for name in names if name not in state]
        if missing:
            raise ValueError(f"ScapeAdamW: the state has no {', '.join(missing)} (saved by "
                             "another version of ScapeAdamW)")
        for name in names:
            if name != "rate_sums":
                getattr(self, name).copy_(state[name])
        self.rate_sums = state["rate_sums"].clone()  # grown at the next step
        self.steps = state["steps"]
        # A mask exchange that was in flight at the save completed into next_mask: apply it at
        # the next step, as the uninterrupted run does.
        self.exchange = _Done() if state["pending"] else None
        load_ef_state(state["ef_state"], self.group)


class _Done:
    """An exchange that completed before a checkpoint was saved."""

    def wait(self) -> None:
        pass
