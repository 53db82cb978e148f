"""Register fragments of warp-level ``mma`` / ``mma.sp`` with shape m16n8k*: which thread's
register holds which element of A, B, C/D (PTX ISA §9.7.14.5.x / §9.7.14.6.2 fragment figures).

The spec text available here (§9.7.14.6.1) covers only the sparse storage and metadata; the
fragment figures are in the public PTX ISA ("Matrix Fragments for mma.m16n8k*", "... for
mma.sp.m16n8k*"). Their row/column formulas all follow one rule, written here for every element
width (``E = 32 / bits`` elements per 32-bit register; ``gid = lane >> 2``, ``tig = lane % 4``)::

    A (16 x K, row-major)   register r, element e:  row = gid + 8*(r % 2),  col = tig*E + e + 4E*(r // 2)
    B (K x 8, "col")        register r, element e:  row = tig*E + e + 4E*r, col = gid
    C/D 32-bit (f32, s32)   register r:             row = gid + 8*(r // 2), col = 2*tig + r % 2
    C/D f16 (.f16x2)        register r, half h:     row = gid + 8*r,        col = 2*tig + h

Element e of a register sits at bits ``[e*bits, (e+1)*bits)`` (f16x2: element 0 low). Sparse
``mma.sp``: A holds the *compressed* 16 x K/2 matrix with the dense A rule of K/2 (e.g. mma.sp
m16n8k32 f16 A = the four registers of dense m16n8k16 A); B is the full K x 8. 4- and 6-bit
types of ``.kind::f8f6f4`` sit in 8-bit containers (E = 4, the container of
``reference.tmem_packing``); e2m1 of ``.kind::mxf4*`` and s4/u4 are packed (E = 8).
Source of the formulas: the PTX ISA figures of the mma m16n8k8/k16/k32/k64/k128 fragments (public
NVIDIA documentation; CUTLASS ``SM80_16x8x*`` / ``SM120_16x8x*`` ``ALayout``/``BLayout``/``CLayout``
encode the same maps).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from reference.errors import SpecError, expects_but_got

SECTION = "9.7.14.6.2"
LANES = 32


@dataclass(frozen=True)
class Fragment:
    """``index[lane, register, element] -> (row, col)`` of one operand; ``bits`` per element."""

    rows: int
    cols: int
    registers: int
    per_register: int
    bits: int
    row: np.ndarray
    col: np.ndarray


def _lanes():
    lane = np.arange(LANES)
    return lane >> 2, lane & 3


def a_fragment(k: int, bits: int) -> Fragment:
    """A (16 x k) of an m16n8k``k`` mma (sparse: pass the compressed K/2)."""
    e = 32 // bits
    regs = 16 * k // (LANES * e)
    if regs < 1 or (16 * k) % (LANES * e):
        raise SpecError(SECTION, "fragments", expects_but_got("A extent", "16 x K with K a multiple of 4E", k))
    gid, tig = _lanes()
    r, el = np.arange(regs)[None, :, None], np.arange(e)[None, None, :]
    row = gid[:, None, None] + 8 * (r % 2) + 0 * el
    col = tig[:, None, None] * e + el + 4 * e * (r // 2)
    return Fragment(16, k, regs, e, bits, row, col)


def b_fragment(k: int, bits: int) -> Fragment:
    """B (k x 8) of an m16n8k``k`` mma."""
    e = 32 // bits
    regs = 8 * k // (LANES * e)
    gid, tig = _lanes()
    r, el = np.arange(regs)[None, :, None], np.arange(e)[None, None, :]
    row = tig[:, None, None] * e + el + 4 * e * r
    col = gid[:, None, None] + 0 * row
    return Fragment(k, 8, regs, e, bits, row, col)


def cd_fragment(bits: int) -> Fragment:
    """C/D (16 x 8): 32-bit elements (4 registers) or f16 pairs (2 registers)."""
    gid, tig = _lanes()
    if bits == 32:
        r = np.arange(4)[None, :, None]
        return Fragment(16, 8, 4, 1, 32, gid[:, None, None] + 8 * (r // 2), 2 * tig[:, None, None] + r % 2)
    r, h = np.arange(2)[None, :, None], np.arange(2)[None, None, :]
    return Fragment(16, 8, 2, 2, 16, gid[:, None, None] + 8 * r + 0 * h, 2 * tig[:, None, None] + h + 0 * r)


def gather(frag: Fragment, regs) -> np.ndarray:
    """The ``rows x cols`` codes held by ``regs`` (``uint32[32, registers]``)."""
    r = np.asarray(regs, dtype=np.uint64)
    if r.shape != (LANES, frag.registers):
        raise SpecError(SECTION, "fragments", expects_but_got("registers", f"shape (32, {frag.registers})", r.shape))
    shifts = (np.arange(frag.per_register, dtype=np.uint64) * np.uint64(frag.bits))[None, None, :]
    values = (r[:, :, None] >> shifts) & np.uint64((1 << frag.bits) - 1)
    out = np.zeros((frag.rows, frag.cols), dtype=np.uint64)
    out[frag.row, frag.col] = values
    return out


def scatter(frag: Fragment, matrix) -> np.ndarray:
    """``uint32[32, registers]``: the registers holding ``matrix`` (inverse of :func:`gather`)."""
    m = np.asarray(matrix, dtype=np.uint64) & np.uint64((1 << frag.bits) - 1)
    shifts = (np.arange(frag.per_register, dtype=np.uint64) * np.uint64(frag.bits))[None, None, :]
    return (m[frag.row, frag.col] << shifts).sum(axis=-1).astype(np.uint32)
