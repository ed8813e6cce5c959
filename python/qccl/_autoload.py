"""torch's device-backend entry point (the "torch.backends" group, which `import torch` loads
unless TORCH_DEVICE_BACKEND_AUTOLOAD=0): registers the `qccl` process-group backend, so that a
script that never imports qccl can say init_process_group("qccl") or "cpu:qccl,cuda:nccl".

Nothing heavy happens at `import torch`: the extension (and libqccl with UCX and MPI) is loaded by
the first process group made with the backend, through qccl.torch, whose import errors name what
is missing (docs/INTEGRATION.md).
"""


def _create_backend(backend_options, pg_options):
    import qccl.torch
    return qccl.torch._create_backend(backend_options, pg_options)


def register():
    import torch.distributed as dist
    if dist.is_available():
        dist.Backend.register_backend("qccl", _create_backend, extended_api=True,
                                      devices=["cpu", "cuda"])
