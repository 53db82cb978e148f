"""Expected results of ld, ld.red, st, wait, cp, shift, fence, commit and alloc cases.

Each runs the reference's model of the instruction on a model of the case's Tensor Memory:
``reference.tmem_fragments.ld / ld_red / st`` per warp (warp w at its lane quarter, §9.7.16.8.1),
``reference.tmem_cp.cp`` on the shared-memory source rows, ``reference.tmem_shift.shift_down``.
Undefined words are masked: Tensor Memory cells nobody preloaded or wrote, row 0 of a shifted
block (``SHIFT_UNDEFINED_ROWS``), the upper half of ``.unpack::16b`` cells (text silent), registers
a kernel never sets, NaN payloads of ``ld.red .NaN`` (any NaN).
"""

from __future__ import annotations

import numpy as np

from conformance.harness.oracles.common import FULL, LANES, Expected, piece, region_sections, register_section
from reference.tmem import TensorMemory, TmemAddress
from reference.tmem_cp import cp as tmem_cp
from reference.tmem_fragments import fragment_map, ld, ld_red, st
from reference.tmem_shift import shift_down, undefined_rows

WARPS = 4


def _memory(region, cta: int = 0) -> TensorMemory:
    tm = TensorMemory()
    tm.cells[:, region.column:region.column + region.ncols] = region.before[cta]
    return tm


def _warp_address(p, warp: int) -> TmemAddress:
    return TmemAddress(p["lane_offset"] + 32 * warp, p["column"])


def ld_expected(case, inputs, spec, numerics, mode) -> Expected:
    p = case.params
    tm = _memory(inputs.logical["region"])
    red = case.family == "ld.red"
    rows = []
    for w in range(WARPS):
        addr = _warp_address(p, w)
        if red:
            regs, val = ld_red(tm, addr, p["shape"], p["num"], p["redop"], p["type"], abs_=p["abs"], nan=p["nan"],
                               half_split=p["imm"], warp_id=w)
            rows.append(np.concatenate([regs, val[:, None]], axis=1))
        else:
            rows.append(ld(tm, addr, p["shape"], p["num"], pack=p["pack"], half_split=p["imm"], warp_id=w))
    regs = np.concatenate(rows)
    nan_any = None
    if red and p["type"] == "f32" and p["nan"]:
        nan_any = np.zeros(regs.shape, dtype=bool)
        red_col = regs[:, -1]
        nan_any[:, -1] = ((red_col >> 23) & 0xFF == 0xFF) & ((red_col & 0x7FFFFF) != 0)
    out = piece(case.kernel, inputs.record, "registers")
    return Expected([register_section("registers", out, inputs.out_words, regs, FULL, value_type="u32",
                                      nan_any=nan_any)], inputs.decisions)


def st_expected(case, inputs, spec, numerics, mode) -> Expected:
    p = case.params
    region = inputs.logical["region"]
    regs = inputs.logical["regs"]
    tm = TensorMemory()
    written = TensorMemory()
    fmap = fragment_map(p["shape"], p["num"], pack=p["unpack"], half_split=p["imm"], op="st")
    for w in range(WARPS):
        addr = _warp_address(p, w)
        st(tm, addr, regs[32 * w:32 * w + 32], p["shape"], p["num"], unpack=p["unpack"], half_split=p["imm"], warp_id=w)
        written.cells[addr.lane + fmap.entries[:, 2], addr.column + fmap.entries[:, 3]] = 1
    cols = slice(region.column, region.column + region.ncols)
    mask = 0x0000FFFF if p["unpack"] else FULL
    out = piece(case.kernel, inputs.record, "region")
    sec = region_sections("TMEM written by st", out, inputs.out_words, tm.cells[None, :, cols],
                          written.cells[None, :, cols] == 1, mask=mask)
    return Expected([sec], inputs.decisions)


