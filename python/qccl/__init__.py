"""qccl: compressed collectives. `import qccl.torch` registers the `qccl` torch.distributed
backend (docs/INTEGRATION.md)."""
