"""Bit reversal, bit scans, funnel shifts and field extension: brev, bfind, fns, szext, shf
(PTX ISA §9.7.1 integer arithmetic, §9.7.7 logic and shift).  Every width the ISA allows:
``brev.b32/.b64``, ``bfind{.shiftamt}.{u32,s32,u64,s64}``, ``fns.b32``, ``szext.{clamp,wrap}.{u32,s32}``,
``shf.{l,r}.{clamp,wrap}.b32``.  Values are computed on uint64 arrays (one element per thread).
"""

from __future__ import annotations

import numpy as np

from ptxsim.isa.alu import U32, _ops
from ptxsim.ptx.registry import opcode
from ptxsim.ptx.types import TYPES

U64 = np.uint64
NOT_FOUND = U64(0xFFFFFFFF)


def _bits(x, t) -> np.ndarray:
    """The raw bits of typed values ``x`` (of PTX type ``t``) as uint64."""
    return np.asarray(np.asarray(x).astype(t.dtype)).astype(t.udtype).astype(U64)


def bit_reverse(x: np.ndarray, width: int) -> np.ndarray:
    """``brev``: bit i of the result is bit (width-1-i) of x."""
    out = np.zeros(x.shape, dtype=U64)
    for i in range(width):
        out |= ((x >> U64(i)) & U64(1)) << U64(width - 1 - i)
    return out


def highest_set_bit(x: np.ndarray, width: int) -> np.ndarray:
    """Position of the most significant 1 of x (0..width-1), NOT_FOUND where x == 0."""
    pos = np.full(x.shape, NOT_FOUND, dtype=U64)
    for i in range(width):
        pos = np.where((x >> U64(i)) & U64(1), U64(i), pos)
    return pos


def find_leading(x: np.ndarray, width: int, signed: bool, shiftamt: bool) -> np.ndarray:
    """``bfind``: the most significant non-sign bit.  For a negative signed value that is the
    most significant 0 (the scan runs on ~x); ``.shiftamt`` gives width-1-pos (the left shift
    that brings the bit to the msb).  No such bit: 0xFFFFFFFF in both forms."""
    if signed:
        neg = (x >> U64(width - 1)) & U64(1) == 1
        x = np.where(neg, ~x & U64((1 << width) - 1), x)
    pos = highest_set_bit(x, width)
    if shiftamt:
        pos = np.where(pos == NOT_FOUND, pos, U64(width - 1) - pos)
    return pos


@opcode("brev")
def compile_brev(ins, q, k):
    t = q.take_type(("b32", "b64"))
    d, a = _ops(k, ins, 2)
    ra, w = k.reader(a, t), k.writer(d, t)
    return lambda m, s: w(m, s, t.from_u64(bit_reverse(_bits(ra(m, s), t), t.bits)))


@opcode("bfind")
def compile_bfind(ins, q, k):
    shiftamt = q.flag("shiftamt")
    t = q.take_type(("u32", "s32", "u64", "s64"))
    d, a = _ops(k, ins, 2)
    ra, w = k.reader(a, t), k.writer(d, U32)
    return lambda m, s: w(m, s, find_leading(_bits(ra(m, s), t), t.bits, t.kind == "s", shiftamt).astype(np.uint32))


def nth_set_bit(mask: np.ndarray, base: np.ndarray, offset: np.ndarray) -> np.ndarray:
    """``fns``: the position of the |offset|-th set bit of ``mask`` counted from bit ``base``
    (upwards for offset > 0, downwards for offset < 0, bit ``base`` itself counting first);
    offset 0 gives ``base`` if that bit is set.  Not found: 0xFFFFFFFF.  (PTX ISA fns
    pseudo-code, evaluated for every thread at once: one pass over the 32 positions each way.)"""
    mask, base, offset = np.broadcast_arrays(mask, base.astype(np.int64), offset.astype(np.int64))
    out = np.full(mask.shape, NOT_FOUND, dtype=U64)
    at_base = ((mask >> (base & 31).astype(U64)) & U64(1)) == 1
    out = np.where((offset == 0) & at_base & (base < 32), base.astype(U64), out)
    need = np.abs(offset)
    seen = np.zeros(mask.shape, dtype=np.int64)
    for step in range(32):
        for direction in (1, -1):
            pos = base + direction * step
            valid = (np.sign(offset) == direction) & (pos >= 0) & (pos < 32)
            bit = valid & ((mask >> np.clip(pos, 0, 31).astype(U64)) & U64(1) == 1)
            seen = seen + bit
            out = np.where(bit & (seen == need) & (out == NOT_FOUND), pos.astype(U64), out)
    return out


