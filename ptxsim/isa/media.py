"""Integer media instructions: mul24, sad, dp4a, dp2a, the four-way byte SIMD family (vadd4 vsub4
vabsdiff4 vmin4 vmax4) and min/max on packed .u16x2/.s16x2 (PTX ISA §9.7.1 integer arithmetic,
§9.7.2 extended precision, §9.7.14 SIMD video instructions).

All arithmetic is exact in int64 and wraps to the destination width at the end; the byte and
half-word lanes of a 32-bit register are numbered from the least significant end:

    a:  [ b3 | b2 | b1 | b0 ]        a:  [   h1    |   h0    ]
"""

from __future__ import annotations

import numpy as np

from ptxsim.ptx.registry import Unsupported, opcode
from ptxsim.ptx.types import TYPES

I64 = np.int64
U32 = TYPES["u32"]


def _ops(k, ins, n):
    return k.operands(ins, n)


def lanes(x, width: int, count: int, signed: bool) -> list[np.ndarray]:
    """The ``count`` lanes of ``width`` bits of the 32-bit words ``x``, as int64 (sign-extended
    when ``signed``), lane 0 the least significant."""
    x = np.asarray(x).astype(np.uint64)
    out = []
    for i in range(count):
        v = ((x >> np.uint64(width * i)) & np.uint64((1 << width) - 1)).astype(I64)
        if signed:
            v = np.where(v >= 1 << (width - 1), v - (1 << width), v)
        out.append(v)
    return out


def join_lanes(vals, width: int) -> np.ndarray:
    """Lanes (int64, lane 0 first) packed into uint32 words, each wrapped to ``width`` bits."""
    out = np.zeros(np.broadcast(*vals).shape, dtype=np.uint64)
    for i, v in enumerate(vals):
        out |= (np.asarray(v).astype(np.uint64) & np.uint64((1 << width) - 1)) << np.uint64(width * i)
    return out.astype(np.uint32)


def _wrap(v, t):
    """int64 values wrapped to the bits of PTX type ``t`` (as ``t``'s numpy type)."""
    return np.asarray(v).astype(I64).astype(t.udtype).view(t.dtype) if t.bits < 64 else \
        np.asarray(v).astype(I64).view(t.dtype)


@opcode("mul24")
def compile_mul24(ins, q, k):
    """``mul24.{hi,lo}.{u32,s32}``: the 48-bit product of the low 24 bits of a and b (signed:
    sign-extended from bit 23); .lo is bits 31..0 of it, .hi bits 47..16."""
    mode = q.take("hi", "lo", required=True)
    t = q.take_type(("u32", "s32"))
    d, a, b = _ops(k, ins, 3)
    ra, rb, w = k.reader(a, t), k.reader(b, t), k.writer(d, t)
    signed = t.kind == "s"

    def run(m, s):
        (x,), (y,) = lanes(ra(m, s), 24, 1, signed), lanes(rb(m, s), 24, 1, signed)
        p = x * y                                   # |p| < 2^47: exact in int64
        w(m, s, _wrap(p >> 16 if mode == "hi" else p, t))
    return run


@opcode("sad")
def compile_sad(ins, q, k):
    """``sad.type d, a, b, c``: d = c + |a - b| (every integer type)."""
    t = q.take_type(tuple(f"{kind}{bits}" for kind in "us" for bits in (16, 32, 64)))
    d, a, b, c = _ops(k, ins, 4)
    ra, rb, rc, w = k.reader(a, t), k.reader(b, t), k.reader(c, t), k.writer(d, t)

    def run(m, s):
        x, y = np.broadcast_arrays(np.asarray(ra(m, s)), np.asarray(rb(m, s)))
        diff = np.where(x >= y, x - y, y - x).astype(t.udtype)      # |a - b| fits the unsigned width
        w(m, s, (diff + np.asarray(rc(m, s)).astype(t.udtype)).astype(t.udtype).view(t.dtype))
    return run


def _dot_types(q):
    a_t = q.take_type(("u32", "s32"))
    b_t = q.take_type(("u32", "s32"))
    acc = TYPES["s32"] if "s" in (a_t.kind, b_t.kind) else U32
    return a_t.kind == "s", b_t.kind == "s", acc


