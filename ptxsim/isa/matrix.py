"""ldmatrix / stmatrix: warp-collective matrix moves between shared memory and registers
(PTX ISA §9.7.14.5.15 ldmatrix, §9.7.14.5.16 stmatrix).

Every matrix is made of rows of 16 bytes; row ``r`` of matrix ``i`` is at the address that lane
``i * rows + r`` of the warp supplies (8 rows for ``.m8n8``/``.m8n16``/``.m16n8``, 16 for
``.m16n16``; lanes beyond the last matrix supply nothing).  Each instruction is a table
``(register, byte) of lane -> (row, byte in row)``, built once per shape:

* ``.m8n8.b16``: lane ``l`` holds elements ``2*(l%4)`` and ``+1`` of row ``l/4`` (§9.7.14.5.15
  Figure "ldmatrix fragment"); ``.trans``: the same of the transposed matrix, i.e. rows
  ``2*(l%4)``, ``+1`` of column ``l/4``.
* ``.m8n16.b8x16.{b6x16_p32,b4x16_p64}``: each row's 16 packed elements are widened to 16 bytes
  (values in bits 5-0 / 3-0 of their byte, padding ignored; ``reference.tmem_cp.decompress_chunk``
  with ``nibble_shift=0``), then lane ``l`` holds bytes ``4*(l%4)``..``+3`` of row ``l/4``.
* ``.m16n16.trans`` (``.b8`` or widened 6/4-bit): two registers per matrix; with ``a = l%4``,
  ``b = l/4``, byte ``k`` of register ``j`` is byte ``b + 8*(k>>1)`` of row ``4a + (k&1) + 2j``.
* stmatrix ``.m16n8.trans.b8``: one register per matrix; byte ``k`` goes to byte ``b + 8*(k>>1)``
  of row ``2a + (k&1)``.

The 8-bit layouts are the ``Copy_Traits`` of CUTLASS's ``SM100_U8x8_LDSM_T`` /
``SM100_U8x16_LDSM_T`` / ``SM100_SU{4,6}_DU8x16_x*_LDSM_N`` / ``SM100_U8x4_STSM_T``
(``include/cute/atom/copy_traits_sm100.hpp``), since the PTX ISA gives them as figures only.

Rules checked: the whole warp executes it (``.sync.aligned``), row addresses 16-byte aligned and
inside the CTA's shared memory (a generic address must point into shared memory).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ptxsim.engine.machine import Sel
from ptxsim.errors import MemoryFault, SimError
from ptxsim.isa.control import require_full_warps
from ptxsim.memory.access import state_address
from ptxsim.memory.global_memory import SHARED_WINDOW, WINDOW_SIZE
from ptxsim.ptx.registry import Unsupported, opcode
from ptxsim.ptx.types import TYPES

U32 = TYPES["u32"]
NUMS = {"x1": 1, "x2": 2, "x4": 4}
ROW = 16                      # bytes per matrix row


@lru_cache(maxsize=None)
def fragment_table(shape: str, trans: bool, num: int) -> tuple[np.ndarray, int, int]:
    """(table[lane, register, byte] -> flat byte index into the ``rows * 16`` bytes of all
    matrices, registers per lane, rows per matrix)."""
    if shape == "m16n16":
        rows, per = 16, 2
    else:
        rows, per = 8, 1
    table = np.zeros((32, num * per, 4), dtype=np.int64)
    for lane in range(32):
        a, b = lane % 4, lane // 4
        for i in range(num):
            for j in range(per):
                for k in range(4):
                    if shape == "m8n8":
                        e, h = k // 2, k % 2              # element of the pair, byte of the element
                        if trans:
                            row, byte = 2 * a + e, 2 * b + h
                        else:
                            row, byte = b, 2 * (2 * a + e) + h
                    elif shape == "m8n16":
                        row, byte = b, 4 * a + k
                    elif shape == "m16n16":
                        row, byte = 4 * a + (k & 1) + 2 * j, b + 8 * (k >> 1)
                    else:                                   # m16n8 (stmatrix, .trans)
                        row, byte = 2 * a + (k & 1), b + 8 * (k >> 1)
                    table[lane, i * per + j, k] = (i * rows + row) * ROW + byte
    return table, num * per, rows


def widen(rows: np.ndarray, src_fmt: str) -> np.ndarray:
    """16-byte rows of packed 6-bit / 4-bit elements -> 16 bytes each (values in the low bits)."""
    if src_fmt == "b4x16_p64":
        data = rows[..., :8]
        return np.stack([data & 0xF, data >> 4], axis=-1).reshape(*rows.shape[:-1], 16).astype(np.uint8)
    bits = np.unpackbits(rows[..., :12], axis=-1, bitorder="little").reshape(*rows.shape[:-1], 16, 6)
    return (bits * (1 << np.arange(6))).sum(axis=-1).astype(np.uint8)


def _row_sel(m, s: Sel, starts: np.ndarray, nrows: int) -> Sel:
    idx = (s.idx[starts][:, None] + np.arange(nrows)[None, :]).reshape(-1)
    return Sel(idx, idx)


def _shared_rows(m, sel: Sel, addrs, space: str, what: str) -> np.ndarray:
    """Flat byte index into ``m.smem`` of each 16-byte row address."""
    a = np.broadcast_to(np.asarray(addrs, dtype=np.uint64), (sel.n,))
    if space == "generic":
        inside = (a >= np.uint64(SHARED_WINDOW)) & (a < np.uint64(SHARED_WINDOW + WINDOW_SIZE))
        if not inside.all():
            bad = int(a[np.flatnonzero(~inside)[0]])
            raise MemoryFault(f"{what}: generic address 0x{bad:x} is not in shared memory")
        a = m.from_generic("shared", a)
    return m.shared_index(sel, a, ROW, what, cluster=False)


def _common(ins, q, k, op: str):
    q.take("sync", required=True)
    q.take("aligned", required=True)
    shapes = ("m8n8", "m16n16", "m8n16") if op == "ldmatrix" else ("m8n8", "m16n8")
    shape = q.take(*shapes, required=True)
    num = NUMS[q.take(*NUMS, required=True)]
    trans = q.flag("trans")
    space = q.take("shared", "shared::cta") or "generic"
    return shape, num, trans, "shared::cta" if space != "generic" else "generic"


def _check_warps(m, s, what):
    starts, _, sizes = require_full_warps(m, s, what)
    if (sizes != 32).any():
        raise SimError(f"{what}: every thread of the warp must execute it (a warp of {int(sizes.min())} threads)")
    return starts


def _warp_rows(m, s, addr, nrows: int, space: str, what: str):
    """(first thread of each warp, flat shared-memory offset of each of its ``nrows`` rows): row
    ``r`` of a warp's matrices is at the address thread ``r`` of that warp supplies."""
    starts = _check_warps(m, s, what)
    a = np.broadcast_to(np.asarray(addr(m, s), dtype=np.uint64), (s.n,))
    rsel = _row_sel(m, s, starts, nrows)
    ra = a[(starts[:, None] + np.arange(nrows)[None, :]).reshape(-1)]
    return starts, _shared_rows(m, rsel, ra, space, what)


