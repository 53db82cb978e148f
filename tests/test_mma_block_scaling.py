"""Block scaling on logical scale matrices (§9.7.16.10.7, Tables 54-55), exact-by-construction."""

import numpy as np
import pytest

from reference import block_scaling as BS
from reference import formats as F
from reference.errors import SpecError
from reference.mma_qualifiers import MmaOp
from reference.mma_semantics import mma

pytestmark = [pytest.mark.reference, pytest.mark.semantic]

MODELS = ("spec", "hardware")

# (kind, scale_vec, scale type, K, SF expected from Table 54, block = K / SF)
FORMS = [
    ("mxf8f6f4", "1X", "ue8m0", 32, 1), ("mxf8f6f4", "block32", "ue8m0", 32, 1),
    ("mxf4", "2X", "ue8m0", 64, 2), ("mxf4", None, "ue8m0", 64, 2), ("mxf4", "3X", "ue8m0", 96, 3),
    ("mxf4", "block32", "ue8m0", 96, 3),
    ("mxf4nvf4", "2X", "ue8m0", 64, 2), ("mxf4nvf4", "4X", "ue8m0", 64, 4), ("mxf4nvf4", "block16", "ue4m3", 64, 4),
    ("mxf4nvf4", "4X", "ue4m3", 64, 4), ("mxf4nvf4", "6X", "ue4m3", 96, 6), ("mxf4nvf4", "3X", "ue8m0", 96, 3),
]


def _op(kind, scale_vec, scale_type, k, m=128, n=16):
    a_type = "e4m3" if kind == "mxf8f6f4" else "e2m1"
    return MmaOp(kind, a_type, a_type, "f32", m, n, scale_type=scale_type, scale_vec=scale_vec, k96=(k == 96),
                 cta_group=2 if k == 96 else 1, shapes_checked=(k != 96) or m == 256)


