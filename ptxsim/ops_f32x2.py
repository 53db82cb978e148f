"""Packed f32 arithmetic (sm_100): ``add/sub/mul{.rnd}{.ftz}{.sat}.f32x2 d, a, b`` and
``fma{.rnd}{.ftz}{.sat}.f32x2 d, a, b, c`` (PTX ISA §9.7.3 "Floating Point Instructions").  Each
operand is a .b64 register holding two f32, element 0 in the low 32 bits; each element is the
scalar f32 operation.

Rounding (``.rn`` default, ``.rz``, ``.rm``, ``.rp``) is exact for every mode: the exact result
is formed in float64 as an unevaluated sum ``hi + lo`` (products of two f32 are exact in f64;
sums by Knuth's TwoSum, so fma has a single rounding), then rounded once to f32 (ties to even for
``.rn``, decided with ``lo`` when ``hi`` is an f32 midpoint).  An exact zero sum is +0, -0 with
``.rm`` (IEEE 754).  ``.ftz``: subnormal inputs and (rounded) results become sign-preserving
zeros.  ``.sat``: results clamped to [0, 1], NaN to +0.  NaN results are the canonical
``0x7FFFFFFF`` (the simulator's choice, as NVIDIA GPUs produce).

The scalar opcodes keep their handlers in :mod:`ptxsim.ops_alu`: the prefixes registered here
(``add.f32x2``, ``add.rn``, ``add.ftz``, ...) hand any instruction without ``.f32x2`` back to them.
"""

from __future__ import annotations

import numpy as np

from ptxsim import ops_alu
from ptxsim.ptx_types import TYPES
from ptxsim.registry import Unsupported, opcode

B64 = TYPES["b64"]
MODES = ("rn", "rz", "rm", "rp")
SCALAR = {"add": ops_alu.compile_add, "sub": ops_alu.compile_add, "mul": ops_alu.compile_mul,
          "fma": ops_alu.compile_mad}
TINY = np.float32(2.0 ** -126)
CANONICAL_NAN = np.uint32(0x7FFF_FFFF)
F32_MAX = float(np.finfo(np.float32).max)
OVERFLOW_TIE = 2.0 ** 128 - 2.0 ** 103          # the midpoint between FLT_MAX and 2^128


def unpack(x) -> np.ndarray:
    """(n, 2) float32 of .b64 values (element 0 = low half)."""
    x = np.atleast_1d(np.asarray(x).astype(np.uint64))
    return np.stack([(x & np.uint64(0xFFFF_FFFF)).astype(np.uint32), (x >> np.uint64(32)).astype(np.uint32)],
                    axis=-1).view(np.float32)


def pack(v: np.ndarray) -> np.ndarray:
    u = np.ascontiguousarray(v, dtype=np.float32).view(np.uint32).astype(np.uint64)
    return u[..., 0] | (u[..., 1] << np.uint64(32))


def _two_sum(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def round_f32(hi: np.ndarray, lo: np.ndarray, mode: str) -> np.ndarray:
    """The f32 rounding (``mode``) of the exact value ``hi + lo`` (float64, ``hi = fl(hi + lo)``)."""
    with np.errstate(all="ignore"):
        r = hi.astype(np.float32)
        finite = np.isfinite(hi)
        lo = np.where(finite, lo, 0.0)
        diff = np.where(finite, (hi - r.astype(np.float64)) + lo, 0.0)   # sign of exact - r
        up = np.nextafter(r, np.float32(np.inf))
        dn = np.nextafter(r, np.float32(-np.inf))
        if mode == "rn":
            nb = np.where(diff > 0, up, dn)
            mid = finite & (lo != 0) & np.isfinite(nb) & (2 * hi == r.astype(np.float64) + nb.astype(np.float64))
            mid &= np.sign(lo) == np.sign(nb.astype(np.float64) - r.astype(np.float64))
            out = np.where(mid, nb, r)
            tie = finite & (np.abs(hi) == OVERFLOW_TIE) & (np.sign(lo) == -np.sign(hi))
            return np.where(tie, np.copysign(np.float32(F32_MAX), hi).astype(np.float32), out)
        if mode == "rz":
            toward = np.where(r > 0, dn, up)
            return np.where((diff != 0) & (np.sign(diff) != np.sign(r)) & (r != 0), toward, r)
        if mode == "rm":
            return np.where(diff < 0, dn, r)
        return np.where(diff > 0, up, r)


def _ftz(x: np.ndarray) -> np.ndarray:
    return np.where((np.abs(x) < TINY) & (x != 0), np.copysign(np.float32(0), x), x).astype(np.float32)


def compute(op: str, mode: str, ftz: bool, sat: bool, a, b, c=None) -> np.ndarray:
    """Element-wise f32 ``op`` (add sub mul fma) of float32 arrays with rounding ``mode``."""
    a, b = np.asarray(a, np.float32), np.asarray(b, np.float32)
    if c is not None:
        c = np.asarray(c, np.float32)
    if ftz:
        a, b = _ftz(a), _ftz(b)
        c = _ftz(c) if c is not None else None
    x, y = a.astype(np.float64), b.astype(np.float64)
    with np.errstate(all="ignore"):
        if op == "mul":
            hi, lo, p, q = x * y, np.zeros(np.broadcast(x, y).shape), None, None
        else:
            if op == "fma":
                p, q = x * y, c.astype(np.float64)
            else:
                p, q = x, (-y if op == "sub" else y)
            hi, lo = _two_sum(p, q)
        out = round_f32(hi, lo, mode)
        if p is not None:
            zero = (hi == 0) & (lo == 0)
            both_neg = np.signbit(p) & np.signbit(q) & (p == 0) & (q == 0)
            neg = both_neg | (mode == "rm") & ~((p == 0) & (q == 0) & ~np.signbit(p) & ~np.signbit(q))
            out = np.where(zero, np.where(neg, np.float32(-0.0), np.float32(0.0)), out)
    if ftz:
        out = _ftz(out)
    if sat:
        out = np.where(np.isnan(out), np.float32(0), np.clip(out, np.float32(0), np.float32(1)))
    out = np.asarray(out, np.float32)
    return np.where(np.isnan(out), CANONICAL_NAN.view(np.float32), out).astype(np.float32)


def _prefixes(op: str) -> list[str]:
    return [f"{op}.f32x2", *(f"{op}.{m}" for m in MODES), f"{op}.ftz", f"{op}.sat"]


@opcode(*(p for op in SCALAR for p in _prefixes(op)))
def compile_f32x2(ins, q, k):
    op = ins.parts[0]
    q.rest = list(ins.parts[1:])          # the qualifiers the registered prefix covered, back
    if "f32x2" not in ins.parts:
        return SCALAR[op](ins, q, k)
    mode = q.take(*MODES, default="rn")
    ftz, sat = q.flag("ftz"), q.flag("sat")
    q.take("f32x2", required=True)
    q.done()
    n = 4 if op == "fma" else 3
    ops = k.operands(ins, n)
    if op == "fma" and not any(md in ins.parts for md in MODES):
        raise Unsupported("fma.f32x2 expects a rounding mode (.rn .rz .rm .rp)")
    readers = [k.reader(x, B64) for x in ops[1:]]
    w = k.writer(ops[0], B64)

    def run(m, s):
        vals = [unpack(r(m, s)) for r in readers]
        w(m, s, pack(compute(op, mode, ftz, sat, *vals)))
    return run


__all__ = ["compile_f32x2", "compute", "pack", "round_f32", "unpack"]
