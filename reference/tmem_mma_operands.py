"""MMA operands that live in Tensor Memory: A, the sparsity metadata, the scale factors.

PTX ISA §9.7.16.10.4 (A packing), §9.7.16.10.5 (data-path lanes), §9.7.16.10.7.2-3 (scale factor
A/B ids, Figures 231-258 missing), §9.7.16.10.8.4 (sparsity selector, Figures 262-267 missing).
Every function maps a *logical* operand to Tensor Memory cells and back; ``pack_*`` writes
(generators, tests), ``read_*`` reads (the simulated device), written apart so a round trip
checks both. Cells are ``uint32[lanes, columns]`` arrays relative to the operand's address.

**Rows (A and metadata).** Row ``i`` of A (and of the metadata matrix) lives in the lane of the
data path that computes row ``i`` of D: the lane of D[i][0] (``reference.datapath_layouts``), with
the same lane alignment as D for Layouts C/F (§9.7.16.10.8.5 "must use the same alignment across
matrices A, D and the sparsity metadata matrix"). The .ws layouts E/G compute each row in several
lane quarters, one per column block of D (E: 2 blocks of N/2 columns, lanes 0-63 and 64-127; G: 4
blocks of N/4, 32 lanes each): spec question ``Q-WS-A-LANES``, :func:`a_row_lanes`. ``own-quarter``
(the pick; FlashInfer's `.ws` M = 64 attention kernel, docs/clients.md F1): the quarters of block
``b`` read A's row ``i`` from their own lane (the lane of D[i][b*N/blocks]); ``first-quarter`` (the
earlier decision, after CUTLASS's ``tmem_frg_ws`` A atoms): every block reads lane ``i``. A client
that writes A into every quarter is right under both. The metadata stays at the lane of D[i][0]
(no client confirms a .ws sparse MMA with A in Tensor Memory).

**A packing** (§9.7.16.10.4): elements of a row fill 32-bit cells little-endian from the
operand's column: 32-bit (tf32) one per cell, 16-bit two, 8-bit four; 4/6-bit types of
f8f6f4/mxf8f6f4 one per 8-bit container (``reference.tmem_packing``; the text states it for
mxf8f6f4, the same container is the decision for f8f6f4), e2m1 of mxf4/mxf4nvf4 two per byte.

**Metadata** (Figures 262-267 missing): row i's nibbles (chunk j at bits 4*(j%8) of word j//8, the
order of the mma model's ``pack_metadata_words`` and of LLVM's sparse MMA tests) in consecutive
cells from the metadata column. f16/tf32 need one word per row and MMA; the sparsity selector (0-3)
picks the cell ``column + selector``. The 8-bit and 4-bit kinds need two words, selector 0 ("all of
the columns are selected"). With 128 rows per CTA (M = 128, or M = 256 with cta_group::2), f16/tf32
rows are interleaved as CUTLASS lays them out (spec question ``Q-META-TMEM``, pick
``cutlass-interleaved``; docs/clients.md finding K4): in each group of 16 rows, row ``8*h + r``
(r < 8, h < 2) keeps chunks 0-3 in bits ``16*h``..``16*h+15`` of lane ``r`` and chunks 4-7 in the
same bits of lane ``r + 8`` (of the group). Source: CUTLASS ``UMMA::tmem_e_frg`` (16-bit and 32-bit
atoms, ``cute/atom/mma_traits_sm100.hpp:607-635``) and the metadata permutation its sparse GEMM
writes before a lane-for-lane ``tcgen05.cp`` (``Sm1xxGemmSparseConfig::TensorEAtom_MMA_F16/TF32``,
``cutlass/gemm/collective/builders/sm1xx_sparse_config.inl:115-122``), which agree. Other M (64, or
64 rows per CTA) keep row ``i`` in lane ``i`` (CUTLASS implements only M = 128: not confirmed).

**Scale factors** (Figures 231-258 missing): CUTLASS ``tmem_sf_frg`` (``ScaleFactorDuplicated4by1``):
scale factor ``s`` of row/column ``x`` is byte ``scale_id + s`` of the cell at lane ``x % 32`` and
column ``x // 32``, replicated in every 32-lane quarter ("Scale factors for A and B matrices need to
be duplicated to all 32 lane partitions", §9.7.16.10.7). The id is the byte offset (1X: 0-3; 2X:
0 or 2; 4X: 0).

**K = 96** (block32 = 3 factors, ids 0-3; block16 = 6 factors, ids 0 or 2; sm_103a; Figures
234-239, 243-258 missing): byte ``u = scale_id + s`` may pass byte 3 of the word; it continues in
byte ``u % 4`` of the next *group* of columns, ``W * (u // 4)`` further, where a group is the
``ceil(mn / 32)`` columns of one set of four bytes rounded up to 4 columns (W = 4 for M = 128 per
CTA and N <= 128, W = 8 for 128 < N <= 256). Source: CUTLASS sm103 block-scaled collective
(``tmem_sf_frg`` over K = 96 MMAs stepping the scale-factor index by 3 or 6, SFB with N > 128 laid
out over 256 rows), whose per-MMA (column, id) sequence (0,0) (0,3) (4,2) (8,1) for block32 A and
(0,0) (0,3) (8,2) (16,1) for N = 256 B only fits this reading; the figure count per id in the PTX
text agrees (two figures exactly for the ids that spill into a second 8-column group). For
K != 96, ``u < 4`` and this is the layout above. Not confirmed on hardware.

**cta_group::2, B's scale factors** (spec question ``Q-SFB-2CTA``, :func:`scale_b_parts`): A's are
per CTA (each CTA's SFA holds its M/2 rows, as A). B's: ``lead`` (the pick) -- the issuing CTA's SFB
holds all N columns; ``split`` -- each CTA's SFB holds its own N/2 columns (CTA 0: 0..N/2-1, CTA 1:
N/2..N-1) at the same address, laid out as an operand of N/2 columns.

**cta_group::2 M = 128, B's scale factors over the lane quarters** (spec question ``Q-SFB-2X2``,
:func:`scale_b_by_half`): ``replicated`` (the pick) -- every quarter holds all columns of the part, as
above; ``by-datapath`` (CuTe's ``ScaleFactorDuplicated2by2``, docs/clients-cute.md CU7) -- the first
half of the part's columns is laid out (as an operand of half the columns) in quarters 0-1, the second
half in quarters 2-3: column n at lane ``64 * (n // (N/2)) + n % 32`` (and 32 lanes up), column
``(n % (N/2)) // 32``, the columns each data-path half of the M = 128 2x2 layout computes. Decision:
under ``Q-SFB-2CTA=split`` each CTA's part is halved the same way.
"""

