"""Inputs of the data-movement and management families: ld, ld.red, st, wait, cp, shift, fence,
commit, alloc (§9.7.16.7-9, .11-12).

Operands are random bit patterns (any bits are exact for a copy), except ``tcgen05.ld.red`` f32:
finite, nonzero, distinct magnitudes per lane (the text defines no order for ties, -0/+0 or NaN
without ``.NaN``), with NaNs only in ``.NaN`` cases. Regions a kernel reads back without having
preloaded them (st, cp, commit) are marked unknown: only the cells the instruction writes are
compared. Shared-memory sources of ``tcgen05.cp`` are K-major 8-bit matrices (rows x row bytes)
laid out by ``reference.smem_choice.choose_layout`` + ``reference.smem_image.pack`` with the
case's source swizzle.
"""

from __future__ import annotations

import numpy as np

from generators.inputs import values as V
from generators.inputs.block import (
    InBlocks,
    Preloads,
    Staging,
    high_shift,
    register_bytes,
    relocate,
    tile_start,
)
from generators.inputs.types import CaseInputs, TmemRegion, Untestable
from reference.smem_choice import choose_layout
from reference.tables import ldst_registers
from reference.tmem import COLUMNS
from reference.tmem_cp import CP_SHAPES, compress_chunk
from reference.tmem_fragments import fragment_map
from reference.tmem_shift import SHIFT_COLUMNS

LANES = 128
FENCE_COLUMN, COMMIT_COLUMN, WAIT_COLUMN = 64, 32, 0


def _region(column: int, cells: np.ndarray | None, ctas: int, ncols: int) -> TmemRegion:
    if cells is None:
        before = np.zeros((ctas, LANES, ncols), dtype=np.uint32)
        return TmemRegion(column, before, np.zeros(before.shape, dtype=bool))
    return TmemRegion(column, cells, np.ones(cells.shape, dtype=bool))


def _fits(column: int, width: int, what: str) -> None:
    if column + width > COLUMNS:
        raise Untestable(f"{what} at column {column} spans {width} columns, past column {COLUMNS - 1}")


def ld_inputs(case, rng, cells: np.ndarray | None = None) -> CaseInputs:
    """tcgen05.ld / ld.red: preload the columns the fragment reaches (all 128 lanes), dump registers
    (``cells``: these preloaded words instead of random ones, the probe of spec question Q-LDRED-ZERO)."""
    p = case.params
    red = case.family == "ld.red"
    fmap = fragment_map(p["shape"], p["num"], pack=bool(p.get("pack")), half_split=p["imm"], op="ld")
    width = fmap.columns
    _fits(p["column"], width, case.instruction.split(" ")[0])
    if cells is not None:
        cells = np.asarray(cells, dtype=np.uint32)
    elif red and p["type"] == "f32":
        cells = V.distinct_f32_words(rng, (LANES, width))
        if p["nan"]:              # .NaN: a NaN in every third lane
            lanes = np.arange(0, LANES, 3)
            cells[lanes, rng.integers(0, width, size=lanes.size)] = np.uint32(0x7FC00000) | V.random_words(rng, lanes.size) & 0x3FFFFF
    else:
        cells = V.random_words(rng, (LANES, width))
    blocks = InBlocks(1)
    pre = Preloads(blocks)
    pre.add(p["column"], [cells])
    rec = {"taddr": (p["lane_offset"] << 16) | p["column"], "preload": pre.record()}
    nregs = p["registers"] + (1 if red else 0)
    logical = {"region": _region(p["column"], cells[None], 1, width)}
    decisions = ("tcgen05.ld fragment maps of Figures 184-187 from CUTLASS (reference.tmem_fragments)",) \
        if p["shape"] != "32x32b" else ()
    if red and p["type"] == "f32" and p["nan"]:
        decisions += ("ld.red .NaN: any NaN payload accepted",)
    return CaseInputs(rec, blocks.blocks(), LANES * nregs, logical, decisions)