def wait_expected(case, inputs, spec, numerics, mode) -> Expected:
    out = piece(case.kernel, inputs.record, "registers")
    return Expected([register_section("ld after st", out, inputs.out_words, inputs.logical["regs"], FULL)])


def _cp_after(cp: dict, region) -> tuple[np.ndarray, np.ndarray]:
    """(cells after the copy, cells the copy wrote) of the region, per CTA."""
    ctas = cp["cta_group"]
    mems = tuple(_memory(region, c) for c in range(ctas))
    marks = tuple(TensorMemory() for _ in range(ctas))
    taddr = TmemAddress(0, region.column)
    tmem_cp(mems if ctas == 2 else mems[0], taddr, cp["shape"], cp["rows"], cta_group=ctas,
            multicast=cp["multicast"], decompress=cp["decompress"])
    ones = np.full(cp["rows"].shape, 0xFF, dtype=np.uint8)
    tmem_cp(marks if ctas == 2 else marks[0], taddr, cp["shape"], ones, cta_group=ctas, multicast=cp["multicast"])
    cols = slice(region.column, region.column + region.ncols)
    after = np.stack([m.cells[:, cols] for m in mems])
    wrote = np.stack([m.cells[:, cols] != 0 for m in marks])
    return after, wrote


def cp_expected(case, inputs, spec, numerics, mode) -> Expected:
    region, cp = inputs.logical["region"], inputs.logical["cp"]
    after, wrote = _cp_after(cp, region)
    out = piece(case.kernel, inputs.record, "region")
    sec = region_sections("TMEM after cp", out, inputs.out_words, after, wrote | region.known)
    return Expected([sec], inputs.decisions)


def fence_expected(case, inputs, spec, numerics, mode) -> Expected:
    region = inputs.logical["region"]
    after, wrote = _cp_after(inputs.logical["cp"], region)
    regs = np.zeros((LANES, 1), dtype=np.uint32)
    mask = np.zeros((LANES, 1), dtype=np.uint32)
    regs[:32, 0] = region.before[0, :32, 0]                # warp 0 loaded lanes 0-31 before the copy
    mask[:32, 0] = FULL                                    # warps 1-3 never set %v0
    dump = register_section("ld before cp", piece(case.kernel, inputs.record, "registers"), inputs.out_words, regs, mask)
    tm = region_sections("TMEM after cp", piece(case.kernel, inputs.record, "region"), inputs.out_words, after,
                         wrote | region.known)
    return Expected([dump, tm], inputs.decisions)


def shift_expected(case, inputs, spec, numerics, mode) -> Expected:
    region = inputs.logical["region"]
    cg = case.params["cta_group"]
    mems = tuple(_memory(region, c) for c in range(cg))
    lane = case.params.get("lane", 0)
    shift_down(mems if cg == 2 else mems[0], TmemAddress(lane, region.column), cta_group=cg)
    after = np.stack([m.cells[:, region.column:region.column + region.ncols] for m in mems])
    undefined = np.zeros(after.shape, dtype=bool)
    undefined[:, [lane + r for r in undefined_rows()], :] = True     # row 0 unless Q-SHIFT-ROW0's reading was chosen
    sec = region_sections("TMEM after shift", piece(case.kernel, inputs.record, "region"), inputs.out_words, after,
                          region.known, exclude=undefined)
    return Expected([sec], inputs.decisions)


def alloc_expected(case, inputs, spec, numerics, mode) -> Expected:
    """The address tcgen05.alloc wrote: lane 0 (every lane of a column is allocated) and a column
    below column 512 on the 32-column allocation unit (§9.7.16.1.2); which column is the allocator's choice."""
    from conformance.harness.oracles.common import Section

    ctas = case.params["cta_group"]
    idx = np.arange(ctas)[:, None] * inputs.out_words
    return Expected([Section("allocated address", idx, np.zeros((ctas, 1)), 0xFFFFFE1F, labels=("cta", "word"))])
