"""The fault matrix (docs/RELIABILITY.md): every fault case of tests/fault/fault_rank.cc at each
rank count over each transport, repeated, with a hard wall-clock limit per run. A run passes when
every rank expected to notice the fault reported an error within QCCL_TIMEOUT + 1 s and then
aborted and destroyed its communicator cleanly; a run that outlives its limit is a hang. Prints a
table of counts and worst detection times, and exits 1 if any run failed.

    python3 tests/fault/fault_matrix.py --build build [--trials 20] [--ranks 2,4,7]
        [--transports ucx,mpi] [--cases kill-before,...] [--timeout 5]
"""
import argparse
import collections
import os
import re
import shutil
import signal
import subprocess
import sys
import time

CASES = ["kill-before", "kill-during", "kill-between", "stop", "exit-destroyed", "abort"]
CODES = {0: "none", 5: "qcclInvalidUsage", 6: "qcclRemoteError", 8: "qcclTimeout"}
RESULT = re.compile(r"RESULT rank=(-?\d+) case=(\S+) error=(-?\d+) seconds=([\d.]+) clean=(\d)")
# UCX 1.13's TCP transport can complete a zero-copy eager send twice when its peer dies, and its
# own assertion then aborts the surviving rank (docs/TRANSPORTS.md). A trial that fails that way,
# and only that way, runs again with UCX off the zero-copy path (UCX_ZCOPY_THRESH=inf, the
# documented workaround), up to UCX_ZCOPY_RETRIES times: the defect hit 4 of 10 trials of the
# quick matrix's kill-before row and 8 of 8 on 2026-12-07, and plain retries all seven times in
# one CI run, whereas 8 of 8 trials with the workaround met none. The row counts the retries.
UCX_ZCOPY_DOUBLE_COMPLETION = re.compile(r"Assertion `comp->count > 0' failed.*ucp_proto_am_zcopy")
UCX_ZCOPY_RETRIES = 6


def expected_reporters(case, n):
    """The ranks that must report the fault: all but the victim (the last rank), except where the
    victim lives on (stop: it resumes into a communicator the others left) or nobody dies
    (abort: rank 0 aborts, the others lose it)."""
    if case in ("stop", "abort"):
        return set(range(n))
    return set(range(n - 1))


def command(args, transport, n, case, extra=()):
    prog = os.path.join(args.build, "tests", "fault_rank")
    if transport == "ucx":
        return [os.path.join(args.build, "src", "qcclrun"), "-n", str(n), prog, case, *extra]
    # --enable-recovery: a rank that dies does not make mpirun kill the others.
    return [shutil.which("mpirun"), "--allow-run-as-root", "--oversubscribe", "--enable-recovery",
            "-x", "QCCL_TRANSPORT", "-x", "QCCL_TIMEOUT", "-np", str(n), prog, case, *extra]


def stacks_of(session):
    """Every thread's stack of the fault_rank processes in a session, for a hang's report."""
    pids = subprocess.run(["pgrep", "-s", str(session), "fault_rank"], capture_output=True,
                          text=True).stdout.split()
    report = ""
    for pid in pids:
        if shutil.which("gdb"):
            report += f"--- stacks of {pid}\n" + subprocess.run(
                ["gdb", "-p", pid, "-batch", "-ex", "thread apply all bt 15"],
                capture_output=True, text=True, timeout=60).stdout
    return report


def run_once(args, transport, n, case, extra=(), env_extra=None):
    env = dict(os.environ, QCCL_TRANSPORT=transport, QCCL_TIMEOUT=f"{args.timeout:g}",
               **(env_extra or {}))
    limit = args.timeout + 25
    start = time.monotonic()
    proc = subprocess.Popen(command(args, transport, n, case, extra), env=env,
                            stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=limit)
    except subprocess.TimeoutExpired:
        stacks = stacks_of(proc.pid)
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        return {"hang": True, "reports": {}, "wall": time.monotonic() - start,
                "out": out + stacks}
    reports = {}
    for m in RESULT.finditer(out):
        reports[int(m.group(1))] = (int(m.group(3)), float(m.group(4)), m.group(5) == "1")
    return {"hang": False, "reports": reports, "wall": time.monotonic() - start, "out": out}


