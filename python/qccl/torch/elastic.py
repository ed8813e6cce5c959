"""Elastic training: the job's world survives the loss of peers and admits new processes, without a
restart (docs/INTEGRATION.md, "Elastic training").

    dist.init_process_group("qccl")                # the first members, as usual (torchrun)
    world = qccl.torch.ElasticWorld()               # a new process: qccl.torch.ElasticWorld.join()
    while training:
        try:
            ...                                     # collectives on the default group
        except RuntimeError:                        # a peer was lost: qccl's error
            world.shrink()                          # the survivors' world, renumbered in order
            ...                                     # rebuild DDP / outer.regroup(), redo the step
        if at_a_synchronisation and world.admit():  # every member at the same point
            ...                                     # hand the state over (outer.regroup(),
                                                    # broadcast_state)

Each change makes a new qccl communicator (qcclCommShrink, qcclCommGrow) and installs it as
torch.distributed's default group: dist.get_rank(), dist.get_world_size() and every collective
without a group then speak of the new world; a DistributedDataParallel or an outer loop made on the
old one must be remade or regrouped. New processes reach the group through the job's store (the
TCPStore at MASTER_ADDR:MASTER_PORT, which torchrun's agent hosts): each takes a ticket and waits;
the members' next admit() grows the world by every ticket taken so far, and the new ranks get the
grow's unique id (and its secret) through the store.
"""
import hashlib
import json
import os
import sys
import time
from datetime import timedelta
from typing import Dict, Iterable, Optional

import torch
import torch.distributed as dist

from . import _C

_PREFIX = "qccl_elastic/"
_DEVICES = ("cpu", "cuda")


def _job_store(timeout):
    """A client of the job's store: torchrun's (its agent hosts it at MASTER_ADDR:MASTER_PORT)."""
    host, port = os.environ.get("MASTER_ADDR"), os.environ.get("MASTER_PORT")
    if not host or not port:
        raise ValueError("ElasticWorld: no store given and MASTER_ADDR / MASTER_PORT are not set "
                         "(torchrun sets them; or pass store=)")
    return dist.TCPStore(host, int(port), is_master=False, timeout=timeout)