@opcode("ldmatrix")
def compile_ldmatrix(ins, q, k):
    shape, num, trans, space = _common(ins, q, k, "ldmatrix")
    src_fmt = None
    if shape == "m8n8":
        q.take("b16", required=True)
        if num not in (1, 2, 4):
            raise Unsupported("ldmatrix .m8n8 expects .x1, .x2 or .x4")
    else:
        if q.flag("b8x16"):
            src_fmt = q.take("b6x16_p32", "b4x16_p64", required=True)
        elif shape == "m16n16":
            q.take("b8", required=True)
        else:
            raise Unsupported("ldmatrix .m8n16 expects .b8x16.b6x16_p32 or .b8x16.b4x16_p64")
        if shape == "m16n16" and not trans:
            raise Unsupported("ldmatrix .m16n16 requires .trans (§9.7.14.5.15)")
        if shape == "m8n16" and trans:
            raise Unsupported("ldmatrix .m8n16 takes no .trans (§9.7.14.5.15)")
        if shape == "m16n16" and num == 4:
            raise Unsupported("ldmatrix .m16n16 expects .x1 or .x2 (§9.7.14.5.15)")
    table, nregs, rows = fragment_table(shape, trans, num)
    d, p = k.operands(ins, 2)
    writers = [k.writer(r, U32) for r in k.vector(d, nregs)]
    addr = state_address(k, p, space)
    nrows = num * rows
    what = ins.opcode

    def run(m, s):
        starts, flat = _warp_rows(m, s, addr, nrows, space, what)
        data = m.smem[flat[:, None] + np.arange(ROW)[None, :]]            # (warps*nrows, 16)
        if src_fmt is not None:
            data = widen(data, src_fmt)
        data = data.reshape(starts.size, nrows * ROW)
        regs = data[:, table].reshape(starts.size * 32, nregs, 4)           # lanes in order
        words = np.ascontiguousarray(regs).view(np.uint32)[..., 0]
        for i, w in enumerate(writers):
            w(m, s, words[:, i])
    return run


class _RowsOf:
    """Writer threads of stmatrix rows (``idx``, ``n``) for the hazard checker."""

    def __init__(self, idx) -> None:
        self.idx, self.n = idx, int(idx.size)


@opcode("stmatrix")
def compile_stmatrix(ins, q, k):
    shape, num, trans, space = _common(ins, q, k, "stmatrix")
    if shape == "m8n8":
        q.take("b16", required=True)
    else:
        q.take("b8", required=True)
        if not trans:
            raise Unsupported("stmatrix .m16n8 requires .trans (§9.7.14.5.16)")
    table, nregs, rows = fragment_table(shape, trans, num)
    p, r = k.operands(ins, 2)
    readers = [k.reader(x, U32) for x in k.vector(r, nregs)]
    addr = state_address(k, p, space)
    nrows = num * rows
    what = ins.opcode

    def run(m, s):
        starts, flat = _warp_rows(m, s, addr, nrows, space, what)
        regs = np.stack([np.broadcast_to(np.asarray(rd(m, s)).astype(np.uint32), (s.n,)) for rd in readers], axis=1)
        rbytes = np.ascontiguousarray(regs).view(np.uint8).reshape(starts.size, 32, nregs, 4)
        data = np.zeros((starts.size, nrows * ROW), dtype=np.uint8)
        for w in range(starts.size):
            data[w, table] = rbytes[w]
        m.smem[flat[:, None] + np.arange(ROW)[None, :]] = data.reshape(-1, ROW)
        m.epoch += 1
        if m.hz is not None:       # rows attributed to their warp's first thread
            m.hz.generic_write(_RowsOf(np.repeat(s.idx[starts], nrows)), flat, ROW, ins)
    return run


__all__ = ["compile_ldmatrix", "compile_stmatrix", "fragment_table", "widen"]
