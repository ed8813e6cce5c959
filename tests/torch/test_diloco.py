"""qccl.torch.DiLoCo against a plain-PyTorch replay of its equations (docs/INTEGRATION.md, "Outer
loops"), on 2 and 3 ranks of a tiny byte-level LM (diloco_worker.py):

- every rank's global parameters θ, after every inner step, equal one another and the replay's,
  bit for bit: "nesterov" (exact averages, the outer step by torch.optim.SGD itself), "sparseloco"
  (the accumulator e ← β·e + Δ, the top-k chunk and its decode through the codec API, the mean
  of what was sent), with fragments and overlap;
- a run resumed from a checkpoint mid-training, with an allreduce in flight, ends with the same
  θ and losses as the run that went through;
- a rank whose θ was changed is reported on every rank at the next update.

With QCCL_TEST_DEVICE=cuda (perf/gpu_check.sh) the replicas are CUDA tensors: the ranks must still
agree bit for bit and resume exactly; the CPU replay is not compared (a GPU's kernels train with
other roundings).
"""
import os
import sys

import pytest
import torch

from launch import run_ranks

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "python"))
from qccl_ctypes import QcclCodec  # noqa: E402

WORKER = os.path.join(here, "diloco_worker.py")
DEVICE = os.environ.get("QCCL_TEST_DEVICE", "cpu")


def codec_library():
    """The libqccl that qccl.torch loads (the build tree's, or the installed package's)."""
    import qccl
    from qccl_ctypes import load_library
    package = os.path.dirname(qccl.__file__)
    for path in (os.path.join(package, "..", "..", "src", "libqccl.so"),
                 os.path.join(package, "libqccl.so")):
        if os.path.exists(path) and "QCCL_LIBRARY" not in os.environ:
            os.environ["QCCL_LIBRARY"] = path
    return load_library()


def run(tmp_path, name, ranks, steps, *options):
    out = str(tmp_path / name)
    env = {k: v for k, v in os.environ.items() if not k.startswith("QCCL_")}
    results = run_ranks(WORKER, ranks, [out, steps, *options, "--device", DEVICE], env=env,
                        timeout=600)
    for rank, (code, output) in enumerate(results):
        assert code == 0, f"{name} rank {rank}:\n{output[-3000:]}"
    return [torch.load(f"{out}.rank{r}.pt", weights_only=False) for r in range(ranks)]


