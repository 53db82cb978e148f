"""Bit-exact model of the sm_100 (B200) tensor core numerics for ``tcgen05.mma`` floating kinds.

This is the *published measurement* model (Xie et al. 2025, "MMA-Sim: Bit-Accurate Reference
Model of Tensor Cores and Matrix Cores", arXiv:2511.10909; package ``mmasim`` 2.1.1,
``mmasim/arithmetic/fdpa.py`` and ``mmasim/nv_ptx/sim.py``), re-implemented from its facts in
vectorized integer numpy. PTX itself leaves order and rounding open: conformance verdicts use
:mod:`reference.numerics_spec`; this model is for regression detection and probes.

One fused dot-product-add step over L products (``t_fdpa`` / ``st_fdpa`` in the paper):

1. Each operand x is split into an integer significand and a *nominal* exponent: e = max(floor(
   log2|x|), emin of x's format); subnormals keep the format's emin. A product's exponent is
   e_a + e_b (+ the two scale exponents), its significand the exact product (may exceed 2).
   A zero product -- and a zero C -- takes the exponent ``e_zero`` instead.
2. e_max = max of all product exponents and C's. Every term (products and C) is truncated toward
   zero to F fraction bits of 2^e_max: trunc(s * 2^(F + e - e_max)) * 2^-F. For kind::f8f6f4 and
   kind::mxf8f6f4 the direction is spec question ``Q-FP8-ALIGN`` (``reference.spec_questions``):
   ``toward-zero`` (the pick, MMA-Sim) or ``toward-minus-inf`` (floor: two's-complement shifts).
   Whether zero terms take ``e_zero`` in e_max is spec question ``Q-E-ZERO`` (``competes``, the
   pick, MMA-Sim; ``ignored``).
3. The truncated terms are summed exactly.
4. The sum is rounded once to D: toward zero to f32 (subnormals kept) or to nearest-even to f16;
   a result >= 2^128 (f32) or >= 65520 (f16, after rounding) is Inf (RZ to f32: spec question
   ``Q-RZ-OVERFLOW``, ``inf`` the pick, or ``max-finite`` as IEEE 754). A zero result is +0,
   also when a nonzero sum rounds to zero.
5. NaN anywhere (NaN operand, NaN scale, Inf * 0, Inf - Inf) gives the canonical NaN 0x7FFFFFFF
   (f32) / 0x7FFF (f16); otherwise an Inf operand gives that Inf.

mxf4 / mxf4nvf4 (``gst_fdpa``): products are summed *exactly* in groups of G = 16 consecutive K;
each group sum is multiplied by its two scale significands and takes the exponent e_sA + e_sB
(a group whose products are all zero, or whose scale product is zero, takes ``e_zero``); then steps
2-4 with F = 35. Scales: ue8m0 0xFF is NaN; ue4m3 ignores its sign bit (decode does it).

K larger than one step is processed as consecutive steps, each step's rounded D feeding the next
as C. The step length L is 32 bytes of the A operand (MMA-Sim's ``L_max``); a dense MMA is one
step except K = 96 (two: 64 + 32).

Shortcut (same bits, :func:`lossless_step`): when every term of a step -- products, group sums
and C -- is a multiple of 2^q with q >= E - F, E an upper bound of every element's e_max, step 2
truncates nothing, so the exact sum (a float64 matrix product, exact while all partial sums stay
below 2^(q + 53)) is rounded by the same step 4. Exact-by-construction inputs always qualify.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from reference import formats as F
from reference.errors import SpecError, expects_but_got
from reference.spec_questions import resolve

SECTION = "9.7.16.10"
# kinds whose alignment direction is spec question Q-FP8-ALIGN (fp8/fp6/fp4 products, scaled or not)
ALIGN_QUESTION_KINDS = ("f8f6f4", "mxf8f6f4")


@dataclass(frozen=True)
class HwParams:
    """Numerics parameters of one (kind, D type) on sm_100; ``source`` names where each comes from."""

    fraction_bits: int    # F: fraction bits kept after alignment to the largest exponent
    rounding: str         # "rz" (f32 D) or "rne" (f16 D)
    e_zero: int           # exponent given to zero products / zero C
    step: int             # L: products per fused step (dense K; 32 bytes of A)
    group: int            # G: products summed exactly before scaling (0: none)
    source: str


_MMASIM = "mmasim 2.1.1 nv_ptx/sim.py"
# (kind, d_type) -> parameters. F, rounding, e_zero, L, G: MMA-Sim TCGen05MMA / TCGen05MMABlockScale.
HW_PARAMS: dict[tuple[str, str], HwParams] = {
    ("f16", "f32"): HwParams(25, "rz", -133, 16, 0, f"{_MMASIM} TCGen05MMA: F=25, RZ-FP32, e_zero=-133, L=32B/2B"),
    ("f16", "f16"): HwParams(25, "rne", -21, 16, 0, f"{_MMASIM} TCGen05MMA: F=25, RNE-FP16, e_zero=-21, L=32B/2B"),
    ("tf32", "f32"): HwParams(25, "rz", -133, 8, 0, f"{_MMASIM} TCGen05MMA: F=25, RZ-FP32, e_zero=-133, L=32B/4B"),
    ("f8f6f4", "f32"): HwParams(25, "rz", -133, 32, 0, f"{_MMASIM} TCGen05MMA: F=25, RZ-FP32, e_zero=-133, L=32B/1B"),
    ("f8f6f4", "f16"): HwParams(25, "rne", -21, 32, 0, f"{_MMASIM} TCGen05MMA: F=25, RNE-FP16, e_zero=-21, L=32B/1B"),
    ("mxf8f6f4", "f32"): HwParams(25, "rz", -133, 32, 0, f"{_MMASIM} TCGen05MMABlockScale k=32: F=25, RZ, e_zero=-133, L=32"),
    ("mxf4", "f32"): HwParams(35, "rz", -139, 64, 16, f"{_MMASIM} TCGen05MMABlockScale k=64: G=16, F=35, RZ, e_zero=-139, L=64"),
    ("mxf4nvf4", "f32"): HwParams(35, "rz", -139, 64, 16, f"{_MMASIM} TCGen05MMABlockScale k=64: G=16, F=35, RZ, e_zero=-139, L=64"),
}
# Not measured by MMA-Sim, extrapolated here (see docs/mma.md): kind::mxf4 uses the mxf4nvf4 path;
# sparse A takes one step per 32 bytes of *stored* A (L doubles in logical K); K = 96 is 64 + 32.

CANONICAL_NAN = {"f32": 0x7FFFFFFF, "f16": 0x7FFF}
D_PRECISION = {"f32": (23, -126), "f16": (10, -14)}        # (mantissa bits, emin) of D


def hw_params(kind: str, d_type: str) -> HwParams:
    try:
        return HW_PARAMS[(kind, d_type)]
    except KeyError:
        raise SpecError(SECTION, "hardware numerics", expects_but_got(
            "kind and D type", "one of " + ", ".join(f"{k}->{d}" for k, d in HW_PARAMS), f"{kind}->{d_type}")) from None


# ----------------------------------------------------------------------------------------------
# Exact decomposition and integer alignment
# ----------------------------------------------------------------------------------------------

def decompose(values: np.ndarray, fmt: str) -> tuple[np.ndarray, np.ndarray, int]:
    """(integer significand m, nominal exponent e, fraction bits p): x = m * 2^(e - p) for finite x.

    e = max(floor(log2|x|), 1 - bias): subnormals keep the format's minimum exponent. Zero and
    non-finite values get m = 0 (zero's exponent is replaced by ``e_zero`` by the caller).
    """
    f = F.get_format(fmt)
    p, emin = f.mantissa_bits, _emin(f)
    x = np.asarray(values, dtype=np.float64)
    finite = np.isfinite(x) & (x != 0)
    safe = np.where(finite, x, 1.0)
    _, e2 = np.frexp(np.abs(safe))
    e = np.maximum(e2 - 1, emin)
    m = np.where(finite, np.ldexp(safe, p - e), 0.0).astype(np.int64)    # exact: x has <= p fraction bits
    return m, e.astype(np.int64), p


def _emin(f) -> int:
    """The smallest nominal exponent of a format: 1 - bias; ue8m0 has no subnormals: 2^-127 is its
    smallest value (emin = -bias)."""
    return -f.bias if f.mantissa_bits == 0 else 1 - f.bias


def _bit_length(mag: np.ndarray) -> np.ndarray:
    _, e = np.frexp(mag.astype(np.float64))     # exact for mag < 2^53
    return e.astype(np.int64)


def round_sum(s: np.ndarray, lsb_exp: np.ndarray, d_type: str, rounding: str, overflow: str = "inf") -> np.ndarray:
    """float64 value of s * 2^lsb_exp rounded to D (rz / rne; subnormals kept; overflow -> Inf).

    A result that rounds to zero is +0 whatever the sign of s (MMA-Sim adds +0.0 to every result).
    ``overflow``: the reading of spec question ``Q-RZ-OVERFLOW`` for ``rz`` (``inf``, MMA-Sim, or
    ``max-finite``, IEEE 754 round toward zero: the largest finite D); ``rne`` always gives Inf.
    """
    p, emin = D_PRECISION[d_type]
    mag = np.abs(s)
    msb = lsb_exp + _bit_length(mag) - 1
    target = np.maximum(msb - p, emin - p)                # exponent of D's last kept bit
    drop = target - lsb_exp
    q = mag >> np.clip(drop, 0, 63)
    if rounding == "rne":
        rem = mag - (q << np.clip(drop, 0, 63))
        half = np.where(drop > 0, np.int64(1) << np.clip(drop - 1, 0, 62), 0)
        up = (drop > 0) & (drop < 64) & ((rem > half) | ((rem == half) & ((q & 1) == 1)))
        q = q + up
    value = np.where(drop > 0, np.ldexp(q.astype(np.float64), target), np.ldexp(mag.astype(np.float64), lsb_exp))
    limit = 2.0 ** 128 if d_type == "f32" else 65520.0
    big = np.finfo(np.float32 if d_type == "f32" else np.float16).max if rounding == "rz" and overflow == "max-finite" \
        else np.inf
    value = np.where(value >= limit, float(big), value)
    return np.where((s < 0) & (value != 0), -value, value)


def d_codes(values: np.ndarray, d_type: str) -> np.ndarray:
    """Codes of D values that are exact in D (NaN -> the canonical NaN of the tensor core)."""
    v = np.asarray(values, dtype=np.float64)
    nan = np.isnan(v)
    any_nan = nan.any()
    finite = np.where(nan, 0.0, v) if any_nan else v
    if d_type == "f32":
        codes = finite.astype(np.float32).view(np.uint32)
    else:
        codes = finite.astype(np.float16).view(np.uint16)
    if any_nan:
        codes[nan] = CANONICAL_NAN[d_type]
    return codes


# ----------------------------------------------------------------------------------------------
# One fused step
# ----------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Terms:
    """Terms of one step, per output element (M x N x T).

    ``mag``: |significand| already multiplied by 2^(F - frac) (F = fraction bits kept), so that
    aligning a term to e_max is one right shift by e_max - exp; ``sign``: -1, 0, 1; ``exp``:
    nominal exponent, ``NO_EXP`` for zero terms; ``has_zero``: M x N, some term is zero (its
    exponent e_zero then competes for e_max).
    """

    mag: np.ndarray
    sign: np.ndarray
    exp: np.ndarray
    has_zero: np.ndarray


NO_EXP = -(1 << 40)     # exponent of zero terms: never the maximum, shifts them out entirely


def _operand(values, fmt):
    """(|significand|, sign, exponent with NO_EXP for zeros, fraction bits) of one operand."""
    m, e, p = decompose(values, fmt)
    return np.abs(m), np.sign(m), np.where(m == 0, NO_EXP, e), p


def _product_terms(a, b, a_fmt, b_fmt, sa, sb, scale_fmt, fraction_bits) -> Terms:
    ma, sga, ea, pa = _operand(a, a_fmt)
    mb, sgb, eb, pb = _operand(b, b_fmt)
    frac = pa + pb
    if sa is not None:                        # st_fdpa: fold each K's scales into the operands
        msa, _, esa, psa = _operand(sa, scale_fmt)
        msb, _, esb, psb = _operand(sb, scale_fmt)
        ma, ea, mb, eb = ma * msa, ea + esa, mb * msb, eb + esb
        frac += psa + psb
    mag = ma[:, None, :] * (mb.T << (fraction_bits - frac))[None, :, :]
    sign = sga[:, None, :] * sgb.T[None, :, :]
    exp = ea[:, None, :] + eb.T[None, :, :]
    nonzero = (ma != 0).astype(np.float64) @ (mb != 0).astype(np.float64)     # exact counts
    return Terms(mag, sign, exp, nonzero < a.shape[1])


def _group_terms(a, b, sa, sb, scale_fmt, group, fraction_bits) -> Terms:
    """gst_fdpa: exact sums of G products (e2m1 values x 2 are integers), times scale significands."""
    m, k = a.shape
    n = b.shape[1]
    ng = k // group
    ga = (2.0 * a).reshape(m, ng, group).transpose(1, 0, 2)
    gb = (2.0 * b).reshape(ng, group, n)
    sums = np.matmul(ga, gb).transpose(1, 2, 0).astype(np.int64)       # exact: |sum| <= 16 * 144
    nonzero = np.matmul((ga != 0).astype(np.float64), (gb != 0).astype(np.float64)).transpose(1, 2, 0)
    msa, _, esa, psa = _operand(sa[:, ::group], scale_fmt)            # one scale per group
    msb, _, esb, psb = _operand(sb[::group, :], scale_fmt)
    frac = 2 + psa + psb                                               # sums carry 2 fraction bits
    scale_mag = msa[:, None, :] * msb.T[None, :, :]
    mag = (np.abs(sums) * scale_mag) << (fraction_bits - frac)
    exp = esa[:, None, :] + esb.T[None, :, :]
    zero = (nonzero == 0) | (scale_mag == 0)                           # these groups take e_zero
    exp = np.where(zero, NO_EXP, exp)
    return Terms(mag, np.sign(sums), exp, zero.any(axis=-1))


def alignment_direction(kind: str, reading: str | None = None) -> str:
    """Step 2's direction: ``toward-zero`` (every kind MMA-Sim measured), or for kind::f8f6f4 /
    kind::mxf8f6f4 the reading of spec question ``Q-FP8-ALIGN`` in force (or ``reading``)."""
    return resolve("Q-FP8-ALIGN", reading) if kind in ALIGN_QUESTION_KINDS else "toward-zero"


def aligned_terms(mag: np.ndarray, sign: np.ndarray, shift: np.ndarray, direction: str) -> np.ndarray:
    """Signed terms ``sign * mag`` shifted right by ``shift`` (step 2): ``toward-zero`` drops the
    bits from the magnitude, ``toward-minus-inf`` shifts the two's-complement value (floor)."""
    if direction == "toward-minus-inf":
        return (mag * sign) >> shift
    aligned = mag >> shift
    aligned *= sign
    return aligned


def scaled_c(c: np.ndarray, c_shift: int, d_type: str, rounding: str) -> np.ndarray:
    """C * 2^-c_shift rounded to D's format (rz / rne): scale-input-d under spec question
    ``Q-SCALE-INPUT-D``'s reading ``c-rounded`` (the pick, ``exponent``, keeps it exact)."""
    m, e, p = decompose(c, d_type)
    return round_sum(m, e - p - c_shift, d_type, rounding)


@dataclass(frozen=True)
class Readings:
    """The spec-question readings one step follows (``reference.spec_questions``)."""

    direction: str = "toward-zero"     # Q-FP8-ALIGN (f8f6f4 / mxf8f6f4 only)
    e_zero: str = "competes"           # Q-E-ZERO: zero terms take e_zero in e_max, or take no part
    overflow: str = "inf"              # Q-RZ-OVERFLOW: an RZ result >= 2^128 is Inf or the largest finite


def step_readings(kind: str, direction: str | None = None, e_zero: str | None = None,
                  overflow: str | None = None) -> Readings:
    """The readings in force (explicit arguments win)."""
    return Readings(alignment_direction(kind, direction), resolve("Q-E-ZERO", e_zero), resolve("Q-RZ-OVERFLOW", overflow))


def _fused_step(terms: Terms, c: np.ndarray, d_type: str, prm: HwParams, c_shift: int,
                readings: Readings = Readings()) -> np.ndarray:
    fb = prm.fraction_bits
    direction = readings.direction
    mc, sgc, ec, pc = _operand(c, d_type)
    ec = ec - c_shift
    emax = np.maximum(terms.exp.max(axis=-1), ec)
    if readings.e_zero == "competes":
        emax = np.maximum(emax, np.where(terms.has_zero | (mc == 0), prm.e_zero, NO_EXP))
    shift = emax[..., None] - terms.exp                                # >= 0
    np.minimum(shift, 63, out=shift)
    total = aligned_terms(terms.mag, terms.sign, shift, direction).sum(axis=-1)
    total += aligned_terms(mc << (fb - pc), sgc, np.minimum(emax - ec, 63), direction)
    return round_sum(total, emax - fb, d_type, prm.rounding, readings.overflow)


def _special(a, b, c, sa, sb) -> tuple[np.ndarray, np.ndarray] | None:
    """(nan mask, inf value) of the IEEE sum of products and C, or None when all inputs are finite."""
    arrays = [a, b, c] + ([sa, sb] if sa is not None else [])
    if all(np.isfinite(x).all() for x in arrays):
        return None
    with np.errstate(invalid="ignore", over="ignore"):
        aa = a if sa is None else a * sa
        bb = b if sb is None else b * sb
    total = F.product_sums_where_nonfinite(aa, bb, c)       # finite stand-ins where it is finite
    return np.isnan(total), total


def _largest_magnitude(values: np.ndarray) -> float:
    """max |value| (0 for none) of finite values, without an |values| pass."""
    return max(float(values.max(initial=0.0)), -float(values.min(initial=0.0)))


def _nominal_exponent(top: float, fmt: str) -> int:
    """Largest nominal exponent (step 1) of the nonzero values, from their largest magnitude
    ``top``; a very small number if 0 (no nonzero value)."""
    if top == 0.0:
        return NO_EXP
    return max(math.frexp(top)[1] - 1, _emin(F.get_format(fmt)))     # decompose's e, for one value


def _lowest_bit(values: np.ndarray, top: float | None = None) -> int:
    """Smallest exponent q with a nonzero value = odd * 2^q, over the nonzero values (-NO_EXP if
    none): from the OR of the values as integers, else on a sample first, checked on all values
    (``formats.lowest_bit``). ``top``: max |value| where the caller has it."""
    return F.lowest_bit(values, _lowest_bit_of, -NO_EXP, top)


def _lowest_bit_of(values: np.ndarray) -> int:
    """:func:`_lowest_bit` element by element."""
    x = np.abs(values)
    nonzero = x != 0
    if not nonzero.all():
        x = x[nonzero]
    if x.size == 0:
        return -NO_EXP
    frac, e = np.frexp(x)                                      # x = mant * 2^(e - 53)
    mant = np.ldexp(frac, 53).astype(np.int64)                 # exact: 53-bit significands
    lowest = np.ldexp((mant & -mant).astype(np.float64), e - 53)   # each value's last set bit, >= 2^-1074
    return int(np.frexp(lowest.min())[1]) - 1


def _sums_bound(abs_a: np.ndarray, abs_b: np.ndarray, abs_c: np.ndarray, limit: float) -> float | None:
    """An upper bound of every |A| @ |B| + |C| (the largest partial sum of any order) when one is
    below ``limit`` = 2^(q + 53), all terms multiples of 2^q; else None. First the whole-matrix
    bound ``formats.magnitude_sum_bound`` (no M x K x N work), then, where that reaches ``limit``,
    the largest element of the product."""
    bound = F.magnitude_sum_bound(abs_a, abs_b, float(abs_c.max(initial=0.0)))
    if bound < limit:
        return bound
    bound = float((abs_a @ abs_b + abs_c).max(initial=0.0))
    return bound if bound < limit else None


def _d_holds_every_sum(bound: float, q: int, d_type: str) -> bool:
    """Whether every sum of multiples of 2^q of magnitude <= ``bound`` is a D value: 2^q no finer
    than D's smallest subnormal, fewer than p + 1 significant bits (bound < 2^(q + p + 1)) and no
    larger than D's largest finite value."""
    p, emin = D_PRECISION[d_type]
    return q >= emin - p and bound < math.ldexp(1.0, q + p + 1) and bound <= float(F.max_finite(d_type))


def lossless_step(a, b, c, sa, sb, *, a_fmt: str, b_fmt: str, scale_fmt, d_type: str, prm: HwParams,
                  c_shift: int, overflow: str = "inf") -> np.ndarray | None:
    """D values of one fused step (§9.7.16.10; module docstring, "Shortcut") when alignment
    provably loses no bit, else None. Inputs finite; ``sa``/``sb`` scale values or None.

    Bound: E = max(e_a + e_b (+ e_sA + e_sB), e_sA + e_sB (group sums), e_C - c_shift, e_zero) over
    the largest nominal exponents bounds every element's e_max; q = the smallest lowest-set-bit
    exponent over A (+ scales) times B and C * 2^-c_shift bounds every term's. Then each term is a
    multiple of 2^(e_max - F) and truncation is the identity.
    """
    top_a, top_b = _largest_magnitude(a), _largest_magnitude(b)
    e_prod = _nominal_exponent(top_a, a_fmt) + _nominal_exponent(top_b, b_fmt)
    q_prod = _lowest_bit(a, top_a) + _lowest_bit(b, top_b)
    bound = [e_prod]
    if sa is not None:
        top_sa, top_sb = _largest_magnitude(sa), _largest_magnitude(sb)
        e_scale = _nominal_exponent(top_sa, scale_fmt) + _nominal_exponent(top_sb, scale_fmt)
        bound = [e_prod + e_scale, e_scale]
        q_prod += _lowest_bit(sa, top_sa) + _lowest_bit(sb, top_sb)
    top_c = _largest_magnitude(c)
    bound += [_nominal_exponent(top_c, d_type) - c_shift, prm.e_zero]
    if q_prod < -NO_EXP // 2 and F.multiples_of_pow2(c, q_prod + c_shift):
        q = q_prod                          # C's lowest bit is no lower: the min below, without it
    else:
        q = min(q_prod, _lowest_bit(c, top_c) - c_shift)
    if q > -NO_EXP // 2:                                       # every term is zero
        q = prm.e_zero - prm.fraction_bits
    if q < max(bound) - prm.fraction_bits:
        return None
    aa = a if sa is None else a * sa                           # exact: scales are short (<= 4 bits)
    bb = b if sb is None else b * sb
    c_term = np.ldexp(c, -c_shift) if c_shift else c
    s_bound = _sums_bound(np.abs(aa), np.abs(bb), np.abs(c_term), np.ldexp(1.0, q + 53))
    if s_bound is None:
        return None                                            # a partial sum might round in float64
    exact = aa @ bb                                            # the exact sum (bound above)
    exact += c_term
    if _d_holds_every_sum(s_bound, q, d_type) or _in_d(exact, d_type).all():   # no rounding in any mode
        exact += 0.0                                           # (a zero sum is +0, as round_sum)
        return exact
    units = np.ldexp(exact, -q).astype(np.int64)               # in units of 2^q
    return round_sum(units, np.full(units.shape, q, dtype=np.int64), d_type, prm.rounding, overflow)


def _in_d(values: np.ndarray, d_type: str) -> np.ndarray:
    """Where a float64 value is a D value (its cast to D's format, compared in float64, is itself)."""
    with np.errstate(over="ignore"):
        return values.astype(np.float32 if d_type == "f32" else np.float16) == values


def hw_fused(kind: str, d_type: str, a, b, c, *, a_fmt: str, b_fmt: str, sa=None, sb=None,
             scale_fmt: str | None = None, c_shift: int = 0, step: int | None = None,
             shortcut: bool = True, reading: str | None = None, e_zero: str | None = None,
             overflow: str | None = None) -> np.ndarray:
    """D values (float64, exact in D; NaN = canonical) of one MMA on logical operand values.

    ``a`` M x K, ``b`` K x N (values after negation / sparsity / masking), ``c`` M x N in D's
    format, or a scalar for every element (0 when enable-input-d is false), ``sa``/``sb`` scale values broadcast along K
    (M x K, K x N) for block-scaled kinds, ``c_shift`` = scale-input-d (C's exponent - s).
    ``step`` overrides L (sparse MMAs pass 2 L). ``shortcut=False`` always takes the term-by-term
    path (steps 1-4) instead of :func:`lossless_step` where that applies (same bits). ``reading``:
    of spec question ``Q-FP8-ALIGN`` (kind::f8f6f4 / mxf8f6f4), ``e_zero``: of ``Q-E-ZERO``,
    ``overflow``: of ``Q-RZ-OVERFLOW`` (None = the reading in force); ``c_shift`` as spec question
    ``Q-SCALE-INPUT-D``'s reading in force says (``exponent``: C's exponent minus s, exact).
    """
    prm = hw_params(kind, d_type)
    readings = step_readings(kind, reading, e_zero, overflow)
    a, b, c = (np.asarray(x, dtype=np.float64) for x in (a, b, c))
    if c_shift and resolve("Q-SCALE-INPUT-D", None) == "c-rounded":     # C * 2^-s rounded to D first
        c = np.where(np.isfinite(c), scaled_c(np.where(np.isfinite(c), c, 0.0), c_shift, d_type, prm.rounding), c)
        c_shift = 0
    k = a.shape[1]
    length = step or prm.step
    out = c
    for k0 in range(0, k, length):
        sl = slice(k0, min(k, k0 + length))
        a_s, b_s = a[:, sl], b[sl, :]
        sa_s = None if sa is None else np.asarray(sa, dtype=np.float64)[:, sl]
        sb_s = None if sb is None else np.asarray(sb, dtype=np.float64)[sl, :]
        special = _special(a_s, b_s, out, sa_s, sb_s)
        shift = c_shift if k0 == 0 else 0
        if special is None and shortcut:
            res = lossless_step(a_s, b_s, out, sa_s, sb_s, a_fmt=a_fmt, b_fmt=b_fmt, scale_fmt=scale_fmt,
                                d_type=d_type, prm=prm, c_shift=shift, overflow=readings.overflow)
            if res is not None:
                out = res
                continue
        safe = [np.where(np.isfinite(x), x, 0.0) if x is not None else None for x in (a_s, b_s, out, sa_s, sb_s)]
        if prm.group:
            terms = _group_terms(safe[0], safe[1], safe[3], safe[4], scale_fmt, prm.group, prm.fraction_bits)
        else:
            terms = _product_terms(safe[0], safe[1], a_fmt, b_fmt, safe[3], safe[4], scale_fmt, prm.fraction_bits)
        res = _fused_step(terms, safe[2], d_type, prm, shift, readings)
        if special is not None:
            nan, total = special
            res = np.where(nan, np.nan, np.where(np.isinf(total), total, res))
        out = res
    return out
