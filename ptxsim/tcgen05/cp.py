"""tcgen05.cp (shapes, multicast, decompression) and tcgen05.shift (§9.7.16.9.2-3).

Both are asynchronous: the handler decodes what it can at issue and queues an effect with
``TensorCore.issue`` that reads shared memory / moves Tensor Memory when completion becomes
observable (the commit that tracks it).

tcgen05.cp: the source is the ``rows x row-bytes`` matrix the shared memory descriptor describes,
read as a K-major matrix of 8-bit elements (rows along MN, the row's bytes along K) through
``reference.smem_image.read`` with the decoded descriptor (hook ``smem_desc``, operand ``"s"``).
Decision (the text says only "the matrix descriptor which represents the source matrix"): a K-major
canonical layout, as public tcgen05.cp code builds it (CUTLASS ``SM100_UTCCP_*`` with K-major UMMA
descriptors). Row placement: ``reference.tmem_cp.cp_destinations``; decompression:
``reference.tmem_cp.decompress_chunk`` (hook ``cp_decompress`` on the decompressed bytes). With
``.cta_group::2`` each CTA of the pair copies the rows at the descriptor's addresses of its own
shared memory into its own Tensor Memory (``reference.tmem_cp`` decision).

tcgen05.shift: the row movement is the reference's ``shift_down`` expressed as "source row of
each destination row" (hook ``shift``, op ``"shift"``), derived once by shifting a probe memory.
"""

from __future__ import annotations

import numpy as np

from ptxsim.ptx.registry import Unsupported, opcode
from ptxsim.tcgen05.core import U64, check_peer, cta_group, tensor_core
from ptxsim.tcgen05.smem_operands import decode_desc, read_tile
from reference.errors import SpecError
from reference.tmem import TensorMemory
from reference.tmem_cp import CP_SHAPES, SOURCE_FORMATS, check_cp, cp_destinations, decompress_chunk
from reference.tmem_packing import bytes_to_words
from reference.tmem_shift import SHIFT_COLUMNS, SHIFT_ROWS, check_shift, shift_down


def shift_sources() -> np.ndarray:
    """Source row (0..31; -1: zero) of each destination row of tcgen05.shift.down, from the reference
    model under the readings in force (spec question Q-SHIFT-ROW0: row 0)."""
    probe = TensorMemory()
    probe.cells[:SHIFT_ROWS, :SHIFT_COLUMNS] = np.arange(1, SHIFT_ROWS + 1, dtype=np.uint32)[:, None]
    shift_down(probe, 0)
    return probe.cells[:SHIFT_ROWS, 0].astype(np.int64) - 1


SHIFT_SOURCES = shift_sources()
SHIFT_SOURCES.setflags(write=False)


def pair_ctas(m, cta: int, group: int) -> list[int]:
    return [cta - cta % 2, cta - cta % 2 + 1] if group == 2 else [cta]


def apply_shift(m, tc, cta: int, lane: int, col: int, sources: np.ndarray, cols: int = SHIFT_COLUMNS) -> None:
    """Rows ``lane + r`` (r < len(sources)) of columns ``col .. col+cols-1`` take row ``sources[r]`` of
    the ``SHIFT_ROWS``-row matrix at ``lane`` (a faulty ``sources`` longer than the matrix writes lanes
    past it, up to lane 127)."""
    src = np.asarray(sources)
    lanes = tc.tmem.shape[1]
    block = tc.tmem[cta, lane:lane + SHIFT_ROWS, col:col + cols].copy()      # sources index these 32 rows
    rows = min(len(src), lanes - lane)
    src = src[:rows]
    tc.tmem[cta, lane:lane + rows, col:col + cols] = np.where((src < 0)[:, None], 0, block[np.maximum(src, 0)])


