"""FSDP2: reduce-scatter (gradients) and all-gather (parameters) through qccl, each FSDP module's
under its own error-feedback keys ("fsdp.<module name>.reduce_scatter" / ".all_gather"), so the
residuals stay with the parameter group whatever buffer FSDP hands in at each step.

    fully_shard(...)                      # over a qccl process group or device mesh
    qccl.torch.compress_fsdp(model)       # gradients compressed, parameters exact

Parameters travel exact by default: the forward pass would otherwise compute with quantized
weights. compress_fsdp(model, all_gather=True) compresses them too (measured on the training test
of tests/torch: fp8e4m3 moved the final loss by 1.2 %, against < 0.01 % for gradients alone).
compress_fsdp(model, parameter_changes="fp8e4m3") sends their changes instead, against a replica
each rank keeps of every module's unsharded parameters (docs/INTEGRATION.md, "FSDP2").
"""
from typing import Optional

import torch
import torch.distributed as dist
from torch.distributed.fsdp import FSDPModule
from torch.distributed.fsdp._fully_shard._fsdp_api import AllGather, ReduceScatter

from . import _C
from ._keys import key_of, qccl_backend
from .zero import gather_changes


class _Allocate:
    def allocate(self, size, *, dtype: torch.dtype, device: torch.device) -> torch.Tensor:
        return torch.empty(*size, dtype=dtype, device=device)


class CompressedReduceScatter(_Allocate, ReduceScatter):
    def __init__(self, name: str):
        self.key = key_of(f"fsdp.{name}.reduce_scatter")

    def __call__(self, output_tensor, input_tensor, group, op, async_op=False):
        work = _C.reduce_scatter(qccl_backend(group, output_tensor.device), output_tensor,
                                 input_tensor, op, self.key)
        if async_op:
            return work
        work.wait()
        return None


class CompressedAllGather(_Allocate, AllGather):
    """exact=True: the all-gather goes uncompressed whatever the group's codec."""

    def __init__(self, name: str, exact: bool = False):
        self.key = key_of(f"fsdp.{name}.all_gather")
        self.exact = exact

    def __call__(self, output_tensor, input_tensor, group, async_op=False):
        work = _C.all_gather(qccl_backend(group, output_tensor.device), output_tensor,
                             input_tensor, self.key, self.exact)
        if async_op:
            return work
        work.wait()
        return None


class ChangesAllGather(_Allocate, AllGather):
    """The module's parameters by their changes: each rank keeps a replica of the module's
    unsharded parameters (FSDP2 frees its own after use), all-gathers into it by changes
    (qccl.torch.gather_changes, `codec`) and copies it into FSDP's output. Memory: one unsharded
    copy of the module's parameters per rank, kept between steps."""

    def __init__(self, name: str, codec: str):
        self.name, self.codec = name, codec
        self.replica = None

    def __call__(self, output_tensor, input_tensor, group, async_op=False):
        if self.replica is None or self.replica.shape != output_tensor.shape or \
                self.replica.dtype != output_tensor.dtype:
            # The first call (or a new layout): every rank's replica made the same, exactly.
            replica = torch.empty_like(output_tensor)
            n = input_tensor.numel()
            replica.view(-1)[group.rank() * n:(group.rank() + 1) * n].copy_(input_tensor.view(-1))
            gather_changes(replica, codec=self.codec, name=f"fsdp.{self.name}.all_gather",
                           group=group)
            self.replica = replica
        dist.all_gather_into_tensor(self.replica, input_tensor, group=group)
        output_tensor.copy_(self.replica)
        return None  # done already: FSDP waits only on a Work it is given


def compress_fsdp(model: torch.nn.Module, reduce_scatter: bool = True, all_gather: bool = False,
                  parameter_changes: Optional[str] = None):
    """Sets qccl's comms on every FSDP module of model (after fully_shard): gradients compressed
    under per-module keys (reduce_scatter=False: FSDP's own reduce-scatter on the group), and
    parameters exact (all_gather=True: compressed; parameter_changes=CODEC: their changes sent
    against a kept replica, ChangesAllGather)."""
    if all_gather and parameter_changes:
        raise ValueError("compress_fsdp: all_gather=True and parameter_changes exclude each other")
    for name, module in model.named_modules():
        if isinstance(module, FSDPModule):
            if reduce_scatter:
                module.set_custom_reduce_scatter(CompressedReduceScatter(name or "root"))
            module.set_custom_all_gather(
                ChangesAllGather(name or "root", parameter_changes) if parameter_changes else
                CompressedAllGather(name or "root", exact=not all_gather))