from __future__ import annotations

import numpy as np

from reference.datapath_layouts import DatapathLayout, d_location
from reference.errors import SpecError, expects_but_got
from reference.spec_questions import resolve
from reference.tables import SCALE_IDS_BY_SF
from reference.tmem_packing import (
    bytes_to_words,
    container_byte,
    container_code,
    pack_a_row,
    unpack_a_row,
    words_to_bytes,
)

SECTION_A = "9.7.16.10.4.2"
SECTION_META = "9.7.16.10.8.4"
SECTION_SF = "9.7.16.10.7"
QUARTER = 32
ELEMENT_BITS = {"tf32": 32, "f16": 16, "bf16": 16, "e4m3": 8, "e5m2": 8, "u8": 8, "s8": 8,
                "e2m3": 6, "e3m2": 6, "e2m1": 4}
META_WORDS = {"tf32": 1, "f16": 1, "f8f6f4": 2, "mxf8f6f4": 2, "i8": 2, "mxf4": 2, "mxf4nvf4": 2}


def row_lanes(layout: DatapathLayout, lane_offset: int = 0) -> np.ndarray:
    """``(cta, lane)`` ``int[M, 2]`` of each row of A / metadata (module docstring)."""
    i = np.arange(layout.m)
    cta, lane, _ = d_location(layout, 256, i, np.zeros_like(i), lane_offset)
    return np.stack([np.broadcast_to(cta, i.shape), lane], axis=1)


def quarter_blocks(layout: DatapathLayout) -> int:
    """Column blocks of D that separate lane quarters compute (the .ws layouts): 2 (E), 4 (G), else 1."""
    return {"E": 2, "G": 4}.get(layout.layout_id, 1)


def a_row_lanes(layout: DatapathLayout, lane_offset: int = 0, reading: str | None = None) -> np.ndarray:
    """``(cta, lane)`` ``int[blocks, M, 2]``: where D column block ``b`` reads A's row ``i`` (spec question
    ``Q-WS-A-LANES``, module docstring): one block (:func:`row_lanes`) except for Layouts E/G under
    ``own-quarter``, where block ``b`` reads the lane of D[i][b] in a ``blocks``-column D::

        Layout E (2x2)          Layout G (1x4)
        lanes   0-63: block 0   lanes  0-31: block 0    lanes 64-95:  block 2
        lanes 64-127: block 1   lanes 32-63: block 1    lanes 96-127: block 3
    """
    blocks = quarter_blocks(layout)
    if blocks == 1 or resolve("Q-WS-A-LANES", reading) == "first-quarter":
        return row_lanes(layout, lane_offset)[None]
    i = np.arange(layout.m)
    parts = []
    for b in range(blocks):
        cta, lane, _ = d_location(layout, blocks, i, np.full_like(i, b), lane_offset)
        parts.append(np.stack([np.broadcast_to(cta, i.shape), lane], axis=1))
    return np.stack(parts)