class ElasticWorld:
    """The world of an elastic job (see the module's docstring). rank, size: this process's now;
    generation: how many changes the world has been through."""

    def __init__(self, store: Optional[dist.Store] = None, *,
                 timeout: timedelta = timedelta(minutes=30)):
        """Takes over the default group made by init_process_group("qccl"); every first member
        makes one."""
        if not dist.is_initialized():
            raise RuntimeError("ElasticWorld: init_process_group('qccl') first (a new process "
                               "calls ElasticWorld.join())")
        self._setup(store, timeout)
        self.generation = 0
        self.group = dist.group.WORLD
        self.history = []  # one dict per change: what, generation, rank, size, seconds
        self._backend()  # a clear error if the world is not a qccl group

    def _setup(self, store, timeout):
        self.timeout = timeout
        self._store = dist.PrefixStore(_PREFIX, store if store is not None else _job_store(timeout))

    @property
    def rank(self) -> int:
        return self.group.rank()

    @property
    def size(self) -> int:
        return self.group.size()

    def _backend(self):
        backend = self.group._get_backend(torch.device("cpu"))
        if backend._get_backend_name() != "qccl":
            raise RuntimeError(f"ElasticWorld: the world's backend is "
                               f"'{backend._get_backend_name()}', not qccl")
        return backend

    # ---- changes ------------------------------------------------------------------------------

    def shrink(self, exclude: Iterable[int] = ()):
        """Every survivor of a failed collective calls it (the lost ranks are found by the
        survivors' agreement; exclude may name more). Installs the survivors' world."""
        started, old = time.perf_counter(), (self.rank, self.size)
        backend = _C.shrink(self._backend(), list(exclude))
        self._install(backend, self.generation + 1)
        self._record("shrink", started, f"rank {old[0]} of {old[1]} is rank {self.rank} of "
                     f"{self.size}")

    def admit(self, wait_for: int = 0) -> bool:
        """Every member at the same point (a synchronisation): admits every process that asked to
        join since the last admit; wait_for > 0 first waits (at most the timeout) until that many
        have asked. True when the world grew (the new ranks then expect the state handover:
        DiLoCo.regroup(), broadcast_state)."""
        started = time.perf_counter()
        counts = torch.zeros(2, dtype=torch.int64)  # admitted so far, tickets taken
        if self.rank == 0:
            admitted = int(self._store.get("admitted")) if self._store.check(["admitted"]) else 0
            if wait_for > 0:
                self._store.wait([f"asked/{admitted + wait_for}"], self.timeout)
            counts[:] = torch.tensor([admitted, self._store.add("tickets", 0)])
        dist.broadcast(counts, group_src=0)
        admitted, tickets = counts.tolist()
        if tickets == admitted:
            return False
        size = self.size + tickets - admitted
        backend = self._backend()
        grow_id = None
        if self.rank == 0:
            grow_id = _C.grow_unique_id(backend)
            for i, ticket in enumerate(range(admitted + 1, tickets + 1)):
                self._store.set(f"admit/{ticket}", json.dumps(
                    {"generation": self.generation + 1, "size": size, "rank": self.size + i,
                     "id": grow_id.hex()}))
            self._store.set("admitted", str(tickets))
        old = self.size
        self._install(_C.grow(backend, size, grow_id), self.generation + 1)
        self._record("admit", started, f"{size - old} new rank(s), {old} -> {size} ranks")
        return True

    @classmethod
    def join(cls, store: Optional[dist.Store] = None, *,
             timeout: timedelta = timedelta(minutes=30), options=None) -> "ElasticWorld":
        """A new process: asks to join and waits (at most timeout) for the members' next admit();
        then its world is installed as the default group. options: qccl.torch.Options for its
        communicator (the members' settings are their own: give the same)."""
        from . import Options

        world = cls.__new__(cls)
        world._setup(store, timeout)
        world.history = []
        started = time.perf_counter()
        ticket = world._store.add("tickets", 1)
        world._store.set(f"asked/{ticket}", "")
        print(f"qccl elastic: join: waiting to be admitted (ticket {ticket})", file=sys.stderr,
              flush=True)
        world._store.wait([f"admit/{ticket}"], timeout)
        admission = json.loads(world._store.get(f"admit/{ticket}"))
        o = options if options is not None else Options()
        backend = _C.join(admission["size"], bytes.fromhex(admission["id"]), admission["rank"],
                          timeout, codec=o.codec, transport=o.transport, algorithm=o.algorithm,
                          min_bytes=o.min_bytes, error_feedback=o.error_feedback,
                          ef_dtype=o.ef_dtype, ef_decay=o.ef_decay)
        world._install(backend, admission["generation"])
        world._record("join", started, f"rank {world.rank} of {world.size}")
        return world

    def _record(self, what, started, text):
        seconds = time.perf_counter() - started
        self.history.append({"what": what, "generation": self.generation, "rank": self.rank,
                             "size": self.size, "seconds": round(seconds, 3)})
        print(f"qccl elastic: {what}: {text} (generation {self.generation}, {seconds:.3f} s)",
              file=sys.stderr, flush=True)

    def _install(self, backend, generation):
        """Makes a process group of `backend` and installs it as torch.distributed's default
        group, in place of the last one."""
        rank, size = backend.rank(), backend.size()
        name = f"qccl_elastic_world{generation}"
        store = dist.PrefixStore(f"world{generation}/", self._store)
        pg = dist.ProcessGroup(store, rank, size)
        pg._set_default_backend(dist.ProcessGroup.BackendType.CUSTOM)
        for device in _DEVICES:
            pg._register_backend(torch.device(device), dist.ProcessGroup.BackendType.CUSTOM,
                                 backend)
        pg._set_group_name(name)
        c10d = dist.distributed_c10d
        if dist.is_initialized():
            dist.destroy_process_group()
        c10d._register_pg_in_world(pg, backend_name="qccl", store=store, group_name=name,
                                   backend_config="cpu:qccl,cuda:qccl",
                                   rank_mapping={r: r for r in range(size)},
                                   add_to_default_tag=True)
        c10d._update_default_pg(pg)
        self.group = pg
        self.generation = generation


def _digest(tensors) -> int:
    h = hashlib.blake2b(digest_size=8)
    for t in tensors:
        h.update(t.detach().contiguous().cpu().reshape(-1).view(torch.uint8).numpy().tobytes())
    return int.from_bytes(h.digest(), "little", signed=True)


