"""Training a small transformer language model (about 2 M parameters, generated data) for 100
steps on 4 CPU ranks, under DDP and under FSDP2 (train_worker.py):
  (a) gloo, exact;  (b) qccl fp8e4m3 with error feedback;  (c) qccl nvfp4 with and without it.
Asserts: (b)'s final loss within 1 % of (a)'s, and under FSDP2 also with the parameters' changes
in fp8e4m3 (compress_fsdp's parameter_changes); (c) with error feedback closer to (a) than without;
a run resumed from (b)'s checkpoint at step 75 (model, optimizer, error-feedback state) repeats
(b)'s losses exactly, and without the error-feedback state it does not (within 5 steps: the
second one already differs).

The loss curves are written to $QCCL_TRAINING_CURVES when set (perf/plot/training_curves.py
draws docs/training_loss.png from them).
"""
import json
import os

import pytest

from launch import run_ranks

WORKER = os.path.join(os.path.dirname(__file__), "train_worker.py")
# 100 steps: the loss falls from 5.7 to 0.74, and compression's effects are already as clear as at
# 200 (fp8e4m3 +0.02 % against +0.01 %; nvfp4's distance from exact 7-8x smaller with error
# feedback than without, as at 200); these runs are the largest part of CI's PyTorch time
# (docs/BUILD.md).
STEPS, SAVE_AT, RANKS = 100, 75, 4
# A fixed QCCL_MIN_BYTES: these runs test what compression does to training, so which buckets are
# compressed must not depend on the cost model's measurements of this machine (the default, auto).
FIXED = {"QCCL_MIN_BYTES": "65536"}
RUNS = {  # name -> (backend, QCCL_* environment)
    "gloo": ("gloo", {}),
    "fp8e4m3+ef": ("qccl", {"QCCL_CODEC": "fp8e4m3", **FIXED}),
    "nvfp4+ef": ("qccl", {"QCCL_CODEC": "nvfp4", **FIXED}),
    "nvfp4": ("qccl", {"QCCL_CODEC": "nvfp4", "QCCL_EF": "0", **FIXED}),
}


def train(framework, backend, env, out, *extra, steps=STEPS):
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("QCCL_")}
    full_env.update(env)
    results = run_ranks(WORKER, RANKS, [framework, backend, steps, out, *extra], env=full_env)
    for rank, (code, output) in enumerate(results):
        assert code == 0, f"{framework} {backend} {env} rank {rank}:\n{output[-3000:]}"
    with open(out) as f:
        return {int(k): v for k, v in json.load(f).items()}


@pytest.fixture(scope="module", params=["ddp", "fsdp2"])
def curves(request, tmp_path_factory):
    framework = request.param
    tmp = tmp_path_factory.mktemp(framework)
    ckpt = str(tmp / "ckpt")
    runs = {}
    for name, (backend, env) in RUNS.items():
        extra = ["--save-at", SAVE_AT, ckpt] if name == "fp8e4m3+ef" else []
        runs[name] = train(framework, backend, env, str(tmp / f"{name}.json"), *extra)
    fp8 = RUNS["fp8e4m3+ef"][1]
    runs["resumed"] = train(framework, "qccl", fp8, str(tmp / "resumed.json"), "--resume", ckpt)
    runs["resumed without EF state"] = train(framework, "qccl", fp8, str(tmp / "dropped.json"),
                                             "--resume", ckpt, "--drop-ef", steps=SAVE_AT + 5)
    if os.environ.get("QCCL_TRAINING_CURVES"):
        os.makedirs(os.environ["QCCL_TRAINING_CURVES"], exist_ok=True)
        with open(os.path.join(os.environ["QCCL_TRAINING_CURVES"], f"{framework}.json"), "w") as f:
            json.dump(runs, f)
    return framework, runs


def final(losses):
    return sum(losses[s] for s in range(STEPS - 19, STEPS + 1)) / 20


def distance(losses, reference):
    return sum(abs(losses[s] - reference[s]) for s in reference) / len(reference)


def test_it_learns(curves):
    _, runs = curves
    assert final(runs["gloo"]) < 0.2 * runs["gloo"][1]


def test_fp8_with_error_feedback_ends_within_one_percent_of_exact(curves):
    framework, runs = curves
    a, b = final(runs["gloo"]), final(runs["fp8e4m3+ef"])
    assert abs(b - a) <= 0.01 * a, (framework, a, b)


@pytest.mark.parametrize("curves", ["fsdp2"], indirect=True)
def test_fsdp2_parameter_changes_end_within_one_percent_of_exact(curves, tmp_path):
    _, runs = curves
    changes = train("fsdp2", "qccl", RUNS["fp8e4m3+ef"][1], str(tmp_path / "changes.json"),
                    "--parameter-changes", "fp8e4m3")
    a, b = final(runs["gloo"]), final(changes)
    print(f"FSDP2: final loss gloo {a:.5f}, gradients and parameter changes fp8e4m3 {b:.5f}")
    assert abs(b - a) <= 0.01 * a, (a, b)


def test_error_feedback_brings_4_bit_closer_to_exact(curves):
    framework, runs = curves
    with_ef = distance(runs["nvfp4+ef"], runs["gloo"])
    without = distance(runs["nvfp4"], runs["gloo"])
    assert with_ef < without, (framework, with_ef, without)


def test_a_resumed_run_repeats_the_uninterrupted_one(curves):
    framework, runs = curves
    resumed, dropped, whole = runs["resumed"], runs["resumed without EF state"], runs["fp8e4m3+ef"]
    assert sorted(resumed) == list(range(SAVE_AT + 1, STEPS + 1))
    assert all(resumed[s] == whole[s] for s in resumed), framework
    # The control: the residuals matter, so losing them shows.
    assert any(dropped[s] != whole[s] for s in dropped), framework
