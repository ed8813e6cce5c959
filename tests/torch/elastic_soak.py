#!/usr/bin/env python3
"""Churn soak of qccl.torch.ElasticWorld (docs/RELIABILITY.md, "Churn soak"): local processes in a
loop of collectives while members are SIGKILLed and new processes join at random, one change at a
time, never below 2 ranks nor above --max-ranks.

    PYTHONPATH=build/python tests/torch/elastic_soak.py SECONDS [--ranks 4] [--max-ranks 5]
        [--seed 0] [-o RESULT.json]

Each iteration every member: an exact allreduce of int64 (1, its token, rank 0's stop flag), checked
against the world's size and the sum of the allgathered tokens; a compressed allreduce of 4,096
fp32 values (the group's codec: fp8e4m3 here), whose result's hash is allgathered and must be the
same on every rank; then world.admit(). A collective that fails (a peer was killed) makes every
survivor world.shrink(). Rank 0 publishes the generation and size in the store; the driver makes
its next change (after 1 to 4 s, chosen by --seed) only once the last one is seen, and a change
not seen within 60 s is a hang: every process's Python stacks are dumped (SIGUSR1) and the soak
fails. The first member of rank 1 is never killed: its resident memory (after malloc_trim) is
taken one minute in, at half time and at the end, and may grow by at most 5 % + 8 MiB over the
second half. Exit status 0 only with no wrong result, no hang and flat memory.
"""
import argparse
import ctypes
import faulthandler
import hashlib
import json
import os
import random
import signal
import subprocess
import sys
import time
from datetime import timedelta

import torch
import torch.distributed as dist

from launch import free_port

PREFIX = "elastic_soak/"
HANG_SECONDS = 60


def resident_mib():
    ctypes.CDLL("libc.so.6").malloc_trim(0)
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def worker(args):
    import qccl.torch

    faulthandler.register(signal.SIGUSR1, all_threads=True)
    torch.set_num_threads(1)
    store = dist.TCPStore(os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"]),
                          is_master=False)
    soak = dist.PrefixStore(PREFIX, store)
    if args.joiner:
        world = qccl.torch.ElasticWorld.join(store, timeout=timedelta(seconds=120))
    else:
        dist.init_process_group("qccl", store=dist.PrefixStore("init/", store),
                                rank=int(os.environ["RANK"]),
                                world_size=int(os.environ["WORLD_SIZE"]))
        world = qccl.torch.ElasticWorld(store, timeout=timedelta(seconds=120))
    token = os.getpid()
    started, published = time.monotonic(), None
    checks = wrong = 0
    memory = {}
    iteration = 0
    while True:
        iteration += 1
        try:
            stop = world.rank == 0 and soak.check(["stop"])
            counts = torch.tensor([1, token, int(stop)], dtype=torch.int64)
            dist.all_reduce(counts)
            tokens = torch.empty(world.size, dtype=torch.int64)
            dist.all_gather_into_tensor(tokens, torch.tensor([token], dtype=torch.int64))
            values = torch.randn(4096, generator=torch.Generator().manual_seed(iteration * 7919
                                                                               + world.rank))
            dist.all_reduce(values)
            digest = int.from_bytes(hashlib.blake2b(values.numpy().tobytes(), digest_size=8)
                                    .digest(), "little", signed=True)
            digests = torch.empty(world.size, dtype=torch.int64)
            dist.all_gather_into_tensor(digests, torch.tensor([digest], dtype=torch.int64))
            checks += 1
            if (counts[0] != world.size or counts[1] != tokens.sum()
                    or len(set(digests.tolist())) != 1):
                wrong += 1
                print(f"wrong at iteration {iteration}: counts {counts.tolist()}, size "
                      f"{world.size}, tokens {tokens.tolist()}, digests {digests.tolist()}",
                      file=sys.stderr, flush=True)
            if counts[2]:
                break
            world.admit()
        except RuntimeError as e:
            print(f"iteration {iteration}: {str(e).splitlines()[0]}", file=sys.stderr, flush=True)
            world.shrink()
        if world.rank == 0 and published != world.generation:
            soak.set("world", json.dumps([world.generation, world.size]))
            published = world.generation
        if args.watch:
            elapsed = time.monotonic() - started
            for name, at in (("1 min", 60), ("half time", args.watch / 2)):
                if name not in memory and elapsed >= at:
                    memory[name] = resident_mib()
    if args.watch:
        memory["end"] = resident_mib()
    result = {"token": token, "iterations": iteration, "checks": checks, "wrong": wrong,
              "memory_mib": memory, "changes": world.history}
    with open(f"{args.out}.{token}.json", "w") as f:
        json.dump(result, f)
    dist.destroy_process_group()


