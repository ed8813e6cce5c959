"""The `qccl` torch.distributed backend.

    import qccl.torch
    torch.distributed.init_process_group("qccl")           # codec etc. from QCCL_* variables
    torch.distributed.new_group(backend="qccl", pg_options=qccl.torch.Options(codec="fp8e4m3"))

Collectives on CPU tensors run in issue order on one thread per process group and return an
asynchronous Work; on CUDA tensors they are enqueued on the current stream, as NCCL's are. The
group's store carries the bootstrap, so torchrun and init_process_group need nothing else
(docs/INTEGRATION.md).
"""
from dataclasses import dataclass
from typing import Optional

import torch
import torch.distributed as dist

from ._build import TORCH_VERSION as _BUILT_AGAINST

if torch.__version__.split("+")[0] != _BUILT_AGAINST.split("+")[0]:
    raise ImportError(f"qccl.torch was built against torch {_BUILT_AGAINST}, and this is torch "
                      f"{torch.__version__}: install qccl again (pip install ./python) with this torch")
try:
    from . import _C
except ImportError as e:
    raise ImportError(
        f"qccl.torch: its extension does not load: {e}. libqccl needs UCX (Debian: apt-get install "
        f"libucx0) and Open MPI's library (libopenmpi3) where it was built with them "
        f"(docs/INTEGRATION.md, \"Installing the package\")") from e
from .ddp import DdpHookState, ddp_comm_hook, register_ddp_hook
from .diloco import DiLoCo
from .ef_state import attach_ef_state, ef_state, ef_state_key, load_ef_state, reset_ef
from .elastic import ElasticWorld, broadcast_optimizer_state, broadcast_state
from .fsdp import CompressedAllGather, CompressedReduceScatter, compress_fsdp
from .scape import ScapeAdamW
from .zero import changes_sent_bytes, compress_zero_parameters, gather_changes, gather_quantized

__all__ = ["Options", "DiLoCo", "ElasticWorld", "broadcast_state", "broadcast_optimizer_state",
           "DdpHookState", "ddp_comm_hook", "register_ddp_hook", "attach_ef_state", "ef_state",
           "ef_state_key", "load_ef_state", "reset_ef", "CompressedAllGather", "CompressedReduceScatter",
           "compress_fsdp", "compress_zero_parameters", "gather_changes", "gather_quantized",
           "changes_sent_bytes", "ScapeAdamW"]


@dataclass
class Options:
    """Per-group settings; what is None comes from the QCCL_* environment (docs/ENV.md)."""

    codec: Optional[str] = None  # "fp8e4m3", "nvfp4+rht", ... ; "none": exact
    transport: Optional[str] = None  # "auto", "ucx", "mpi"
    algorithm: Optional[str] = None  # allreduce: "sra", "ring", "hier"
    min_bytes: Optional[int] = None  # smaller calls go exact; None: QCCL_MIN_BYTES (auto)
    error_feedback: Optional[bool] = None
    ef_dtype: Optional[str] = None  # residuals: "fp32" or "bf16"
    ef_decay: Optional[float] = None  # residual decay in [0, 1] (docs/ERROR_FEEDBACK.md)


def _create_backend(backend_options, pg_options):
    o = pg_options if isinstance(pg_options, Options) else Options()
    return _C.create_backend(backend_options.store, backend_options.group_rank,
                             backend_options.group_size, backend_options.timeout,
                             codec=o.codec, transport=o.transport, algorithm=o.algorithm,
                             min_bytes=o.min_bytes, error_feedback=o.error_feedback,
                             ef_dtype=o.ef_dtype, ef_decay=o.ef_decay)


dist.Backend.register_backend("qccl", _create_backend, extended_api=True, devices=["cpu", "cuda"])
