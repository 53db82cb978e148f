"""Numerics models: the spec tolerance (``spec``) and the bit-exact sm_100 model (``hardware``).

Each test names the model it checks. Hardware expectations come from ``tests/mma_oracle.py``
(a scalar Fraction implementation of the published algorithm), are written out by hand, or are
MMA-Sim outputs recorded as literals (regression probes of the MMA-Sim cross-check).
"""

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reference import formats as F
from reference import numerics_hw as HW
from reference import numerics_spec as NS
from reference.mma_qualifiers import MmaOp
from reference.mma_semantics import mma
from tests import mma_oracle as O

pytestmark = [pytest.mark.reference, pytest.mark.numerics]


def random_codes(rng, fmt, shape):
    f = F.get_format(fmt)
    width = f.container_bits if fmt in ("tf32", "ue4m3") else f.bits
    return rng.integers(0, 1 << width, size=shape, dtype=np.uint64).astype(f.code_dtype)


# ---------------------------------------------------------------------------------------------
# spec model
# ---------------------------------------------------------------------------------------------

SPEC_KINDS = [("f16", "f16", "f16"), ("f16", "bf16", "f32"), ("f16", "f16", "f32"), ("tf32", "tf32", "f32"),
              ("f8f6f4", "e4m3", "f32"), ("f8f6f4", "e2m1", "f16"), ("f8f6f4", "e3m2", "f32")]


@settings(max_examples=60, deadline=None)
@given(kind=st.sampled_from(SPEC_KINDS), seed=st.integers(0, 2**32 - 1), shift=st.integers(-6, 6))
def test_spec_tolerance_is_zero_on_exact_inputs(kind, seed, shift):
    """spec model: small integers times a common power of two are exact in every order."""
    kind_name, ab, d = kind
    rng = np.random.default_rng(seed)
    k = {"f16": 16, "tf32": 8, "f8f6f4": 32}[kind_name]
    if kind_name == "f16" and d == "f16":       # half-precision accumulation: keep sums within 11 bits
        vals, shift, c = np.array([-1, 0, 1]), abs(shift) % 4, rng.integers(-8, 9, (4, 5)).astype(float)
    else:                                       # normal values only (subnormal handling is unspecified)
        vals = np.array([-2, -1.5, -1, 0, 1, 1.5, 2])
        c = rng.integers(-50, 51, (4, 5)) * 2.0 ** -2
    lo, hi = {"e2m1": (0, 0), "e3m2": (-2, 3)}.get(ab, (-6, 6))     # keep values normal and in range
    a = rng.choice(vals, (4, k)) * 2.0 ** min(max(shift, lo), hi)
    b = rng.choice(vals, (k, 5))
    assert F.is_representable(ab, a).all() and F.is_representable(ab, b).all()
    value, tol = NS.spec_fused(kind_name, d, a, b, c, a_fmt=ab, b_fmt=ab)
    assert np.all(tol == 0)
    for i in range(4):
        for j in range(5):
            assert Fraction(value[i, j]) == O.exact_dot(a[i], b[:, j], c[i, j])


def test_spec_tolerance_zero_with_block_scales():
    """spec model: powers-of-two scales keep exact inputs exact (mxf8f6f4, mxf4nvf4 ue4m3)."""
    rng = np.random.default_rng(3)
    a = rng.choice([-1.5, -1, 0, 3, 2], (4, 64))             # e2m1 normals (0.5 is subnormal)
    b = rng.choice([-3, -1, 0, 1, 4], (64, 6))
    sa = np.repeat(rng.choice([0.25, 1, 8], (4, 4)), 16, axis=1)
    sb = np.repeat(rng.choice([0.5, 2, 16], (4, 6)), 16, axis=0)
    value, tol = NS.spec_fused("mxf4nvf4", "f32", a, b, np.ones((4, 6)), a_fmt="e2m1", b_fmt="e2m1",
                               sa=sa, sb=sb, scale_fmt="ue4m3")
    assert np.all(tol == 0)
    np.testing.assert_array_equal(value, (a * sa) @ (b * sb) + 1)


def test_spec_tolerance_covers_rz_and_rn():
    """spec model: 1 + 2^-30 is not an f32; both neighbours (RZ 1, RN 1) and 1 + 2^-23 (RU) are
    within the bound; 1 + 2^-21 is not."""
    a = np.array([[2.0 ** -15, 0]])
    b = np.array([[2.0 ** -15], [0]])
    value, tol = NS.spec_fused("f16", "f32", a, b, np.array([[1.0]]), a_fmt="f16", b_fmt="f16")
    assert value[0, 0] == 1 + 2.0 ** -30 and tol[0, 0] > 0
    for got, ok in ((1.0, True), (1 + 2.0 ** -23, True), (1 + 2.0 ** -21, False)):
        assert NS.spec_accepts("f32", F.encode("f32", np.array([got])), value[0], tol[0])[0] == ok


