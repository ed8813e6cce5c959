"""One rank of test_scape.py: qccl.torch.ScapeAdamW on a tiny model, 3 ranks (the default group
gloo, for the checks and the reference; a qccl group does the work). Exits non-zero, naming what
failed.

  scape_worker.py reference OUTSIDE   exact codecs, a learning rate that changes every step,
                              masks whose density warms up (density_warmup):
                              every step's parameters (this rank's and the synchronized copy)
                              bitwise those of a plain-PyTorch replay of the update (scape.py's
                              docstring) from every rank's gradients
  scape_worker.py resume OUTSIDE      int4 gradients, fp8e4m3 parameter changes: the synchronized
                              copy the same on every rank; a run resumed from a checkpoint the
                              uninterrupted run, bit for bit; a state without q, or saved with the
                              other OUTSIDE, refused
OUTSIDE: hold or local (ScapeAdamW's `outside`; local: the local moves at their own β1 and
rate).
"""
import math
import sys

import torch
import torch.distributed as dist

import qccl.torch

STEPS, DENSITY = 8, 0.25
DENSITY_WARMUP = 4  # the masks' density falls from 1 to DENSITY over the first steps
LR, BETAS, EPS, WD = 0.05, (0.9, 0.99), 1e-8, 0.1
# outside="local": the local moves' own β1, other than BETAS[0], and their rate, a fraction of lr
LOCAL_BETA1, LOCAL_LR_SCALE = 0.7, 0.5


def rate(step):
    """The learning rate of a step: it changes every step, as a schedule's does, so that a
    catch-up must take the rates of the steps it makes up for."""
    return LR * (1 + step % 3) / 2


def fail(message):
    sys.stderr.write(f"rank {dist.get_rank()}: {message}\n")
    sys.exit(1)


def model():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(10, 7), torch.nn.Tanh(), torch.nn.Linear(7, 3))


def backward(net, rank, step):
    g = torch.Generator().manual_seed(100 * step + rank)
    x, y = torch.randn(16, 10, generator=g), torch.randn(16, 3, generator=g)
    loss = ((net(x) - y) ** 2).mean()
    loss.backward()


def flat_grads(net, size):
    g = torch.cat([p.grad.view(-1) for p in net.parameters()])
    return torch.cat([g, torch.zeros(size - g.numel())])


def gathered(t):
    out = [torch.empty_like(t) for _ in range(dist.get_world_size())]
    dist.all_gather(out, t)
    return out


def same_everywhere(t, what):
    if any(not torch.equal(o.view(torch.int32), t.view(torch.int32)) for o in gathered(t)):
        fail(f"{what}: the parameters differ between ranks")


class Reference:
    """The update written out on whole vectors from every rank's gradients (scape.py, steps 1-6),
    with exact codecs: theta the synchronized copy, own[r] rank r's parameters (outside="local")."""

    def __init__(self, flat, n, local):
        self.n, self.shard, self.local = n, flat.numel() // n, local
        self.theta, self.master = flat.clone(), flat.clone()
        self.own = [flat.clone() for _ in range(n)]
        self.local_m = [torch.zeros_like(flat) for _ in range(n)]
        self.local_v = [torch.zeros_like(flat) for _ in range(n)]
        self.m, self.v = torch.zeros_like(flat), torch.zeros_like(flat)
        self.q = torch.zeros_like(flat)  # each owner's own gradient's second moment, its shard
        self.last = torch.zeros(flat.numel(), dtype=torch.int64)
        self.unsent = [torch.zeros_like(flat) for _ in range(n)]
        self.mask = torch.ones(flat.numel(), dtype=torch.bool)
        self.rate_sums = [torch.zeros(2, dtype=torch.float64)]  # Σ lr, Σ log(1 − lr·λ) to step s
        self.t = 0

    def step(self, grads, lr):
        self.t += 1
        t, (b1, b2) = self.t, BETAS
        self.rate_sums.append(self.rate_sums[-1] + torch.tensor([lr, math.log1p(-lr * WD)],
                                                                dtype=torch.float64))
        for r in range(self.n):
            self.unsent[r] += grads[r]
            own = slice(r * self.shard, (r + 1) * self.shard)
            self.q[own] = b2 * self.q[own] + (1 - b2) * (grads[r][own] * grads[r][own])
        total = self.unsent[0].clone()
        for r in range(1, self.n):
            total += self.unsent[r]
        M = self.mask
        g = (total / self.n)[M]
        for r in range(self.n):
            self.unsent[r][M] = 0
        last = self.last[M]
        k = (t - last).double()
        since = self.rate_sums[t] - torch.stack(self.rate_sums)[last]
        lr_sum, decay = since[:, 0].float(), since[:, 1].exp().float()
        self.last[M] = t
        mean = g / k.float()
        self.m[M] = (b1 ** k).float() * self.m[M] + (1 - b1 ** k).float() * mean
        self.v[M] = (b2 ** k).float() * self.v[M] + (1 - b2 ** k).float() * (mean * mean)
        m_hat, v_hat = self.m[M] / (1 - b1 ** t), self.v_hat(M, k.float())
        decayed = self.master[M] * decay
        self.master[M] = decayed - lr_sum * m_hat / (v_hat.sqrt() + EPS)
        self.theta[M] = self.master[M]
        nxt = torch.zeros_like(self.mask)
        density = DENSITY if t >= DENSITY_WARMUP else DENSITY ** (t / DENSITY_WARMUP)
        count = max(1, math.ceil(density * self.shard))
        wait = (t + 1 - self.last).float()
        scale = self.v_hat(slice(None), wait).sqrt() + EPS
        ahead = wait * self.m.abs() / (1 - b1 ** t)
        for r in range(self.n):  # each owner's shard, from its own unsent gradient
            own = slice(r * self.shard, (r + 1) * self.shard)
            score = (self.unsent[r][own].abs() + ahead[own]) / scale[own]
            nxt[own][torch.topk(score, count, sorted=False).indices] = True
        b, local_lr = LOCAL_BETA1, lr * LOCAL_LR_SCALE
        for r in range(self.n):  # each rank's own parameters: AdamW on its gradient outside M
            self.local_m[r] = b * self.local_m[r] + (1 - b) * grads[r]
            self.local_v[r] = b2 * self.local_v[r] + (1 - b2) * (grads[r] * grads[r])
            step = local_lr * (self.local_m[r] / (1 - b ** t)) / (
                (self.local_v[r] / (1 - b2 ** t)).sqrt() + EPS)
            moved = self.own[r] * (1 - local_lr * WD) - step
            self.own[r] = torch.where(M, self.theta, moved) if self.local else self.theta.clone()
        self.mask = nxt

    def v_hat(self, at, k):
        return (self.v[at] + (1 - 1 / k) * self.q[at] / self.n) / (1 - BETAS[1] ** self.t)


