"""One rank of test_deepspeed.py: the training test's language model under DeepSpeed ZeRO (stage
2 or 3) on CPU, over gloo or the qccl backend (torch.distributed backends both: DeepSpeed's comm
layer calls torch.distributed). Rank 0 writes the loss of every step, averaged over the ranks,
to OUT as JSON.

  deepspeed_worker.py {gloo|qccl} STAGE STEPS OUT
"""
import json
import sys

import deepspeed
import torch
import torch.distributed as dist

from train_worker import VOCAB, LanguageModel, batch


def main():
    backend, stage, steps, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    if backend == "qccl":
        import qccl.torch  # noqa: F401  (registers the backend)
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
    if rank == 0:
        with open(out, "w") as f:
            json.dump(losses, f)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
