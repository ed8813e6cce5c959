"""libqccl_nccl.so, the LD_PRELOAD interposer, in front of an NCCL application.

The application (interposer_app.cc) links the stand-in NCCL of the test suite as libnccl.so.2 and
runs as 4 processes. It runs three ways: without the interposer (NCCL's own results), preloaded
with QCCL_CODEC=none (everything passed through: identical bits), and preloaded with fp8e4m3
(the compressible calls compressed, everything else passed through unchanged).
"""
import os
import re
import subprocess

import numpy as np
import pytest

INTERPOSER = os.environ.get("QCCL_INTERPOSER")
APP = os.environ.get("QCCL_INTERPOSER_APP")
NRANKS = 4

pytestmark = pytest.mark.skipif(
    not INTERPOSER or not APP, reason="QCCL_INTERPOSER / QCCL_INTERPOSER_APP not set (run by ctest)")

EXPORTS = {"ncclAllReduce", "ncclReduceScatter", "ncclAllGather", "ncclGroupStart",
           "ncclGroupEnd", "ncclGroupSimulateEnd", "ncclCommDestroy", "ncclCommAbort"}

# Case -> numpy dtype of its result file (bf16 read as raw uint16).
CASES = {
    "allreduce_fp32_sum": np.float32, "allreduce_bf16_avg": np.uint16,
    "reducescatter_fp32_sum": np.float32, "allgather_fp16": np.float16,
    "allreduce_int32_sum": np.int32, "allreduce_fp32_max": np.float32,
    "allreduce_fp32_small": np.float32, "group_allreduce_fp32": np.float32,
    "group_allreduce_int32": np.int32, "group_allgather_fp32": np.float32,
    "second_comm_allreduce_fp32": np.float32, "two_comm_group_a": np.float32,
    "two_comm_group_b": np.float32,
}
COMPRESSED = {"allreduce_fp32_sum", "allreduce_bf16_avg", "reducescatter_fp32_sum",
              "allgather_fp16", "group_allreduce_fp32", "group_allgather_fp32",
              "second_comm_allreduce_fp32"}
PASSED = set(CASES) - COMPRESSED
REPLICATED = COMPRESSED - {"reducescatter_fp32_sum"}  # the same result on every rank


def run_app(tmp_path, name, preload, **env):
    out = tmp_path / name
    out.mkdir()
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("QCCL_")}
    full_env.update({"QCCL_MIN_BYTES": "4096", "QCCL_DEBUG": "INFO", **env})
    if preload:
        full_env["LD_PRELOAD"] = INTERPOSER
    proc = subprocess.run([APP, str(NRANKS), str(out)], env=full_env, capture_output=True,
                          text=True, timeout=300)
    return proc, out


def results(out):
    return {case: [np.fromfile(out / f"{case}.rank{r}.bin", dtype=dt) for r in range(NRANKS)]
            for case, dt in CASES.items()}


