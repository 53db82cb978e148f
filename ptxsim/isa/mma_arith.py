"""The arithmetic of one simulated MMA, and the decoded values the MMA fault hooks see.

The tcgen05.mma and mma.sp handlers gather the *logical* operands the hardware would use (A with
sparsity expanded and .ashift applied, B with the column shift and zero-column mask, scale
factors, C) into an :class:`MmaCase`; :func:`mma_arithmetic` turns it into D codes. That function
is the **one call site of the MMA numerics**: it calls the reference MMA model's bit-exact
hardware numerics (``reference.numerics_hw``, "MMA-Sim" sm_100 facts) when that module is present
on this branch, and otherwise the interim model below (marked ``INTERIM``), which is exact for the
exact-by-construction inputs of the semantic tests: products exact, summed in float64, rounded
once to D (f32 toward zero, f16 to nearest even), NaN results canonical.
"""

from __future__ import annotations

import contextlib
import importlib.util
import math
from dataclasses import dataclass, field, replace
from typing import Callable

import numpy as np

from reference import formats as F
from reference.spec_questions import resolve

S32_MIN, S32_MAX = -(1 << 31), (1 << 31) - 1
CANONICAL_NAN = {"f32": 0x7FFFFFFF, "f16": 0x7FFF}
HAVE_HW_MODEL = importlib.util.find_spec("reference.numerics_hw") is not None


@dataclass(frozen=True)
class MmaOperands:
    """Instruction operands of a tcgen05.mma that are not in a descriptor (hook ``mma_operands``).

    ``disable_output_lane``: bit ``128*cta + lane`` set = that lane of D is not written (None: the
    operand is absent). ``column_shift``: B columns skipped by a .ws MMA (zero-column mask
    descriptor bits 56-61; 0 without one).
    """

    enable_input_d: bool
    scale_input_d: int = 0
    disable_output_lane: int | None = None
    column_shift: int = 0


@dataclass(frozen=True)
class ScaleFactors:
    """Scale factor codes as read from Tensor Memory (hook ``scale_factors``).

    ``a``: ``uint8[M, SF]`` (row i of A, chunk s), ``b``: ``uint8[N, SF]`` (column j of B);
    ``a_id``/``b_id`` the ids they were read with; ``scale_type`` ue8m0 or ue4m3.
    """

    a: np.ndarray
    b: np.ndarray
    a_id: int
    b_id: int
    scale_type: str


def decode_scales(scale_type: str, codes) -> np.ndarray:
    """Scale values: ue8m0 = 2^(code-127) (0xFF NaN), ue4m3 ignores its sign bit (reference.formats)."""
    return F.decode(scale_type, np.asarray(codes, dtype=np.uint8))


@dataclass(frozen=True)
class MmaCase:
    """Everything that decides D's value (logical, after every decoded effect and hook).

    ``a``: ``M x K`` codes (sparse A already expanded: dropped elements code 0), ``b``: ``K x N``
    codes, ``b_zero``: bool N (zero-column mask), ``c``: D before (``M x N`` codes), ``sa``/``sb``:
    scale codes ``M x SF`` / ``SF x N`` (None without block scaling). ``rounding`` None = the
    hardware's; ``scale_decode(scale_type, codes)`` the scale values.
    """

    kind: str
    d_type: str
    a_type: str
    b_type: str
    a: np.ndarray
    b: np.ndarray
    c: np.ndarray
    b_zero: np.ndarray | None = None
    sparse: bool = False
    negate_a: bool = False
    negate_b: bool = False
    saturate: bool = False
    enable_input_d: bool = True
    scale_input_d: int = 0
    sa: np.ndarray | None = None
    sb: np.ndarray | None = None
    scale_type: str | None = None
    rounding: str | None = None
    scale_decode: Callable = field(default=decode_scales)


def _values(case: MmaCase) -> tuple[np.ndarray, np.ndarray]:
    a = np.ascontiguousarray(F.decode(case.a_type, case.a), dtype=np.float64)
    b = np.ascontiguousarray(F.decode(case.b_type, case.b), dtype=np.float64)
    if case.b_zero is not None:
        b = np.where(np.asarray(case.b_zero)[None, :], 0.0, b)
    return (-a if case.negate_a else a), (-b if case.negate_b else b)