def drive(args):
    rng = random.Random(args.seed)
    port = free_port()
    store = dist.TCPStore("127.0.0.1", port, is_master=True, timeout=timedelta(seconds=120))
    soak = dist.PrefixStore(PREFIX, store)
    env = {k: v for k, v in os.environ.items() if not k.startswith("QCCL_")}
    env.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), WORLD_SIZE=str(args.ranks),
               QCCL_CODEC="fp8e4m3", QCCL_MIN_BYTES="0", QCCL_TIMEOUT="10")
    out = args.output + ".proc"
    command = [sys.executable, os.path.abspath(__file__), "--worker", "--out", out]
    logs = []

    def start(extra, rank=None):
        log = open(f"{out}.log{len(logs)}", "w+")
        logs.append(log)
        e = dict(env, RANK=str(rank)) if rank is not None else env
        return subprocess.Popen(command + extra, env=e, stdout=log, stderr=subprocess.STDOUT)

    watched = None
    live = []
    for r in range(args.ranks):
        p = start(["--watch", str(args.seconds)] if r == 1 else [], rank=r)
        live.append(p)
        if r == 1:
            watched = p
    killed, joined, failures = [], [], []

    def wait_for(generation, size):
        deadline = time.monotonic() + HANG_SECONDS
        while time.monotonic() < deadline:
            if soak.check(["world"]) and json.loads(soak.get("world")) == [generation, size]:
                return True
            if any(p.poll() not in (None,) for p in live):
                failures.append(f"a process exited during the change to generation {generation}")
                return False
            time.sleep(0.05)
        failures.append(f"hang: generation {generation} ({size} ranks) not seen in "
                        f"{HANG_SECONDS} s; stacks follow in the logs")
        for p in live:
            p.send_signal(signal.SIGUSR1)
        time.sleep(2)
        return False

    ok = wait_for(0, args.ranks)
    began, generation = time.monotonic(), 0
    while ok and time.monotonic() - began < args.seconds:
        time.sleep(rng.uniform(1, 4))
        size = len(live)
        if size > 2 and (size == args.max_ranks or rng.random() < 0.5):
            victim = rng.choice([p for p in live if p is not watched])
            victim.kill()
            victim.wait()
            live.remove(victim)
            killed.append(round(time.monotonic() - began, 1))
        else:
            live.append(start(["--joiner"]))
            joined.append(round(time.monotonic() - began, 1))
        generation += 1
        ok = wait_for(generation, len(live))
    if ok:
        soak.set("stop", "1")
    codes = []
    for p in live:
        try:
            codes.append(p.wait(timeout=HANG_SECONDS))
        except subprocess.TimeoutExpired:
            p.send_signal(signal.SIGUSR1)
            time.sleep(2)
            p.kill()
            codes.append("hung")
            failures.append("a process did not stop")
    results = []
    for p in live:
        path = f"{out}.{p.pid}.json"
        if os.path.exists(path):
            with open(path) as f:
                results.append(json.load(f))
    if any(c != 0 for c in codes):
        failures.append(f"exit codes of the last members: {codes}")
    wrong = sum(r["wrong"] for r in results)
    if wrong:
        failures.append(f"{wrong} wrong results")
    memory = next((r["memory_mib"] for r in results if r["memory_mib"]), {})
    if len(memory) == 3 and memory["end"] > memory["half time"] * 1.05 + 8:
        failures.append(f"resident memory grew over the second half: {memory}")
    elif ok and len(memory) != 3:
        failures.append(f"the watched process's memory samples are missing: {memory}")
    summary = {"seconds": args.seconds, "kills": len(killed), "joins": len(joined),
               "generations": generation, "final_size": len(live),
               "checks_by_last_members": [r["checks"] for r in results], "wrong": wrong,
               "watched_memory_mib": {k: round(v, 1) for k, v in memory.items()},
               "failures": failures}
    print(json.dumps(summary, indent=1))
    with open(args.output, "w") as f:
        json.dump(dict(summary, killed_at=killed, joined_at=joined), f)
    if failures:
        for i, log in enumerate(logs):
            log.seek(0)
            text = log.read()
            print(f"--- process {i}:\n{text[-3000:]}", file=sys.stderr)
    for log in logs:
        log.close()
    return 1 if failures else 0


def main():
    p = argparse.ArgumentParser()
    p.add_argument("seconds", type=float, nargs="?")
    p.add_argument("--ranks", type=int, default=4)
    p.add_argument("--max-ranks", type=int, default=5)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("-o", "--output", default="elastic_soak.json")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--joiner", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--watch", type=float, default=0, help=argparse.SUPPRESS)
    p.add_argument("--out", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.worker:
        return worker(args)
    if args.seconds is None or args.ranks < 2 or args.max_ranks < args.ranks:
        p.error("give SECONDS, and 2 <= --ranks <= --max-ranks")
    return drive(args)


if __name__ == "__main__":
    sys.exit(main())
