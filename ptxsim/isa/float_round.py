"""Correctly rounded float results in any PTX rounding mode (PTX ISA §9.7.3 "Rounding modifiers").

A result is handed over as ``(s, sgn)``: ``s`` the float64 round-to-nearest of the exact value
and ``sgn`` the sign (-1, 0, +1) of ``exact - s`` (0 when ``s`` is exact), obtained with the
error-free transformations below (TwoSum; Dekker's product, exact while nothing overflows).
:func:`round_to` then rounds once to the target format: for ``.rn`` the float64 cast is right
except at a tie of the target created by the first rounding, which ``sgn`` breaks; for
``.rz/.rm/.rp`` the cast is moved one step when the exact value lies on the wrong side.

Past the float64 range the error-free transformations stop being exact: a result that overflows
comes as ``(±inf, ∓1)`` (the exact value is finite, below the infinity), so that ``.rz`` and the
mode rounding towards zero give the largest finite value (IEEE 754 §7.4); products, quotients and
square roots whose error term would underflow or whose Dekker split would overflow are computed
exactly with Python's ``Fraction`` instead (:func:`from_fraction`).
"""

from __future__ import annotations

from fractions import Fraction

import ml_dtypes
import numpy as np

F64 = np.float64
_UINT = {2: np.uint16, 4: np.uint32, 8: np.uint64}


def two_sum(a, b):
    """(s, sign of the error) with s = fl(a + b) and a + b = s + err exactly."""
    a = np.asarray(a, F64)
    b = np.asarray(b, F64)
    with np.errstate(all="ignore"):
        s = a + b
        bb = s - a
        err = (a - (s - bb)) + (b - bb)
    return s, _overflowed(s, np.nan_to_num(np.sign(err), nan=0.0), a, b)


def _overflowed(s, sgn, *finite_inputs):
    """``sgn`` with -sign(s) where ``s`` is an infinity made from finite inputs (an overflow:
    the exact value is finite, on the zero side of ``s``)."""
    over = np.isinf(s)
    for x in finite_inputs:
        over = over & np.isfinite(x)
    return np.where(over, -np.sign(s), sgn)


#: |x| range inside which Dekker's product of two such values is exact: the split does not
#: overflow and the error term (down to 2^(e_a + e_b - 106)) does not underflow.
_SAFE_LO, _SAFE_HI = 2.0 ** -480, 2.0 ** 480


def _safe(*xs):
    ok = True
    for x in xs:
        ax = np.abs(x)
        ok = ok & (ax >= _SAFE_LO) & (ax <= _SAFE_HI)
    return ok


def from_fraction(x: Fraction) -> tuple[float, float]:
    """(s, sgn) of an exact rational (module docstring): s its float64 round-to-nearest-even
    (±inf past the largest finite value, a zero carrying the sign of ``x``), sgn the sign of x - s."""
    if x == 0:
        return 0.0, 0.0
    try:
        f = float(x)             # int / int true division: correctly rounded, subnormals included
    except OverflowError:
        f = float("inf") if x > 0 else float("-inf")
    if f == float("inf") or f == float("-inf"):
        return f, -1.0 if f > 0 else 1.0
    if f == 0:
        f = 0.0 if x > 0 else -0.0
    diff = x - Fraction(f)
    return f, float((diff > 0) - (diff < 0))


def _exactly(s, sgn, where, exact):
    """(s, sgn) with the elements selected by ``where`` recomputed by ``exact(i) -> Fraction``."""
    shape = np.shape(s)
    s = np.array(s, F64).reshape(-1)
    sgn = np.array(np.broadcast_to(sgn, shape), F64).reshape(-1)
    for i in np.flatnonzero(np.broadcast_to(where, shape)):
        s[i], sgn[i] = from_fraction(exact(i))
    return s.reshape(shape), sgn.reshape(shape)