def _scales_per_k(case: MmaCase, k: int):
    if case.sa is None:
        return None, None
    sa = case.scale_decode(case.scale_type, case.sa).astype(np.float64)
    sb = case.scale_decode(case.scale_type, case.sb).astype(np.float64)
    return np.repeat(sa, k // sa.shape[1], axis=1), np.repeat(sb, k // sb.shape[0], axis=0)


def integer_d(case: MmaCase) -> np.ndarray:
    """kind::i8: exact s32 sum, clamped (saturate) or wrapped modulo 2^32 (§9.7.16.4.2 Table 42 bit 3)."""
    a, b = F.decode(case.a_type, case.a).astype(np.int64), F.decode(case.b_type, case.b).astype(np.int64)
    if case.b_zero is not None:
        b = np.where(np.asarray(case.b_zero)[None, :], 0, b)
    c = F.decode("s32", case.c).astype(np.int64) if case.enable_input_d else 0
    if case.saturate and resolve("Q-I8-SAT", None) == "running":      # clamp after every addition, K order
        d = np.broadcast_to(np.asarray(c, dtype=np.int64), (a.shape[0], b.shape[1])).copy()
        for k in range(a.shape[1]):
            d = np.clip(d + np.outer(a[:, k], b[k]), S32_MIN, S32_MAX)
        return (d & 0xFFFFFFFF).astype(np.uint32)
    exact = a @ b + c
    d = np.clip(exact, S32_MIN, S32_MAX) if case.saturate else ((exact - S32_MIN) % (1 << 32)) + S32_MIN
    return (d & 0xFFFFFFFF).astype(np.uint32)


def _d_codes(values: np.ndarray, d_type: str, rounding: str) -> np.ndarray:
    """INTERIM rounding of exact-ish float64 values to D codes (canonical NaN)."""
    if d_type == "f16":
        if rounding == "rz":
            raise ValueError("INTERIM numerics: f16 D only rounds to nearest even")
        out = values.astype(np.float16).view(np.uint16).astype(np.uint32)
    else:
        f = values.astype(np.float32)          # RNE
        out = f.view(np.uint32)
        if rounding == "rz":                   # step back toward zero where RNE went away from it
            # one ulp toward zero (nextafter(f, 0)) is the encoding less 1 (sign and magnitude;
            # +-inf - 1 = +-FLT_MAX; f is never 0 or NaN where it went away from a finite value):
            #   float32  | s | exponent (8) | fraction (23) |   magnitude = bits 30..0
            away = np.abs(f) > np.abs(values)        # compared as float64 (f widened exactly)
            out = out - (away & np.isfinite(values))
    nan = np.isnan(values)
    if not nan.any():
        return out.astype(np.uint32)
    return np.where(nan, np.uint32(CANONICAL_NAN[d_type]), out).astype(np.uint32)


def _hw_rounding(case: MmaCase) -> str:
    return case.rounding or ("rne" if case.d_type == "f16" else "rz")


@contextlib.contextmanager
def _hw_rounding_override(case: MmaCase):
    """Let a fault's ``rounding`` reach the hardware model (its parameters are a module table)."""
    if case.rounding is None:
        yield
        return
    from reference import numerics_hw as HW
    key = (case.kind, case.d_type)
    saved = HW.HW_PARAMS[key]
    HW.HW_PARAMS[key] = replace(saved, rounding=case.rounding)
    try:
        yield
    finally:
        HW.HW_PARAMS[key] = saved


_FRACTION = np.int64((1 << 52) - 1)


def _lowest_bit_exponent(values: np.ndarray) -> int:
    """min over nonzero finite x of the exponent of x's lowest set bit (x = odd * 2^q).

    The lowest set bit of finite |x| is worth 2^q: with a nonzero fraction field, |x| less |x|
    with the lowest set bit of its encoding cleared (same exponent field, at least half of |x|:
    the difference is exact, Sterbenz), else |x| itself (a power of two). The least of those
    values is 2^(min q), whose exponent ``math.frexp`` reads exactly (subnormals included).

      float64  | s | exponent (11) | fraction (52) |      x & (x - 1): the lowest set bit cleared
    """
    x = np.abs(values[values != 0])
    if x.size == 0:
        return 1 << 20
    bits = x.view(np.int64)
    lowest = np.where((bits & _FRACTION) == 0, x, x - (bits & (bits - 1)).view(np.float64))
    return math.frexp(float(lowest.min()))[1] - 1


def _nominal_exponent_max(values: np.ndarray, fmt: str) -> int:
    """The nominal exponent of the largest |x| (finite values: the largest nonzero |x| when there is one)."""
    from reference import numerics_hw as HW
    top = np.abs(values).max() if values.size else 0.0
    if top == 0:
        return -(1 << 20)
    _, e, _ = HW.decompose(np.array([top]), fmt)
    return int(e[0])


def exact_fast_path(case: MmaCase, a, b, c, sa, sb, prm) -> np.ndarray | None:
    """D codes equal to the hardware model's when no alignment bit is lost, else None.

    The model (numerics_hw) truncates every term to ``F`` fraction bits of 2^e_max and rounds the
    exact sum once (single step). When every term is a multiple of 2^(e_max - F) for a global upper
    bound of e_max (bounded from the largest nominal exponents, lowest set bits from the smallest),
    truncation loses nothing and the result is the exact float64 sum rounded (RZ f32, RNE f16): the
    same bits, computed with one matrix product instead of M x N x K integer terms.
    """
    if prm.group or a.shape[1] > prm.step * (2 if case.sparse else 1) or case.rounding is not None:
        return None
    arrays = [a, b, c] + ([sa, sb] if sa is not None else [])
    if not all(np.isfinite(x).all() for x in arrays):
        return None
    shift = case.scale_input_d if case.enable_input_d else 0
    if shift and resolve("Q-SCALE-INPUT-D", None) == "c-rounded":     # C * 2^-s rounds first: the model's path
        return None
    e_terms = _nominal_exponent_max(a, case.a_type) + _nominal_exponent_max(b, case.b_type)
    q_terms = _lowest_bit_exponent(a) + _lowest_bit_exponent(b)
    if sa is not None:
        e_terms += _nominal_exponent_max(sa, case.scale_type) + _nominal_exponent_max(sb, case.scale_type)
        q_terms += _lowest_bit_exponent(sa) + _lowest_bit_exponent(sb)
    e_c = _nominal_exponent_max(c, case.d_type) - shift
    q_c = _lowest_bit_exponent(c) - shift
    e_max = max(e_terms, e_c, prm.e_zero)
    if min(q_terms, q_c) < e_max - prm.fraction_bits or e_max > 120:
        return None
    aa = a if sa is None else a * sa
    bb = b if sb is None else b * sb
    value = aa @ bb + c * 2.0 ** -shift + 0.0          # exact (at most ~F + log2 K bits); -0 -> +0
    return _d_codes(value, case.d_type, _hw_rounding(case))


def mma_arithmetic(case: MmaCase) -> np.ndarray:
    """D codes (``uint32[M, N]``; f16 in the low 16 bits) of one MMA: THE numerics call site."""
    if case.kind == "i8":
        return integer_d(case)
    a, b = _values(case)
    k = a.shape[1]
    sa, sb = _scales_per_k(case, k)
    c = F.decode(case.d_type, case.c.astype(np.uint16 if case.d_type == "f16" else np.uint32)) \
        if case.enable_input_d else np.zeros(case.c.shape)
    c = np.asarray(c, dtype=np.float64)
    if HAVE_HW_MODEL:
        from reference import numerics_hw as HW
        prm = HW.hw_params(case.kind, case.d_type)
        fast = exact_fast_path(case, a, b, c, sa, sb, prm)
        if fast is not None:
            return fast
        with _hw_rounding_override(case):
            value = HW.hw_fused(case.kind, case.d_type, a, b, c, a_fmt=case.a_type, b_fmt=case.b_type, sa=sa, sb=sb,
                                scale_fmt=case.scale_type, c_shift=case.scale_input_d if case.enable_input_d else 0,
                                step=prm.step * (2 if case.sparse else 1))
            return HW.d_codes(value, case.d_type).astype(np.uint32)
    # INTERIM (until reference/numerics_hw.py is on main): one exact-ish float64 sum, one rounding
    aa = a if sa is None else a * sa
    bb = b if sb is None else b * sb
    with np.errstate(invalid="ignore", over="ignore"):
        value = aa @ bb + c * 2.0 ** -case.scale_input_d
    return _d_codes(value, case.d_type, _hw_rounding(case))