def column_blocks(layout: DatapathLayout, n: int) -> np.ndarray:
    """``int[N]``: the column block (:func:`quarter_blocks`) each D column belongs to."""
    return np.arange(n) // (n // quarter_blocks(layout))


# -- A ------------------------------------------------------------------------------------------

def a_columns(kind: str, a_type: str, k: int) -> int:
    """Cells one row of ``k`` A elements takes in Tensor Memory."""
    if kind in ("mxf4", "mxf4nvf4"):
        return -(-k // 8)
    bits = _slot_bits(kind, a_type)
    return -(-k * bits // 32)


def _slot_bits(kind: str, a_type: str) -> int:
    if a_type not in ELEMENT_BITS:
        raise SpecError(SECTION_A, "A packing", expects_but_got("A type", "one of " + ", ".join(ELEMENT_BITS), a_type))
    bits = ELEMENT_BITS[a_type]
    return 8 if bits < 8 else bits


def pack_a(kind: str, a_type: str, codes) -> np.ndarray:
    """``uint32[rows, cells]``: rows of A codes packed as Tensor Memory cells."""
    arr = np.asarray(codes, dtype=np.uint64)
    if kind in ("mxf4", "mxf4nvf4", "mxf8f6f4"):
        return pack_a_row(kind, a_type, arr).reshape(arr.shape[0], -1)
    bits = _slot_bits(kind, a_type)
    if ELEMENT_BITS[a_type] < 8:
        return bytes_to_words(container_byte(a_type, arr)).reshape(arr.shape[0], -1)
    per = 32 // bits
    rows, k = arr.shape
    padded = np.zeros((rows, -(-k // per) * per), dtype=np.uint64)
    padded[:, :k] = arr & np.uint64((1 << bits) - 1)
    shifts = (np.arange(per, dtype=np.uint64) * np.uint64(bits))[None, None, :]
    return (padded.reshape(rows, -1, per) << shifts).sum(axis=-1).astype(np.uint32)


def read_a(kind: str, a_type: str, cells, k: int) -> np.ndarray:
    """``uint64[rows, k]`` A codes from ``uint32[rows, cells]`` (inverse of :func:`pack_a`)."""
    words = np.asarray(cells, dtype=np.uint32)
    if kind in ("mxf4", "mxf4nvf4", "mxf8f6f4"):
        return np.stack([unpack_a_row(kind, a_type, row, k) for row in words]).astype(np.uint64)
    if ELEMENT_BITS.get(a_type, 8) < 8:
        return np.stack([container_code(a_type, words_to_bytes(row)[:k]) for row in words]).astype(np.uint64)
    bits = _slot_bits(kind, a_type)
    e = np.arange(k)
    w = words[:, e * bits // 32].astype(np.uint64)
    return (w >> ((e * bits % 32).astype(np.uint64))[None, :]) & np.uint64((1 << bits) - 1)


# -- sparsity metadata --------------------------------------------------------------------------

def metadata_cells(kind: str, selector: int) -> tuple[int, int]:
    """(first cell, number of cells) of one row's metadata, relative to the metadata column."""
    if kind not in META_WORDS:
        raise SpecError(SECTION_META, "sparse kinds", expects_but_got("kind", "one of " + ", ".join(META_WORDS), kind))
    if not 0 <= selector <= 3:
        raise SpecError(SECTION_META, "sparsity selector", expects_but_got("sparsity selector", "0..3", selector))
    words = META_WORDS[kind]
    return (selector if words == 1 else 0), words


INTERLEAVE_ROWS = 128


def metadata_interleaved(kind: str, rows_per_cta: int, reading: str | None = None) -> bool:
    """Whether the one-word kinds' rows are interleaved (``Q-META-TMEM``; module docstring)."""
    return (META_WORDS.get(kind) == 1 and rows_per_cta == INTERLEAVE_ROWS
            and resolve("Q-META-TMEM", reading) == "cutlass-interleaved")


def _half(words: np.ndarray, h) -> np.ndarray:
    return (words >> (16 * np.asarray(h, dtype=np.uint32))) & np.uint32(0xFFFF)


def interleave_metadata_rows(cells) -> np.ndarray:
    """Row-ordered metadata words -> lane-ordered (per 128 rows; module docstring), every column.
    The lanes of a group of 16 rows are those rows' lanes, so any multiple of 16 rows is
    interleaved group by group, as each block of 128 rows would be on its own."""
    w = np.asarray(cells, dtype=np.uint32)
    lane = np.arange(w.shape[0])
    low = (lane // 16) * 16 + lane % 8                 # row whose half sits in bits 0-15 of this lane
    h = ((lane // 8) % 2)[:, None]                     # which half of the rows' chunks (0-3 or 4-7)
    return (_half(w[low], h) | (_half(w[low + 8], h) << np.uint32(16))).astype(np.uint32)


def deinterleave_metadata_rows(cells) -> np.ndarray:
    """Inverse of :func:`interleave_metadata_rows`."""
    w = np.asarray(cells, dtype=np.uint32)
    row = np.arange(w.shape[0])
    first = (row // 16) * 16 + row % 8                 # lane holding chunks 0-3; chunks 4-7 eight lanes on
    h = ((row // 8) % 2)[:, None]                      # which half of those lanes holds this row
    return (_half(w[first], h) | (_half(w[first + 8], h) << np.uint32(16))).astype(np.uint32)


def pack_metadata(kind: str, nibbles, selector: int = 0, rows_per_cta: int | None = None,
                  reading: str | None = None) -> np.ndarray:
    """``uint32[rows, first + words]`` cells holding the metadata nibbles (other cells 0), row ``i``
    of ``nibbles`` in cell row ``i`` unless the rows are interleaved (``rows_per_cta``, default all rows)."""
    nib = np.asarray(nibbles, dtype=np.uint64)
    first, words = metadata_cells(kind, selector)
    rows, chunks = nib.shape
    if chunks > 8 * words:
        raise SpecError(SECTION_META, "metadata", expects_but_got(f"chunks per row for kind::{kind}", f"at most {8 * words}", chunks))
    padded = np.zeros((rows, 8 * words), dtype=np.uint64)
    padded[:, :chunks] = nib & np.uint64(15)
    shifts = (4 * np.arange(8, dtype=np.uint64))[None, None, :]
    out = np.zeros((rows, first + words), dtype=np.uint32)
    out[:, first:] = (padded.reshape(rows, words, 8) << shifts).sum(axis=-1).astype(np.uint32)
    if metadata_interleaved(kind, rows if rows_per_cta is None else rows_per_cta, reading):
        out = interleave_metadata_rows(out)           # per 16-row group: every 128-row block at once
    return out


def read_metadata(kind: str, cells, chunks: int, selector: int = 0, rows_per_cta: int | None = None,
                  reading: str | None = None) -> np.ndarray:
    """``uint8[rows, chunks]`` nibbles from a row's cells (inverse of :func:`pack_metadata`)."""
    first, words = metadata_cells(kind, selector)
    w = np.asarray(cells, dtype=np.uint32)
    rows = w.shape[0]
    if metadata_interleaved(kind, rows if rows_per_cta is None else rows_per_cta, reading):
        w = deinterleave_metadata_rows(w)             # per 16-row group: every 128-row block at once
    w = w[:, first:first + words].astype(np.uint64)
    j = np.arange(chunks)
    return ((w[:, j // 8] >> (4 * (j % 8)).astype(np.uint64)[None, :]) & np.uint64(15)).astype(np.uint8)


# -- scale factors ------------------------------------------------------------------------------

def scale_factor_columns(mn: int) -> int:
    """Cells (columns) one set of four scale-factor bytes of ``mn`` rows/columns occupies."""
    return -(-mn // QUARTER)


def scale_group_columns(mn: int, reading: str | None = None) -> int:
    """W: columns from one set of four scale-factor bytes to the next (K = 96 only; module docstring).
    Spec question ``Q-K96-SFW``: ``group-of-4`` (the pick) rounds up to 4 columns; ``compact`` does not."""
    if resolve("Q-K96-SFW", reading) == "compact":
        return scale_factor_columns(mn)
    return 4 * -(-scale_factor_columns(mn) // 4)


def scale_factor_span(mn: int, sf: int, scale_id: int) -> int:
    """Columns from the scale-factor address to the last cell read (bytes ``scale_id .. scale_id+sf-1``)."""
    check_scale_id(sf, scale_id)
    return scale_group_columns(mn) * ((scale_id + sf - 1) // 4) + scale_factor_columns(mn)


def check_scale_id(sf: int, scale_id: int) -> None:
    """1X: 0-3; 2X: 0, 2; 4X: 0 (byte offset with b % SF == 0, b + SF <= 4); K = 96: 3 -> 0-3, 6 -> 0, 2."""
    legal = SCALE_IDS_BY_SF.get(sf)
    if legal is None:
        raise SpecError(SECTION_SF, "scale factors per row", expects_but_got("scale factors per row", "1, 2, 3, 4 or 6", sf))
    if scale_id not in legal:
        raise SpecError(SECTION_SF, "scale factor id", expects_but_got(
            f"scale factor id with {sf} scale factors per row", " or ".join(map(str, legal)), scale_id))


def pack_scale_factors(codes, scale_id: int = 0, by_half: bool = False) -> np.ndarray:
    """``uint32[128, columns]``: ``codes[x, s]`` (uint8, mn x SF) placed in every lane quarter, or with
    ``by_half`` (``Q-SFB-2X2``, module docstring) the first mn/2 in quarters 0-1, the rest in 2-3."""
    if by_half:
        h = len(codes) // 2
        lo, hi = pack_scale_factors(codes[:h], scale_id), pack_scale_factors(codes[h:], scale_id)
        return np.concatenate([lo[:2 * QUARTER], hi[2 * QUARTER:]])
    c = np.asarray(codes, dtype=np.uint32)
    mn, sf = c.shape
    cell_bytes = np.zeros((QUARTER, scale_factor_span(mn, sf, scale_id), 4), dtype=np.uint8)   # little-endian cells
    x = np.arange(mn)[:, None]
    u = scale_id + np.arange(sf)[None, :]     # byte u % 4 of the (u // 4)-th column group
    cell_bytes[x % QUARTER, scale_group_columns(mn) * (u // 4) + x // QUARTER, u % 4] = c & 0xFF
    return np.tile(cell_bytes.view("<u4")[..., 0].astype(np.uint32), (4, 1))


def read_scale_factors(cells, mn: int, sf: int, scale_id: int, by_half: bool = False) -> np.ndarray:
    """``uint8[4, mn, SF]``: the scale factors as each lane quarter holds them (cells: 128 lanes); with
    ``by_half`` (``Q-SFB-2X2``) ``uint8[2, mn, SF]``: as quarters 0 and 1, 2 and 3 hold them."""
    if by_half:
        h = mn // 2
        lo, hi = read_scale_factors(cells, h, sf, scale_id), read_scale_factors(cells, mn - h, sf, scale_id)
        return np.concatenate([lo[:2], hi[2:]], axis=1)
    check_scale_id(sf, scale_id)
    w = np.asarray(cells, dtype=np.uint32).reshape(4, QUARTER, -1)
    x = np.arange(mn)
    u = scale_id + np.arange(sf)                                         # byte index past the address
    col = (u // 4)[None, :] * scale_group_columns(mn) + (x // QUARTER)[:, None]   # (mn, SF)
    per = w[:, (x % QUARTER)[:, None], col]                              # (4, mn, SF)
    return ((per >> (8 * (u % 4)).astype(np.uint32)[None, None, :]) & np.uint32(0xFF)).astype(np.uint8)


def scale_b_parts(n: int, cta_group: int, reading: str | None = None) -> tuple[tuple[int, int, int], ...]:
    """Where B's scale factors live (§9.7.16.10.7; module docstring): ``(CTA, first column of N,
    columns)`` per part, CTA = rank in the pair (one part: the issuing CTA). ``reading``: of spec
    question ``Q-SFB-2CTA`` (cta_group::2 only; None = the reading in force)."""
    if cta_group == 2 and resolve("Q-SFB-2CTA", reading) == "split":
        return ((0, 0, n // 2), (1, n // 2, n // 2))
    return ((0, 0, n),)


def scale_b_by_half(m: int, cta_group: int, reading: str | None = None) -> bool:
    """Whether B's scale factors are split over the data-path halves (§9.7.16.10.7; module docstring):
    spec question ``Q-SFB-2X2``, cta_group::2 M = 128 only (None = the reading in force)."""
    return cta_group == 2 and m == 128 and resolve("Q-SFB-2X2", reading) == "by-datapath"


def replicated(per_quarter: np.ndarray) -> np.ndarray:
    """The scale factors when all four quarters agree; SpecError otherwise (§9.7.16.10.7)."""
    same = (per_quarter == per_quarter[:1]).all(axis=0)
    if not same.all():
        x, s = (int(v) for v in np.argwhere(~same)[0])
        raise SpecError(SECTION_SF, "scale factors duplicated to all 32 lane partitions", expects_but_got(
            f"scale factor {s} of row/column {x} in lane quarters 0-3", "the same byte",
            [int(v) for v in per_quarter[:, x, s]]))
    return per_quarter[0]