def test_spec_accepts_specials():
    """spec model: NaN expected accepts any NaN; Inf expects that Inf; overflow accepts Inf."""
    nan_codes = np.array([0x7FC00000, 0x7FFFFFFF, 0xFF800001], dtype=np.uint32)
    assert NS.spec_accepts("f32", nan_codes, np.full(3, np.nan), np.zeros(3)).all()
    assert not NS.spec_accepts("f32", np.array([0x3F800000], dtype=np.uint32), np.array([np.nan]), np.zeros(1))[0]
    inf = np.array([0x7F800000], dtype=np.uint32)
    assert NS.spec_accepts("f32", inf, np.array([np.inf]), np.zeros(1))[0]
    assert not NS.spec_accepts("f32", inf, np.array([-np.inf]), np.zeros(1))[0]
    assert NS.spec_accepts("f32", inf, np.array([2.0 ** 128]), np.zeros(1))[0]
    assert not NS.spec_accepts("f32", inf, np.array([2.0 ** 120]), np.zeros(1))[0]
    assert NS.spec_accepts("f16", np.array([0x7C00], dtype=np.uint16), np.array([65520.0]), np.zeros(1))[0]


def test_spec_special_inputs():
    """spec model: NaN operands / Inf*0 / Inf-Inf give NaN; a single Inf gives that Inf."""
    a = np.array([[np.nan, 1], [np.inf, 0], [np.inf, 1], [np.inf, -np.inf], [0, np.inf]])
    b = np.array([[1.0], [2.0]])
    v, t = NS.spec_fused("f16", "f32", a, b, np.zeros((5, 1)), a_fmt="f16", b_fmt="f16")
    assert np.isnan(v[0, 0])                                    # NaN operand
    assert v[1, 0] == np.inf and v[2, 0] == np.inf and t[1, 0] == 0
    assert np.isnan(v[3, 0])                                    # Inf - Inf
    assert v[4, 0] == np.inf
    v, _ = NS.spec_fused("f16", "f32", a[1:2], np.array([[0.0], [1.0]]), np.zeros((1, 1)), a_fmt="f16", b_fmt="f16")
    assert np.isnan(v[0, 0])                                    # Inf * 0


def test_spec_subnormal_inputs_may_flush():
    """spec model: subnormal-input handling is unspecified, so flushing that product is accepted."""
    tiny = 2.0 ** -20                                           # f16 subnormal
    a = np.array([[tiny, 0.0]])
    b = np.array([[1.0], [0.0]])
    value, tol = NS.spec_fused("f16", "f32", a, b, np.array([[1.0]]), a_fmt="f16", b_fmt="f16")
    assert abs(1.0 - value[0, 0]) <= tol[0, 0]


HW_AGREES = [("f16", "f16", "f32"), ("f16", "bf16", "f32"), ("f16", "f16", "f16"), ("tf32", "tf32", "f32"),
             ("f8f6f4", "e4m3", "f32"), ("f8f6f4", "e5m2", "f16"), ("f8f6f4", "e2m3", "f32")]


@pytest.mark.parametrize("kind,ab,d", HW_AGREES)
def test_hardware_results_lie_within_the_spec_tolerance(kind, ab, d):
    """spec vs hardware: on normal random inputs the published hardware behaviour is allowed."""
    rng = np.random.default_rng(17)
    k = {"f16": 16, "tf32": 8, "f8f6f4": 32}[kind]
    f = F.get_format(ab)
    span = {"f16": 8, "bf16": 30, "tf32": 30}.get(ab, 3)
    def normal_values(shape):
        mant = rng.integers(1 << f.mantissa_bits, 1 << (f.mantissa_bits + 1), shape)
        expo = rng.integers(-span, span + 1, shape)
        return rng.choice([-1, 1], shape) * mant * 2.0 ** (expo - f.mantissa_bits)

    for _ in range(3):
        a, b = normal_values((64, k)), normal_values((k, 16))
        c = F.decode(d, F.encode(d, rng.normal(size=(64, 16)) * 4.0))
        hw = HW.hw_fused(kind, d, a, b, c, a_fmt=ab, b_fmt=ab)
        value, tol = NS.spec_fused(kind, d, a, b, c, a_fmt=ab, b_fmt=ab)
        assert NS.spec_accepts(d, HW.d_codes(hw, d), value, tol).all()


# ---------------------------------------------------------------------------------------------
# hardware model vs the scalar oracle
# ---------------------------------------------------------------------------------------------

ORACLE = [("f16", "f16", "f16", "f32"), ("f16", "f16", "f16", "f16"), ("f16", "bf16", "bf16", "f32"),
          ("tf32", "tf32", "tf32", "f32"), ("f8f6f4", "e4m3", "e5m2", "f32"), ("f8f6f4", "e2m1", "e3m2", "f16"),
          ("f8f6f4", "e2m3", "e4m3", "f32")]


def _same(want: float, got: float) -> bool:
    """Equal as D values including the sign of zero (-0 and +0 have different codes); NaN == NaN."""
    if math.isnan(want) or math.isnan(got):
        return math.isnan(want) and math.isnan(got)
    return want == got and math.copysign(1, want) == math.copysign(1, got)


@pytest.mark.parametrize("kind,af,bf,d", ORACLE)
def test_hardware_matches_oracle_on_random_codes(kind, af, bf, d):
    """hardware model == the scalar published algorithm, codes drawn over the whole format
    (subnormals, zeros, Inf, NaN included)."""
    rng = np.random.default_rng(hash((kind, af, bf, d)) % 2**32)
    k = {"f16": 16, "tf32": 8, "f8f6f4": 32}[kind]
    m, n = 6, 8
    for trial in range(3):
        a, b = F.decode(af, random_codes(rng, af, (m, k))), F.decode(bf, random_codes(rng, bf, (k, n)))
        scale = np.exp2(rng.integers(-30, 30, (m, n))) if trial else np.zeros((m, n))
        c = F.decode(d, F.encode(d, rng.normal(size=(m, n)) * scale))
        got = HW.hw_fused(kind, d, a, b, c, a_fmt=af, b_fmt=bf)
        for i in range(m):
            for j in range(n):
                want = O.hw_dot(list(a[i]), list(b[:, j]), float(c[i, j]), af, bf, d)
                assert _same(want, got[i, j]), (i, j, want, got[i, j])


