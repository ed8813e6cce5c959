"""Elastic training, CI-sized (docs/INTEGRATION.md, "Elastic training"; the measurement with the
1.26 M-parameter model is perf/elastic_training's), on 3 ranks of the 0.14 M LM: SparseLoCo (H = 8)
with the member of rank 1 killed at step 32's synchronisation and a new process admitted at step
48's; DDP (qccl's hook, fp8e4m3 + EF) with rank 1 killed at step 16 and a new process admitted
after step 32.

Asserts that the job finishes without a restart; that each survivor's log shows the shrink (3 -> 2
ranks) and the admission (2 -> 3), the new process its join; that the parameters (DiLoCo: the
global ones) end bit-identical on the three processes; and that the final validation loss is
within 5 % of the same job's undisturbed (CI's runs are short and noisy; the 1 % claim is the big
model's). Beside it, the state handover on its own: broadcast_state and broadcast_optimizer_state.

SparseLoCo's outer lr is 2 here, not the big model's 4: at 4 this small model's outer steps
overshoot, and anything that empties the accumulators damps them: a churn that drops the
members' residuals ended with a 2-6 % lower loss than one that carries them (seeds 0-2,
2026-12-05). At outer lr 2 and 1 the carried accumulators were the better, by 3-6 % on each seed,
as on the big model.
"""
import os

import pytest

from elastic_run import run_job
from launch import run_ranks

COMMON = ["--model", "0.14M", "--batch", "8", "--eval-windows", 128]
LOOPS = {  # loop -> (arguments, QCCL_* environment, kill step, admit step)
    "diloco": (["--steps", 96, "--sync-every", 8, "--codec", "topk0.02+int2", "--ef-decay", 0.9,
                "--outer-lr", 2], {"QCCL_ALGO": "gather"}, 32, 48),
    "ddp": (["--loop", "ddp", "--steps", 48], {"QCCL_CODEC": "fp8e4m3", "QCCL_MIN_BYTES": "0"},
            16, 32),
}


@pytest.mark.parametrize("loop", list(LOOPS))
def test_a_killed_rank_is_shrunk_away_and_a_new_process_admitted_without_a_restart(loop, tmp_path):
    args, extra, kill, admit = LOOPS[loop]
    env = {k: v for k, v in os.environ.items() if not k.startswith("QCCL_")}
    env.update(extra, QCCL_TIMEOUT="20")
    args = COMMON + args
    churn = ["--kill-rank", 1, "--kill-step", kill, "--admit-step", admit]
    results, outputs = run_job(str(tmp_path / "job"), 3, args + churn, env=env, timeout=600)
    report = "\n".join(f"--- process {i} (exit {code}):\n{text[-2500:]}"
                       for i, (code, text) in enumerate(outputs))
    assert [code for code, _ in outputs] == [0, -9, 0, 0], report
    assert len(results) == 3, report
    shrunk_at = kill if loop == "diloco" else kill - 1  # ddp: step `kill` is redone
    for r in results:
        kinds = [(c["what"], c["step"], c["size"]) for c in r["changes"]]
        if r["first_rank"] is None:
            assert kinds == [("join", admit, 3)], (r["changes"], report)
        else:
            assert kinds == [("shrink", shrunk_at, 2), ("admit", admit, 3)], (r["changes"], report)
        assert r["steps"] == int(args[args.index("--steps") + 1]) and r["size"] == 3
    assert len({r["theta_digest"] for r in results}) == 1, [r["theta_digest"] for r in results]
    final = [r["validation"] for r in results if "validation" in r]
    undisturbed, outputs = run_job(str(tmp_path / "undisturbed"), 3, args, env=env, timeout=600)
    assert [code for code, _ in outputs] == [0, 0, 0], outputs
    baseline = [r["validation"] for r in undisturbed if "validation" in r]
    print("validation loss: with churn", final, "undisturbed", baseline)
    assert len(final) == 1 and final[0] < 1.05 * baseline[0], (final, baseline)


def test_state_handover_gives_rank_0s_state_to_new_ranks_and_refuses_mismatches():
    """broadcast_state and broadcast_optimizer_state on 3 ranks (state_handover_worker.py)."""
    worker = os.path.join(os.path.dirname(__file__), "state_handover_worker.py")
    env = {k: v for k, v in os.environ.items() if not k.startswith("QCCL_")}
    for rank, (code, output) in enumerate(run_ranks(worker, 3, env=env, timeout=300)):
        assert code == 0, f"rank {rank}:\n{output[-3000:]}"