def st_inputs(case, rng) -> CaseInputs:
    """tcgen05.st: registers from the in block, the touched columns preloaded with random words and
    read back, so the cells the fragment does not write (the other lanes of a 16-lane shape) must
    keep them. What ``.unpack::16b`` leaves in the upper halves is spec question Q-UNPACK-UPPER:
    compared only once its reading was chosen (``reference.tmem_fragments.unpack_upper_compared``;
    the question's probe uses these inputs)."""
    p = case.params
    nregs = ldst_registers(p["shape"], p["num"], op="st")
    fmap = fragment_map(p["shape"], p["num"], pack=bool(p.get("unpack")), half_split=p["imm"], op="st")
    width = fmap.columns
    _fits(p["column"], width, case.instruction.split(" ")[0])
    regs = V.random_words(rng, (LANES, nregs))
    blocks = InBlocks(1)
    cells = V.random_words(rng, (LANES, width))
    pre = Preloads(blocks)
    pre.add(p["column"], [cells])
    rec = {"taddr": (p["lane_offset"] << 16) | p["column"], "regs_src": blocks.add(register_bytes(regs)),
           "readback": [p["column"], width], "preload": pre.record()}
    logical = {"regs": regs, "region": _region(p["column"], cells[None], 1, width)}
    return CaseInputs(rec, blocks.blocks(), LANES * width, logical)


def wait_inputs(case, rng) -> CaseInputs:
    """§9.7.16.6.4.2 example 1: st v0 -> wait::st -> ld w0 -> wait::ld; w0 must equal v0."""
    regs = V.random_words(rng, (LANES, 1))
    blocks = InBlocks(1)
    rec = {"taddr": WAIT_COLUMN, "regs_src": blocks.add(register_bytes(regs))}
    return CaseInputs(rec, blocks.blocks(), LANES, {"regs": regs})


