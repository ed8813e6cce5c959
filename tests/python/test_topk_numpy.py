"""qccl's topk chunks against a numpy reference of docs/CODECS.md, "Top-k".

The reference selects with a sort (largest |x| first, the lower index on ties), writes the index
fields and flag bits with numpy's bit packing, and encodes the kept values with numpy and
ml_dtypes for bf16 and int2; other value formats are compared with qccl's own dense chunk of the
reference's values (those formats have their oracles in test_codec_ml_dtypes.py).
"""
import math

import ml_dtypes
import numpy as np
import pytest

from qccl_ctypes import QcclCodec, load_library, parse_chunk

F32 = np.float32
TOPK_FORMAT_ID = 13


@pytest.fixture(scope="module")
def lib():
    return load_library()


def padded(n):
    return -(-n // 16) * 16


def keep_of(ppm, length):
    return -(-ppm * length // 1_000_000)


def select(block, ppm):
    """Positions of the kept values, ascending: largest |x| first, the lower index on ties."""
    magnitude = block.view(np.uint32) & 0x7FFFFFFF
    order = np.lexsort((np.arange(block.size), -magnitude.astype(np.int64)))
    return np.sort(order[:keep_of(ppm, block.size)])


def index_field(positions, length, width):
    if positions.size * width < length:  # a list of width-bit positions, low bits first
        bits = (positions[:, None] >> np.arange(width)) & 1
    else:
        bits = np.zeros(length, dtype=np.int64)
        bits[positions] = 1
    return np.packbits(bits.ravel().astype(np.uint8), bitorder="little")


def reference(x, block, ppm):
    """(flags, index section, kept values, their positions) of a finite x."""
    width = math.ceil(math.log2(block))
    fields, values, where = [], [], []
    for start in range(0, x.size, block):
        b = x[start:start + block]
        positions = select(b, ppm)
        fields.append(index_field(positions, b.size, width))
        values.append(b[positions])
        where.append(start + positions)
    n_blocks = len(fields)
    # Every full block's field has the same size; the last block's follows the others.
    index = np.concatenate(fields)
    index = np.append(index, np.zeros(padded(index.size) - index.size, dtype=np.uint8))
    flags = np.zeros(padded(-(-n_blocks // 8)), dtype=np.uint8)
    return flags, index, np.concatenate(values), np.concatenate(where)


def heavy_data(n, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_t(3, n).astype(F32)
    x[::97] = x[0]  # repeated magnitudes: ties for the selection to break
    x[5::89] = -x[0]
    return x


@pytest.mark.parametrize("spec,ppm,block,value", [
    ("topk0.01+int2", 10000, 4096, "int2"),
    ("topk0.1+bf16", 100000, 4096, "bf16"),
    ("topk0.05+fp8e4m3", 50000, 4096, "fp8e4m3"),
    ("topk0.01+int4/b256", 10000, 256, "int4"),
    ("topk0.3+int2/b64", 300000, 64, "int2"),
    ("topk1+bf16/b16", 1000000, 16, "bf16"),
])
def test_topk_chunk(lib, spec, ppm, block, value):
    n = 3 * block + block // 3 + 5  # a short last block
    x = heavy_data(n, ppm)
    codec = QcclCodec(lib, spec)
    chunk = codec.encode(x)
    header, rest = parse_chunk(chunk)
    assert header["format"] == TOPK_FORMAT_ID and header["block"] == block
    assert header["density_ppm"] == ppm and header["count"] == n
    flags, index, values, where = reference(x, block, ppm)
    np.testing.assert_array_equal(rest[:flags.size], flags)
    np.testing.assert_array_equal(rest[flags.size:flags.size + index.size], index)
    value_sections = rest[flags.size + index.size:]
    dense = QcclCodec(lib, value).encode(values)
    dense_header, dense_rest = parse_chunk(dense)
    assert header["chunk_scale"] == dense_header["chunk_scale"]
    np.testing.assert_array_equal(value_sections, dense_rest)
    decoded_values = codec_values(value, values)
    want = np.zeros(n, dtype=F32)
    want[where] = decoded_values
    np.testing.assert_array_equal(codec.decode(chunk, n).view(np.uint32), want.view(np.uint32))
    if value in ("int2", "bf16"):
        np.testing.assert_array_equal(value_sections, numpy_value_sections(value, values))


def codec_values(value, values):
    if value == "bf16":
        return values.astype(ml_dtypes.bfloat16).astype(F32)
    if value == "int2":
        return int2_reference(values)[2]
    return values_through_qccl(value, values)


def values_through_qccl(value, values):
    codec = QcclCodec(load_library(), value)
    return codec.decode(codec.encode(values), values.size)


def int2_reference(values, block=128):
    scales, codes, decoded = [], [], []
    for start in range(0, values.size, block):
        b = values[start:start + block]
        s = F32(np.max(np.abs(b))) / F32(1.5)
        q = np.clip(np.floor(b / (s if s != 0 else F32(1))), -2, 1).astype(np.int8)
        scales.append(s)
        codes.append(q)
        decoded.append((q.astype(F32) + F32(0.5)) * s)
    return np.array(scales, dtype=F32), np.concatenate(codes), np.concatenate(decoded)


def numpy_value_sections(value, values):
    if value == "bf16":
        raw = values.astype(ml_dtypes.bfloat16).view(np.uint8)
        return np.append(raw, np.zeros(padded(raw.size) - raw.size, dtype=np.uint8))
    scales, codes, _ = int2_reference(values)
    scale_bytes = scales.view(np.uint8)
    crumbs = codes.view(np.uint8) & 3
    crumbs = np.append(crumbs, np.zeros(-crumbs.size % 4, dtype=np.uint8)).reshape(-1, 4)
    packed = crumbs[:, 0] | crumbs[:, 1] << 2 | crumbs[:, 2] << 4 | crumbs[:, 3] << 6
    return np.concatenate([
        scale_bytes, np.zeros(padded(scale_bytes.size) - scale_bytes.size, dtype=np.uint8),
        packed, np.zeros(padded(packed.size) - packed.size, dtype=np.uint8)])


def test_non_finite_block_is_flagged_and_decodes_to_nan(lib):
    x = heavy_data(3 * 256, 9)
    x[300] = np.inf
    codec = QcclCodec(lib, "topk0.05+int4/b256")
    chunk = codec.encode(x)
    _, rest = parse_chunk(chunk)
    assert rest[0] == 0b010  # block 1 holds the infinity
    y = codec.decode(chunk, x.size)
    assert np.isnan(y[256:512]).all()
    assert np.isfinite(y[:256]).all() and np.isfinite(y[512:]).all()
    assert np.count_nonzero(y[:256]) == keep_of(50000, 256)
