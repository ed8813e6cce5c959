"""One rank of test_deepspeed.py: the training test's language model under DeepSpeed ZeRO (stage
2 or 3) on CPU, over gloo or the qccl backend (torch.distributed backends both: DeepSpeed's comm
layer calls torch.distributed). Rank 0 writes the loss of every step, averaged over the ranks,
to OUT as JSON. With PARAMETER_CODEC (stage 1 or 2, qccl), the post-step parameter all-gathers
send each rank's change encoded with it (qccl.torch.compress_zero_parameters), and the worker
checks at the end that every rank holds the same parameters, its own shard the decoded one
(close to, and not equal to, the optimizer's fp32 master copy).

  deepspeed_worker.py {gloo|qccl} STAGE STEPS OUT [PARAMETER_CODEC]
"""
import hashlib
import json
import sys

import deepspeed
import torch
import torch.distributed as dist

from train_worker import VOCAB, LanguageModel, batch


def check_parameters(optimizer):
    """Every rank's flat parameters bitwise the same; this rank's shard within 5 % of its master
    copy and not equal to it (the codec was applied)."""
    for flat, master in zip(optimizer.bit16_groups_flat, optimizer.single_partition_of_fp32_groups):
        digests = [None] * dist.get_world_size()
        dist.all_gather_object(digests, hashlib.sha256(flat.numpy().tobytes()).hexdigest())
        if len(set(digests)) != 1:
            sys.exit(f"rank {dist.get_rank()}: the ranks' parameters differ")
        n = master.numel()
        own = flat[dist.get_rank() * n:(dist.get_rank() + 1) * n]
        err = ((own - master).norm() / master.norm()).item()
        if not 0 < err < 0.05:
            sys.exit(f"rank {dist.get_rank()}: own shard {err:.2e} from the master copy")


def main():
    backend, stage, steps, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    parameter_codec = sys.argv[5] if len(sys.argv) > 5 else None
    if backend == "qccl":
        import qccl.torch  # registers the backend
    torch.set_num_threads(1)
    deepspeed.init_distributed(dist_backend=backend)
    torch.manual_seed(0)
    model = LanguageModel()
    config = {
        "train_micro_batch_size_per_gpu": 8,
        "optimizer": {"type": "SGD", "params": {"lr": 0.1, "momentum": 0.9}},
        "zero_optimization": {"stage": stage},
        "zero_allow_untested_optimizer": True,  # DeepSpeed lists Adam variants only
        "steps_per_print": 1_000_000,
    }
    engine, _, _, _ = deepspeed.initialize(model=model, model_parameters=model.parameters(),
                                           config=config)
    if parameter_codec:
        qccl.torch.compress_zero_parameters(engine, codec=parameter_codec)
    rank = dist.get_rank()
    losses = {}
    for step in range(1, steps + 1):
        tokens, targets = batch(step, rank)
        loss = torch.nn.functional.cross_entropy(engine(tokens).reshape(-1, VOCAB),
                                                 targets.reshape(-1))
        engine.backward(loss)
        engine.step()
        mean = loss.detach().clone()
        dist.all_reduce(mean)
        losses[step] = mean.item() / dist.get_world_size()
    if parameter_codec:
        check_parameters(engine.optimizer)
    if rank == 0:
        with open(out, "w") as f:
            json.dump(losses, f)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
