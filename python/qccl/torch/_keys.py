"""Error-feedback keys from names: the same name gives the same 64-bit key on every rank and in
every run, so residuals attach to a bucket or a parameter group, not to a buffer address."""
import hashlib

import torch


def key_of(name: str) -> int:
    key = int.from_bytes(hashlib.blake2b(name.encode(), digest_size=8).digest(), "little")
    return key or 1  # 0 means "derive from the address"


def qccl_backend(group, device=torch.device("cpu")):
    """The C++ qccl backend of a process group; a clear error for a group of another backend."""
    import torch.distributed as dist

    group = group if group is not None else dist.group.WORLD
    return group._get_backend(torch.device(device))