@opcode("dp4a")
def compile_dp4a(ins, q, k):
    """``dp4a.atype.btype d, a, b, c``: d = c + sum of the four byte products (each byte
    sign-extended for an .s32 operand); d and c are .s32 if either operand type is."""
    sa, sb, acc = _dot_types(q)
    d, a, b, c = _ops(k, ins, 4)
    ra, rb, rc, w = k.reader(a, U32), k.reader(b, U32), k.reader(c, acc), k.writer(d, acc)

    def run(m, s):
        total = np.asarray(rc(m, s)).astype(I64)
        for x, y in zip(lanes(ra(m, s), 8, 4, sa), lanes(rb(m, s), 8, 4, sb), strict=True):
            total = total + x * y
        w(m, s, _wrap(total, acc))
    return run


@opcode("dp2a")
def compile_dp2a(ins, q, k):
    """``dp2a.{lo,hi}.atype.btype d, a, b, c``: d = c + a.h0 * b.byte[i] + a.h1 * b.byte[i+1],
    i = 0 (.lo) or 2 (.hi)."""
    mode = q.take("lo", "hi", required=True)
    sa, sb, acc = _dot_types(q)
    d, a, b, c = _ops(k, ins, 4)
    ra, rb, rc, w = k.reader(a, U32), k.reader(b, U32), k.reader(c, acc), k.writer(d, acc)
    first = 0 if mode == "lo" else 2

    def run(m, s):
        halves = lanes(ra(m, s), 16, 2, sa)
        bytes_ = lanes(rb(m, s), 8, 4, sb)[first:first + 2]
        total = np.asarray(rc(m, s)).astype(I64) + halves[0] * bytes_[0] + halves[1] * bytes_[1]
        w(m, s, _wrap(total, acc))
    return run


_VOP = {"vadd4": lambda x, y: x + y, "vsub4": lambda x, y: x - y, "vabsdiff4": lambda x, y: np.abs(x - y),
        "vmin4": np.minimum, "vmax4": np.maximum}


@opcode(*_VOP)
def compile_vop4(ins, q, k):
    """``vop4.dtype.atype.btype{.sat} d, a, b, c`` (SIMD merge: byte i of d is the byte result,
    clamped to the destination's byte range with .sat) and ``vop4.dtype.atype.btype.add d, a, b,
    c`` (accumulate: d = c + the sum of the four results).  The default selectors only
    (a.b3210, b.b7654, d.b3210)."""
    op = _VOP[ins.parts[0]]
    types = [q.take_type(("u32", "s32")) for _ in range(3)]
    add = q.flag("add")
    sat = q.flag("sat")
    if add and sat:
        raise Unsupported(".sat cannot be used with the secondary .add")
    d_t, a_t, b_t = types
    d, a, b, c = _ops(k, ins, 4)
    ra, rb, rc, w = k.reader(a, U32), k.reader(b, U32), k.reader(c, d_t), k.writer(d, d_t)
    lo, hi = (-128, 127) if d_t.kind == "s" else (0, 255)

    def run(m, s):
        res = [op(x, y) for x, y in zip(lanes(ra(m, s), 8, 4, a_t.kind == "s"), lanes(rb(m, s), 8, 4, b_t.kind == "s"),
                                        strict=True)]
        if add:
            w(m, s, _wrap(np.asarray(rc(m, s)).astype(I64) + sum(res), d_t))
            return
        if sat:
            res = [np.clip(r, lo, hi) for r in res]
        w(m, s, join_lanes(res, 8).view(np.uint32).astype(d_t.udtype).view(d_t.dtype))
    return run


PACKED16 = ("u16x2", "s16x2")


@opcode(*(f"{op}.{t}" for op in ("min", "max") for t in ("u16x2", "s16x2", "relu.s16x2")))
def compile_minmax16x2(ins, q, k):
    """``min/max{.relu}.{u16x2,s16x2}``: each half-word independently; ``.relu`` (s16x2 only)
    clamps negative results to 0.  (Registered for the packed spellings; ``min``/``max`` on
    other types are ops_alu's.)"""
    is_min = ins.parts[0] == "min"
    relu = "relu" in ins.parts
    name = "s16x2" if "s16x2" in ins.parts else "u16x2"
    d, a, b = _ops(k, ins, 3)
    ra, rb, w = k.reader(a, U32), k.reader(b, U32), k.writer(d, U32)
    pick = np.minimum if is_min else np.maximum
    signed = name == "s16x2"

    def run(m, s):
        res = [pick(x, y) for x, y in zip(lanes(ra(m, s), 16, 2, signed), lanes(rb(m, s), 16, 2, signed), strict=True)]
        if relu:
            res = [np.maximum(r, 0) for r in res]
        w(m, s, join_lanes(res, 16))
    return run
