"""Real text for the training measurements: the Python standard library's own sources, which
every Debian machine with python3 has (packages libpython3.X-minimal and libpython3.X-stdlib), read
as bytes for a byte-level language model (vocabulary 256).

The files: every *.py under the system Python's stdlib folder (Debian's /usr/lib/python3.N, the
newest there; else this interpreter's, sysconfig's "stdlib"; $QCCL_CORPUS_ROOT overrides), except
site-packages, dist-packages and the test suites (any path with a folder named test, tests or
idle_test), sorted by path. Every tenth file (index % 10 == 9) is held out for validation, so no
file contributes to both splits. Each split is its files' bytes, each file followed by one NUL.
On Debian 12 (Python 3.11.2, 638 files) that is 9.9 MB of training text and 1.05 MB held out
(docs/PERFORMANCE.md, "Low-communication training").

Batches are windows at random offsets of the training split, drawn from a generator seeded by
(seed, step, rank): a run's data does not depend on what the other ranks did or on restarts.
Validation is the mean loss over fixed, evenly spaced windows of the held-out split.
"""
import glob
import os
import sysconfig

import torch

_SKIPPED_FOLDERS = {"site-packages", "dist-packages", "test", "tests", "idle_test"}
_cache = {}


def default_root():
    if os.environ.get("QCCL_CORPUS_ROOT"):
        return os.environ["QCCL_CORPUS_ROOT"]
    system = sorted(glob.glob("/usr/lib/python3.*/os.py"),
                    key=lambda p: int(p.split("python3.")[1].split("/")[0]))
    return os.path.dirname(system[-1]) if system else sysconfig.get_paths()["stdlib"]


def stdlib_files(root=None):
    root = root or default_root()
    found = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in _SKIPPED_FOLDERS and d != "__pycache__"]
        found += [os.path.join(folder, f) for f in files if f.endswith(".py")]
    return sorted(found, key=lambda p: os.path.relpath(p, root))


def splits(root=None):
    """(train, validation): uint8 tensors of the two splits."""
    root = root or default_root()
    if root in _cache:
        return _cache[root]
    parts = {False: [], True: []}
    for i, path in enumerate(stdlib_files(root)):
        with open(path, "rb") as f:
            parts[i % 10 == 9].append(f.read() + b"\0")
    if not parts[False] or not parts[True]:
        raise RuntimeError(f"no Python sources under {root}")
    result = tuple(torch.frombuffer(bytearray(b"".join(parts[held])), dtype=torch.uint8)
                   for held in (False, True))
    _cache[root] = result
    return result


def batch(step, rank, batch_size, seq, seed=0):
    """(inputs, targets): batch_size windows of seq + 1 training bytes, as int64."""
    train, _ = splits()
    g = torch.Generator().manual_seed(((seed * 1_000_003 + step) * 4099 + rank) & (2**63 - 1))
    starts = torch.randint(0, train.numel() - seq - 1, (batch_size,), generator=g)
    windows = torch.stack([train[s:s + seq + 1] for s in starts.tolist()]).long()
    return windows[:, :-1], windows[:, 1:]


def validation_windows(count, seq):
    """count evenly spaced windows of seq + 1 held-out bytes, as int64."""
    _, held = splits()
    stride = (held.numel() - seq - 1) // count
    return torch.stack([held[i * stride:i * stride + seq + 1] for i in range(count)]).long()
