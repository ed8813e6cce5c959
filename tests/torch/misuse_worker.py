"""One rank of test_collectives.py's misuse test: calls the qccl backend refuses raise a
RuntimeError naming the problem, leave the tensors handed in untouched, and the group keeps
working after them."""
import sys

import torch
import torch.distributed as dist

import qccl.torch  # noqa: F401


def refused(call, expected):
    try:
        call()
    except (RuntimeError, ValueError) as e:
        if expected not in str(e):
            sys.exit(f"expected '{expected}' in: {e}")
        return
    sys.exit(f"not refused (expected '{expected}')")


def main():
    dist.init_process_group("qccl")
    size = dist.get_world_size()
    x = torch.arange(8, dtype=torch.float32)
    before = x.clone()
    refused(lambda: dist.all_reduce(torch.zeros(4, dtype=torch.int16)), "not supported")
    refused(lambda: dist.all_reduce(x, op=dist.ReduceOp.BAND), "takes integer dtypes")
    refused(lambda: dist.all_reduce(x, op=dist._make_nccl_premul_sum(2.0)), "reduce op")
    refused(lambda: dist.all_gather_into_tensor(torch.empty(3), x), "world size times")
    refused(lambda: dist.reduce_scatter_tensor(torch.empty(3), x), "world size times")
    refused(lambda: dist.all_gather([torch.empty(8)] * (size + 1), x), "tensors for")
    refused(lambda: dist.all_gather_into_tensor(torch.empty(8 * size, dtype=torch.float16), x),
            "world size times")
    refused(lambda: dist.all_to_all_single(torch.empty(8), x, [8], [8]), "one entry per rank")
    refused(lambda: dist.all_to_all_single(torch.empty(8), x, [3] * size, [4] * size),
            "must sum to")
    refused(lambda: dist.send(x, 0 if dist.get_rank() else 1, tag=1 << 24), "tag")
    if not torch.equal(x, before):
        sys.exit("a refused call changed its input")
    dist.all_reduce(x)
    if not torch.equal(x, before * size):
        sys.exit(f"the group does not work after the refusals: {x}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