@pytest.mark.parametrize("kind,s_fmt,sf", [("mxf8f6f4", "ue8m0", 1), ("mxf4", "ue8m0", 2), ("mxf4nvf4", "ue4m3", 4),
                                            ("mxf4nvf4", "ue8m0", 4)])
def test_hardware_block_scaled_matches_oracle(kind, s_fmt, sf):
    """hardware model == scalar oracle for the block-scaled kinds (scales over their whole range)."""
    rng = np.random.default_rng(sf)
    af = "e3m2" if kind == "mxf8f6f4" else "e2m1"
    k = 32 if kind == "mxf8f6f4" else 64
    m, n = 5, 6
    a, b = F.decode(af, random_codes(rng, af, (m, k))), F.decode(af, random_codes(rng, af, (k, n)))
    if s_fmt == "ue8m0":
        sac, sbc = rng.integers(90, 165, (m, sf)), rng.integers(90, 165, (sf, n))
        sac[0, 0], sbc[0, 1] = 0xFF, 0
    else:
        sac, sbc = rng.integers(0, 256, (m, sf)), rng.integers(0, 256, (sf, n))
    sa = np.repeat(F.decode(s_fmt, sac), k // sf, axis=1)
    sb = np.repeat(F.decode(s_fmt, sbc), k // sf, axis=0)
    c = F.decode("f32", F.encode("f32", rng.normal(size=(m, n)) * np.exp2(rng.integers(-20, 20, (m, n)))))
    got = HW.hw_fused(kind, "f32", a, b, c, a_fmt=af, b_fmt=af, sa=sa, sb=sb, scale_fmt=s_fmt)
    for i in range(m):
        for j in range(n):
            if kind == "mxf8f6f4":
                want = O.hw_dot(list(a[i]), list(b[:, j]), float(c[i, j]), af, af, "f32",
                                sa=list(sa[i]), sb=list(sb[:, j]), s_fmt=s_fmt)
            else:
                want = O.hw_group_dot(list(a[i]), list(b[:, j]), float(c[i, j]), list(sa[i]), list(sb[:, j]), s_fmt)
            assert _same(want, got[i, j]), (i, j, want, got[i, j])


# ---------------------------------------------------------------------------------------------
# published facts, one probe each (source: Xie et al. 2025 / mmasim 2.1.1, unless noted)
# ---------------------------------------------------------------------------------------------

def _hw(kind, a, b, c, fmt="f16", d="f32"):
    return HW.hw_fused(kind, d, np.array([a], dtype=float), np.array(b, dtype=float)[:, None],
                       np.array([[c]], dtype=float), a_fmt=fmt, b_fmt=fmt)[0, 0]


def test_probe_alignment_width_is_25_bits():
    """hardware: terms are truncated to F = 25 fraction bits of the largest exponent."""
    # 1 - 1 + 2^-25 keeps the small term; 1 - 1 + 2^-26 loses it (exact: 2^-26)
    assert _hw("f16", [1, 1, 2.0 ** -13], [1, -1, 2.0 ** -12], 0) == 2.0 ** -25
    assert _hw("f16", [1, 1, 2.0 ** -13], [1, -1, 2.0 ** -13], 0) == 0.0


def test_probe_alignment_truncates_toward_zero():
    """hardware: a negative term's bits below the LSB are dropped toward zero (trunc), not toward
    -Inf (floor, the Hopper FP8 behaviour in MMA-Sim's ``tr_fdpa``). 1 - 2^-26: trunc keeps 1.0;
    floor would give 1 - 2^-25, rounded toward zero to 1 - 2^-24. Open question for FP8 on
    hardware: this is the case a device run must decide."""
    assert _hw("f16", [1, -(2.0 ** -13)], [1, 2.0 ** -13], 0) == 1.0
    # e4m3: C = 256 sets the LSB to 2^-17; the product -2^-18 vanishes (floor: 256 - 2^-16)
    assert _hw("f8f6f4", [-(2.0 ** -9)], [2.0 ** -9], 256, fmt="e4m3") == 256.0


def test_probe_f32_result_rounds_toward_zero():
    """hardware: 1 + 3 * 2^-25 -> 1.0 in f32 (round-to-nearest would give 1 + 2^-23)."""
    got = _hw("f16", [1, 2.0 ** -12, 2.0 ** -12], [1, 2.0 ** -12, 2.0 ** -13], 0)
    assert got == 1.0
    assert _hw("f16", [-1, -(2.0 ** -12)], [1, 2.0 ** -12], 0) == -1.0        # toward zero, not down


def test_probe_f16_result_rounds_to_nearest_even():
    """hardware: f16 D rounds to nearest, ties to even."""
    assert _hw("f16", [1, 2.0 ** -11], [1, 1], 0, d="f16") == 1.0                   # tie -> even (1.0)
    assert _hw("f16", [1, 3 * 2.0 ** -11], [1, 1], 0, d="f16") == 1 + 2.0 ** -9     # tie -> even (1+2^-9)
    assert _hw("f16", [1, 2.0 ** -11, 2.0 ** -14], [1, 1, 1], 0, d="f16") == 1 + 2.0 ** -10


def test_probe_canonical_nan():
    """hardware: every NaN result is 0x7FFFFFFF (f32 D) / 0x7FFF (f16 D), payload and sign dropped."""
    a = F.decode("f16", np.array([[0xFE01, 0x3C00]], dtype=np.uint16))           # -NaN with payload
    for d, want in (("f32", 0x7FFFFFFF), ("f16", 0x7FFF)):
        got = HW.hw_fused("f16", d, a, np.ones((2, 1)), np.zeros((1, 1)), a_fmt="f16", b_fmt="f16")
        assert HW.d_codes(got, d)[0, 0] == want
    inf_minus_inf = _hw("f16", [np.inf, np.inf], [1, -1], 0)
    assert HW.d_codes(np.array([inf_minus_inf]), "f32")[0] == 0x7FFFFFFF


def test_probe_subnormal_results_are_kept():
    """hardware: f32 subnormal results survive (no flush to zero); f16 subnormals too."""
    got = HW.hw_fused("tf32", "f32", np.array([[2.0 ** -70]]), np.array([[2.0 ** -70]]), np.zeros((1, 1)),
                      a_fmt="tf32", b_fmt="tf32")
    assert got[0, 0] == 2.0 ** -140
    assert _hw("f16", [2.0 ** -12], [2.0 ** -12], 0, d="f16") == 2.0 ** -24


def test_probe_tf32_ignores_low_13_bits():
    """hardware (NOTES.md item 10): tf32 operands are truncated, not rounded."""
    op = MmaOp("tf32", "tf32", "tf32", "f32", 128, 8)
    a = np.full((128, 8), 0x3F800000, dtype=np.uint32)
    b = np.full((8, 8), 0x3F800000, dtype=np.uint32)
    noisy = a | np.uint32(0x1FFF)                               # would round up to 1 + 2^-10 if rounded
    c = np.zeros((128, 8), dtype=np.uint32)
    for model in ("spec", "hardware"):
        np.testing.assert_array_equal(mma(op, noisy, b, c, model=model).d, mma(op, a, b, c, model=model).d)


def test_probe_mxf4_groups_of_16_are_summed_exactly():
    """hardware: mxf4 sums 16 products exactly before aligning (F = 35 from the scale exponents).

    C = -2^40 cancels group 0 (4 * 2^38); group 1 holds 4*4 + 4*4 = 32 at scale 2^0. The LSB after
    alignment to 2^40 is 2^5 = 32: the exact group sum 32 survives; products aligned one by one
    (16 < 32 each) would vanish.
    """
    k = 64
    a = np.zeros((1, k))
    b = np.zeros((k, 1))
    a[0, 0], b[0, 0] = 2, 2
    a[0, 16], b[16, 0], a[0, 17], b[17, 0] = 4, 4, 4, 4
    sa = np.repeat(np.array([[2.0 ** 38, 1, 1, 1]]), 16, axis=1)
    sb = np.ones((k, 1))
    got = HW.hw_fused("mxf4nvf4", "f32", a, b, np.array([[-(2.0 ** 40)]]), a_fmt="e2m1", b_fmt="e2m1",
                      sa=sa, sb=sb, scale_fmt="ue8m0")
    assert got[0, 0] == 32.0
    a[0, 17] = 0                                                 # one 16 alone: below the LSB
    got = HW.hw_fused("mxf4nvf4", "f32", a, b, np.array([[-(2.0 ** 40)]]), a_fmt="e2m1", b_fmt="e2m1",
                      sa=sa, sb=sb, scale_fmt="ue8m0")
    assert got[0, 0] == 0.0


def test_probe_ue8m0_nan_scale():
    """hardware: a ue8m0 scale of 0xFF makes the dot product NaN even against zeros."""
    sa = np.repeat(F.decode("ue8m0", np.array([[0xFF]], dtype=np.uint8)), 32, axis=1)
    got = HW.hw_fused("mxf8f6f4", "f32", np.zeros((1, 32)), np.zeros((32, 1)), np.zeros((1, 1)), a_fmt="e4m3",
                      b_fmt="e4m3", sa=sa, sb=np.ones((32, 1)), scale_fmt="ue8m0")
    assert np.isnan(got[0, 0])


def test_probe_zero_result_is_positive():
    """hardware: an exact zero is +0 even from -0 terms (MMA-Sim adds +0.0 to every result)."""
    got = _hw("f16", [-0.0, 1], [1, 0.0], -0.0)
    assert got == 0 and math.copysign(1, got) == 1


# Regression probes from the MMA-Sim cross-check (tests/test_mma_mmasim.py, docs/mma.md): a
# nonzero negative sum that rounds to zero in D. Expected codes are MMA-Sim's output (mmasim 2.1.1,
# TCGen05MMA / TCGen05MMABlockScale "Blackwell", run with torch 2.13.0 CPU), recorded as literals;
# the model gave -0 (0x8000 / 0x80000000) before the fix.
# (kind, A type, B type, D type, scale type, scale_vec, A[0], B[0], scale A, scale B, D code)
ROUNDS_TO_ZERO = [
    ("f16", "f16", "f16", "f16", None, None, -(2.0 ** -14), 2.0 ** -12, None, None, 0x0000),           # -2^-26 RNE
    ("f16", "bf16", "bf16", "f32", None, None, -(2.0 ** -75), 2.0 ** -75, None, None, 0x00000000),    # -2^-150 RZ
    ("tf32", "tf32", "tf32", "f32", None, None, -(2.0 ** -75), 2.0 ** -75, None, None, 0x00000000),
    ("f8f6f4", "e5m2", "e5m2", "f16", None, None, -(2.0 ** -14), 2.0 ** -12, None, None, 0x0000),
    ("mxf8f6f4", "e4m3", "e4m3", "f32", "ue8m0", "1X", -1.0, 1.0, 2.0 ** -75, 2.0 ** -75, 0x00000000),
    ("mxf4nvf4", "e2m1", "e2m1", "f32", "ue8m0", "4X", -0.5, 0.5, 2.0 ** -75, 2.0 ** -75, 0x00000000),
]


@pytest.mark.parametrize("case", ROUNDS_TO_ZERO, ids=lambda c: f"{c[0]}-{c[1]}-{c[3]}")
def test_probe_result_rounding_to_zero_is_positive(case):
    """hardware: a negative sum below D's smallest subnormal (RZ to f32) or below half of it (RNE to
    f16) gives +0, not -0. One product A[0][0] * B[0][0] (times the scales), all else 0, C = +0."""
    kind, at, bt, d, st, sv, a0, b0, s_a, s_b, want = case
    op = MmaOp(kind, at, bt, d, 128, 8, scale_type=st, scale_vec=sv)
    a, b = np.zeros((128, op.k)), np.zeros((op.k, 8))
    a[0, 0], b[0, 0] = a0, b0
    scales = {}
    if st:
        sa, sb = np.ones((128, op.scale_factors)), np.ones((op.scale_factors, 8))
        sa[0, 0], sb[0, 0] = s_a, s_b
        scales = {"scale_a": F.encode(st, sa), "scale_b": F.encode(st, sb)}
    c = F.encode(d, np.zeros((128, 8)))
    got = mma(op, F.encode(at, a), F.encode(bt, b), c, model="hardware", **scales).d
    assert int(got[0, 0]) == want
    assert not np.any(got)                          # every other element: +0 as well


def test_probe_overflow_is_inf_even_toward_zero():
    """hardware: a result >= 2^128 is +Inf for f32 D although the rounding is toward zero."""
    got = HW.hw_fused("tf32", "f32", np.array([[2.0 ** 127, 2.0 ** 127]]), np.array([[1.0], [1.0]]),
                      np.zeros((1, 1)), a_fmt="tf32", b_fmt="tf32")
    assert got[0, 0] == np.inf


def test_params_table_has_a_source_for_every_row():
    for (_kind, d), prm in HW.HW_PARAMS.items():
        assert "mmasim" in prm.source and prm.fraction_bits in (25, 35)
        assert prm.rounding == ("rne" if d == "f16" else "rz")


# ---------------------------------------------------------------------------------------------
# hardware model: the lossless-step shortcut gives the term-by-term path's bits
# ---------------------------------------------------------------------------------------------

SHORTCUT = [("f16", "f16", "f16", "f32", 16), ("f16", "bf16", "bf16", "f16", 16), ("tf32", "tf32", "tf32", "f32", 8),
            ("f8f6f4", "e4m3", "e2m1", "f32", 32), ("f8f6f4", "e5m2", "e3m2", "f16", 32), ("f16", "f16", "f16", "f32", 32)]


def _finite_pool(fmt, spread):
    codes = F.all_values(fmt)[0] if fmt != "tf32" else F.encode("tf32", F.decode("bf16", np.arange(1 << 16, dtype=np.uint16)[
        np.isfinite(F.decode("bf16", np.arange(1 << 16, dtype=np.uint16)))]))
    vals = F.decode(fmt, codes)
    return vals[np.isfinite(vals) & (np.abs(vals) <= 2.0 ** spread) & ((vals == 0) | (np.abs(vals) >= 2.0 ** -spread))]


@settings(max_examples=40, deadline=None)
@given(case=st.sampled_from(SHORTCUT), seed=st.integers(0, 2**32 - 1), spread=st.sampled_from([1, 3, 12, 40]),
       c_shift=st.integers(0, 3))
def test_hardware_shortcut_matches_term_by_term(case, seed, spread, c_shift):
    """hardware model: hw_fused with and without the lossless shortcut give the same bits, on
    operands from a narrow (shortcut taken) to a wide (shortcut declines) exponent range; K = 32
    with f16 is two steps (the second step's C is the first step's rounded D)."""
    kind, af, bf, d, k = case
    rng = np.random.default_rng(seed)
    a = rng.choice(_finite_pool(af, spread), (8, k))
    b = rng.choice(_finite_pool(bf, spread), (k, 6))
    c = F.decode(d, F.encode(d, rng.integers(-40, 41, (8, 6)) * 2.0 ** int(rng.integers(-30, 4))))
    shift = c_shift if kind in ("f16", "tf32") else 0
    fast = HW.hw_fused(kind, d, a, b, c, a_fmt=af, b_fmt=bf, c_shift=shift)
    slow = HW.hw_fused(kind, d, a, b, c, a_fmt=af, b_fmt=bf, c_shift=shift, shortcut=False)
    assert (HW.d_codes(fast, d) == HW.d_codes(slow, d)).all()


@pytest.mark.parametrize("kind,af,s_fmt,sf", [("mxf8f6f4", "e4m3", "ue8m0", 1), ("mxf4", "e2m1", "ue8m0", 2),
                                              ("mxf4nvf4", "e2m1", "ue4m3", 4)])
@pytest.mark.parametrize("spread", [1, 20])
def test_hardware_shortcut_matches_term_by_term_block_scaled(kind, af, s_fmt, sf, spread):
    """hardware model, block-scaled kinds (group sums for mxf4*): shortcut == term-by-term path."""
    rng = np.random.default_rng(spread + sf)
    k = 32 if kind == "mxf8f6f4" else 64
    a, b = rng.choice(_finite_pool(af, 3), (8, k)), rng.choice(_finite_pool(af, 3), (k, 6))
    if s_fmt == "ue8m0":
        sac, sbc = rng.integers(127 - spread, 128 + spread, (8, sf)), rng.integers(127 - spread, 128 + spread, (sf, 6))
    else:
        sac, sbc = rng.integers(0x30, 0x30 + 3 * spread, (8, sf)), rng.integers(0x30, 0x30 + 3 * spread, (sf, 6))
    sa = np.repeat(F.decode(s_fmt, sac), k // sf, axis=1)
    sb = np.repeat(F.decode(s_fmt, sbc), k // sf, axis=0)
    c = F.decode("f32", F.encode("f32", rng.integers(-40, 41, (8, 6)) * 0.25))
    args = dict(a_fmt=af, b_fmt=af, sa=sa, sb=sb, scale_fmt=s_fmt)
    fast = HW.hw_fused(kind, "f32", a, b, c, **args)
    slow = HW.hw_fused(kind, "f32", a, b, c, **args, shortcut=False)
    assert (HW.d_codes(fast, "f32") == HW.d_codes(slow, "f32")).all()


def test_hardware_shortcut_is_taken_on_small_integers():
    """The shortcut applies to exact-by-construction-like inputs (what makes the oracle fast)."""
    rng = np.random.default_rng(5)
    a, b = rng.integers(-3, 4, (128, 16)).astype(float), rng.integers(-3, 4, (16, 256)).astype(float)
    got = HW.lossless_step(a, b, np.zeros((128, 256)), None, None, a_fmt="f16", b_fmt="f16", scale_fmt=None,
                           d_type="f32", prm=HW.hw_params("f16", "f32"), c_shift=0)
    assert got is not None and (got == a @ b).all()


@settings(max_examples=80, deadline=None)
@given(kind=st.sampled_from(SPEC_KINDS), seed=st.integers(0, 2**32 - 1), shift=st.integers(-30, 30),
       narrow=st.booleans(), big_c=st.booleans())
def test_spec_whole_matrix_shortcut_equals_the_per_element_path(kind, seed, shift, narrow, big_c):
    """spec model: the all-exact shortcut gives the same (value, tolerance) as the per-element
    path, bit for bit, on narrow (exact) and on random-code (mostly inexact) operands."""
    kind_name, ab, d = kind
    rng = np.random.default_rng(seed)
    k = {"f16": 16, "tf32": 8, "f8f6f4": 32}[kind_name]
    if narrow:
        a = F.decode(ab, F.encode(ab, rng.choice([-2, -1, 0, 1, 1.5, 2], (4, k)) * 2.0 ** (shift % 5)))
        b = F.decode(ab, F.encode(ab, rng.choice([-1, 0, 0.5, 1], (k, 5))))
    else:
        a, b = F.decode(ab, random_codes(rng, ab, (4, k))), F.decode(ab, random_codes(rng, ab, (k, 5)))
        a, b = np.where(np.isfinite(a), a, 0.0), np.where(np.isfinite(b), b, 0.0)
    c = rng.integers(-50, 51, (4, 5)) * 2.0 ** (shift if big_c else -2)
    fast = NS.spec_fused(kind_name, d, a, b, c, a_fmt=ab, b_fmt=ab)
    slow = NS.spec_fused(kind_name, d, a, b, c, a_fmt=ab, b_fmt=ab, shortcut=False)
    assert np.array_equal(fast[0], slow[0], equal_nan=True) and np.array_equal(fast[1], slow[1], equal_nan=True)


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), c_exp=st.integers(-1070, 1000), c_spread=st.integers(0, 60),
       acc=st.sampled_from([(24, -126), (11, -14)]), ab_exp=st.integers(-60, 60))
def test_spec_all_exact_equals_its_lsb_definition(seed, c_exp, c_spread, acc, ab_exp):
    """spec model: the whole-matrix exactness test (C checked as multiples of 2^G) says what its
    definition says: g = min(lsb A + lsb B, lsb C) >= emin - P + 1 and max S < 2^(g + P), with C
    from subnormal to near float64's top (underflow and overflow of the scaled C)."""
    rng = np.random.default_rng(seed)
    p_acc, emin_acc = acc
    a = rng.integers(-8, 9, (3, 4)) * 2.0 ** ab_exp
    b = rng.integers(-8, 9, (4, 5)) * 2.0 ** -ab_exp
    c = rng.integers(-(1 << 20), 1 << 20, (3, 5)) * np.ldexp(1.0, c_exp + rng.integers(0, c_spread + 1, (3, 5)))
    abs_a, abs_b = np.abs(a), np.abs(b)
    with np.errstate(over="ignore"):
        total = abs_a @ abs_b + np.abs(c)
    if not np.isfinite(total).all():
        return
    g = min(int(NS.lsb_exponent(abs_a).min(initial=1 << 40)) + int(NS.lsb_exponent(abs_b).min(initial=1 << 40)),
            int(NS.lsb_exponent(c).min(initial=1 << 40)))
    s_max = float(total.max())
    log_s = int((np.array(s_max).view(np.int64) >> 52) - 1023)
    want = s_max == 0.0 or (g >= emin_acc - p_acc + 1 and log_s < g + p_acc)
    assert NS._all_exact(abs_a, abs_b, c, s_max, p_acc, emin_acc) == want


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), e=st.integers(-1074, 1000), spread=st.integers(0, 80),
       zeros=st.booleans(), specials=st.booleans())
