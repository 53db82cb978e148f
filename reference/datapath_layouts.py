"""Data-path layouts A-G: where each element of D lives in Tensor Memory (§9.7.16.10.5).

The table of §9.7.16.10.5 (text) picks the layout from (M, cta_group, sparsity, .ws)::

    M    cta_group  sparsity  .ws    organization                 layout  lane alignment
    32   ::1        either    yes    1x4                          G       0
    64   ::1        either    yes    2x3 (read 2x2, see below)    E       0
    64   ::1        either    no     4x1 (1/2 datapath utilized)  F       0 or 16
    128  ::1        either    either 4x1                          D       0
    128  ::2        dense     -      2x2                          B       0
    128  ::2        sparse    -      4x1 (1/2 datapath utilized)  C       0 or 16
    256  ::2        either    -      4x1                          A       0

"RxC" reads: the 4 lane quarters (32 lanes each, one per warp of a warpgroup, §9.7.16.8.1)
arranged as R row blocks of D times C column blocks. With ``cta_group::2`` CTA ``c`` of the pair
holds rows ``c*M/2 .. (c+1)*M/2 - 1`` (per-CTA M = M/2; CUTLASS ``mma_traits_sm100.hpp``
``CLayout`` of the ``*_2x1SM_*`` atoms). D[i][j] at (CTA, lane, column) relative to the D address
``taddr`` (lane ``a`` = the lane alignment, column ``C0``), with i local to its CTA::

    4x1        lane = i                      column = j                  (A, D)
    4x1 half   lane = 32*(i//16) + i%16 + a  column = j                  (C, F)
    2x2        lane = i + 64*(j // (N/2))    column = j % (N/2)          (B, E)
    1x4        lane = i + 32*(j // (N/4))    column = j % (N/4)          (G)

Sources of the figure facts (Figures 205-218 missing): NVIDIA/cutlass
``include/cute/atom/mma_traits_sm100_frag.hpp``: ``tmem_frg`` (1 SM: M=128 atom (128,N):(1,128),
M=64 atom ((16,4),N):((1,32),128), the "Interleaved" tiling placing a second M=64 tile 16 lanes down
= alignment 16; 2 SM: "2x2" atom (64,(N/2,2)):(1,(128,64)), "4x1" for per-CTA M=128) and
``tmem_frg_ws`` (M=32 "1x4" atom (32,(N/4,4)):(1,(128,32)), M=64 "2x2", M=128 full). Decisions:
* Layout E: the text says "2x3"; 4 quarters cannot form 2x3, CUTLASS's .ws M=64 atom is 2x2 -> 2x2.
* Layout C: the text says 4x1 with half the datapath and alignment 0/16, as Layout F, per CTA;
  CUTLASS allocates the 2-SM sparse M=128 accumulator with the dense 2x2 atom. Spec question
  ``Q-LAYOUT-C``: ``text-4x1-half`` (the pick) or ``cutlass-2x2`` (as Layout B, alignment 0);
  its probe (M=128, cta_group::2, sparse) tells the two readings apart.
D packing (§9.7.16.10.4.1, text): a sub-32-bit D element occupies the low bits of its own cell.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from reference.errors import SpecError, expects_but_got
from reference.spec_questions import resolve
from reference.tables import TABLE_39
from reference.tmem import COLUMNS, LANES, LANES_PER_WARP, TmemAddress, memories_for, split_address

SECTION = "9.7.16.10.5"
LAYOUT_SECTIONS = {"A": "9.7.16.10.5.1", "B": "9.7.16.10.5.2", "C": "9.7.16.10.5.3", "D": "9.7.16.10.5.4",
                   "E": "9.7.16.10.5.5", "F": "9.7.16.10.5.6", "G": "9.7.16.10.5.7"}


@dataclass(frozen=True)
class DatapathLayout:
    """One row of the §9.7.16.10.5 table. ``organization``: "4x1", "4x1-half", "2x2" or "1x4"."""

    layout_id: str
    m: int
    cta_group: int
    organization: str
    lane_alignments: tuple[int, ...]

    @property
    def m_per_cta(self) -> int:
        return self.m // self.cta_group

    @property
    def section(self) -> str:
        return LAYOUT_SECTIONS[self.layout_id]


def layout_for(m: int, cta_group: int, *, sparse: bool = False, ws: bool = False,
               reading: str | None = None) -> DatapathLayout:
    """The data-path layout of an MMA with these qualifiers (§9.7.16.10.5 table); Layout C as spec
    question ``Q-LAYOUT-C``'s ``reading`` says (None = the reading in force)."""
    key = (m, cta_group, ws)
    if cta_group == 2 and ws:
        raise SpecError(SECTION, "Data Path Layout table", expects_but_got(".ws", ".cta_group::1 (Table 39: .ws with ::2 is Invalid)", ".cta_group::2"))
    if key not in _TABLE:
        legal = "M=32/64/128 with .ws and ::1; M=64/128 with ::1; M=128/256 with ::2"
        raise SpecError(SECTION, "Data Path Layout table", expects_but_got(
            f"(M, cta_group, .ws) = ({m}, ::{cta_group}, {'ws' if ws else 'no ws'})", legal, "a combination not in the table"))
    if key == (128, 2, False) and sparse:
        return _LAYOUT_C[resolve("Q-LAYOUT-C", reading)]
    return _LAYOUTS[key]


