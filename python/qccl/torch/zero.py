"""ZeRO-1/2 parameter all-gathers by their changes (docs/INTEGRATION.md, "ZeRO-1/2: parameters by
their changes").

ZeRO stage 1 and 2 (DeepSpeed, Megatron's distributed optimizer) keep every parameter on every rank
in a persistent flat buffer; after each step every rank writes its updated shard into the buffer
and all-gathers the shards. What changes in a step is small, so qccl sends each shard's change
against the last gathered value, compressed (QCCL_CALL_DELTA, docs/ALGORITHMS.md): the last
gathered value is the owner's error feedback, and every rank's copy stays bitwise the same.

    engine, *_ = deepspeed.initialize(...)                  # over the qccl backend
    qccl.torch.compress_zero_parameters(engine, codec="fp8e4m3")

After a call every rank's buffer holds the same bits: the decoded replica, the owner's shard too
(its exact values stay in the optimizer's fp32 master copy, which the next step writes into the
shard again). Memory: each registered buffer keeps a copy of this rank's shard, 1/world-size of
the buffer (and a second one while a gather runs).

compress_zero_parameters(engine, codec="int8", changes=False) sends the parameters themselves,
encoded, as ZeRO++'s quantized weights (qwZ) do: no error feedback, every rank's copy the decoded
values (the measurements' reference configuration, docs/PERFORMANCE.md "Sharded training").
"""
import torch

from . import _C
from ._keys import key_of, qccl_backend


def gather_changes(buffer: torch.Tensor, codec: str = "fp8e4m3", name: str = "parameters",
                   group=None) -> None:
    """From now on every all_gather_into_tensor into `buffer` over `group` (a qccl group; None: the
    default one) sends each rank's change against the last result, encoded with `codec`. First
    an exact all-gather of this rank's shard into `buffer` makes every rank's copy the same (a
    collective: every rank calls it, for the same buffers in the same order). `name` gives the
    calls their key. Calling it again for the same buffer replaces the codec and resynchronises."""
    _C.gather_changes(qccl_backend(group, buffer.device), buffer, key_of(f"gather_changes.{name}"),
                      codec=codec).wait()


def gather_quantized(buffer: torch.Tensor, codec: str = "int8", name: str = "parameters",
                     group=None) -> None:
    """As gather_changes, but every all_gather_into_tensor into `buffer` sends each rank's values
    themselves, encoded with `codec`, without error feedback (ZeRO++'s qwZ): every rank's copy
    holds the decoded values, the owner's shard too."""
    _C.gather_changes(qccl_backend(group, buffer.device), buffer, key_of(f"gather_changes.{name}"),
                      codec=codec, changes=False).wait()


def changes_sent_bytes(group=None) -> int:
    """The bytes this rank's all-gathers into buffers registered with gather_changes on `group`
    have sent since registration (qcclCommWireBytes around each call): ZeRO's parameter traffic."""
    return _C.changes_sent_bytes(qccl_backend(group))


def compress_zero_parameters(engine, codec: str = "fp8e4m3", changes: bool = True) -> None:
    """DeepSpeed ZeRO stage 1 or 2 over the qccl backend: the post-step all-gathers of the
    updated parameters send each rank's change, encoded with `codec` (gather_changes on each of
    the optimizer's flat parameter buffers; changes=False: the values themselves,
    gather_quantized). Call it on every rank after deepspeed.initialize, before or after
    load_checkpoint (docs/INTEGRATION.md says what a resumed run holds)."""
    stage = engine.zero_optimization_stage()
    if stage not in (1, 2):
        raise ValueError(f"compress_zero_parameters: ZeRO stage 1 or 2, not {stage} (stage 3 "
                         "frees the parameters it gathers, so no last result stays to send "
                         "changes against)")
    optimizer = engine.optimizer
    for i, (flat, group) in enumerate(zip(optimizer.bit16_groups_flat,
                                          optimizer.real_dp_process_group)):
        register = gather_changes if changes else gather_quantized
        register(flat, codec=codec, name=f"zero.{i}", group=group)