def test_min_lsb_exponent_is_the_min_of_lsb_exponent(seed, e, spread, zeros, specials):
    """``numerics_spec.min_lsb_exponent`` (the spec model's whole-matrix exactness test) is the
    minimum of ``lsb_exponent`` over the finite nonzero elements, from subnormal to near float64's
    top; 2^30 when there is none. The hardware model's ``_lowest_bit`` (its own, on finite
    values) gives the same minimum."""
    rng = np.random.default_rng(seed)
    x = rng.integers(-(1 << 52), 1 << 52, (3, 4)).astype(np.float64)
    x = np.ldexp(x, np.minimum(e + rng.integers(0, spread + 1, (3, 4)), 971))
    if zeros:
        x[::2] = 0.0
    if specials:
        x[0, :3] = (np.inf, -np.inf, np.nan)
    finite_nonzero = x[np.isfinite(x) & (x != 0)]
    want = int(NS.lsb_exponent(finite_nonzero).min()) if finite_nonzero.size else 1 << 30
    assert NS.min_lsb_exponent(x) == want
    assert NS.min_lsb_exponent(np.zeros((0, 4))) == 1 << 30
    finite = np.where(np.isfinite(x), x, 0.0)                 # the hardware model's own (finite inputs)
    assert HW._lowest_bit(finite) == (want if finite_nonzero.size else -HW.NO_EXP)


