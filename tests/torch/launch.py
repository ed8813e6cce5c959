"""Runs a script as WORLD_SIZE local processes with torchrun's environment (RANK, WORLD_SIZE,
LOCAL_RANK, MASTER_ADDR, MASTER_PORT on a free port), for the tests in this folder."""
import os
import socket
import subprocess
import sys


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_ranks(script, world_size, args=(), env=None, timeout=600):
    """Starts every rank, waits for all; returns [(returncode, output)] in rank order."""
    port = free_port()
    procs = []
    for rank in range(world_size):
        e = dict(os.environ if env is None else env)
        e.update(RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE=str(world_size),
                 LOCAL_WORLD_SIZE=str(world_size), MASTER_ADDR="127.0.0.1",
                 MASTER_PORT=str(port))
        procs.append(subprocess.Popen([sys.executable, script, *map(str, args)], env=e,
                                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                      text=True))
    return collect(procs, timeout)


def collect(procs, timeout):
    """Waits for every process (all killed once one outlives the timeout); returns
    [(returncode, output)] in their order."""
    results = []
    for p in procs:
        try:
            out, _ = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            for q in procs:
                q.kill()
            out, _ = p.communicate()
            out += f"\n(timed out after {timeout} s)"
        results.append((p.returncode, out))
    return results
