"""The fault matrix with shrinking (docs/RELIABILITY.md, "Elastic communicators"): one or two ranks
fail in each way of tests/fault/fault_rank.cc (not abort: nobody is lost there), and the survivors
shrink the communicator without naming anyone. A run passes when every survivor holds a smaller
communicator of exactly the survivors within QCCL_TIMEOUT + 1 s of its failing call's start, its
exact allreduces equal the survivors' exact sums, and its compressed allreduce's result is
bitwise the same on every survivor; a run that outlives its limit is a hang (its stacks are
printed). Prints a table and exits 1 if any run failed.

    python3 tests/fault/shrink_matrix.py --build build [--trials 20] [--ranks 2,4,7]
        [--victims 1,2] [--transports ucx,mpi] [--cases kill-before,...] [--timeout 2]
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fault_matrix import Row, matrix_arguments  # noqa: E402

CASES = ["kill-before", "kill-during", "kill-between", "stop", "exit-destroyed"]
SHRINK = re.compile(r"SHRINK rank=(\d+) size=(\d+) seconds=([\d.]+) exact=(\d) hash=(\w+)")


def judge(args, n, victims, run):
    """(passed, worst seconds, problem)."""
    if run["hang"]:
        return False, None, "hang"
    shrunk = {int(m.group(1)): m for m in SHRINK.finditer(run["out"])}
    survivors = range(n - victims)
    worst, hashes = 0.0, set()
    for r in survivors:
        if r not in shrunk:
            return False, None, f"rank {r} did not shrink"
        m = shrunk[r]
        size, seconds = int(m.group(2)), float(m.group(3))
        if size != len(survivors):
            return False, None, f"rank {r} got size {size}"
        if m.group(4) != "1":
            return False, None, f"rank {r}'s exact allreduces were wrong"
        if seconds > args.timeout + 1:
            return False, None, f"rank {r} took {seconds:.2f} s"
        worst = max(worst, seconds)
        hashes.add(m.group(5))
    if len(hashes) != 1 or "0" in hashes:
        return False, None, f"compressed results differ: {sorted(hashes)}"
    return True, worst, ""


def main():
    p = matrix_arguments(CASES, 2)
    p.add_argument("--victims", default="1,2")
    args = p.parse_args()
    rows, failed = [], 0
    for transport in args.transports.split(","):
        for n in [int(v) for v in args.ranks.split(",")]:
            for victims in [int(v) for v in args.victims.split(",")]:
                if victims >= n:
                    continue
                for case in args.cases.split(","):
                    row = Row(args, transport, n, case,
                              lambda r, v=victims: judge(args, n, v, r),
                              ("shrink", str(victims)), f"{transport} n={n} victims={victims} {case}")
                    failed += row.failed
                    rows.append(f"| {transport} | {n} | {victims} | {case} | "
                                f"{row.passes}/{args.trials} | {row.worst:.3f} | "
                                f"{row.problem_text()} |")
                    print(rows[-1], flush=True)
    print(f"\nQCCL_TIMEOUT={args.timeout:g} s, {args.trials} trials per row\n")
    print("| transport | ranks | lost | case | passed | worst: failing call's start to the "
          "new communicator, s | problems |")
    print("|---|---|---|---|---|---|---|")
    print("\n".join(rows))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
