"""DDP: a communication hook that all-reduces each gradient bucket through qccl, averaging over
the ranks, with error-feedback residuals that follow the bucket's parameters.

    model = DistributedDataParallel(model, process_group=qccl_group)
    qccl.torch.register_ddp_hook(model)

DDP lays its buckets out again after the first step (in the order gradients became ready), and a
run resumed from a checkpoint starts with the first layout again. So the hook reduces each bucket
with its gradients in the model's parameter order, under a key named by the bucket's parameters:
the same parameters give the same bytes and the same key whatever DDP's layout, and a resumed run
continues exactly (tests/torch/test_training.py) when the buckets hold the same parameters before
and after the relayout (one bucket always does; with several, a bucket whose parameters changed
starts from zero residuals in the first step).
"""
import torch
import torch.distributed as dist

from . import _C
from ._keys import key_of, qccl_backend


class DdpHookState:
    """The qccl process group the hook reduces over, and the model's parameter order."""

    def __init__(self, group, parameters):
        self.group = group
        self.backend = qccl_backend(group)
        self.index = {id(p): i for i, p in enumerate(parameters)}


def ddp_comm_hook(state: DdpHookState,
                  bucket: dist.GradBucket) -> torch.futures.Future[torch.Tensor]:
    buffer, grads = bucket.buffer(), bucket.gradients()
    where = [state.index[id(p)] for p in bucket.parameters()]
    order = sorted(range(len(grads)), key=lambda i: where[i])
    key = key_of("ddp.params:" + ",".join(str(where[i]) for i in order))
    in_order = order == list(range(len(grads)))
    tensor = buffer if in_order else torch.cat([grads[i].reshape(-1) for i in order])
    work = _C.all_reduce(state.backend, tensor, dist.ReduceOp.AVG, key)

    def unpack(fut):
        fut.wait()  # a failed allreduce fails the hook's future (then() runs on errors too)
        if not in_order:
            offset = 0
            for i in order:
                n = grads[i].numel()
                grads[i].copy_(tensor[offset:offset + n].view_as(grads[i]))
                offset += n
        return buffer

    return work.get_future().then(unpack)


def register_ddp_hook(model, group=None):
    """Registers ddp_comm_hook on a DistributedDataParallel model; the group defaults to the
    model's own process group, which must then be a qccl group."""
    state = DdpHookState(group if group is not None else model.process_group,
                         model.module.parameters())
    model.register_comm_hook(state, ddp_comm_hook)
    return state