@pytest.mark.parametrize("where", ["in the sample", "after the sample", "nowhere"])
@pytest.mark.parametrize("special", [None, np.inf, np.nan])
def test_lowest_bit_by_sample_equals_the_whole_array(where, special):
    """Both models' lowest-bit minimum on arrays larger than the sample (``formats.
    lowest_bit_by_sample``): the same as element by element whether the lowest bit lies in the
    sample, only after it, or the sample has the minimum; zeros, subnormals and a non-finite
    element (spec: ignored; Inf passes the multiples check, NaN fails it) included."""
    rng = np.random.default_rng(len(where))
    x = rng.integers(-64, 65, (60, 40)) * 2.0 ** -3                   # lowest bit 2^-3 mostly in the sample
    x[::3] = 0.0
    if where == "after the sample":
        x[-1, -1] = 2.0 ** -1070 * 3                                 # subnormal, only element at 2^-1070
    elif where == "in the sample":
        x[0, 1] = 2.0 ** -9
    if special is not None:
        x[30, 7] = special
    finite_nonzero = x[np.isfinite(x) & (x != 0)]
    want = int(NS.lsb_exponent(finite_nonzero).min())
    assert NS.min_lsb_exponent(x) == NS._min_lsb_exponent(x) == want
    finite = np.where(np.isfinite(x), x, 0.0)
    assert HW._lowest_bit(finite) == HW._lowest_bit_of(finite) == want
    assert NS.min_lsb_exponent(np.zeros((60, 40))) == 1 << 30 and HW._lowest_bit(np.zeros((60, 40))) == -HW.NO_EXP
    assert NS.min_lsb_exponent(x * 2.0 ** 40) == want + 40            # g > 0: the multiples check's underflow branch


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), e=st.integers(-1074, 1000), spread=st.integers(0, 80),
       zeros=st.booleans(), special=st.sampled_from([None, np.inf, -np.inf, np.nan]))