def product(a, b):
    """(p, sign of a*b - p) for every float64 pair, exact also near the ends of the range."""
    a, b = np.broadcast_arrays(np.asarray(a, F64), np.asarray(b, F64))
    with np.errstate(all="ignore"):
        p, err = two_prod(a, b)
    sgn = np.sign(err)
    slow = np.isfinite(a) & np.isfinite(b) & (a != 0) & (b != 0) & ~_safe(a, b)
    return _exactly(p, sgn, slow, lambda i: Fraction(float(a.flat[i])) * Fraction(float(b.flat[i])))


def square_root(x):
    """(s, sign of sqrt(x) - s) of float64 values (s = the correctly rounded float64 root)."""
    x = np.asarray(x, F64)
    with np.errstate(all="ignore"):
        s = np.sqrt(x)
        ph, pl = two_prod(s, s)
        sgn = np.nan_to_num(np.sign((x - ph) - pl), nan=0.0)
    sgn = np.where(np.isfinite(s) & (s > 0), sgn, 0.0)
    slow = np.isfinite(s) & (s > 0) & ~_safe(s)
    sgn = sgn.reshape(-1)
    for i in np.flatnonzero(slow):            # the sign of x - s^2 is the sign of sqrt(x) - s
        diff = Fraction(float(x.flat[i])) - Fraction(float(s.flat[i])) ** 2
        sgn[i] = (diff > 0) - (diff < 0)
    sgn = sgn.reshape(np.shape(s))
    return s, sgn


def _split(a):
    c = 134217729.0 * a
    hi = c - (c - a)
    return hi, a - hi


def two_prod(a, b):
    """(p, err) with p = fl(a * b) and a * b = p + err exactly (no overflow/underflow)."""
    a = np.asarray(a, F64)
    b = np.asarray(b, F64)
    p = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    err = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    return p, np.nan_to_num(err, nan=0.0)


def quotient(a, b):
    """(q, sign of exact - q) for a / b, exact also near the ends of the float64 range."""
    a, b = np.broadcast_arrays(np.asarray(a, F64), np.asarray(b, F64))
    with np.errstate(all="ignore"):
        q = a / b
        ph, pl = two_prod(q, b)
        res = (a - ph) - pl
        sgn = np.nan_to_num(np.sign(res) * np.sign(b), nan=0.0)
    sgn = _overflowed(q, sgn, a, b) * (b != 0)      # x / 0 is an exact infinity
    slow = np.isfinite(a) & np.isfinite(b) & (a != 0) & (b != 0) & ~(_safe(q, b) & np.isfinite(q))
    return _exactly(q, sgn, slow, lambda i: Fraction(float(a.flat[i])) / Fraction(float(b.flat[i])))


def fused(a, b, c):
    """(s, sign of a*b + c - s) of float64 values: the exact fused multiply-add through Fractions.
    Special cases (an infinite or NaN operand, an exact zero) keep the float64 evaluation of
    ``a * b + c``, whose zero signs and infinities are IEEE's; a finite product beyond the range
    added to an infinite ``c`` gives ``c``."""
    a, b, c = np.broadcast_arrays(np.asarray(a, F64), np.asarray(b, F64), np.asarray(c, F64))
    with np.errstate(all="ignore"):
        s = a * b + c
    finite_ab = np.isfinite(a) & np.isfinite(b)
    s = np.where(finite_ab & np.isinf(c), c, s)
    exact = finite_ab & np.isfinite(c) & (a != 0) & (b != 0)       # an exact zero sum gives +0

    def value(i):
        return Fraction(float(a.flat[i])) * Fraction(float(b.flat[i])) + Fraction(float(c.flat[i]))
    return _exactly(s, np.zeros(s.shape), exact, value)