class Replay:
    """All ranks' inner loops in one process, and the outer rule as its docstring says it."""

    def __init__(self, ranks, outer, sync_every, fragments=1, overlap=0, codec=None,
                 ef_decay=None, outer_lr=None):
        import diloco_worker as w
        from qccl.torch.diloco import _fragments
        torch.set_num_threads(1)  # as the workers: the kernels' sums then run in the same order
        self.w, self.ranks, self.outer, self.h, self.delay = w, ranks, outer, sync_every, overlap
        self.models = [w.tiny_model() for _ in range(ranks)]
        self.opts = [w.inner_optimizer(m) for m in self.models]
        params = [list(m.parameters()) for m in self.models]
        groups = [_fragments(p, fragments) for p in params]
        self.fragments = [[g[f] for g in groups] for f in range(fragments)]  # [f][rank][params]
        self.offsets = [((f + 1) * sync_every) // fragments for f in range(fragments)]
        self.theta = [self.flat(self.fragments[f][0]) for f in range(fragments)]
        self.lr = outer_lr if outer_lr is not None else (0.7 if outer == "nesterov" else 1.0)
        self.beta = ef_decay if ef_decay is not None else 0.9
        self.pending = [None] * fragments
        if outer == "nesterov":
            # The outer optimizer is PyTorch's own, on a leaf holding θ.
            self.leaves = [torch.nn.Parameter(t.clone()) for t in self.theta]
            self.sgd = [torch.optim.SGD([p], lr=self.lr, momentum=0.9, nesterov=True)
                        for p in self.leaves]
        else:
            self.codec = QcclCodec(codec_library(), codec or "topk0.02+int2")
            self.e = [[torch.zeros_like(t) for _ in range(ranks)] for t in self.theta]

    @staticmethod
    def flat(params):
        return torch.cat([p.detach().reshape(-1).float() for p in params])

    @staticmethod
    def write(params, flat):
        offset = 0
        with torch.no_grad():
            for p in params:
                p.copy_(flat[offset:offset + p.numel()].view_as(p))
                offset += p.numel()

    def average(self, f, deltas):
        """The allreduce's Avg: the contributions (exact, or each rank's decoded chunk) added in
        rank order from the first, then ÷ n (docs/ALGORITHMS.md)."""
        if self.outer == "sparseloco":
            sent = []
            for r, d in enumerate(deltas):
                p = d + self.beta * self.e[f][r]
                sent.append(torch.from_numpy(
                    self.codec.decode(self.codec.encode(p.numpy()), p.numel())))
                self.e[f][r] = p - sent[-1]
            deltas = sent
        total = deltas[0].clone()
        for d in deltas[1:]:
            total = total + d
        return total / self.ranks

    def land(self, f):
        average, snapshots, _ = self.pending[f]
        self.pending[f] = None
        if self.outer == "nesterov":
            self.leaves[f].grad = average
            self.sgd[f].step()
            self.theta[f] = self.leaves[f].detach().clone()
        else:
            self.theta[f] = self.theta[f].add(average, alpha=-self.lr)
        for r in range(self.ranks):
            params = self.fragments[f][r]
            if self.delay:
                self.write(params, self.theta[f] + (self.flat(params) - snapshots[r]))
            else:
                self.write(params, self.theta[f])

    def train(self, steps):
        thetas = {}
        for step in range(1, steps + 1):
            for r in range(self.ranks):
                inputs, targets = self.w.batch(step, r, self.w.BATCH, self.w.SEQ)
                self.opts[r].zero_grad()
                self.models[r].loss(inputs, targets).backward()
                self.opts[r].step()
            for f in range(len(self.fragments)):
                if self.pending[f] is not None and self.pending[f][2] == step:
                    self.land(f)
            for f in range(len(self.fragments)):
                if step >= self.offsets[f] and (step - self.offsets[f]) % self.h == 0:
                    snapshots = [self.flat(self.fragments[f][r]) for r in range(self.ranks)]
                    average = self.average(f, [self.theta[f] - s for s in snapshots])
                    self.pending[f] = (average, snapshots, step + self.delay)
                    if not self.delay:
                        self.land(f)
            thetas[step] = torch.cat(self.theta)
        for f in range(len(self.fragments)):
            if self.pending[f] is not None:
                self.land(f)
        return thetas, torch.cat(self.theta)


CASES = {  # name -> (ranks, worker options, replay options)
    "nesterov_2": (2, [], dict(outer="nesterov", sync_every=4)),
    "nesterov_3_fragments_overlap": (
        3, ["--fragments", 2, "--overlap", 4],
        dict(outer="nesterov", sync_every=4, fragments=2, overlap=4)),
    "sparseloco_2": (2, ["--outer", "sparseloco", "--ef-decay", 0.8],
                     dict(outer="sparseloco", sync_every=4, ef_decay=0.8)),
    "sparseloco_3_gather_fragments_overlap": (
        3, ["--outer", "sparseloco", "--codec", "topk0.1+int2", "--algorithm", "gather",
            "--fragments", 3, "--overlap", 2, "--outer-lr", 0.75],
        dict(outer="sparseloco", sync_every=4, codec="topk0.1+int2", fragments=3, overlap=2,
             outer_lr=0.75)),
}


@pytest.mark.parametrize("case", CASES)
def test_outer_rule_matches_replay(tmp_path, case):
    ranks, options, replay_options = CASES[case]
    steps = 14  # ends between syncs: finish() lands what is in flight
    results = run(tmp_path, case, ranks, steps, "--sync-every", 4, *options)
    for r, result in enumerate(results):
        assert "error" not in result, result.get("error")
        for step, theta in result["theta"].items():
            assert torch.equal(theta.view(torch.int32), results[0]["theta"][step].view(
                torch.int32)), f"rank {r} differs from rank 0 after step {step}"
    if DEVICE != "cpu":
        return
    thetas, final = Replay(ranks, **replay_options).train(steps)
    assert not torch.equal(thetas[1], thetas[steps]), "θ never moved"
    for step in range(1, steps + 1):
        got = results[0]["theta"][step]
        assert torch.equal(got.view(torch.int32), thetas[step].view(torch.int32)), (
            f"step {step}: θ differs from the replay in {(got != thetas[step]).sum()} elements, "
            f"largest by {(got - thetas[step]).abs().max()}")
    assert torch.equal(results[0]["final"], final)


def test_resume_continues_bit_for_bit(tmp_path):
    options = ["--outer", "sparseloco", "--fragments", 2, "--overlap", 4, "--sync-every", 4]
    ckpt = str(tmp_path / "ckpt")
    through = run(tmp_path, "through", 2, 20, *options, "--save-at", 9, ckpt)
    resumed = run(tmp_path, "resumed", 2, 20, *options, "--resume", ckpt)
    for r in range(2):
        for step in range(10, 21):
            assert resumed[r]["losses"][step] == through[r]["losses"][step], (r, step)
            assert torch.equal(resumed[r]["theta"][step], through[r]["theta"][step]), (r, step)
        assert torch.equal(resumed[r]["final"], through[r]["final"])


def test_diverged_replica_is_reported_on_every_rank(tmp_path):
    results = run(tmp_path, "diverged", 2, 12, "--diverge-at", 5)
    for r, result in enumerate(results):
        assert "differ across ranks after the update of inner step 8" in result.get("error", ""), (
            r, result.get("error"))
        assert "group ranks [1]" in result["error"]
