"""Minimal ctypes binding of libqccl's codec API for the Python tests."""
import ctypes
import os
import struct

import numpy as np

FLOAT32, BFLOAT16, FLOAT16 = 7, 9, 6
SUCCESS = 0


class Codec(ctypes.Structure):
    _fields_ = [("opaque", ctypes.c_uint64 * 2)]


class EncodeOptions(ctypes.Structure):
    _fields_ = [
        ("size", ctypes.c_size_t),
        ("seed", ctypes.c_uint64),
        ("rank", ctypes.c_uint32),
        ("call", ctypes.c_uint32),
        ("offset", ctypes.c_uint64),
        ("residual", ctypes.c_void_p),
        ("residualType", ctypes.c_int),
        ("flags", ctypes.c_uint32),
        ("residualDecay", ctypes.c_float),
    ]


def load_library():
    path = os.environ.get("QCCL_LIBRARY")
    if not path:
        here = os.path.dirname(os.path.abspath(__file__))
        path = os.path.join(here, "..", "..", "build", "src", "libqccl.so")
    lib = ctypes.CDLL(path)
    lib.qcclGetLastError.restype = ctypes.c_char_p
    lib.qcclGetLastError.argtypes = [ctypes.c_void_p]
    lib.qcclCodecParse.argtypes = [ctypes.c_char_p, ctypes.POINTER(Codec)]
    lib.qcclCodecEncodedSize.argtypes = [Codec, ctypes.c_size_t, ctypes.c_int,
                                         ctypes.POINTER(ctypes.c_size_t)]
    lib.qcclEncode.argtypes = [Codec, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int,
                               ctypes.c_void_p, ctypes.c_size_t, ctypes.POINTER(EncodeOptions),
                               ctypes.c_void_p]
    lib.qcclDecode.argtypes = [Codec, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p,
                               ctypes.c_size_t, ctypes.c_int, ctypes.c_void_p]
    return lib


class QcclCodec:
    def __init__(self, lib, spec):
        self.lib = lib
        self.handle = Codec()
        self._check(lib.qcclCodecParse(spec.encode(), ctypes.byref(self.handle)))

    def _check(self, result):
        if result != SUCCESS:
            raise RuntimeError(self.lib.qcclGetLastError(None).decode())

    @staticmethod
    def options_size_without_decay():
        """sizeof(qcclEncodeOptions_t) before residualDecay was appended."""
        return EncodeOptions.residualDecay.offset

    def encode(self, x, seed=0, residual=None, decay=1.0, options_size=None):
        """x's chunk; with error feedback when residual (a contiguous float32 or bfloat16 array,
        updated in place) is given, its decay as qcclEncodeOptions_t.residualDecay. options_size:
        the struct size to pass (an older caller's), by default the whole struct."""
        x = np.ascontiguousarray(x, dtype=np.float32)
        size = ctypes.c_size_t()
        self._check(self.lib.qcclCodecEncodedSize(self.handle, x.size, FLOAT32, ctypes.byref(size)))
        out = np.zeros(size.value, dtype=np.uint8)
        where, rtype = None, FLOAT32
        if residual is not None:
            assert residual.flags.c_contiguous and residual.size == x.size
            where, rtype = residual.ctypes.data, FLOAT32 if residual.itemsize == 4 else BFLOAT16
        opts = EncodeOptions(options_size or ctypes.sizeof(EncodeOptions), seed, 0, 0, 0, where,
                             rtype, 0, decay)
        self._check(self.lib.qcclEncode(self.handle, x.ctypes.data, x.size, FLOAT32,
                                        out.ctypes.data, out.size, ctypes.byref(opts), None))
        return out

    def decode(self, chunk, count):
        y = np.empty(count, dtype=np.float32)
        self._check(self.lib.qcclDecode(self.handle, chunk.ctypes.data, chunk.size, y.ctypes.data,
                                        count, FLOAT32, None))
        return y


def parse_chunk(chunk):
    """Splits a chunk per docs/CODECS.md: (header fields, scales bytes, elements bytes)."""
    (magic, version, fmt, flags, dtype, block, rht, value_format, count, chunk_scale, crc, seed,
     payload, density_ppm) = struct.unpack_from("<4sBBBBIHBxQfIQQI", chunk.tobytes(), 0)
    header = dict(magic=magic, version=version, format=fmt, flags=flags, dtype=dtype,
                  block=block, rht=rht, count=count, chunk_scale=chunk_scale, crc=crc,
                  seed=seed, payload=payload, value_format=value_format,
                  density_ppm=density_ppm)
    return header, chunk[64:]