@opcode("fns")
def compile_fns(ins, q, k):
    q.take_type(("b32",))
    d, mask, base, offset = _ops(k, ins, 4)
    rm, rb, ro, w = k.reader(mask, U32), k.reader(base, U32), k.reader(offset, TYPES["s32"]), k.writer(d, U32)

    def run(m, s):
        mv = np.asarray(rm(m, s)).astype(U64)
        bv = np.asarray(rb(m, s)).astype(np.int64)
        ov = np.asarray(ro(m, s)).astype(np.int64)
        w(m, s, np.broadcast_to(nth_set_bit(mv, bv, ov), (s.n,)).astype(np.uint32))
    return run


def extend_field(a: np.ndarray, n: np.ndarray, clamp: bool, signed: bool) -> np.ndarray:
    """``szext``: the low N bits of a, sign- or zero-extended to 32 bits (N = b & 31; with .clamp
    N >= 32 keeps a whole; N = 0 gives 0).

        a:  [31 ..... N | N-1 ...... 0]      d = a & low(N), then bit N-1 copied upwards (.s32)
    """
    n1 = n & U64(31)
    too_large = (n >= U64(32)) if clamp else np.zeros(np.shape(n), bool)
    low = np.where(too_large, U64(0xFFFFFFFF), (U64(1) << n1) - U64(1))
    out = a & low
    if signed:
        sign = (n1 != 0) & ~too_large & (((a >> ((n1 - U64(1)) & U64(31))) & U64(1)) == 1)
        out = np.where(sign, out | (~low & U64(0xFFFFFFFF)), out)
    return out


@opcode("szext")
def compile_szext(ins, q, k):
    mode = q.take("clamp", "wrap", required=True)
    t = q.take_type(("u32", "s32"))
    d, a, b = _ops(k, ins, 3)
    ra, rb, w = k.reader(a, t), k.reader(b, U32), k.writer(d, t)

    def run(m, s):
        av, bv = _bits(ra(m, s), t), np.asarray(rb(m, s)).astype(U64)
        w(m, s, t.from_u64(extend_field(av, bv, mode == "clamp", t.kind == "s")))
    return run


def funnel_shift(a: np.ndarray, b: np.ndarray, c: np.ndarray, left: bool, clamp: bool) -> np.ndarray:
    """``shf``: shift the 64-bit {b, a} (b the upper word) by n = min(c, 32) (.clamp) or c & 31
    (.wrap); .l keeps the upper 32 bits of the result, .r the lower 32 bits.

        [ b : a ] << n  ->  upper word        [ b : a ] >> n  ->  lower word
    """
    n = np.minimum(c, U64(32)) if clamp else c & U64(31)
    wide = (b << U64(32)) | a
    if left:
        return ((wide << n) >> U64(32)) & U64(0xFFFFFFFF)      # n <= 32: nothing lost above bit 63 that counts
    return (wide >> n) & U64(0xFFFFFFFF)


@opcode("shf")
def compile_shf(ins, q, k):
    direction = q.take("l", "r", required=True)
    mode = q.take("clamp", "wrap", required=True)
    t = q.take_type(("b32",))
    d, a, b, c = _ops(k, ins, 4)
    ra, rb, rc, w = k.reader(a, t), k.reader(b, t), k.reader(c, U32), k.writer(d, t)

    def run(m, s):
        av, bv, cv = (np.asarray(r(m, s)).astype(U64) for r in (ra, rb, rc))
        w(m, s, funnel_shift(av, bv, cv, direction == "l", mode == "clamp").astype(np.uint32))
    return run