def as_float(a):
    if a.dtype == np.uint16:  # bf16: the upper half of an fp32
        return (a.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    return a.astype(np.float64)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("interposer")
    plain, plain_out = run_app(tmp, "plain", preload=False)
    assert plain.returncode == 0, plain.stderr
    none, none_out = run_app(tmp, "none", preload=True, QCCL_CODEC="none")
    assert none.returncode == 0, none.stderr
    fp8, fp8_out = run_app(tmp, "fp8", preload=True, QCCL_CODEC="fp8e4m3")
    assert fp8.returncode == 0, fp8.stderr
    no_ef, no_ef_out = run_app(tmp, "fp8_no_ef", preload=True, QCCL_CODEC="fp8e4m3", QCCL_EF="0")
    assert no_ef.returncode == 0, no_ef.stderr
    return {"plain": results(plain_out), "none": results(none_out), "fp8": results(fp8_out),
            "fp8_no_ef": results(no_ef_out), "fp8_log": fp8.stdout + fp8.stderr,
            "plain_log": plain.stdout + plain.stderr}


def test_exports_exactly_the_intercepted_functions():
    nm = subprocess.run(["nm", "-D", "--defined-only", INTERPOSER], capture_output=True,
                        text=True, check=True).stdout
    exported = {line.split()[-1] for line in nm.splitlines() if line.strip()}
    assert exported == EXPORTS


def test_loads_neither_nccl_nor_host_transports():
    needed = subprocess.run(["readelf", "-d", INTERPOSER], capture_output=True, text=True,
                            check=True).stdout
    libs = re.findall(r"Shared library: \[([^\]]+)\]", needed)
    assert not [lib for lib in libs if re.match(r"lib(nccl|ucp|ucs|uct|mpi|cuda)\b", lib)], libs


def test_codec_none_passes_everything_through_bit_for_bit(runs):
    for case in CASES:
        for r in range(NRANKS):
            assert np.array_equal(runs["none"][case][r], runs["plain"][case][r]), (case, r)


def test_calls_not_worth_compressing_are_nccls_own(runs):
    for case in PASSED:
        for r in range(NRANKS):
            assert np.array_equal(runs["fp8"][case][r], runs["plain"][case][r]), (case, r)


def test_compressed_calls_are_compressed_and_within_the_codec_bound(runs):
    for case in COMPRESSED:
        for r in range(NRANKS):
            got, exact = as_float(runs["fp8"][case][r]), as_float(runs["plain"][case][r])
            n = exact.size if case != "allreduce_fp32_sum" else exact.size // 8
            got, exact = got[:n], exact[:n]  # the first step of the repeated call
            assert not np.array_equal(got, exact), f"{case} rank {r} was not compressed"
            rel = np.linalg.norm(got - exact) / np.linalg.norm(exact)
            assert rel < 0.06, (case, r, rel)  # fp8e4m3: 3 mantissa bits, 2^-4 per element


def test_every_rank_gets_the_same_bits(runs):
    for case in REPLICATED:
        for r in range(1, NRANKS):
            assert np.array_equal(runs["fp8"][case][r], runs["fp8"][case][0]), (case, r)


def test_error_feedback_follows_the_buffer_across_steps(runs):
    # Eight steps of the same reduction on the same buffers: with error feedback the mean of the
    # results approaches the exact sum; without it every step repeats the same error.
    exact = as_float(runs["plain"]["allreduce_fp32_sum"][0]).reshape(8, -1)[0]

    def mean_error(run):
        steps = as_float(runs[run]["allreduce_fp32_sum"][0]).reshape(8, -1)
        return np.linalg.norm(steps.mean(axis=0) - exact) / np.linalg.norm(exact)

    assert mean_error("fp8") < 0.4 * mean_error("fp8_no_ef"), (
        mean_error("fp8"), mean_error("fp8_no_ef"))


def test_info_says_what_became_of_each_call_shape(runs):
    log = runs["fp8_log"]
    assert "forwarding to" in log
    for expected in ["allreduce sum fp32 count 65536 (262144 bytes): compressed as fp8e4m3 with error",
                     "allreduce sum int32 count 65536 (262144 bytes): passed through: dtype",
                     "allreduce max fp32 count 65536 (262144 bytes): passed through: op not Sum/Avg",
                     "allreduce sum fp32 count 64 (256 bytes): passed through: below QCCL_MIN_BYTES",
                     "reducescatter sum fp32 count 16384",
                     "allgather fp16 count 16384 (131072 bytes): compressed",
                     "after its group ended",
                     "in a group whose compressible calls span 2 communicators"]:
        assert expected in log, expected
    # One line per (collective, op, dtype, count) and decision per communicator, not per call.
    once = re.findall(r"allreduce sum fp32 count 65536 \(262144 bytes\): compressed as fp8e4m3 "
                      r"with error feedback$", log, re.M)
    assert len(once) == 2 * NRANKS  # two communicators per rank
    summaries = re.findall(r"summary: (\d+) calls compressed \((\d+) bytes in, (\d+) bytes sent",
                           log)
    assert len(summaries) == 2 * NRANKS  # two communicators per rank, at destroy and abort
    assert any(int(calls) > 0 and 0 < int(wire) < int(bytes_in)
               for calls, bytes_in, wire in summaries)
    assert "QCCL" not in runs["plain_log"]


def test_a_qccl_nccl_lib_naming_the_interposer_is_refused(tmp_path):
    proc, _ = run_app(tmp_path, "self", preload=True, QCCL_CODEC="fp8e4m3",
                      QCCL_NCCL_LIB=INTERPOSER)
    assert proc.returncode != 0
    assert "is libqccl_nccl.so itself" in proc.stderr + proc.stdout