def test_lowest_bit_by_or_is_the_min_of_lsb_exponent_or_none(seed, e, spread, zeros, special):
    """``formats.lowest_bit_by_or`` (both models' whole-array lowest bit) is the minimum of
    ``lsb_exponent`` over the nonzero elements whenever it answers, and answers exactly when all
    elements are finite and lie within 2^-937 .. 2^63 with their last set bits within 63 bits of
    the largest's top (None otherwise: the callers then go element by element)."""
    rng = np.random.default_rng(seed)
    x = rng.integers(-(1 << 20), 1 << 20, (5, 7)).astype(np.float64)
    x = np.ldexp(x, np.minimum(e + rng.integers(0, spread + 1, (5, 7)), 993))
    if zeros:
        x[::2] = 0.0
    if special is not None:
        x[1, 2] = special
    nonzero = x[x != 0]
    got = F.lowest_bit_by_or(x, 1 << 30)
    assert F.lowest_bit_by_or(x, 1 << 30, float(np.abs(x).max())) == got       # max |x| given by the caller
    if not nonzero.size:
        assert got == 1 << 30
        return
    finite = np.isfinite(nonzero).all()
    low = int(NS.lsb_exponent(nonzero).min()) if finite else None
    top = math.frexp(float(np.abs(nonzero).max()))[1] if finite else None
    answers = finite and -1000 <= top - 63 <= 0 and low >= top - 63
    assert got == (low if answers else None)


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), e=st.integers(-1074, 1000), spread=st.integers(0, 80),
       g=st.integers(-1200, 1100), zeros=st.booleans())
