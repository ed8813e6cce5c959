"""qccl-perf's output: runs a short sweep on 2 ranks under qcclrun and checks the table's format,
the CSV and JSON files, and that #wrong is 0 everywhere. Timings are not checked (that is what
qccl-perf is for, not a unit test)."""
import csv
import json
import os
import subprocess

import pytest

PERF = os.environ.get("QCCL_PERF")
QCCLRUN = os.environ.get("QCCL_QCCLRUN")

pytestmark = pytest.mark.skipif(not PERF or not QCCLRUN,
                                reason="QCCL_PERF and QCCL_QCCLRUN not set (ctest sets them)")

COLUMNS = ["size", "count", "type", "redop", "codec", "time(us)", "algbw", "busbw", "#wrong",
           "wire(B/rank)", "ratio", "relerr", "maxerr", "base(us)", "basebw", "speedup"]


@pytest.mark.parametrize("collective", ["allreduce", "reducescatter", "allgather"])
def test_short_sweep(tmp_path, collective):
    csv_path, json_path = tmp_path / "out.csv", tmp_path / "out.json"
    env = dict(os.environ, QCCL_TRANSPORT="ucx", QCCL_TIMEOUT="60")
    result = subprocess.run(
        [QCCLRUN, "-n", "2", PERF, "-a", collective, "-b", "1K", "-e", "64K", "-f", "4", "-n", "2",
         "-w", "1", "-C", "fp8e4m3,int4", "--csv", str(csv_path), "-J", str(json_path)],
        capture_output=True, text=True, env=env, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    lines = [line.split("] ", 1)[1] for line in result.stdout.splitlines() if line.startswith("[0] ")]
    header = [line for line in lines if line.startswith("#") and "size" in line]
    assert header and header[0].split()[1:] == COLUMNS, header
    rows = [line.split() for line in lines if not line.startswith("#")]
    sizes = [1024, 4096, 16384, 65536]
    assert len(rows) == len(sizes) * 3  # none, fp8e4m3, int4 at each size
    for row in rows:
        assert len(row) == len(COLUMNS), row
        assert int(row[0]) in sizes
        assert row[4] in ("none", "fp8e4m3", "int4")
        assert int(row[8]) == 0, row  # #wrong
        # busbw has three decimals: a 1 KiB call slower than ~2 ms (a loaded machine) prints 0.000.
        assert float(row[5]) > 0 and float(row[7]) >= 0
        if row[4] != "none":
            assert float(row[10]) > 2.0  # compression ratio
    assert any(line.startswith("# total #wrong: 0") for line in lines)
    with open(csv_path) as f:
        records = list(csv.DictReader(f))
    assert len(records) == len(rows) and all(r["wrong"] == "0" for r in records)
    with open(json_path) as f:
        data = json.load(f)
    assert data["collective"] == collective and len(data["rows"]) == len(rows)


def rdma_device_present():
    return os.path.isdir("/sys/class/infiniband") and bool(os.listdir("/sys/class/infiniband"))


@pytest.mark.parametrize("user_threshold", [None, "auto"])
def test_ucx_protocol_is_chosen_unless_the_user_did(user_threshold):
    """Without an RDMA device qccl asks UCX for eager sends at every size (docs/TRANSPORTS.md),
    and says so at INFO; a UCX_RNDV_THRESH the user set is left alone."""
    env = dict(os.environ, QCCL_TRANSPORT="ucx", QCCL_TIMEOUT="60", QCCL_DEBUG="INFO",
               QCCL_DEBUG_SUBSYS="TRANSPORT")
    env.pop("UCX_RNDV_THRESH", None)
    if user_threshold:
        env["UCX_RNDV_THRESH"] = user_threshold
    result = subprocess.run([QCCLRUN, "-n", "2", PERF, "-b", "1K", "-e", "1K", "-n", "1", "-w",
                             "0", "-C", "none", "-B", "0"],
                            capture_output=True, text=True, env=env, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    said = "eager protocol at every size" in result.stdout + result.stderr
    assert said == (user_threshold is None and not rdma_device_present())
