"""Slow scalar oracles for the MMA tests, written apart from ``reference.numerics_hw``.

``hw_dot`` follows the published description of the sm_100 fused dot-product-add (Xie et al.
2025, MMA-Sim) step by step on Python ``Fraction``s: one output element at a time, no numpy, no
integer shift tricks. ``exact_dot`` is the plain rational value.
"""

from __future__ import annotations

import math
from fractions import Fraction

# smallest exponent of a normal number (subnormals are read with this exponent), per format
EMIN = {"f32": -126, "tf32": -126, "f16": -14, "bf16": -126, "e4m3": -6, "e5m2": -14, "e2m3": 0,
        "e3m2": -2, "e2m1": 0, "ue8m0": -127, "ue4m3": -6}


def split(x: float, fmt: str) -> tuple[Fraction, int | None]:
    """(significand, exponent) with x = s * 2^e, e = max(floor(log2 |x|), EMIN); zero: (0, None)."""
    if x == 0:
        return Fraction(0), None
    e = math.frexp(abs(x))[1] - 1
    e = max(e, EMIN[fmt])
    return Fraction(x) / Fraction(2) ** e, e


def _exponent(v: Fraction) -> int:
    e = math.frexp(float(v))[1] - 1
    while Fraction(2) ** e > v:
        e -= 1
    while Fraction(2) ** (e + 1) <= v:
        e += 1
    return e


def round_to_d(v: Fraction, d_type: str) -> float:
    """Toward zero to f32 (subnormals kept; >= 2^128 is Inf), to nearest even to f16; a result
    that is or rounds to zero is +0 (MMA-Sim adds +0.0 to every result)."""
    if v == 0:
        return 0.0
    sign, v = (-1.0 if v < 0 else 1.0), abs(v)
    e = _exponent(v)
    if d_type == "f32":
        quantum = Fraction(2) ** max(e - 23, -149)
        r = math.floor(v / quantum) * quantum
        limit = 2 ** 128
    else:
        quantum = Fraction(2) ** max(e - 10, -24)
        x = v / quantum
        q = math.floor(x)
        if x - q > Fraction(1, 2) or (x - q == Fraction(1, 2) and q % 2):
            q += 1
        r, limit = q * quantum, 65520
    if r == 0:
        return 0.0
    return sign * (math.inf if r >= limit else float(r))


def fused_sum(terms: list[tuple[Fraction, int]], F: int, d_type: str) -> float:
    """Align every (significand, exponent) to the largest exponent, truncate to F fraction bits
    toward zero, add exactly, round into D."""
    emax = max(e for _, e in terms)
    total = sum(Fraction(math.trunc(s * Fraction(2) ** (F + e - emax))) for s, e in terms)
    return round_to_d(total * Fraction(2) ** (emax - F), d_type)


def special(products: list[float], c: float) -> float | None:
    """IEEE classification: NaN, +-Inf, or None (finite)."""
    total = math.fsum(products) if all(math.isfinite(p) for p in products) else sum(products)
    total = total + c
    return total if (math.isnan(total) or math.isinf(total)) else None


def hw_dot(a, b, c, a_fmt, b_fmt, d_type, *, F=25, e_zero=None, sa=None, sb=None, s_fmt=None) -> float:
    """One element of the non-grouped model (f16, tf32, f8f6f4, mxf8f6f4 kinds)."""
    e_zero = (-133 if d_type == "f32" else -21) if e_zero is None else e_zero
    sa = sa if sa is not None else [1.0] * len(a)
    sb = sb if sb is not None else [1.0] * len(a)
    with_scale = s_fmt is not None
    sp = special([x * y * p * q for x, y, p, q in zip(a, b, sa, sb, strict=True)], c)
    if sp is not None:
        return sp
    terms = []
    for x, y, p, q in zip(a, b, sa, sb, strict=True):
        s1, e1 = split(x, a_fmt)
        s2, e2 = split(y, b_fmt)
        if s1 == 0 or s2 == 0:
            terms.append((Fraction(0), e_zero))
            continue
        s, e = s1 * s2, e1 + e2
        if with_scale:
            s3, e3 = split(p, s_fmt)
            s4, e4 = split(q, s_fmt)
            s, e = s * s3 * s4, e + e3 + e4
        terms.append((s, e))
    sc, ec = split(c, d_type)
    terms.append((sc, e_zero if sc == 0 else ec))
    return fused_sum(terms, F, d_type)


def hw_group_dot(a, b, c, sa, sb, s_fmt, *, G=16, F=35, e_zero=-139) -> float:
    """One element of the grouped model (mxf4, mxf4nvf4): exact sums of G products per scale."""
    if any(math.isnan(x) for x in list(sa) + list(sb)) or math.isnan(c):
        return math.nan
    if math.isinf(c):
        return c
    terms = []
    for g in range(0, len(a), G):
        group = [Fraction(x) * Fraction(y) for x, y in zip(a[g:g + G], b[g:g + G], strict=True)]
        s3, e3 = split(sa[g], s_fmt)
        s4, e4 = split(sb[g], s_fmt)
        all_zero = all(p == 0 for p in group)
        scale = s3 * s4
        terms.append((sum(group) * scale, e_zero if all_zero or scale == 0 else e3 + e4))
    sc, ec = split(c, "f32")
    terms.append((sc, e_zero if sc == 0 else ec))
    return fused_sum(terms, F, "f32")


def exact_dot(a, b, c) -> Fraction:
    return sum((Fraction(x) * Fraction(y) for x, y in zip(a, b, strict=True)), Fraction(c))