#: (M, cta_group, .ws) -> (layout, organization, lane alignments); (128, ::2) is Layout B when dense,
#: Layout C (:data:`_LAYOUT_C`) when sparse
_TABLE = {
    (32, 1, True): ("G", "1x4", (0,)),
    (64, 1, True): ("E", "2x2", (0,)),
    (64, 1, False): ("F", "4x1-half", (0, 16)),
    (128, 1, False): ("D", "4x1", (0,)),
    (128, 1, True): ("D", "4x1", (0,)),
    (128, 2, False): ("B", "2x2", (0,)),
    (256, 2, False): ("A", "4x1", (0,)),
}
_LAYOUTS = {key: DatapathLayout(layout_id, key[0], key[1], organization, aligns)
            for key, (layout_id, organization, aligns) in _TABLE.items()}
#: Layout C per reading of spec question Q-LAYOUT-C
_LAYOUT_C = {"text-4x1-half": DatapathLayout("C", 128, 2, "4x1-half", (0, 16)),
             "cutlass-2x2": DatapathLayout("C", 128, 2, "2x2", (0,))}


def legal_n(layout: DatapathLayout, *, sparse: bool = False, ws: bool = False) -> tuple[int, ...]:
    """N values some kind allows for this M/cta_group/sparsity/.ws (union over Table 39 rows)."""
    values = {n for row in TABLE_39 if row.ws == ws and row.cta_group == layout.cta_group
              and row.sparse == sparse and layout.m in row.m for n in row.n}
    return tuple(sorted(values))


def check_layout_args(layout: DatapathLayout, n: int, lane_offset: int, *, sparse: bool = False, ws: bool = False) -> None:
    """N legal for the layout (Table 39) and the lane alignment one the table allows."""
    ns = legal_n(layout, sparse=sparse, ws=ws)
    if n not in ns:
        raise SpecError("9.7.16.2.1", "Table 39", expects_but_got(
            f"N for M={layout.m} .cta_group::{layout.cta_group}", f"one of {{{ns[0]}, ..., {ns[-1]}}}" if len(ns) > 3 else f"one of {list(ns)}", n))
    if lane_offset not in layout.lane_alignments:
        raise SpecError(SECTION, "Tensor Memory Datapath Lane Alignment", expects_but_got(
            f"lane alignment of Layout {layout.layout_id}", " or ".join(map(str, layout.lane_alignments)), lane_offset))