def step(r, up):
    """The neighbour of each value of ``r`` towards +inf (``up``) or -inf, by its bits."""
    r = np.asarray(r)
    ut = _UINT[r.dtype.itemsize]
    bits = r.view(ut).astype(np.uint64)
    top = np.uint64(1) << np.uint64(8 * r.dtype.itemsize - 1)
    neg = (bits & top) != 0
    mag = bits & ~top
    one = np.uint64(1)
    up = np.broadcast_to(up, bits.shape)
    grow = np.where(up, ~neg, neg)                        # moving away from zero
    out = np.where(grow, bits + one, bits - one)
    out = np.where(mag == 0, np.where(up, one, top | one), out)      # from a zero: smallest subnormal
    return out.astype(ut).view(r.dtype)


#: formats numpy converts float64 to directly (one rounding to nearest even)
_DIRECT = (np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64))


def nearest(s, dtype):
    """float64 values ``s`` rounded once to nearest even in ``dtype``.

    ml_dtypes converts float64 to bfloat16 through float32 (two roundings): a value just past a
    bf16 tie lands on the tie in f32 and then goes to even, the wrong way (fma.rn.bf16x2 of the
    h100-alu battery).  The cast is therefore checked against its neighbour towards ``s`` and the
    closer one (the even one at a true tie) kept.
    """
    s = np.asarray(s, F64)
    r = s.astype(dtype)
    if np.dtype(dtype) in _DIRECT:
        return r
    rf = r.astype(F64)
    # an infinity stands for 2^maxexp here, the value the rounding reached before overflowing
    top = np.ldexp(1.0, int(ml_dtypes.finfo(dtype).maxexp))
    rf = np.where(np.isinf(rf) & np.isfinite(s), np.copysign(top, rf), rf)
    with np.errstate(invalid="ignore", over="ignore"):
        other = step(r, s > rf)
        of = other.astype(F64)
        d_r, d_o = np.abs(s - rf), np.abs(of - s)
        even = (other.view(_UINT[other.dtype.itemsize]) & 1) == 0
        better = np.isfinite(of) & ((d_o < d_r) | ((d_o == d_r) & even))
    return np.where(better, other, r).astype(dtype)


def round_to(s, sgn, dtype, mode: str = "rn"):
    """Round (s, sgn) (see the module docstring) to ``dtype`` with ``mode`` rn/rz/rm/rp."""
    s = np.asarray(s, F64)
    sgn = np.broadcast_to(np.asarray(sgn, F64), s.shape)
    r = nearest(s, dtype)
    rf = r.astype(F64)
    with np.errstate(invalid="ignore"):
        diff = s - rf                  # NaN where s is an overflowed infinity: sgn tells the side
        es = np.nan_to_num(np.where(~np.isnan(diff) & (diff != 0), np.sign(diff), sgn), nan=0.0)
        if mode == "rn":
            if not sgn.any():
                return r
            other = step(r, diff > 0)
            tie = np.isfinite(rf) & (diff != 0) & (np.abs(diff) == np.abs(other.astype(F64) - s)) & (sgn == np.sign(diff))
            return np.where(tie, other, r).astype(dtype)
        if mode == "rz":
            move, up = ((rf > 0) & (es < 0)) | ((rf < 0) & (es > 0)), rf < 0
        elif mode == "rm":
            move, up = es < 0, False
        elif mode == "rp":
            move, up = es > 0, True
        else:
            raise ValueError(f"rounding mode {mode!r}")
        move = move & ~np.isnan(rf)
        if not move.any():
            return r
        return np.where(move, step(r, up), r).astype(dtype)


def flush(x, dtype):
    """Subnormal values of ``x`` (of ``dtype``) -> zero of the same sign (``.ftz``)."""
    x = np.asarray(x, dtype)
    tiny = float(ml_dtypes.finfo(dtype).smallest_normal)
    xf = x.astype(F64)
    return np.where(np.abs(xf) < tiny, np.copysign(0.0, xf), xf).astype(dtype)


def to_f64(x):
    return np.asarray(x).astype(F64)


__all__ = ["flush", "from_fraction", "fused", "product", "quotient", "round_to", "square_root", "step",
           "two_prod", "two_sum"]