@opcode("tcgen05.cp")
def compile_cp(ins, q, k):
    group = cta_group(q, k)
    shape = q.take(*CP_SHAPES, required=True)
    multicast = q.take("warpx2::02_13", "warpx2::01_23", "warpx4")
    dst = q.flag("b8x16")
    src = q.take(*SOURCE_FORMATS)
    if dst != (src is not None):
        raise Unsupported(".dst_fmt .b8x16 and a .src_fmt go together (tcgen05.cp syntax)")
    try:
        rows, row_bytes = check_cp(shape, multicast, src)
        dest = cp_destinations(shape, multicast)
    except SpecError as exc:
        raise Unsupported(str(exc)) from None
    taddr_op, desc_op = k.operands(ins, 2)
    _, taddr = k.address(taddr_op)
    r_desc = k.reader(desc_op, U64)
    src_rows = np.array([r for r, _ in dest])
    dst_lanes = np.array([d for _, d in dest])
    ncols = row_bytes // 4

    def run(m, s):
        tc = tensor_core(m)
        ta = np.broadcast_to(np.asarray(taddr(m, s)).astype(np.int64) & 0xFFFFFFFF, (s.n,))
        raw = np.broadcast_to(np.asarray(r_desc(m, s)).astype(np.uint64), (s.n,))
        for j, t in enumerate(s.idx.tolist()):
            cta = int(m.cta_of[t])
            check_peer(m, cta, group, "tcgen05.cp", t)
            lane, col = (int(ta[j]) >> 16) & 0xFFFF, int(ta[j]) & 0xFFFF
            targets = pair_ctas(m, cta, group)
            lanes = lane + dst_lanes
            for c in targets:
                tc.require_cells(c, lanes[:, None], col + np.arange(ncols)[None, :], "tcgen05.cp")

            def effect(lane=lane, col=col, raw=int(raw[j]), targets=targets):
                for c in targets:
                    desc = decode_desc(m, raw, operand="s", kind=None, instr=ins.text, cta=c)
                    data = read_tile(m, c, desc, rows, row_bytes, "u8", "K", instr=ins.text).astype(np.uint8)
                    if src is not None:
                        out = np.stack([np.concatenate([decompress_chunk(r[16 * i:16 * i + 16], src)
                                                        for i in range(row_bytes // 16)]) for r in data])
                        data = np.asarray(m.faults.apply("cp_decompress", out, src_format=src, raw=data,
                                                         instr=ins.text, cta=c), dtype=np.uint8)
                    words = bytes_to_words(data.reshape(-1)).reshape(rows, ncols)
                    tc.tmem[c, lane + dst_lanes, col:col + ncols] = words[src_rows]
            tc.issue(t, group, "cp", effect, ins=ins, ctas=targets, cols=(col, col + ncols))
    return run


@opcode("tcgen05.shift")
def compile_shift(ins, q, k):
    group = cta_group(q, k)
    q.take("down", required=True)
    (taddr_op,) = k.operands(ins, 1)
    _, taddr = k.address(taddr_op)

    def run(m, s):
        tc = tensor_core(m)
        ta = np.broadcast_to(np.asarray(taddr(m, s)).astype(np.int64) & 0xFFFFFFFF, (s.n,))
        for j, t in enumerate(s.idx.tolist()):
            cta = int(m.cta_of[t])
            check_peer(m, cta, group, "tcgen05.shift", t)
            base = check_shift(int(ta[j]))
            targets = pair_ctas(m, cta, group)
            for c in targets:
                tc.require_cells(c, base.lane + np.arange(SHIFT_ROWS)[:, None],
                                 base.column + np.arange(SHIFT_COLUMNS)[None, :], "tcgen05.shift")

            def effect(base=base, targets=targets):
                for c in targets:
                    src = m.faults.apply("shift", shift_sources(), op="shift", rows=SHIFT_ROWS,
                                         instr=ins.text, cta=c)
                    apply_shift(m, tc, c, base.lane, base.column, np.asarray(src, dtype=np.int64))
            tc.issue(t, group, "shift", effect, ins=ins, ctas=targets,
                     cols=(base.column, base.column + SHIFT_COLUMNS))
    return run


__all__ = ["SHIFT_SOURCES", "apply_shift", "compile_cp", "compile_shift"]
