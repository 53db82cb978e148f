"""tcgen05.ld (+ .red, .pack::16b) and tcgen05.st (+ .unpack::16b): warp-collective Tensor Memory
access through the fragment maps of the reference model (§9.7.16.8.3-4, §9.7.16.2.3.1).

Which register of which thread touches which cell comes from
``reference.tmem_fragments.fragment_map`` (Figures 183-187 and 193 as the reference derives
them), as an int array ``(32, E, 2)`` of (lane offset, column offset) per thread and entry: entry
``i`` is register ``i``, or with ``.pack::16b`` / ``.unpack::16b`` entry ``2*i + h`` is the 16-bit
half ``h`` of register ``i`` (the fault hooks ``tmem_ld_map`` / ``tmem_st_map`` see that array).

``tcgen05.ld`` writes its registers at issue (the asynchronous part the simulator can skip: a
read of the destination before ``wait::ld`` just sees the value early). ``tcgen05.st`` reads its
registers at issue and writes Tensor Memory at the warp's ``tcgen05.wait::st`` (see
:mod:`ptxsim.tcgen05.core`), so a load of stored cells without the wait reads stale data.

Checks (a violation is a ``SpecViolation``/``SimError`` naming the line): every thread of the warp
executes it with the same ``taddr`` (§9.7.16.8.3 "Otherwise, the behavior is undefined"), the warp
is complete, its cells lie in the lanes its warp may reach (warp w of a warpgroup: lanes
32*(w%4) .. +31, §9.7.16.8.1) and in allocated columns.
"""

from __future__ import annotations

import numpy as np

from ptxsim.errors import SimError
from ptxsim.isa.control import require_full_warps
from ptxsim.ptx.compiler import read_rows, register_names, write_rows
from ptxsim.ptx.parser import Imm
from ptxsim.ptx.registry import Unsupported, opcode
from ptxsim.ptx.syntax import Vec
from ptxsim.tcgen05.core import COLUMNS, LANES, U32, sync_aligned, tensor_core
from reference.errors import SpecError, expects_but_got
from reference.tables import LDST_NUMS, LDST_SHAPES, ldst_registers
from reference.tmem_fragments import (
    RED_OPS,
    UNPACK_UPPER_HALF,
    check_ld_red,
    fragment_map,
    reduce_lane,
    unpack_kept_bits,
)

WARP = 32
_MIN, _MAX = np.minimum.reduce, np.maximum.reduce
SECTION_ACCESS = "9.7.16.8.1"


def fragment_array(shape: str, num: int, *, pack: bool, half_split: int | None, op: str) -> np.ndarray:
    """``(32, E, 2)`` int array of (lane offset, column offset) per thread and entry (module doc)."""
    fmap = fragment_map(shape, num, pack=pack, half_split=half_split, op=op)
    halves = 2 if pack else 1
    out = np.zeros((WARP, fmap.registers * halves, 2), dtype=np.int64)
    t, r, h = fmap.entries[:, 0], fmap.entries[:, 1], fmap.entries[:, 4]
    out[t, r * halves + h, 0] = fmap.entries[:, 2]
    out[t, r * halves + h, 1] = fmap.entries[:, 3]
    out.setflags(write=False)
    return out


def _shape_num(q) -> tuple[str, int]:
    shape = q.take(*LDST_SHAPES, required=True)
    nums = [f"x{n}" for n in LDST_NUMS]
    num = int(q.take(*nums, required=True)[1:])
    return shape, num


def _half_split(ins, shape: str, op_index: int) -> int | None:
    if shape != "16x32bx2":
        if len(ins.operands) > op_index:
            raise Unsupported(f"immHalfSplitoff is only taken by .16x32bx2, not .{shape}")
        return None
    if len(ins.operands) <= op_index or not isinstance(ins.operands[op_index], Imm):
        raise Unsupported(".16x32bx2 expects an immediate immHalfSplitoff operand")
    return int(ins.operands[op_index].value)


def _spec(fn):
    """Turn a reference SpecError at compile time into an Unsupported naming the rule."""
    try:
        return fn()
    except SpecError as exc:
        raise Unsupported(str(exc)) from None


