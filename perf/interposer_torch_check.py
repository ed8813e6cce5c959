"""PyTorch DDP and FSDP2 at world size 1 on one GPU, without and with LD_PRELOAD=libqccl_nccl.so.

Part of the device check (perf/gpu_check.sh). Each run trains the same small model from the same
seed for a few dozen steps in a fresh process; the preloaded run compresses with QCCL_CODEC
(default fp8e4m3) and QCCL_COMPRESS_ONE_RANK=1, so the interposer's encode/decode path really runs
although one rank sends nothing. It prints one markdown row per framework: final loss without and
with the preload, their relative difference, and the interposer's summary (calls compressed, bytes
in, wire bytes), which also shows that the interposer was reached. Exit status 1 when a preloaded
run compressed nothing or its loss is off by more than --tolerance.

  python3 perf/interposer_torch_check.py --interposer build-gpu/src/libqccl_nccl.so
"""
import argparse
import os
import re
import subprocess
import sys


def train(framework, steps):
    import torch
    import torch.distributed as dist
    from torch import nn

    dist.init_process_group("nccl", rank=0, world_size=1)
    torch.cuda.set_device(0)
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(256, 1024), nn.GELU(), nn.Linear(1024, 1024), nn.GELU(),
                          nn.Linear(1024, 256)).cuda()
    if framework == "ddp":
        from torch.nn.parallel import DistributedDataParallel
        model = DistributedDataParallel(model, device_ids=[0])
    else:
        from torch.distributed.fsdp import fully_shard
        for layer in model:
            if isinstance(layer, nn.Linear):
                fully_shard(layer)
        fully_shard(model)
    g = torch.Generator(device="cuda").manual_seed(1)
    x = torch.randn(512, 256, device="cuda", generator=g)
    target = torch.sin(x @ torch.randn(256, 256, device="cuda", generator=g) / 16)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for _ in range(steps):
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(x), target)
        loss.backward()
        opt.step()
    torch.cuda.synchronize()
    print(f"final_loss {loss.item():.6f}", flush=True)
    dist.destroy_process_group()


def run(framework, steps, preload, codec, port):
    env = {k: v for k, v in os.environ.items() if not k.startswith("QCCL_")}
    env.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK="0", WORLD_SIZE="1",
               LOCAL_RANK="0")
    if preload:
        env.update(LD_PRELOAD=preload, QCCL_CODEC=codec, QCCL_COMPRESS_ONE_RANK="1",
                   QCCL_DEBUG="INFO")
    proc = subprocess.run([sys.executable, __file__, "--child", framework, "--steps", str(steps)],
                          env=env, capture_output=True, text=True, timeout=600)
    text = proc.stdout + proc.stderr
    loss = re.search(r"final_loss (\S+)", text)
    if proc.returncode != 0 or not loss:
        sys.stderr.write(text[-4000:])
        return None, text
    return float(loss.group(1)), text


def summary(log):
    calls = bytes_in = wire = 0
    for c, b, w in re.findall(r"summary: (\d+) calls compressed \((\d+) bytes in, (\d+) bytes "
                              r"sent", log):
        calls, bytes_in, wire = calls + int(c), bytes_in + int(b), wire + int(w)
    return calls, bytes_in, wire


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--interposer")
    parser.add_argument("--codec", default="fp8e4m3")
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--tolerance", type=float, default=0.02)
    parser.add_argument("--child")
    args = parser.parse_args()
    if args.child:
        return train(args.child, args.steps)
    print("| framework | loss | loss, preloaded | rel. diff | compressed calls | bytes in | "
          "wire bytes | ok |")
    print("|---|---|---|---|---|---|---|---|")
    status = 0
    for i, framework in enumerate(["ddp", "fsdp2"]):
        plain, _ = run(framework, args.steps, None, args.codec, 29500 + 2 * i)
        pre, log = run(framework, args.steps, args.interposer, args.codec, 29501 + 2 * i)
        calls, bytes_in, wire = summary(log)
        if plain is None or pre is None:
            print(f"| {framework} | {plain} | {pre} | - | {calls} | {bytes_in} | {wire} | FAILED |")
            status = 1
            continue
        diff = abs(pre - plain) / abs(plain)
        ok = calls > 0 and diff <= args.tolerance
        status |= 0 if ok else 1
        print(f"| {framework} | {plain:.5f} | {pre:.5f} | {diff:.2%} | {calls} | {bytes_in} | "
              f"{wire} | {'ok' if ok else 'NO'} |")
    return status


if __name__ == "__main__":
    sys.exit(main())
