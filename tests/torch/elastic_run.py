"""Runs one elastic training job (elastic_worker.py) on local processes: hosts the job's store,
starts the first members and, when the job admits one, a new process; returns every process's
result (for test_elastic.py and perf/elastic_training)."""
import glob
import json
import os
import subprocess
import sys
from datetime import timedelta

import torch.distributed as dist

from launch import collect, free_port

WORKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "elastic_worker.py")


def run_job(out, ranks, worker_args, env=None, timeout=1800):
    """worker_args: elastic_worker.py's options (a new process is started when they hold
    --admit-step). Returns (results, outputs): the processes' JSON results and every process's
    (return code, output), the members in rank order, then the new process."""
    port = free_port()
    store = dist.TCPStore("127.0.0.1", port, is_master=True, timeout=timedelta(seconds=timeout))
    base = dict(os.environ if env is None else env, MASTER_ADDR="127.0.0.1",
                MASTER_PORT=str(port), WORLD_SIZE=str(ranks))
    command = [sys.executable, WORKER, out, *map(str, worker_args)]
    procs = [subprocess.Popen(command, env=dict(base, RANK=str(r)), stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True) for r in range(ranks)]
    if "--admit-step" in worker_args:
        procs.append(subprocess.Popen(command + ["--joiner"], env=base, stdout=subprocess.PIPE,
                                      stderr=subprocess.STDOUT, text=True))
    outputs = collect(procs, timeout)
    del store
    results = []
    for path in sorted(glob.glob(f"{out}.*.json")):
        with open(path) as f:
            results.append(json.load(f))
    return results, outputs