class FragmentOffsets:
    """A fragment map ``(32, E, 2)`` (:func:`fragment_array`) split for the cell arithmetic of every
    execution: lane and column offsets ``[thread of the warp, entry]`` (contiguous), and each
    thread's lowest and highest lane offset (the quarter check of :meth:`WarpAccess.cells`).
    Derived from the map alone, once per compiled instruction."""

    def __init__(self, fmap: np.ndarray) -> None:
        self.lane = np.ascontiguousarray(fmap[..., 0])
        self.col = np.ascontiguousarray(fmap[..., 1])
        empty = self.lane.shape[1] == 0
        self.lane_lo = np.zeros(WARP, dtype=np.int64) if empty else self.lane.min(axis=1)
        self.lane_hi = np.zeros(WARP, dtype=np.int64) if empty else self.lane.max(axis=1)
        self.col_lo = np.zeros(WARP, dtype=np.int64) if empty else self.col.min(axis=1)
        self.col_hi = np.zeros(WARP, dtype=np.int64) if empty else self.col.max(axis=1)
        self.cell = self.lane * COLUMNS + self.col         # a cell's offset in TensorCore.tmem_flat


class WarpAccess:
    """Per-execution geometry of a warp-collective access: one row per selected thread."""

    def __init__(self, m, s, taddr, what: str) -> None:
        starts, wids, sizes = require_full_warps(m, s, what)
        if (sizes != WARP).any():
            raise SimError(f"{what}: every thread of the warp must execute it (a warp has "
                           f"{int(sizes[sizes != WARP][0])} live threads; undefined if a thread exited)")
        a = np.broadcast_to(np.asarray(taddr).astype(np.int64) & 0xFFFFFFFF, (s.n,))
        first = np.repeat(a[starts], sizes)
        if (a != first).any():
            j = int(np.flatnonzero(a != first)[0])
            raise SimError(f"{what}: all threads of a warp must pass the same taddr (thread {int(s.idx[j])} "
                           f"passes 0x{int(a[j]):x}, its warp 0x{int(first[j]):x})")
        self.starts, self.sizes = starts, sizes
        self.lane0, self.col0 = (a >> 16) & 0xFFFF, a & 0xFFFF
        rows = s.memo.get("warp_access")
        if rows is None:            # per selection: its threads' CTA, lane, warp of the warpgroup
            rows = s.memo["warp_access"] = (m.cta_of[s.ix], m.lane_of[s.ix], (m.tid_of[s.ix] // WARP) % 4)
        self.cta, self.tid, self.warp = rows          # warp of the warpgroup: §9.7.16.8.1
        self.memo = s.memo
        self.what = what
        #: after :meth:`cells` from a fragment map without faults: ``(lowest lane, highest lane,
        #: lowest column, highest column)`` of all cells (``TensorCore.require_cells``' bounds) and
        #: each row's ``(lowest, highest)`` column (the hazard checker's per-warp spans), and the
        #: cells' index into ``TensorCore.tmem_flat`` (its ``cell_index``); else None
        self.bounds: tuple[int, int, int, int] | None = None
        self.col_rows: tuple[np.ndarray, np.ndarray] | None = None
        self.flat: np.ndarray | None = None

    def cells(self, m, fmap: np.ndarray, offsets: FragmentOffsets, hook: str,
              ctx: dict) -> tuple[np.ndarray, np.ndarray]:
        """(lanes, columns) ``[thread, entry]`` for the per-thread map (faults applied per warp);
        ``offsets``: the map's :class:`FragmentOffsets`."""
        if m.faults.active(hook):
            per = np.empty((self.tid.size,) + fmap.shape[1:], dtype=np.int64)
            for st, n in zip(self.starts.tolist(), self.sizes.tolist(), strict=True):
                w = m.faults.apply(hook, fmap.copy(), warp=int(self.warp[st]), cta=int(self.cta[st]), **ctx)
                per[st:st + n] = np.asarray(w, dtype=np.int64)[self.tid[st:st + n]]
            lanes = self.lane0[:, None] + per[..., 0]
            cols = self.col0[:, None] + per[..., 1]
            self._check_quarters(lanes)
            return lanes, cols
        key = ("fragment_rows", id(offsets))
        got = self.memo.get(key)
        if got is None or got[0] is not offsets:
            tid = self.tid
            got = self.memo[key] = (offsets, offsets.lane[tid], offsets.col[tid], offsets.lane_lo[tid],
                                    offsets.lane_hi[tid], offsets.col_lo[tid], offsets.col_hi[tid], offsets.cell[tid])
        _, lane_off, col_off, lane_lo, lane_hi, col_lo, col_hi, cell_off = got
        lanes = self.lane0[:, None] + lane_off
        cols = self.col0[:, None] + col_off
        if not lane_off.size:
            return lanes, cols
        # each row's extremes (a row's base plus its offsets' extremes): the checks read these
        # instead of reducing the [thread, entry] arrays
        row_lane_lo, row_lane_hi = self.lane0 + lane_lo, self.lane0 + lane_hi
        # every lane of a row in its warp's quarter iff its lowest and highest are (floor division
        # by 32 is monotonic; ``>> 5`` is that division for int64, several times faster than ``//``)
        if ((row_lane_lo >> 5 != self.warp) | (row_lane_hi >> 5 != self.warp)).any():
            self._check_quarters(lanes)
        self.col_rows = (self.col0 + col_lo, self.col0 + col_hi)
        # TensorCore.cell_index: ((cta * LANES + lane0 + lane offset) * COLUMNS + col0 + column offset)
        self.flat = ((self.cta * LANES + self.lane0) * COLUMNS + self.col0)[:, None] + cell_off
        self.bounds = (int(_MIN(row_lane_lo)), int(_MAX(row_lane_hi)),
                       int(_MIN(self.col_rows[0])), int(_MAX(self.col_rows[1])))
        return lanes, cols

    def _check_quarters(self, lanes: np.ndarray) -> None:
        """Raise unless every row's lanes lie in the quarter of its warp (§9.7.16.8.1)."""
        quarter = lanes // 32
        if lanes.size and (quarter != self.warp[:, None]).any():
            j, e = np.unravel_index(int(np.flatnonzero(quarter != self.warp[:, None])[0]), lanes.shape)
            raise SpecError(SECTION_ACCESS, "Access restrictions", expects_but_got(
                f"{self.what}: lane of warp {int(self.warp[j])} of its warpgroup",
                f"lanes {32 * int(self.warp[j])}-{32 * int(self.warp[j]) + 31}", int(lanes[j, e])))


def _single(op):
    """``redval`` as a register: ptxas also accepts a one-register vector ``{%r}`` (Triton 3.9 emits it)."""
    if isinstance(op, Vec):
        if len(op.items) != 1:
            raise Unsupported(f"redval expects one register, but got a vector of {len(op.items)}")
        return op.items[0]
    return op


@opcode("tcgen05.ld")
def compile_ld(ins, q, k):
    red = q.flag("red")
    sync_aligned(q)
    shape, num = _shape_num(q)
    pack = q.flag("pack::16b")
    if red:
        op = q.take(*RED_OPS, required=True)
        abs_, nan = q.flag("abs"), q.flag("NaN")
        dtype = q.take("f32", "u32", "s32", required=True)
        _spec(lambda: check_ld_red(shape, num, op, dtype, abs_=abs_, nan=nan))
        if pack:
            raise Unsupported(".pack::16b with .red (not in the tcgen05.ld.red syntax)")
    else:
        q.take("b32", required=True)
    nregs = _spec(lambda: ldst_registers(shape, num, op="ld"))
    ops = ins.operands
    fixed = 3 if red else 2
    if len(ops) not in (fixed, fixed + 1):
        raise Unsupported(f"expects {fixed} or {fixed + 1} operands, but got {len(ops)}")
    half = _half_split(ins, shape, fixed)
    dests = [k.writer(r, U32) for r in k.vector(ops[0], nregs)]
    dest_rows = k.register_rows(k.vector(ops[0], nregs), U32)      # all at once when plain registers
    w_red = k.writer(_single(ops[1]), U32) if red else None
    _, taddr = k.address(ops[fixed - 1])
    fmap = _spec(lambda: fragment_array(shape, num, pack=pack, half_split=half, op="ld"))
    offsets = FragmentOffsets(fmap)
    ctx = dict(shape=shape, num=num, pack=pack, instr=ins.text)
    rows = k.ld_rows_of(register_names(ops[:2] if red else ops[:1]))     # hazard rule wait-ld
    index = k.index_of[id(ins)]

    def run(m, s):
        tc = tensor_core(m)
        acc = WarpAccess(m, s, taddr(m, s), "tcgen05.ld")
        lanes, cols = acc.cells(m, fmap, offsets, "tmem_ld_map", ctx)
        tc.require_cells(acc.cta[:, None], lanes, cols, "tcgen05.ld", bounds=acc.bounds)
        if m.hz is not None:
            m.hz.tmem_access(s, acc.cta, lanes, cols, ins, "tcgen05.ld", write=False, col_rows=acc.col_rows)
        values = tc.tmem_flat[tc.cell_index(acc.cta[:, None], lanes, cols) if acc.flat is None else acc.flat]
        if pack:
            values = (values[:, 0::2] & np.uint32(0xFFFF)) | ((values[:, 1::2] & np.uint32(0xFFFF)) << np.uint32(16))
        if dest_rows is not None:
            write_rows(m, s, dest_rows, values)
        else:
            for i, write in enumerate(dests):
                write(m, s, values[:, i])
        if red:
            redval = np.array([reduce_lane(row, op, dtype, abs_=abs_, nan=nan) for row in values], dtype=np.uint32)
            w_red(m, s, redval)
        if m.hz is not None:
            m.hz.on_ld(s, rows, index)
            m.hz.after_ld(s, acc.cta, lanes, cols, index)
    return run


@opcode("tcgen05.st")
def compile_st(ins, q, k):
    sync_aligned(q)
    shape, num = _shape_num(q)
    unpack = q.flag("unpack::16b")
    q.take("b32", required=True)
    nregs = _spec(lambda: ldst_registers(shape, num, op="st"))
    ops = ins.operands
    if len(ops) not in (2, 3):
        raise Unsupported(f"expects 2 or 3 operands, but got {len(ops)}")
    half = _half_split(ins, shape, 1) if len(ops) == 3 else _half_split(ins, shape, 2)
    _, taddr = k.address(ops[0])
    srcs = [k.reader(r, U32) for r in k.vector(ops[-1], nregs)]
    src_rows = k.register_rows(k.vector(ops[-1], nregs), U32)       # all at once when plain registers
    fmap = _spec(lambda: fragment_array(shape, num, pack=unpack, half_split=half, op="st"))
    offsets = FragmentOffsets(fmap)
    ctx = dict(shape=shape, num=num, unpack=unpack, instr=ins.text)
    index = k.index_of[id(ins)]

    def run(m, s):
        tc = tensor_core(m)
        acc = WarpAccess(m, s, taddr(m, s), "tcgen05.st")
        if src_rows is not None:
            regs = read_rows(m, s, src_rows, U32)
        else:
            regs = np.empty((s.n, nregs), dtype=np.uint32)
            for i, r in enumerate(srcs):
                regs[:, i] = r(m, s)              # a scalar register (an immediate) fills its column
        if unpack:
            halves = np.empty((s.n, 2 * nregs), dtype=np.uint32)
            halves[:, 0::2] = (regs & np.uint32(0xFFFF)) | np.uint32(UNPACK_UPPER_HALF << 16)
            halves[:, 1::2] = (regs >> np.uint32(16)) | np.uint32(UNPACK_UPPER_HALF << 16)
            regs = halves
        lanes, cols = acc.cells(m, fmap, offsets, "tmem_st_map", ctx)
        tc.require_cells(acc.cta[:, None], lanes, cols, "tcgen05.st", bounds=acc.bounds)
        if m.hz is not None:
            m.hz.tmem_access(s, acc.cta, lanes, cols, ins, "tcgen05.st", write=True, col_rows=acc.col_rows)
            m.hz.after_st(s, acc.cta, lanes, cols, index)
        tc.issue_stores(np.repeat(s.idx[acc.starts], acc.sizes), acc.cta[:, None], lanes, cols, regs,
                        unpack_kept_bits() if unpack else 0, acc.flat)         # spec question Q-UNPACK-UPPER
    return run
