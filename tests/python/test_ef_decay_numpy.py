"""Error-feedback decay through the codec API against numpy (docs/ERROR_FEEDBACK.md, "Decay").

qcclEncode with a residual e and residualDecay beta must write the chunk of p = x + (beta * e),
computed in float32 with two roundings as numpy computes it, and leave e = p - D(chunk) wherever
the decode is finite (a non-finite block keeps e as it was, undecayed). beta = 1 must give the
chunk and residual of plain error feedback, and beta = 0 the chunk qcclEncode writes without a
residual, -0.0 inputs included.
"""
import ml_dtypes
import numpy as np
import pytest

from qccl_ctypes import QcclCodec, load_library

F32 = np.float32
CODECS = ["fp8e4m3", "int4", "nvfp4", "int2", "mxfp4+sr", "int8+rht", "topk0.02+int2",
          "topk0.05+fp8e4m3"]
COUNT = 5000


@pytest.fixture(scope="module")
def lib():
    return load_library()


def data(seed, non_finite):
    g = np.random.default_rng(seed)
    x = (g.standard_t(3, COUNT) * 0.01).astype(F32)
    x[::97] = F32(-0.0)
    if non_finite:
        x[1234] = np.inf
        x[4321] = np.nan
    e = (g.standard_normal(COUNT) * 0.003).astype(F32)
    return x, e


def reference(codec, x, e, decay, residual_type):
    """numpy's p = x + (decay * e) and the residual it leaves, with the chunk of p (no residual)."""
    e32 = e.astype(F32)
    p = x + F32(decay) * e32 if decay != 0 else x.copy()
    chunk = codec.encode(p)
    decoded = codec.decode(chunk, x.size)
    finite = np.isfinite(decoded)
    after = np.where(finite, p - decoded, e32).astype(F32)
    if residual_type == ml_dtypes.bfloat16:
        after = np.where(finite, (p - decoded).astype(ml_dtypes.bfloat16), e)
    return chunk, after


@pytest.mark.parametrize("spec", CODECS)
@pytest.mark.parametrize("decay", [0.9, 0.37, 0.0, 1.0])
@pytest.mark.parametrize("residual_type", [F32, ml_dtypes.bfloat16])
@pytest.mark.parametrize("non_finite", [False, True])
def test_decayed_residual_matches_numpy(lib, spec, decay, residual_type, non_finite):
    codec = QcclCodec(lib, spec)
    x, e = data(len(spec) + int(decay * 100), non_finite)
    e = e.astype(residual_type)
    want_chunk, want_e = reference(codec, x, e, decay, residual_type)
    got_e = e.copy()
    got_chunk = codec.encode(x, residual=got_e, decay=decay)
    assert np.array_equal(got_chunk, want_chunk)
    assert np.array_equal(got_e.view(np.uint8), want_e.astype(residual_type).view(np.uint8))


@pytest.mark.parametrize("spec", CODECS)
def test_zero_decay_is_the_chunk_without_error_feedback(lib, spec):
    codec = QcclCodec(lib, spec)
    x, e = data(7, False)
    assert np.array_equal(codec.encode(x, residual=e.copy(), decay=0.0), codec.encode(x))


@pytest.mark.parametrize("spec", CODECS)
def test_unit_decay_is_plain_error_feedback(lib, spec):
    """beta = 1 against the struct of before the field (its size leaves residualDecay out)."""
    codec = QcclCodec(lib, spec)
    x, e = data(11, True)
    plain, decayed = e.copy(), e.copy()
    old_size = QcclCodec.options_size_without_decay()
    assert np.array_equal(codec.encode(x, residual=plain, options_size=old_size),
                          codec.encode(x, residual=decayed, decay=1.0))
    assert np.array_equal(plain, decayed)


@pytest.mark.parametrize("decay", [-0.1, 1.01, float("nan"), float("inf")])
def test_decay_out_of_range_is_refused(lib, decay):
    codec = QcclCodec(lib, "int4")
    x, e = data(3, False)
    before = e.copy()
    with pytest.raises(RuntimeError, match="residual decay"):
        codec.encode(x, residual=e, decay=decay)
    assert np.array_equal(e, before)