def test_multiples_of_pow2_is_the_lsb_test(seed, e, spread, g, zeros):
    """``formats.multiples_of_pow2(x, g)`` (the models' cheap exactness test) is "every lsb >= g",
    from subnormal to near the top of float64 (where x * 2^-g under- or overflows)."""
    rng = np.random.default_rng(seed)
    x = rng.integers(-(1 << 30), 1 << 30, 12).astype(np.float64)
    x = np.ldexp(x, np.minimum(e + rng.integers(0, spread + 1, 12), 993))
    if zeros:
        x[::3] = 0.0
    want = bool((NS.lsb_exponent(x[x != 0]) >= g).all())
    assert F.multiples_of_pow2(x, g) == want


@pytest.mark.parametrize("shortcut", [True, False])
@pytest.mark.parametrize("inputs", ["exact", "random", "special", "subnormal"])
def test_a_scalar_zero_c_is_a_matrix_of_zeros(shortcut, inputs):
    """Both models take the C term as a scalar (what the MMA passes without enable-input-d) and
    give what an M x N matrix of +0 gives, bit for bit, on the shortcut and the per-element paths."""
    rng = np.random.default_rng(len(inputs))
    if inputs == "exact":
        a, b = rng.integers(-3, 4, (8, 32)) * 0.5, rng.integers(-3, 4, (32, 6)) * 0.25
    else:
        a = F.decode("e4m3", rng.integers(0, 256, (8, 32)))
        b = F.decode("e5m2", rng.integers(0, 256, (32, 6)))
        if inputs == "random":
            a, b = np.where(np.isfinite(a), a, 0.0), np.where(np.isfinite(b), b, 0.0)
        elif inputs == "subnormal":
            a, b = np.where(np.isfinite(a), a, 0.0), np.where(np.isfinite(b), b, 0.0)
            a[:, :4] = 2.0 ** -9
    zeros = np.zeros((8, 6))
    args = dict(a_fmt="e4m3", b_fmt="e5m2")
    for d in ("f32", "f16"):
        got = NS.spec_fused("f8f6f4", d, a, b, 0.0, **args, shortcut=shortcut)
        want = NS.spec_fused("f8f6f4", d, a, b, zeros, **args, shortcut=shortcut)
        assert all(np.array_equal(g, w, equal_nan=True) and g.shape == (8, 6) for g, w in zip(got, want, strict=True))
        got = HW.hw_fused("f8f6f4", d, a, b, 0.0, **args, shortcut=shortcut)
        want = HW.hw_fused("f8f6f4", d, a, b, zeros, **args, shortcut=shortcut)
        assert got.shape == (8, 6) and (HW.d_codes(got, d) == HW.d_codes(want, d)).all()


