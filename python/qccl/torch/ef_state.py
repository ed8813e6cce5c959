"""Error-feedback state through checkpoints. Residuals are per rank: every rank saves and loads
its own (as optimizer state sharded by FSDP is).

    attach_ef_state(model, group)   # model.state_dict() then carries "_qccl_ef_state"
    torch.save(model.state_dict(), f"ckpt.rank{rank}.pt")
    model.load_state_dict(torch.load(...))   # restores the residuals too
"""
import torch

from . import _C
from ._keys import qccl_backend

ef_state_key = "_qccl_ef_state"  # the state_dict entry attach_ef_state adds


def ef_state(group=None) -> torch.Tensor:
    """This rank's residuals of the group's communicator, as a uint8 tensor."""
    data = _C.ef_state(qccl_backend(group))
    return torch.frombuffer(bytearray(data), dtype=torch.uint8)


def load_ef_state(state: torch.Tensor, group=None) -> None:
    _C.load_ef_state(qccl_backend(group), bytes(state.cpu().numpy().tobytes()))


def reset_ef(group=None) -> None:
    """Drops this rank's residuals of every key of the group's communicator (qcclEfReset)."""
    _C.reset_ef(qccl_backend(group), 0)


def attach_ef_state(module: torch.nn.Module, group=None) -> None:
    """module.state_dict() gains this rank's residuals; load_state_dict() restores them."""

    def save(mod, state_dict, prefix, local_metadata):
        state_dict[prefix + ef_state_key] = ef_state(group)

    def load(mod, state_dict, prefix, *args):
        state = state_dict.pop(prefix + ef_state_key, None)
        if state is not None:
            load_ef_state(state, group)

    module._register_state_dict_hook(save)
    module._register_load_state_dict_pre_hook(load, with_module=True)