def bitwise(a, b, what):
    if not torch.equal(a.view(torch.int32), b.view(torch.int32)):
        fail(f"{what} (max difference {(a - b).abs().max().item()})")


def local_moves(outside):
    if outside != "local":
        return {}
    return {"local_beta1": LOCAL_BETA1, "local_lr_scale": LOCAL_LR_SCALE}


def reference(group, outside):
    net = model()
    opt = qccl.torch.ScapeAdamW(net.parameters(), lr=LR, betas=BETAS, eps=EPS, weight_decay=WD,
                                density=DENSITY, density_warmup=DENSITY_WARMUP, codec="none",
                                group=group, outside=outside, **local_moves(outside))
    rank = dist.get_rank()
    ref = Reference(opt.flat, dist.get_world_size(), outside == "local")
    for step in range(STEPS):
        backward(net, rank, step)
        ref.step(gathered(flat_grads(net, opt.flat.numel())), rate(step))
        opt.param_groups[0]["lr"] = rate(step)
        opt.step()
        opt.zero_grad()
        bitwise(opt.flat, ref.own[rank], f"step {step}: the parameters are not the reference's")
        bitwise(opt.synchronized, ref.theta,
                f"step {step}: the synchronized copy is not the reference's")
        same_everywhere(opt.synchronized, f"step {step}")
    if outside == "local":
        if torch.equal(opt.flat, opt.synchronized):
            fail("outside='local' moved nothing on its own")
        opt.use_synchronized()
        bitwise(opt.flat, ref.theta, "use_synchronized() did not load the synchronized copy")
    if not torch.equal(torch.cat([p.view(-1) for p in net.parameters()]),
                       opt.flat[:sum(p.numel() for p in net.parameters())]):
        fail("the model's parameters are not the optimizer's")


def resume(group, outside):
    def make(how=outside):
        net = model()
        return net, qccl.torch.ScapeAdamW(net.parameters(), lr=LR, betas=BETAS, eps=EPS,
                                          weight_decay=WD, density=DENSITY,
                                          density_warmup=DENSITY_WARMUP, codec="int4",
                                          param_codec="fp8e4m3", group=group, name="resume",
                                          outside=how, **local_moves(how))

    net, opt = make()
    rank = dist.get_rank()
    for step in range(STEPS):
        if step == STEPS // 2:
            saved = opt.state_dict()
        backward(net, rank, step)
        opt.param_groups[0]["lr"] = rate(step)
        opt.step()
        opt.zero_grad()
        same_everywhere(opt.synchronized, f"step {step}")
    uninterrupted = opt.flat.clone()
    net, opt = make()
    opt.load_state_dict(saved)
    for step in range(STEPS // 2, STEPS):
        backward(net, rank, step)
        opt.param_groups[0]["lr"] = rate(step)
        opt.step()
        opt.zero_grad()
    bitwise(opt.flat, uninterrupted, "the resumed run's parameters are not the uninterrupted run's")
    older = {name: value for name, value in saved.items() if name != "q"}
    try:
        opt.load_state_dict(older)
        fail("a state without q was loaded")
    except ValueError as e:
        if "no q" not in str(e):
            fail(str(e))
    bitwise(opt.flat, uninterrupted, "a refused state changed the parameters")
    _, other = make("local" if outside == "hold" else "hold")
    before = other.flat.clone()
    try:
        other.load_state_dict(saved)
        fail(f"a state saved with outside={outside!r} was loaded with the other")
    except ValueError as e:
        if "outside" not in str(e):
            fail(str(e))
    bitwise(other.flat, before, "a refused state changed the parameters")
    # Arguments out of range, each refused naming the first one given.
    for wrong in ({"outside": "drift"}, {"local_beta1": 0.8, "outside": "hold"},
                  {"local_beta1": 1.0, "outside": "local"},
                  {"local_lr_scale": 0.5, "outside": "hold"},
                  {"local_lr_scale": 0, "outside": "local"}, {"density": 0},
                  {"density_warmup": -1}, {"density_warmup": 2.5}):
        try:
            qccl.torch.ScapeAdamW(net.parameters(), group=group, **wrong)
            fail(f"{wrong} was accepted")
        except ValueError as e:
            if next(iter(wrong)) not in str(e):
                fail(str(e))


def main():
    dist.init_process_group("gloo")
    group = dist.new_group(backend="qccl", pg_options=qccl.torch.Options(min_bytes=0))
    {"reference": reference, "resume": resume}[sys.argv[1]](group, sys.argv[2])
    dist.destroy_process_group(group)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