def _text_digest(text: str) -> int:
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little",
                          signed=True)


def _check_same_everywhere(value: int, group, what: str):
    mine = torch.tensor([value], dtype=torch.int64)
    every = torch.empty(dist.get_world_size(group), dtype=torch.int64)
    dist.all_gather_into_tensor(every, mine, group=group)
    values = every.tolist()
    differ = [r for r, v in enumerate(values) if v != values[0]]
    if differ:
        raise RuntimeError(f"{what} of ranks {differ} differ from rank 0's")


def broadcast_state(tensors: Dict[str, torch.Tensor], src: int = 0, group=None):
    """Hands named tensors from rank src to every rank, in place, exactly (after a membership
    change: a new rank's model, optimizer state, ...). Every rank passes the same names, shapes
    and dtypes (checked first: RuntimeError on every rank, nothing written, when they differ); the
    result is checked by a hash of every rank's copy (RuntimeError on every rank naming the ranks
    whose copy differs)."""
    names = sorted(tensors)
    _check_same_everywhere(
        _text_digest(json.dumps([(n, list(tensors[n].shape), str(tensors[n].dtype))
                                 for n in names])), group, "broadcast_state: the names, shapes or dtypes")
    with torch.no_grad():
        for n in names:
            dist.broadcast(tensors[n], group_src=src, group=group)
    _check_same_everywhere(_digest(tensors[n] for n in names), group,
                           "broadcast_state: the tensors")


def _broadcast_json(value, src: int, group):
    """Rank src's JSON-able value on every rank of the group (None elsewhere on entry). A value
    src cannot encode raises TypeError on every rank."""
    payload = b""
    if dist.get_rank(group) == src:
        try:
            payload = json.dumps(value).encode()
        except TypeError:
            payload = None
    size = torch.tensor([-1 if payload is None else len(payload)], dtype=torch.int64)
    dist.broadcast(size, group_src=src, group=group)
    if size.item() < 0:
        raise TypeError(f"broadcast_optimizer_state: rank {src}'s optimizer state holds a value "
                        "that is neither a tensor nor JSON-able")
    data = torch.frombuffer(bytearray(payload), dtype=torch.uint8) if payload else \
        torch.empty(size.item(), dtype=torch.uint8)
    dist.broadcast(data, group_src=src, group=group)
    return json.loads(bytes(data.numpy()).decode())


def broadcast_optimizer_state(optimizer: torch.optim.Optimizer, src: int = 0, group=None, *,
                              keep: bool = False):
    """Hands rank src's optimizer state (per parameter: AdamW's moments and step, SGD's momentum)
    to every rank of the group, exactly: a new rank's optimizer has none, and its first steps
    would otherwise be full-size (AdamW's bias correction at step 1). Every rank's optimizer holds
    the same parameters in the same param_groups order (checked: RuntimeError on every rank). A
    rank passing keep=True takes part but keeps its own state (a member, when only the new ranks
    need rank src's). Tensors go through broadcast_state (checked by hash); other values with
    the layout, as JSON."""
    params = [p for g in optimizer.param_groups for p in g["params"]]
    _check_same_everywhere(_text_digest(json.dumps([list(p.shape) for p in params])), group,
                           "broadcast_optimizer_state: the optimizer's parameters")
    me = dist.get_rank(group)
    layout = None
    if me == src:
        layout = [[i, key, [list(v.shape), str(v.dtype).removeprefix("torch."),
                            v.device.type == "cpu"] if torch.is_tensor(v) else None,
                   None if torch.is_tensor(v) else v]
                  for i, p in enumerate(params) for key, v in optimizer.state.get(p, {}).items()]
    layout = _broadcast_json(layout, src, group)
    tensors = {}
    if not keep and me != src:
        for p in params:
            optimizer.state.pop(p, None)
    for i, key, tensor, value in layout:
        p = params[i]
        if tensor is None:
            if not keep and me != src:
                optimizer.state[p][key] = value
            continue
        shape, dtype, on_cpu = tensor
        if me == src:
            t = optimizer.state[p][key]
        else:
            t = torch.empty(shape, dtype=getattr(torch, dtype),
                            device="cpu" if on_cpu else p.device)
            if not keep:
                optimizer.state[p][key] = t
        tensors[f"{i}.{key}"] = t
    broadcast_state(tensors, src=src, group=group)
