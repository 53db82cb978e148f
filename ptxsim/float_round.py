"""Correctly rounded float results in any PTX rounding mode (PTX ISA §9.7.3 "Rounding modifiers").

A result is handed over as ``(s, sgn)``: ``s`` the float64 round-to-nearest of the exact value
and ``sgn`` the sign (-1, 0, +1) of ``exact - s`` (0 when ``s`` is exact), obtained with the
error-free transformations below (TwoSum; Dekker's product, exact while nothing overflows).
:func:`round_to` then rounds once to the target format: for ``.rn`` the float64 cast is right
except at a tie of the target created by the first rounding, which ``sgn`` breaks; for
``.rz/.rm/.rp`` the cast is moved one step when the exact value lies on the wrong side.
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
    s = a + b
    bb = s - a
    err = (a - (s - bb)) + (b - bb)
    return s, np.nan_to_num(np.sign(err), nan=0.0)


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
    """(q, sign of exact - q) for a / b."""
    a = np.asarray(a, F64)
    b = np.asarray(b, F64)
    q = a / b
    ph, pl = two_prod(q, b)
    res = (a - ph) - pl
    return q, np.nan_to_num(np.sign(res) * np.sign(b), nan=0.0)


def fma64(a, b, c):
    """Exact fused multiply-add of float64 values, rounded once to nearest even (Fractions)."""
    a, b, c = np.broadcast_arrays(np.asarray(a, F64), np.asarray(b, F64), np.asarray(c, F64))
    out = a * b + c                         # right for every special case (inf, nan, zero signs)
    flat = out.reshape(-1).copy()
    for i, (x, y, z) in enumerate(zip(a.reshape(-1), b.reshape(-1), c.reshape(-1), strict=True)):
        if np.isfinite(x) and np.isfinite(y) and np.isfinite(z) and np.isfinite(flat[i]) and x * y != 0:
            exact = Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z))
            flat[i] = float(exact) if exact != 0 else flat[i]      # float(Fraction) rounds to nearest even
    return flat.reshape(out.shape)


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
        diff = s - rf
        es = np.nan_to_num(np.where(diff != 0, np.sign(diff), sgn), nan=0.0)
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


__all__ = ["flush", "fma64", "quotient", "round_to", "step", "two_prod", "two_sum"]