def d_location(layout: DatapathLayout, n: int, i, j, lane_offset: int = 0):
    """(cta, lane, column) of D[i][j] relative to the D address; ints or numpy arrays."""
    cta, li = i // layout.m_per_cta, i % layout.m_per_cta
    org = layout.organization
    if org == "4x1":
        return cta, li, j
    if org == "4x1-half":
        return cta, LANES_PER_WARP * (li // 16) + li % 16 + lane_offset, j
    if org == "2x2":
        return cta, li + 64 * (j // (n // 2)), j % (n // 2)
    return cta, li + 32 * (j // (n // 4)), j % (n // 4)          # 1x4


def d_placement(layout: DatapathLayout, n: int, lane_offset: int = 0) -> np.ndarray:
    """Array [M, N, 3] of (cta, lane, column) for every D[i][j], relative to the D address
    (§9.7.16.10.5). Computed once per (layout, N, lane offset): the array is read-only."""
    return _d_placement(layout, int(n), int(lane_offset))


def _d_grid(layout: DatapathLayout, n: int, lane_offset: int):
    """:func:`d_location` of every D[i][j] at once, by broadcasting rows ``i`` (a column [M, 1])
    against columns ``j`` (a row [1, N]): each of (cta, lane, column) is [M, 1], [1, N] or [M, N]."""
    return d_location(layout, n, np.arange(layout.m)[:, None], np.arange(n)[None, :], lane_offset)


@functools.lru_cache(maxsize=512)
def _d_placement(layout: DatapathLayout, n: int, lane_offset: int) -> np.ndarray:
    out = np.empty((layout.m, n, 3), dtype=np.intp)
    for k, part in enumerate(_d_grid(layout, n, lane_offset)):      # k = 0 cta, 1 lane, 2 column
        out[..., k] = part
    out.setflags(write=False)
    return out


def d_flat_index(layout: DatapathLayout, n: int, lane_offset: int, ncols: int) -> np.ndarray:
    """Array [M, N]: the flat index of D[i][j]'s cell in a ``[cta_group, 128, ncols]`` region
    array whose column 0 is the D address (:func:`d_placement`, read-only; once per arguments)."""
    return _d_flat_index(layout, int(n), int(lane_offset), int(ncols))


@functools.lru_cache(maxsize=512)
def _d_flat_index(layout: DatapathLayout, n: int, lane_offset: int, ncols: int) -> np.ndarray:
    #   flat = (cta * 128 + lane) * ncols + column     (row-major [cta_group, 128, ncols])
    cta, lane, column = _d_grid(layout, n, lane_offset)    # cta < cta_group by construction
    for name, part, bound in (("lane", lane, LANES), ("column", column, ncols)):
        if part.max() >= bound:
            raise SpecError(SECTION, "D region", expects_but_got(
                f"{name}s of D (Layout {layout.layout_id}, N={n}, lane offset {lane_offset}) in a "
                f"[{layout.cta_group}, {LANES}, {ncols}] region", f"below {bound}", int(part.max())))
    out = (cta * LANES + lane) * ncols + column             # [M, N]: lane or column always spans both axes
    out.setflags(write=False)
    return out


def d_cells(m: int, n: int, cta_group: int, *, sparse: bool = False, ws: bool = False,
            lane_offset: int = 0) -> list[tuple[int, int, int, int, int]]:
    """``[(row, col, cta, lane, column), ...]`` for every D element, row-major (§9.7.16.10.5)."""
    layout = layout_for(m, cta_group, sparse=sparse, ws=ws)
    check_layout_args(layout, n, lane_offset, sparse=sparse, ws=ws)
    where = d_placement(layout, n, lane_offset)
    return [(i, j, *map(int, where[i, j])) for i in range(m) for j in range(n)]


def columns_used(layout: DatapathLayout, n: int) -> int:
    """Tensor Memory columns D occupies (per CTA) from the D address."""
    return {"4x1": n, "4x1-half": n, "2x2": n // 2, "1x4": n // 4}[layout.organization]


def allocation_columns(layout: DatapathLayout, n: int) -> int:
    """The smallest legal tcgen05.alloc nCols (power of 2 in [32, 512], §9.7.16.7.1) holding D."""
    used = columns_used(layout, n)
    return next(c for c in (32, 64, 128, 256, 512) if c >= used)


@dataclass(frozen=True)
class WarpRegion:
    """What one warp of a warpgroup reads back with tcgen05.ld (§9.7.16.10.5, Figures 206-218).

    Warp ``w`` (``w % 4 == quarter``) of CTA ``cta`` loads D rows ``rows`` x columns ``cols``
    from ``lanes`` of its quarter, using the ld address ``d_taddr + (lane << 16) + column``.
    """

    cta: int
    quarter: int
    lane: int
    column: int
    lanes: int
    rows: range
    cols: range


def warp_regions(layout: DatapathLayout, n: int, lane_offset: int = 0) -> list[WarpRegion]:
    """The region of D each warp quarter holds, per CTA, with its tcgen05.ld address offset."""
    regions = []
    mc = layout.m_per_cta
    for cta in range(layout.cta_group):
        for q in range(4):
            org = layout.organization
            if org == "4x1":
                rows, cols, lane, lanes = range(32 * q, 32 * q + 32), range(n), 32 * q, 32
            elif org == "4x1-half":
                rows, cols, lane, lanes = range(16 * q, 16 * q + 16), range(n), 32 * q + lane_offset, 16
            elif org == "2x2":
                half = n // 2
                rows, cols, lane, lanes = range(32 * (q % 2), 32 * (q % 2) + 32), range(half * (q // 2), half * (q // 2 + 1)), 32 * q, 32
            else:
                quarter_n = n // 4
                rows, cols, lane, lanes = range(32), range(quarter_n * q, quarter_n * (q + 1)), 32 * q, 32
            rows = range(rows.start + cta * mc, rows.stop + cta * mc)
            regions.append(WarpRegion(cta, q, lane, 0, lanes, rows, cols))
    return regions


def reading_warp(layout: DatapathLayout, n: int, row: int, col: int, lane_offset: int = 0) -> tuple[int, int]:
    """(cta, warp quarter) whose tcgen05.ld reaches D[row][col]: the quarter of its lane."""
    cta, lane, _ = d_location(layout, n, row, col, lane_offset)
    return int(cta), int(lane) // LANES_PER_WARP


def _d_cells_absolute(memories, taddr, layout: DatapathLayout, n: int, lane_offset: int):
    base = taddr if isinstance(taddr, TmemAddress) else split_address(taddr)
    if base.lane != 0:
        raise SpecError(SECTION, "Tensor Memory Datapath Lane Alignment", expects_but_got(
            "lane field of the D address", "0 (the lane alignment is passed as lane_offset)", base.lane))
    if base.column + columns_used(layout, n) > COLUMNS:
        raise SpecError("9.7.16.1", "Tensor Memory shape", expects_but_got(
            f"columns of D (Layout {layout.layout_id}, N={n}) from column {base.column}", f"at most {COLUMNS}", base.column + columns_used(layout, n)))
    where = d_placement(layout, n, lane_offset)
    return where[..., 0], where[..., 1], base.column + where[..., 2]


def store_d(tmem, taddr, layout: DatapathLayout, d_codes, *, bits: int = 32, lane_offset: int = 0) -> None:
    """Write D (``uint[M, N]`` codes of ``bits`` bits) where the layout puts it (simulator side).

    ``tmem``: one TensorMemory (cta_group::1) or the pair (::2); each code in the low bits of its
    cell (§9.7.16.10.4.1), upper bits 0.
    """
    d = np.asarray(d_codes, dtype=np.uint64)
    n = d.shape[1]
    memories = memories_for(tmem, layout.cta_group)
    cta, lane, col = _d_cells_absolute(memories, taddr, layout, n, lane_offset)
    cells = (d & ((1 << check_d_bits(bits)) - 1)).astype(np.uint32)
    for c, memory in enumerate(memories):
        sel = cta == c
        memory.cells[lane[sel], col[sel]] = cells[sel]


def load_d(tmem, taddr, layout: DatapathLayout, n: int, *, bits: int = 32, lane_offset: int = 0) -> np.ndarray:
    """Read D back (``uint32[M, N]``, the low ``bits`` of each cell): what the reading warps see."""
    check_d_bits(bits)
    memories = memories_for(tmem, layout.cta_group)
    cta, lane, col = _d_cells_absolute(memories, taddr, layout, n, lane_offset)
    out = np.zeros((layout.m, n), dtype=np.uint32)
    for c, memory in enumerate(memories):
        sel = cta == c
        out[sel] = memory.cells[lane[sel], col[sel]] & np.uint32((1 << bits) - 1)
    return out


# ---------------------------------------------------------------------------------------------
# D packing (§9.7.16.10.4.1)
# ---------------------------------------------------------------------------------------------

def check_d_bits(bits: int) -> int:
    """D elements are 16 or 32 bits wide (dtype f16, f32, s32; Table 39)."""
    if bits not in (16, 32):
        raise SpecError("9.7.16.10.4.1", "D packing", expects_but_got("D element width", "16 or 32 bits", bits))
    return bits


def pack_d_element(code: int, bits: int) -> int:
    """The 32-bit cell holding one D element of ``bits`` (16 or 32) bits: low bits, rest 0."""
    return int(code) & ((1 << check_d_bits(bits)) - 1)


def unpack_d_cell(cell: int, bits: int) -> int:
    """The D element code in a cell: its low ``bits`` bits (§9.7.16.10.4.1)."""
    return int(cell) & ((1 << check_d_bits(bits)) - 1)
