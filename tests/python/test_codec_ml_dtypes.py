"""qccl's encodings against ml_dtypes casts and numpy scale arithmetic.

For each codec the reference recomputes, with numpy float32 arithmetic and ml_dtypes' element
types, the block scales and the element codes that docs/CODECS.md defines, and the decoded values;
qccl's chunk (through the C API) must match byte for byte and its decode bit for bit.
"""
import math

import ml_dtypes
import numpy as np
import pytest

from qccl_ctypes import QcclCodec, load_library, parse_chunk

F32 = np.float32


@pytest.fixture(scope="module")
def lib():
    return load_library()


def data(n, seed, heavy=False):
    rng = np.random.default_rng(seed)
    x = rng.standard_t(3, n) if heavy else rng.standard_normal(n)
    # Vary the magnitude across blocks so scales cover a wide range.
    x = x * np.exp2(rng.integers(-20, 20, n // 64 + 1)).repeat(64)[:n]
    return x.astype(F32)


def blocks(x, size):
    return [x[i:i + size] for i in range(0, x.size, size)]


def split_sections(rest, n_scales, scale_bytes):
    scales_size = -(-n_scales * scale_bytes // 16) * 16
    return rest[:n_scales * scale_bytes], rest[scales_size:]


def unpack_nibbles(packed, n):
    codes = np.empty(packed.size * 2, dtype=np.uint8)
    codes[0::2] = packed & 0xF
    codes[1::2] = packed >> 4
    return codes[:n]


def pack_nibbles(codes):
    codes = np.asarray(codes, dtype=np.uint8) & 0xF
    if codes.size % 2:
        codes = np.append(codes, np.uint8(0))
    return codes[0::2] | (codes[1::2] << 4)


def amax(b):
    return F32(np.max(np.abs(b))) if b.size else F32(0)


def mx_exponent(a, elem_max):
    """Smallest e with a <= elem_max * 2^e (exact in float64), clamped to E8M0's range."""
    if a == 0:
        return -127
    e = math.floor(math.log2(float(a) / elem_max)) - 2
    while float(a) > math.ldexp(elem_max, e):
        e += 1
    return max(-127, min(127, e))


SCALED_FP8 = {"fp8e4m3": (ml_dtypes.float8_e4m3fn, 448.0), "fp8e5m2": (ml_dtypes.float8_e5m2, 57344.0)}


@pytest.mark.parametrize("spec", ["fp8e4m3", "fp8e5m2"])
@pytest.mark.parametrize("heavy", [False, True])
def test_fp8_block_scaled(lib, spec, heavy):
    elem_type, elem_max = SCALED_FP8[spec]
    x = data(1000, 1, heavy)
    codec = QcclCodec(lib, spec)
    chunk = codec.encode(x)
    header, rest = parse_chunk(chunk)
    bs = blocks(x, 128)
    scales, elements = split_sections(rest, len(bs), 4)
    want_scales, want_codes, want_decoded = [], [], []
    for b in bs:
        s = amax(b) / F32(elem_max)
        q = (b / (s if s != 0 else F32(1))).astype(elem_type)
        want_scales.append(s)
        want_codes.append(q.view(np.uint8))
        want_decoded.append(q.astype(F32) * s)
    assert header["magic"] == b"QCCL" and header["count"] == 1000 and header["block"] == 128
    np.testing.assert_array_equal(scales.view(F32), np.array(want_scales, dtype=F32))
    np.testing.assert_array_equal(elements[:1000], np.concatenate(want_codes))
    np.testing.assert_array_equal(codec.decode(chunk, 1000).view(np.uint32),
                                  np.concatenate(want_decoded).view(np.uint32))


@pytest.mark.parametrize("spec,elem_type,elem_max", [
    ("mxfp8", ml_dtypes.float8_e4m3fn, 448.0),
    ("mxfp4", ml_dtypes.float4_e2m1fn, 6.0),
])
@pytest.mark.parametrize("heavy", [False, True])
def test_mx(lib, spec, elem_type, elem_max, heavy):
    x = data(1000, 2, heavy)
    codec = QcclCodec(lib, spec)
    chunk = codec.encode(x)
    _, rest = parse_chunk(chunk)
    bs = blocks(x, 32)
    scales, elements = split_sections(rest, len(bs), 1)
    codes, decoded = [], []
    for i, b in enumerate(bs):
        e = mx_exponent(amax(b), elem_max)
        # ml_dtypes' E8M0 type as the scale oracle.
        assert scales[i] == np.array([2.0 ** e], dtype=ml_dtypes.float8_e8m0fnu).view(np.uint8)[0]
        q = (b * F32(2.0 ** -e)).astype(elem_type)
        codes.append(q.view(np.uint8))
        decoded.append(q.astype(F32) * F32(2.0 ** e))
    codes = np.concatenate(codes)
    got = elements[:1000] if spec == "mxfp8" else unpack_nibbles(elements, 1000)
    np.testing.assert_array_equal(got, codes)
    np.testing.assert_array_equal(codec.decode(chunk, 1000).view(np.uint32),
                                  np.concatenate(decoded).view(np.uint32))


@pytest.mark.parametrize("heavy", [False, True])
def test_nvfp4(lib, heavy):
    x = data(1000, 3, heavy)
    codec = QcclCodec(lib, "nvfp4")
    chunk = codec.encode(x)
    header, rest = parse_chunk(chunk)
    # Transformer Engine's recipe, in float32.
    s_enc = F32(448.0 * 6.0) / amax(x)
    s_enc = min(s_enc, F32(np.finfo(F32).max))
    assert header["chunk_scale"] == s_enc
    s_dec = F32(1) / s_enc
    bs = blocks(x, 16)
    scales, elements = split_sections(rest, len(bs), 1)
    codes, decoded = [], []
    for i, b in enumerate(bs):
        scale = np.array([amax(b) * (s_enc * (F32(1) / F32(6)))], dtype=F32).astype(ml_dtypes.float8_e4m3fn)
        assert scales[i] == scale.view(np.uint8)[0], i
        scale_f = scale.astype(F32)[0]
        with np.errstate(divide="ignore"):  # a zero block scale: 1/0 clamps to FLT_MAX, as in TE
            rcp = min(F32(1) / (scale_f * s_dec), F32(np.finfo(F32).max))
        q = (b * rcp).astype(ml_dtypes.float4_e2m1fn)
        codes.append(q.view(np.uint8))
        decoded.append(q.astype(F32) * (scale_f * s_dec))
    np.testing.assert_array_equal(elements[:500], pack_nibbles(np.concatenate(codes)))
    np.testing.assert_array_equal(codec.decode(chunk, 1000).view(np.uint32),
                                  np.concatenate(decoded).view(np.uint32))


def integer_reference(x, block, qmax, level_index, level):
    """Scales s = amax / qmax per block, codes level_index(x / d) (d = s, or 1 when s is 0) and
    decoded values level(code) * s, as docs/CODECS.md defines the integer formats."""
    scales, codes, decoded = [], [], []
    for b in blocks(x, block):
        s = amax(b) / F32(qmax)
        q = level_index(b / (s if s != 0 else F32(1))).astype(np.int8)
        scales.append(s)
        codes.append(q)
        decoded.append(level(q) * s)
    return np.array(scales, dtype=F32), np.concatenate(codes), np.concatenate(decoded)


@pytest.mark.parametrize("spec,bits,block", [("int8", 8, 128), ("int4", 4, 64), ("int4/b32", 4, 32)])
def test_int(lib, spec, bits, block):
    qmax = (1 << (bits - 1)) - 1
    x = data(1000, 4, True)
    codec = QcclCodec(lib, spec)
    chunk = codec.encode(x)
    _, rest = parse_chunk(chunk)
    want_scales, codes, decoded = integer_reference(
        x, block, qmax, lambda t: np.clip(np.rint(t), -qmax, qmax), lambda q: q.astype(F32))
    scales, elements = split_sections(rest, want_scales.size, 4)
    np.testing.assert_array_equal(scales.view(F32), want_scales)
    got = elements[:1000].view(np.int8) if bits == 8 else unpack_nibbles(elements, 1000)
    want = codes if bits == 8 else codes.view(np.uint8) & 0xF
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(codec.decode(chunk, 1000).view(np.uint32),
                                  decoded.view(np.uint32))


@pytest.mark.parametrize("spec,block", [("int2", 128), ("int2/b16", 16)])
def test_int2(lib, spec, block):
    # Exact ties (x / s an integer) and zeros beside the heavy-tailed data.
    x = np.concatenate([data(995, 8, True), np.array([0, -0.0, 1, -1, 3], dtype=F32)])
    codec = QcclCodec(lib, spec)
    chunk = codec.encode(x)
    _, rest = parse_chunk(chunk)
    want_scales, codes, decoded = integer_reference(
        x, block, 1.5, lambda t: np.clip(np.floor(t), -2, 1), lambda q: q.astype(F32) + F32(0.5))
    scales, elements = split_sections(rest, want_scales.size, 4)
    np.testing.assert_array_equal(scales.view(F32), want_scales)
    crumbs = codes.view(np.uint8) & 3
    crumbs = np.append(crumbs, np.zeros(-crumbs.size % 4, dtype=np.uint8)).reshape(-1, 4)
    packed = crumbs[:, 0] | crumbs[:, 1] << 2 | crumbs[:, 2] << 4 | crumbs[:, 3] << 6
    np.testing.assert_array_equal(elements[:250], packed)
    np.testing.assert_array_equal(codec.decode(chunk, 1000).view(np.uint32),
                                  decoded.view(np.uint32))


@pytest.mark.parametrize("spec,dtype", [("bf16", ml_dtypes.bfloat16), ("fp16", np.float16)])
def test_casts(lib, spec, dtype):
    x = np.random.default_rng(5).standard_normal(999).astype(F32) * F32(100)
    codec = QcclCodec(lib, spec)
    chunk = codec.encode(x)
    _, rest = parse_chunk(chunk)
    want = x.astype(dtype)
    np.testing.assert_array_equal(rest[:2 * 999].view(np.uint16), want.view(np.uint16))
    np.testing.assert_array_equal(codec.decode(chunk, 999), want.astype(F32))


def test_sign1(lib):
    x = data(5000, 6, True)
    codec = QcclCodec(lib, "sign1")
    chunk = codec.encode(x)
    _, rest = parse_chunk(chunk)
    bs = blocks(x, 2048)
    scales, elements = split_sections(rest, len(bs), 4)
    for i, b in enumerate(bs):
        # Eight float32 lanes summed in order, then combined as a fixed tree.
        a = np.abs(b)
        lanes = np.zeros(8, dtype=F32)
        for j in range(a.size):
            lanes[j % 8] = F32(lanes[j % 8] + a[j])
        total = F32(F32(F32(lanes[0] + lanes[1]) + F32(lanes[2] + lanes[3])) +
                    F32(F32(lanes[4] + lanes[5]) + F32(lanes[6] + lanes[7])))
        assert scales.view(F32)[i] == F32(total / F32(a.size)), i
    bits = np.unpackbits(elements, bitorder="little")[:5000]
    np.testing.assert_array_equal(bits, np.signbit(x).astype(np.uint8))