def trial(args, transport, n, case, judged, extra=()):
    """One trial, run again while it fails by UCX's zero-copy assertion alone (see above):
    (run, (passed, seconds, problem) from judged(run), retries)."""
    run = run_once(args, transport, n, case, extra)
    verdict, retries = judged(run), 0
    while (not verdict[0] and retries < UCX_ZCOPY_RETRIES and
           UCX_ZCOPY_DOUBLE_COMPLETION.search(run["out"])):
        sys.stderr.write(f"--- {transport} n={n} {case}: UCX aborted a rank (zero-copy "
                         f"completion assertion); trying again off the zero-copy path\n")
        retries += 1
        run = run_once(args, transport, n, case, extra, {"UCX_ZCOPY_THRESH": "inf"})
        verdict = judged(run)
    return run, verdict, retries


class Row:
    """One row of a matrix: args.trials trials of one (transport, ranks, case), each judged by
    judged(run); the first failure's output goes to stderr under `name`."""

    def __init__(self, args, transport, n, case, judged, extra=(), name=""):
        self.passes, self.worst, self.problems, self.runs, retries = 0, 0.0, [], [], 0
        for _ in range(args.trials):
            run, (ok, seconds, problem), tried = trial(args, transport, n, case, judged, extra)
            retries += tried
            self.runs.append(run)
            if ok:
                self.passes += 1
                self.worst = max(self.worst, seconds)
            else:
                self.problems.append(problem)
                if len(self.problems) == 1:
                    sys.stderr.write(f"--- {name}: {problem}\n{run['out'][-20000:]}\n")
        self.failed = args.trials - self.passes
        if retries:
            self.problems.append(f"UCX zcopy assertion in {retries}, retried")

    def problem_text(self):
        return "; ".join(sorted(set(self.problems)))


def judge(args, case, n, run):
    """(passed, worst seconds, problem)."""
    if run["hang"]:
        return False, None, "hang"
    worst = 0.0
    for r in expected_reporters(case, n):
        if r not in run["reports"]:
            return False, None, f"rank {r} reported nothing"
        code, seconds, clean = run["reports"][r]
        if code == 0:
            return False, None, f"rank {r} never saw an error"
        aborter = case == "abort" and r == 0
        if code not in ((5,) if aborter else (6, 8)):  # a lost peer is remote error or timeout
            return False, None, f"rank {r} got {CODES.get(code, code)}"
        if seconds > args.timeout + 1:
            return False, None, f"rank {r} took {seconds:.2f} s"
        if not clean:
            return False, None, f"rank {r} could not abort and destroy"
        worst = max(worst, seconds)
    return True, worst, ""


def matrix_arguments(cases, timeout):
    """The options every matrix driver takes."""
    p = argparse.ArgumentParser()
    p.add_argument("--build", default="build")
    p.add_argument("--trials", type=int, default=20)
    p.add_argument("--ranks", default="2,4,7")
    p.add_argument("--transports", default="ucx,mpi")
    p.add_argument("--cases", default=",".join(cases))
    p.add_argument("--timeout", type=int, default=timeout)
    return p


def main():
    args = matrix_arguments(CASES, 5).parse_args()
    rows = []
    failed = 0
    for transport in args.transports.split(","):
        for n in [int(v) for v in args.ranks.split(",")]:
            for case in args.cases.split(","):
                row = Row(args, transport, n, case, lambda r: judge(args, case, n, r),
                          name=f"{transport} n={n} {case}")
                failed += row.failed
                errors = collections.Counter(CODES.get(code, str(code)) for run in row.runs
                                             for code, _, _ in run["reports"].values())
                seen = ", ".join(f"{k} {v}" for k, v in sorted(errors.items()))
                rows.append(f"| {transport} | {n} | {case} | {row.passes}/{args.trials} | "
                            f"{row.worst:.3f} | {seen} | {row.problem_text()} |")
                print(rows[-1], flush=True)
    print(f"\nQCCL_TIMEOUT={args.timeout:g} s, {args.trials} trials per row\n")
    print("| transport | ranks | case | passed | worst detection s | errors seen | problems |")
    print("|---|---|---|---|---|---|---|")
    print("\n".join(rows))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
