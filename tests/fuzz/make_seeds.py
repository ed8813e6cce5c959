"""Writes the fuzzers' seed corpora (tests/fuzz/corpus/<target>/): valid inputs of each kind, from
which libFuzzer mutates. Chunks come from libqccl's encoder (QCCL_LIBRARY, else build/src);
the error-feedback state and the bootstrap messages are built here from their documented
formats (docs/ERROR_FEEDBACK.md, src/bootstrap/handshake.h).

    python3 tests/fuzz/make_seeds.py
"""
import ctypes
import os
import struct
import sys

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "python"))
from qccl_ctypes import FLOAT32, QcclCodec, load_library  # noqa: E402

# The order of chunk_decode_fuzz.cc's kSpecs: the first byte of a seed picks the codec.
SPECS = ["none", "bf16", "fp16", "fp8e4m3", "fp8e5m2", "mxfp8", "mxfp4", "nvfp4", "fp4ue5m3",
         "int8", "int4", "sign1", "int4+rht", "nvfp4+sr+rht", "fp8e4m3+sr", "int4/b64",
         "int8/b128", "bf16+sr", "int4+rht256", "fp4ue5m3+rht", "int2", "topk0.05+int2/b64",
         "topk0.3+bf16/b128"]


def file_name(spec):
    return spec.replace("+", "_").replace("/", "_")


def write(target, name, data):
    folder = os.path.join(here, "corpus", target)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name), "wb") as f:
        f.write(data)


def main():
    for spec in SPECS + ["int4+sr+rht128/b32", "mxfp4/b64", "fp8e5m2/b16"]:
        write("codec_spec", file_name(spec), spec.encode())
    lib = load_library()
    rng = np.random.default_rng(1)
    x = rng.standard_normal(300).astype(np.float32)
    x[7], x[100] = np.inf, np.nan
    for i, spec in enumerate(SPECS):
        chunk = QcclCodec(lib, spec).encode(x).tobytes()
        for mode in (0, 4):  # fp32 output, and accumulate
            write("chunk_decode", f"{file_name(spec)}_{mode}", bytes([i, mode]) + chunk)

    proof = bytes(range(24))
    payload = b"ucx address of rank 2"
    join = struct.pack("<III", 2, 4, len(payload)) + payload
    write("bootstrap", "proof_then_join", b"\x07" + proof + join)
    write("bootstrap", "oversized", b"\x01" + proof + struct.pack("<III", 0, 2, 1 << 20))
    write("bootstrap", "unique_id_hex", (b"5143494401" + b"04" + b"1f90" + b"7f000001" +
                                         b"0" * 24 + b"ab" * 16).ljust(256, b"0"))

    state = b"QCEF" + struct.pack("<IIIIQ", 1, 1, 0, FLOAT32, 2)
    for key, worker, server in ((11, 4, 2), (0x8000000000000001, 3, 0)):
        state += struct.pack("<QQQQ", key, 0x1234, worker, server)
        state += np.linspace(-1, 1, worker + server).astype(np.float32).tobytes()
    write("ef_state", "two_entries", state)
    write("ef_state", "empty", b"QCEF" + struct.pack("<IIIIQ", 1, 1, 0, FLOAT32, 0))


if __name__ == "__main__":
    main()