@pytest.mark.parametrize("d", ["f32", "f16"])
def test_d_holds_every_sum_only_where_every_multiple_is_a_d_value(d):
    """hardware model: ``_d_holds_every_sum(bound, q)`` (the shortcut's pass-free "D holds the
    sum") is true only where every multiple of 2^q up to ``bound`` is a D value -- checked on the
    largest such multiple and its neighbours, around D's subnormal floor and its top."""
    p, emin = HW.D_PRECISION[d]
    top = float(F.max_finite(d))
    for q in range(emin - p - 3, (128 if d == "f32" else 16) - p + 2):
        for bound in (np.ldexp(1.0, q + p + 1) - np.ldexp(1.0, q), np.ldexp(1.0, q + p + 1), top, np.ldexp(1.0, q + p)):
            k = np.floor(bound / np.ldexp(1.0, q))
            multiples = np.ldexp(np.array([k, k - 1, 1.0, 3.0]), q)
            multiples = multiples[multiples <= bound]
            if HW._d_holds_every_sum(float(bound), q, d):
                assert HW._in_d(multiples, d).all() and HW._in_d(-multiples, d).all(), (q, bound)


@pytest.mark.parametrize("fmt", ["f16", "bf16", "tf32", "e4m3", "e5m2", "e3m2", "e2m3", "e2m1", "ue4m3", "ue8m0", "f32"])
def test_any_subnormal_is_the_mask_anywhere(fmt):
    """The spec model's ``_any_subnormal`` (counts) says what ``_subnormal(...).any()`` says, on
    random codes (zeros, subnormals, Inf and NaN among them) and on arrays without subnormals."""
    rng = np.random.default_rng(len(fmt))
    for trial in range(20):
        values = F.decode(fmt, random_codes(rng, fmt, (3, 5)))
        if trial % 2:
            values = np.where(NS._subnormal(values, fmt), 0.0, values)
        assert NS._any_subnormal(values, fmt) == bool(NS._subnormal(values, fmt).any())
        assert NS._any_subnormal(values, fmt, np.abs(values)) == bool(NS._subnormal(values, fmt).any())
