"""One rank of test_zero.py: qccl.torch.gather_changes, ZeRO-1/2's parameter all-gather by changes
(docs/INTEGRATION.md, "ZeRO-1/2: parameters by their changes"), as ZeRO calls it: each rank keeps
its shard's exact values apart (the optimizer's master copy), writes them into its shard of the
persistent buffer and all-gathers in place. Exits non-zero, naming what failed.

  zero_worker.py CODEC   (the default group is gloo, for the checks; one qccl group does the work)
"""
import sys

import torch
import torch.distributed as dist

import qccl.torch
from qccl.torch import _C
from qccl.torch._keys import qccl_backend

SHARD = 3000
STEPS, STILL = 30, 40  # steps that change the shard, then steps that do not


def fail(message):
    sys.stderr.write(f"rank {dist.get_rank()}: {message}\n")
    sys.exit(1)


def same_everywhere(t, what):
    gathered = [torch.empty_like(t) for _ in range(dist.get_world_size())]
    dist.all_gather(gathered, t)
    if any(not torch.equal(g.view(torch.int32), t.view(torch.int32)) for g in gathered):
        fail(f"{what}: the buffers differ between ranks")


def sent_bytes(group):
    return _C.wire_bytes(qccl_backend(group))[0]


def main():
    codec = sys.argv[1]
    dist.init_process_group("gloo")
    rank, size = dist.get_rank(), dist.get_world_size()
    group = dist.new_group(backend="qccl", pg_options=qccl.torch.Options(codec="none",
                                                                              min_bytes=0))
    g = torch.Generator().manual_seed(rank)
    buffer = torch.randn(SHARD * size, generator=g)  # different on every rank before registering
    own = buffer[rank * SHARD:(rank + 1) * SHARD]
    master = own.clone()

    qccl.torch.gather_changes(buffer, codec=codec, name="test", group=group)
    same_everywhere(buffer, "after gather_changes")
    if not torch.equal(own, master):
        fail("gather_changes changed this rank's own shard")

    # The exact all-gather's bytes, for comparison: a plain buffer of the same size.
    plain = torch.empty_like(buffer)
    before = sent_bytes(group)
    dist.all_gather_into_tensor(plain, master, group=group)
    exact_bytes = sent_bytes(group) - before

    before = sent_bytes(group)
    for step in range(STEPS + STILL):
        if step < STEPS:
            master += 0.01 * torch.randn(SHARD, generator=g)
        own.copy_(master)  # the optimizer writes the shard's exact values, then gathers in place
        dist.all_gather_into_tensor(buffer, own, group=group)
        same_everywhere(buffer, f"step {step}")
        err = (own - master).abs().max().item() / master.abs().max().item()
        if step == STEPS - 1 and not 0 < err < 0.05:
            fail(f"step {step}: own shard {err:.2e} from the exact values (the codec's bound: "
                 "0 < error < 0.05)")
    delta_bytes = (sent_bytes(group) - before) / (STEPS + STILL)
    if qccl.torch.changes_sent_bytes(group) != sent_bytes(group) - before:
        fail(f"changes_sent_bytes {qccl.torch.changes_sent_bytes(group)}, not the "
             f"{sent_bytes(group) - before} bytes the gathers sent")
    # Once the values stop changing, what earlier calls left out goes out with later ones.
    if not err < 1e-3:
        fail(f"{STILL} steps after the last change the own shard is still {err:.2e} off")
    if not delta_bytes * 3.5 < exact_bytes:
        fail(f"{delta_bytes:.0f} bytes per gather by changes against {exact_bytes} exact")

    # The out-of-place form sends changes too, against the buffer's last result.
    master += 0.01
    dist.all_gather_into_tensor(buffer, master.clone(), group=group)
    same_everywhere(buffer, "out of place")

    # gather_quantized (ZeRO++'s qwZ): the values themselves, encoded, no error feedback: the
    # copies the same everywhere, the own shard the codec's error off, and still as far off
    # after steps that change nothing (no residual goes out later).
    values = torch.randn(SHARD * size, generator=g)
    mine = values[rank * SHARD:(rank + 1) * SHARD]
    exact = mine.clone()
    qccl.torch.gather_quantized(values, codec=codec, name="test.values", group=group)
    errors = []
    for step in range(3):
        mine.copy_(exact)
        dist.all_gather_into_tensor(values, mine, group=group)
        same_everywhere(values, f"gather_quantized, step {step}")
        errors.append((mine - exact).abs().max().item() / exact.abs().max().item())
    if not 0 < errors[0] < 0.1 or errors[-1] != errors[0]:
        fail(f"gather_quantized: own shard errors {errors}: not the codec's error, every step")

    # Misuse: a clear error, nothing registered.
    for bad, what in [(torch.zeros(SHARD * size + 1), "do not split into"),
                      (torch.zeros(SHARD * size, dtype=torch.int32), "takes float32")]:
        try:
            qccl.torch.gather_changes(bad, group=group)
            fail(f"gather_changes accepted a tensor that {what}")
        except RuntimeError as e:
            if what not in str(e):
                fail(f"gather_changes: {e}")
    if rank == 0:
        print(f"{codec}: {delta_bytes:.0f} B per gather by changes, {exact_bytes} B exact; own "
              f"shard {err:.1e} from the exact values after {STILL} still steps", flush=True)
    dist.destroy_process_group(group)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