def _cp_source_rows(shape: str, decompress: str | None, ctas: int, rng) -> np.ndarray:
    """uint8[ctas, rows, row bytes] as they sit in shared memory (compressed chunks if decompressing)."""
    rows, row_bytes, _ = CP_SHAPES[shape]
    if decompress is None:
        return V.random_words(rng, (ctas, rows, row_bytes // 4)).view(np.uint8).reshape(ctas, rows, row_bytes)
    bits = {"b4x16_p64": 4, "b6x16_p32": 6}[decompress]
    out = np.zeros((ctas, rows, row_bytes), dtype=np.uint8)
    for c in range(ctas):
        for r in range(rows):
            for chunk in range(row_bytes // 16):
                codes = rng.integers(0, 1 << bits, size=16)
                out[c, r, 16 * chunk:16 * chunk + 16] = compress_chunk(codes, decompress, padding=int(rng.integers(0, 256)))
    return out


def stage_cp_source(stagings: list[Staging], rows: np.ndarray, swizzle: str, seed: int = 0) -> int:
    """Place each CTA's source rows as a K-major 8-bit matrix (``block.tile_start``, the same place
    in every CTA); the (relative) source descriptor."""
    desc = None
    for st, cta_rows in zip(stagings, rows, strict=True):
        start, pattern = tile_start(st, swizzle, "K", cta_rows.shape[1], np.random.default_rng(seed))
        layout = choose_layout("K", swizzle, "u8", cta_rows.shape[0], cta_rows.shape[1], start, pattern_start=pattern)
        st.place(layout, cta_rows.astype(np.uint64))
        desc = layout.descriptor().encode()
    return desc


def _smem(blocks: InBlocks, stagings: list[Staging], rec: dict, seed: int = 0) -> None:
    smem = [st.padded() for st in stagings]
    rec["smem_bytes"] = max(len(s) for s in smem)
    rec["smem_src"] = blocks.add([s + b"\0" * (rec["smem_bytes"] - len(s)) for s in smem], align=1024)
    relocate(rec, high_shift(rec["smem_bytes"], seed) if rec["smem_bytes"] else 0)


def cp_like_inputs(case, rng, *, shape: str, multicast, decompress, cta_group: int, column: int, swizzle: str,
                   preload: np.ndarray | None = None) -> tuple[dict, InBlocks, dict]:
    """Record, blocks and logical inputs of a kernel around one tcgen05.cp (cp, commit, fence)."""
    rows = _cp_source_rows(shape, decompress, cta_group, rng)
    blocks = InBlocks(cta_group)
    stagings = [Staging() for _ in range(cta_group)]
    seed = int(rng.integers(1 << 31))
    rec = {"taddr": column, "s_desc": stage_cp_source(stagings, rows, swizzle, seed)}
    _smem(blocks, stagings, rec, seed + 1)
    ncols = CP_SHAPES[shape][1] // 4
    if preload is not None:
        pre = Preloads(blocks)
        pre.add(column, list(preload))
        rec["preload"] = pre.record()
    rec["readback"] = [column, ncols]
    cp = {"shape": shape, "multicast": multicast, "decompress": decompress, "cta_group": cta_group, "rows": rows}
    return rec, blocks, {"cp": cp, "region": _region(column, preload, cta_group, ncols)}


def cp_inputs(case, rng) -> CaseInputs:
    p = case.params
    rec, blocks, logical = cp_like_inputs(case, rng, shape=p["shape"], multicast=p["multicast"], decompress=p["decompress"],
                                          cta_group=p["cta_group"], column=p["column"], swizzle=p["src_swizzle"])
    decisions = ("tcgen05.cp row-to-lane maps from CUTLASS SM100_UTCCP_* (reference.tmem_cp)",)
    if p["decompress"] == "b4x16_p64":
        decisions += ("tcgen05.cp 4-bit decompression into bits 5-2 of the container (reference.tmem_cp)",)
    if p["cta_group"] == 2:
        decisions += ("tcgen05.cp cta_group::2: each CTA copies its own shared memory (reference.tmem_cp)",)
    return CaseInputs(rec, blocks.blocks(), LANES * logical["region"].ncols, logical, decisions)


def commit_inputs(case, rng) -> CaseInputs:
    p = case.params
    rec, blocks, logical = cp_like_inputs(case, rng, shape="128x256b", multicast=None, decompress=None,
                                          cta_group=p["cta_group"], column=COMMIT_COLUMN, swizzle="none")
    rec["aux"] = [p["cta_mask"]]
    return CaseInputs(rec, blocks.blocks(), LANES * logical["region"].ncols, logical)


def fence_inputs(case, rng) -> CaseInputs:
    """§9.7.16.6.4.4 example 1: warp 0 loads column C (preloaded) before thread 32's cp overwrites it."""
    before = V.random_words(rng, (1, LANES, SHIFT_COLUMNS))
    rec, blocks, logical = cp_like_inputs(case, rng, shape="128x256b", multicast=None, decompress=None, cta_group=1,
                                          column=FENCE_COLUMN, swizzle="none", preload=before)
    return CaseInputs(rec, blocks.blocks(), LANES + LANES * SHIFT_COLUMNS, logical)


def shift_inputs(case, rng) -> CaseInputs:
    p = case.params
    cg = p["cta_group"]
    before = V.random_words(rng, (cg, LANES, SHIFT_COLUMNS))
    blocks = InBlocks(cg)
    stagings = [Staging() for _ in range(cg)]
    rec = {"taddr": p.get("lane", 0) << 16 | p["column"]}
    _smem(blocks, stagings, rec)
    pre = Preloads(blocks)
    pre.add(p["column"], list(before))
    rec["preload"] = pre.record()
    rec["readback"] = [p["column"], SHIFT_COLUMNS]
    logical = {"region": _region(p["column"], before, cg, SHIFT_COLUMNS)}
    return CaseInputs(rec, blocks.blocks(), LANES * SHIFT_COLUMNS, logical)


def alloc_inputs(case, rng) -> CaseInputs:
    return CaseInputs({}, tuple(b"" for _ in range(case.params["cta_group"])), 1, {"ncols": case.params["ncols"]})