@pytest.mark.parametrize("kind,scale_vec,scale_type,k,sf", FORMS, ids=[f"{f[0]}-{f[1]}-{f[2]}-K{f[3]}" for f in FORMS])
def test_each_chunk_uses_its_scale(kind, scale_vec, scale_type, k, sf):
    m = 256 if k == 96 else 128
    n = 16
    op = _op(kind, scale_vec, scale_type, k, m, n)
    assert op.k == k and op.scale_factors == sf
    block = k // sf
    # A one-hot: row r has a single 1 at column r % K; B all ones. Scales: distinct powers of two
    # per chunk (A: 2^j, B: 2^(j+1)), so D[r, n] = 2^(2 j + 1) with j = (r % K) // block.
    a_type = op.a_type
    ai = np.zeros((m, k))
    ai[np.arange(m), np.arange(m) % k] = 1
    bi = np.ones((k, n))
    sa_val = np.broadcast_to(2.0 ** np.arange(sf), (m, sf))
    sb_val = np.broadcast_to((2.0 ** (np.arange(sf) + 1))[:, None], (sf, n))
    sa, sb = F.encode(scale_type, sa_val), F.encode(scale_type, sb_val)
    want = 2.0 ** (2 * ((np.arange(m) % k) // block) + 1)
    for model in MODELS:
        r = mma(op, F.encode(a_type, ai), F.encode(a_type, bi), F.encode("f32", np.zeros((m, n))),
                model=model, scale_a=sa, scale_b=sb)
        np.testing.assert_array_equal(F.decode("f32", r.d), np.broadcast_to(want[:, None], (m, n)))
        assert np.all(r.d_tol == 0)


@pytest.mark.parametrize("kind", ["mxf8f6f4", "mxf4", "mxf4nvf4"])
def test_extreme_ue8m0_scales(kind):
    # 2^127 * 2^-127 = 1: every row of A times every column of B, exactly
    op = _op(kind, None if kind != "mxf4nvf4" else "2X", "ue8m0", 32 if kind == "mxf8f6f4" else 64)
    m, n, k, sf = op.m, op.n, op.k, op.scale_factors
    a = F.encode(op.a_type, np.ones((m, k)))
    b = F.encode(op.a_type, np.ones((k, n)))
    c = F.encode("f32", np.zeros((m, n)))
    big, small = np.uint8(254), np.uint8(0)                    # 2^127, 2^-127
    for model in MODELS:
        r = mma(op, a, b, c, model=model, scale_a=np.full((m, sf), big), scale_b=np.full((sf, n), small))
        assert np.all(F.decode("f32", r.d) == k)
        # 2^-127 * 2^-127 * K: below f32's range -> +0 in both models (spec: tolerance covers it)
        r = mma(op, a, b, c, model=model, scale_a=np.full((m, sf), small), scale_b=np.full((sf, n), small))
        got = F.decode("f32", r.d)
        assert np.all(np.abs(got - r.d_value) <= r.d_tol)
        # 2^127 * 2^127: overflows f32 -> +Inf (hardware); spec accepts Inf
        r = mma(op, a, b, c, model=model, scale_a=np.full((m, sf), big), scale_b=np.full((sf, n), big))
        assert np.all(np.isinf(r.d_value) | (r.d_value > 3.4e38))
        if model == "hardware":
            assert np.all(F.decode("f32", r.d) == np.inf)


@pytest.mark.parametrize("kind", ["mxf8f6f4", "mxf4", "mxf4nvf4"])
def test_nan_scale_gives_nan_rows_and_columns(kind):
    op = _op(kind, None if kind != "mxf4nvf4" else "2X", "ue8m0", 32 if kind == "mxf8f6f4" else 64)
    m, n, k, sf = op.m, op.n, op.k, op.scale_factors
    a = F.encode(op.a_type, np.ones((m, k)))
    b = F.encode(op.a_type, np.ones((k, n)))
    sa = np.full((m, sf), 127, dtype=np.uint8)
    sb = np.full((sf, n), 127, dtype=np.uint8)
    sa[3, 0] = 0xFF                                          # ue8m0 NaN
    sb[0, 5] = 0xFF
    for model in MODELS:
        r = mma(op, a, b, F.encode("f32", np.zeros((m, n))), model=model, scale_a=sa, scale_b=sb)
        nan = np.isnan(F.decode("f32", r.d))
        want = np.zeros((m, n), dtype=bool)
        want[3, :] = True
        want[:, 5] = True
        np.testing.assert_array_equal(nan, want)
        assert np.all(r.d[want] == 0x7FFFFFFF)


def test_ue4m3_sign_bit_ignored():
    op = _op("mxf4nvf4", "4X", "ue4m3", 64)
    m, n, k = op.m, op.n, op.k
    a, b = F.encode("e2m1", np.ones((m, k))), F.encode("e2m1", np.ones((k, n)))
    c = F.encode("f32", np.zeros((m, n)))
    sa = np.full((m, 4), 0x38, dtype=np.uint8)               # e4m3 1.0
    sb = np.full((4, n), 0x40, dtype=np.uint8)               # e4m3 2.0
    for model in MODELS:
        plain = mma(op, a, b, c, model=model, scale_a=sa, scale_b=sb)
        signed = mma(op, a, b, c, model=model, scale_a=sa | 0x80, scale_b=sb | 0x80)
        np.testing.assert_array_equal(plain.d, signed.d)
        assert np.all(F.decode("f32", plain.d) == 2 * k)


def test_scale_vec_resolution_and_ids():
    assert BS.resolve_scale_vec("mxf4", None, 64) == ("block32", 2)
    assert BS.resolve_scale_vec("mxf4", None, 96) == ("block32", 3)
    assert BS.resolve_scale_vec("mxf4nvf4", "block16", 96, "ue4m3") == ("block16", 6)
    assert BS.resolve_scale_vec("mxf4nvf4", "2X", 128) == ("scale_vec::2X", 2)     # sparse K: chunks of 64
    with pytest.raises(SpecError, match="explicit"):
        BS.resolve_scale_vec("mxf4nvf4", None, 64)
    with pytest.raises(SpecError, match="96"):
        BS.resolve_scale_vec("mxf4", "3X", 64)
    with pytest.raises(SpecError, match="Table 55"):
        BS.resolve_scale_vec("mxf4nvf4", "2X", 64, "ue4m3")
    with pytest.raises(SpecError, match="Table 55"):
        BS.resolve_scale_vec("mxf8f6f4", "4X", 32)
    assert BS.legal_scale_ids("mxf4", 3) == (0, 1, 2, 3)
    assert BS.legal_scale_ids("mxf4nvf4", 6) == (0, 2)
    assert BS.legal_scale_ids("mxf4", 2) == (0, 2)
    assert BS.legal_scale_ids("mxf4nvf4", 4) == (0,)          # §9.7.16.10.7.2.3: "must be 0"
    assert BS.legal_scale_ids("mxf8f6f4", 1) == (0, 1, 2, 3)  # §9.7.16.10.7.2.1: byte offset
    with pytest.raises(SpecError, match="a_scale_id"):
        MmaOp("mxf4nvf4", "e2m1", "e2m1", "f32", 128, 16, scale_type="ue4m3", scale_vec="4X", a_scale_id=2)
    with pytest.raises(SpecError, match="a_scale_id"):
        MmaOp("mxf4", "e2m1", "e2m1", "f32", 128, 16, a_scale_id=1)
    MmaOp("mxf8f6f4", "e4m3", "e4m3", "f32", 128, 16, a_scale_id=3, b_scale_id=1)


def test_scale_shape_errors():
    op = _op("mxf4", "2X", "ue8m0", 64)
    a, b = F.encode("e2m1", np.ones((128, 64))), F.encode("e2m1", np.ones((64, 16)))
    c = F.encode("f32", np.zeros((128, 16)))
    with pytest.raises(SpecError, match="scale_A shape"):
        mma(op, a, b, c, scale_a=np.ones((128, 4), dtype=np.uint8), scale_b=np.ones((2, 16), dtype=np.uint8))
    with pytest.raises(SpecError, match="both"):
        mma(op, a, b, c)
