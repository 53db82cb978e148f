"""Inputs of tcgen05.mma{.sp}{.ws} cases: logical operands, then their placement (§9.7.16.10).

Logical operands (codes, ``values.py``): A (M x K, sparse: M x K/2 + metadata nibbles), B
(K x (N + column shift)), C = D before the MMA (M x N), scale factors (M x SF, SF x N). Placement,
through the reference's writers only:

* A / B in shared memory: ``reference.smem_choice.choose_layout`` with the case's layout axes and
  ``reference.smem_image.pack``; each CTA of a pair stages its M/2 rows of A and N/2 columns of B
  at the same relative addresses (one descriptor per case);
* A, metadata, scale factors in Tensor Memory: ``reference.tmem_mma_operands``;
* C in the D region: ``reference.datapath_layouts.d_placement``. The whole D region is preloaded
  (cells D does not cover hold random words), so every read-back word has a defined expected value.

Tensor Memory columns (of the 512-column allocation): each MMA case places D, A, SFA, SFB and the
metadata at its own columns (:func:`tmem_columns`: the regions in a random order with random gaps,
so every column bit of every address is 0 in some case and 1 in another), and Layouts F and C use
lane alignment 16 in half of their cases (§9.7.16.10.5 table); the synchronization patterns keep
:data:`FIXED_COLUMNS` (D 0, A 256, SFA 384, SFB 416, metadata 448).
"""

from __future__ import annotations

import functools
import zlib
from dataclasses import dataclass, replace

import numpy as np

from generators.inputs import values as V
from generators.inputs.block import (
    PATTERN_ALIGN,
    InBlocks,
    Preloads,
    Staging,
    high_shift,
    relocate,
    tile_start,
)
from generators.inputs.types import NUMERICS, CaseInputs, TmemRegion, Untestable
from generators.ptx import record as R
from generators.variants.common import parse_layout
from reference import sparsity as SP
from reference import tables as T
from reference import tmem_mma_operands as TO
from reference.datapath_layouts import columns_used, d_flat_index, layout_for
from reference.errors import SpecError
from reference.mma_qualifiers import MmaOp
from reference.smem_choice import choose_layout
from reference.smem_image import tile_footprint
from reference.smem_layout import element_storage
from reference.spec_questions import following, reading
from reference.zero_column_mask import MAX_COLUMN_SHIFT, ZeroColumnMaskDescriptor

D_COL, A_COL, SFA_COL, SFB_COL, META_COL = 0, 256, 384, 416, 448
LANES = 128
COLUMNS = 512                 # the kernel's allocation (§9.7.16.1: 512 columns)


@dataclass(frozen=True)
class TmemColumns:
    """Columns of an MMA's Tensor Memory operands (relative to the allocation)."""

    d: int = D_COL
    a: int = A_COL
    sfa: int = SFA_COL
    sfb: int = SFB_COL
    meta: int = META_COL


FIXED_COLUMNS = TmemColumns()


def tmem_columns(widths: dict[str, int], rng) -> TmemColumns:
    """Disjoint columns for regions of ``widths`` ({"d", "a", "sfa", "sfb", "meta"}: columns; absent
    = unused): the regions in a random order, the free columns split into random gaps between them."""
    names = [n for n in ("d", "a", "sfa", "sfb", "meta") if widths.get(n)]
    free = COLUMNS - sum(widths[n] for n in names)
    if free < 0:
        raise ValueError(f"Tensor Memory regions expect at most {COLUMNS} columns in all, but got {COLUMNS - free}")
    order = [names[i] for i in rng.permutation(len(names)).tolist()]
    cuts = sorted(rng.integers(0, free + 1, size=len(order)).tolist())
    out, col, prev = {}, 0, 0
    for name, cut in zip(order, cuts, strict=True):
        col += cut - prev
        prev = cut
        out[name] = col
        col += widths[name]
    return TmemColumns(**out)


def lane_alignment(op: MmaOp, rng) -> int:
    """The lane alignment of D, A and the metadata: 0, or 16 for half the cases of Layouts F and C
    (§9.7.16.10.5: "0 or 16"; the same for all three, §9.7.16.10.8.5)."""
    aligns = layout_for(op.m, op.cta_group, sparse=op.sparse, ws=op.ws).lane_alignments
    return int(aligns[int(rng.integers(len(aligns)))])
# disable-output-lane words (word i of n, the case's phase 0 or 1; bit b of the vector = lane b % 128
# of CTA b // 128): every lane bit is 1 in some case and 0 in another (field coverage, issue 15)
DOL_PATTERNS = {"zero": lambda i, n, ph: 0,
                "alternate_lanes": lambda i, n, ph: 0x55555555 if (i + ph) % 2 else 0xAAAAAAAA,
                "warp1": lambda i, n, ph: 0xFFFFFFFF if i == 1 else 0,
                "last_warp": lambda i, n, ph: 0xFFFFFFFF if i == n - 1 else 0}
# §9.7.16.4.3 worked examples 2 and 4 (skip 2, use 3; example 4 with start counts and shift 2);
# "off" is example 1 (non-zero mask 0: an all-0 mask) with the other fields drawn per case (:func:`zcm_off`)
ZCM = {
    "off": ZeroColumnMaskDescriptor(),
    "example2": ZeroColumnMaskDescriptor(non_zero_mask=True, skip_span=2, use_span=3),
    "example4": ZeroColumnMaskDescriptor(start_count=(0, 1, 2, 1), first_span=(1, 1, 0, 0), non_zero_mask=True,
                                         skip_span=2, use_span=3, column_shift=2),
}


def zcm_off(m: int, rng) -> ZeroColumnMaskDescriptor:
    """Example 1 of §9.7.16.4.3 drawn at random: non-zero mask 0 (the mask is all 0s whatever the
    start counts, first spans and spans say), and a column shift of 0, Table 45's maximum (16 for
    M = 32, else 32) or between: every field's bits 0 and 1 across cases (field coverage, issue 15)."""
    return ZeroColumnMaskDescriptor(
        start_count=tuple(int(v) for v in rng.integers(0, 256, size=4)),
        first_span=tuple(int(v) for v in rng.integers(0, 2, size=4)), non_zero_mask=False,
        skip_span=int(rng.integers(0, 256)), use_span=int(rng.integers(0, 256)),
        column_shift=int(rng.choice([0, MAX_COLUMN_SHIFT[m], int(rng.integers(1, MAX_COLUMN_SHIFT[m]))])))
ORDERED_2_4 = np.array(sorted(SP.ORDERED_NIBBLES), dtype=np.uint8)     # never the ambiguous 0b0110
TF32_NIBBLES = np.array(sorted(SP.TF32_NIBBLES), dtype=np.uint8)


@dataclass(frozen=True)
class MmaLogical:
    """The logical operands of one MMA case (what ``reference.mma_semantics.mma`` takes)."""

    op: MmaOp
    a: np.ndarray                      # M x K codes (sparse: M x K/2)
    b: np.ndarray                      # K x (N + column shift) codes
    c: np.ndarray                      # M x N codes of the D type (D before the MMA)
    meta: np.ndarray | None = None     # M x K/chunk nibbles
    scale_a: np.ndarray | None = None  # M x SF codes
    scale_b: np.ndarray | None = None  # SF x N codes
    lane_offset: int = 0
    #: the A each column block of D reads (.ws Layouts E/G with A in Tensor Memory, spec question
    #: Q-WS-A-LANES): None = ``a`` in every block; the Q-WS-A-LANES probe places a different A per block
    a_blocks: tuple[np.ndarray, ...] | None = None


def mma_op(p, case_id: str = "") -> MmaOp:
    """The value-relevant qualifiers of a case (``reference.mma_qualifiers.MmaOp``). The phase of the
    ``alternate_lanes`` disable-output-lane vector and the fields of the ``off`` zero-column mask
    come from the CRC of ``case_id`` (stable, different across cases)."""
    seed = zlib.crc32(case_id.encode())
    neg = p["negate"]
    dol = None
    if p["dol"] is not None:
        n = 4 * p["cta_group"]
        dol = tuple(DOL_PATTERNS[p["dol"]](i, n, (seed >> 7) & 1) for i in range(n))
    zcm = None
    if p["zcm"] is not None:
        zcm = zcm_off(p["m"], np.random.default_rng(seed)) if p["zcm"] == "off" and case_id else ZCM[p["zcm"]]
    return MmaOp(kind=p["kind"], a_type=p["a_type"], b_type=p["b_type"], d_type=p["d_type"], m=p["m"], n=p["n"],
                 sparse=p["sparse"], ws=p["ws"], cta_group=p["cta_group"], k96=p["k"] == 96,
                 scale_type=p["scale_type"], scale_vec=p["scale_vec"], a_scale_id=p["scale_ids"][0],
                 b_scale_id=p["scale_ids"][1], negate_a=neg in ("a", "ab"), negate_b=neg in ("b", "ab"),
                 saturate=p["saturate"], enable_input_d=p["enable_input_d"], scale_input_d=p["scale_input_d"] or 0,
                 ashift=p["ashift"], sparsity_selector=p["selector"], max_shift=p["max_shift"],
                 disable_output_lane=dol, zero_column_mask=zcm)


# -- logical operands ------------------------------------------------------------------------------

def _metadata(kind: str, rows: int, chunks: int, rng) -> np.ndarray:
    pool = TF32_NIBBLES if SP.pattern_for_kind(kind).kept == 1 else ORDERED_2_4
    return rng.choice(pool, size=(rows, chunks))


def _accumulator(op: MmaOp, rng, mode: str) -> np.ndarray:
    shape = (op.m, op.n)
    if op.d_type == "s32":
        c = rng.integers(-64, 65, size=shape).astype(np.int64)
        if op.saturate:       # some accumulators next to the s32 limits, so that saturation shows
            near = rng.random(shape) < 0.25
            c = np.where(near, np.where(rng.random(shape) < 0.5, (1 << 31) - 1 - c % 50, -(1 << 31) + c % 50), c)
        return (c & 0xFFFFFFFF).astype(np.uint64)
    if mode == NUMERICS:
        vals = rng.standard_normal(shape) * 4.0
        return V.element_codes(op.d_type, np.asarray(vals, dtype=np.float16 if op.d_type == "f16" else np.float32))
    limit = 8.0
    exp = op.scale_input_d if op.enable_input_d else 0
    if op.d_type == "f16" and exp:
        limit = 1.75            # C * 2^15 must stay below the f16 maximum (65504)
    return V.accumulator_codes(op.d_type, shape, rng, limit=limit, scale_exp=exp)


def _numerics_codes(fmt: str, shape, rng) -> np.ndarray:
    """Random finite codes (numerics companions: every mantissa bit in play)."""
    from reference import formats as F
    f = F.get_format(fmt)
    bits = f.bits if f.bits < 8 else f.container_bits       # 4/6-bit codes; tf32: its 32-bit container
    codes = rng.integers(0, 1 << bits, size=shape, dtype=np.uint64)
    vals = F.decode(fmt, codes)
    ok = np.isfinite(vals)
    return np.where(ok, codes, np.uint64(0)).astype(np.uint64)


def logical_operands(op: MmaOp, rng, mode: str) -> MmaLogical:
    k, shift = op.k, op.column_shift
    ks = k // 2 if op.sparse else k
    pool = V.NARROW if op.d_type == "f16" else V.WIDE
    if mode == NUMERICS:
        a = _numerics_codes(op.a_type, (op.m, ks), rng)
        b = _numerics_codes(op.b_type, (k, op.n + shift), rng)
    else:
        a = V.operand_codes(op.a_type, (op.m, ks), rng, pool, tf32_noise=True)
        b = V.operand_codes(op.b_type, (k, op.n + shift), rng, pool, tf32_noise=True)
    meta = _metadata(op.kind, op.m, k // SP.pattern_for_kind(op.kind).chunk, rng) if op.sparse else None
    sa = sb = None
    if op.block_scaled:
        sf = op.scale_factors
        sa = V.scale_codes(op.scale_type, (op.m, sf), rng, sign_noise=True)
        sb = V.scale_codes(op.scale_type, (sf, op.n), rng, sign_noise=True)
    c = _accumulator(op, rng, mode)
    if mode == NUMERICS:
        a, c = _numerics_rows(op, a, c, rng)
        a, b, c, sa, sb = _special_values(op, a, b, c, sa, sb)
    return MmaLogical(op, a, b, c, meta, sa, sb)


def _special_values(op: MmaOp, a, b, c, sa, sb):
    """Numerics companions: every special value class of each operand's type (``values.class_codes``:
    +-0, subnormal, smallest and largest normal, +-Inf, NaN) from row 2 of A, C and SFA on, in
    column 1 of B and column 2 of SFB (issue 15: value coverage; compared with the hardware model
    bit for bit, or within the spec model's bound, NaN for NaN and Inf for Inf)."""
    def specials(fmt):
        return list(V.class_codes(fmt).values())

    a = V.plant(a, 2 * a.shape[1], specials(op.a_type))
    b = V.plant(b.T, b.shape[0], specials(op.b_type)).T
    if op.d_type != "s32":
        c = V.plant(c, 2 * c.shape[1], specials(op.d_type))
    if sa is not None:
        sa = V.plant(sa, 2 * sa.shape[1], specials(op.scale_type)).astype(sa.dtype)
        sb = V.plant(sb.T, 2 * sb.shape[0], specials(op.scale_type)).T.astype(sb.dtype)
    return a, b, c, sa, sb


def _numerics_rows(op: MmaOp, a: np.ndarray, c: np.ndarray, rng) -> tuple[np.ndarray, np.ndarray]:
    """Numerics companions: row 0 of A zero and row 0 of C subnormal (D row 0 = C: subnormal
    results), and a NaN in row 1 of A where its format has one (NaN results)."""
    from reference import formats as F

    a, c = a.copy(), c.copy()
    a[0] = 0
    sub = (1 << 10) if op.d_type == "f16" else (1 << 23)
    c[0] = rng.integers(1, sub, size=c.shape[1]).astype(np.uint64)
    codes, vals = (None, None)
    if F.get_format(op.a_type).container_bits <= 16:
        codes, vals = F.all_values(op.a_type)
        nan = codes[np.isnan(vals)]
    else:
        nan = np.array([0x7FC00000], dtype=np.uint64)
    if nan.size:
        a[1, 0] = int(nan[0])
    return a, c


# -- placement -------------------------------------------------------------------------------------

def _absolute_start(staging: Staging, k_run: int, mn: int, rng) -> tuple[int, int]:
    """(start, continuation address) of a K-major 128B tile in absolute leading-dimension mode
    (§9.7.16.3.1.2): rows start 16-96 bytes before the end of their 128-byte row, so the row passes
    it and continues at the continuation address (same row offsets, base offset 0: both 1024-aligned
    pattern starts)."""
    block = staging.next_address()
    over = 16 * int(rng.integers(1, max(2, k_run // 16)))        # bytes of the row past its 128-byte row
    rows_bytes = 1024 * -(-mn // 8)                               # the compact tiling's 8-row atoms
    return block + 128 - over, block + rows_bytes


def _smem_tile(staging: Staging, layout_name: str, dtype: str, kind: str, codes_mn_k: np.ndarray, rng,
               absolute: bool = False, lbo_set: bool = False) -> int:
    """Place an mn x k operand tile in ``staging`` (``block.tile_start``); its descriptor.

    ``absolute``: the absolute leading-dimension mode, the row split over two chunks (``_absolute_start``).
    ``lbo_set``: a K-major swizzled tile's descriptor carries LBO = 32..1008 bytes instead of 16
    (§9.7.16.3.1: "not used"; under the pick of spec question Q-LBO-KSW the image is the same)."""
    swizzle, major = parse_layout(layout_name)
    mn, k = codes_mn_k.shape
    storage = element_storage(dtype, kind)
    k_run = -(-k // storage.per_unit) * 16
    continuation = None
    if absolute:
        start, continuation = _absolute_start(staging, k_run, mn, rng)
        pattern = start - start % PATTERN_ALIGN
    else:
        start, pattern = tile_start(staging, swizzle, major, k_run, rng)
    try:
        layout = choose_layout(major, swizzle, dtype, mn, k, start, kind=kind, pattern_start=pattern,
                               continuation_address=continuation)
    except SpecError as exc:
        raise Untestable(f"no shared-memory layout for the {mn}x{k} {dtype} tile in {layout_name}: {exc}") from None
    if swizzle == "none" and not absolute and tiles_pad(rng):
        layout = padded_layout(layout, mn, k, rng)
    if lbo_set and major == "K" and swizzle != "none":
        # placed with that LBO: the same image under spec question Q-LBO-KSW's pick ("assumed 1"),
        # units LBO apart along K under its reading "honoured", where an LBO whose units would
        # land on other rows is drawn again (generators.probes)
        for _ in range(64):
            lbo_layout = replace(layout, leading_byte_offset=16 * int(rng.integers(2, 64)))
            try:
                staging.place(lbo_layout, codes_mn_k)
                return lbo_layout.descriptor().encode()
            except SpecError:
                continue
        raise Untestable(f"no LBO in 32..1008 places the {mn}x{k} {dtype} tile in {layout_name} without overlap")
    staging.place(layout, codes_mn_k)
    return layout.descriptor().encode()


PAD_IMAGE_LIMIT = 64 * 1024       # bytes a padded tile's image may span (two tiles fit the staging buffer)


def tiles_pad(rng) -> bool:
    """Whether a no-swizzle tile gets a padded layout (half of them)."""
    return bool(rng.random() < 0.5)


def padded_layout(layout, mn: int, k: int, rng):
    """A no-swizzle tile with strides other than the compact ones (§9.7.16.4.1: LBO and SBO are any
    multiple of 16 below 2^18; the core matrices of §9.7.16.3.1 need not be packed), so the SBO
    field's low and high bits are set in some case (field coverage, issue 15). Half the time the
    8-row groups are 16-112 bytes apart beyond their 128 (SBO 144-240, LBO = SBO x groups), else the
    K groups sit together (LBO 128) and SBO is drawn from 128 x K groups up to what fits
    :data:`PAD_IMAGE_LIMIT` (any 14-bit SBO or LBO when the tile has one group along it: unused). The
    packer and the reader both take the strides from the layout; a draw whose elements would
    collide is not used."""
    core = 128
    groups = -(-layout.leading_byte_offset // core)          # compact LBO = 128 x (groups SBO apart)
    kgroups = tile_footprint(layout, mn, k)[2] // 8 // layout.leading_byte_offset + 1   # LBO apart
    if rng.random() < 0.5:
        sbo = core + 16 * int(rng.integers(1, 8))
        lbo = sbo * groups
    else:
        lbo = core if kgroups > 1 else 16 * int(rng.integers(8, 1 << 14))     # one group: LBO unused
        top = (1 << 14) - 1 if groups == 1 else (PAD_IMAGE_LIMIT - core * kgroups) // (16 * (groups - 1))
        lo = core * kgroups // 16
        sbo = 16 * int(rng.integers(lo, max(lo, min(top, (1 << 14) - 1)) + 1))
    out = replace(layout, leading_byte_offset=lbo, stride_byte_offset=sbo)
    try:
        last = tile_footprint(out, mn, k)[2]          # the last element's bit offset
    except SpecError:                                  # elements collide
        return layout
    return layout if last // 8 > PAD_IMAGE_LIMIT else out


@functools.lru_cache(maxsize=64)
def _rows_by_cta(layout, lane_offset: int):
    """{cta: (lanes, row indices)} of the row-per-lane operands (A, metadata) (§9.7.16.10.5).
    Once per data-path layout and lane alignment (arrays read-only; ``row_lanes`` reads no spec
    question)."""
    where = TO.row_lanes(layout, lane_offset)
    out = {c: (where[where[:, 0] == c, 1], np.nonzero(where[:, 0] == c)[0]) for c in range(layout.cta_group)}
    for lanes, rows in out.values():
        lanes.flags.writeable = rows.flags.writeable = False
    return out


def _a_region(layout, op, logical, ctas: int, rng, lane_offset: int = 0) -> list[np.ndarray]:
    """Per-CTA ``[128, ncols]`` regions with A's rows where the MMA reads them: the lanes of D[i][0],
    and for the .ws Layouts E/G under ``Q-WS-A-LANES=own-quarter`` every lane quarter of D's row i
    (``reference.tmem_mma_operands.a_row_lanes``), block ``b`` holding ``logical.a_blocks[b]`` if given."""
    groups = _a_rows_by_cta(layout, lane_offset, reading("Q-WS-A-LANES"))
    mats = logical.a_blocks or (logical.a,) * len(groups)
    if len(mats) != len(groups):
        raise ValueError(f"a_blocks expects {len(groups)} matrices (one per column block), but got {len(mats)}")
    out = [V.random_words(rng, (LANES, TO.a_columns(op.kind, op.a_type, logical.a.shape[1]))) for _ in range(ctas)]
    for placed, mat in zip(groups, mats, strict=True):
        cells = TO.pack_a(op.kind, op.a_type, mat)
        for c in range(ctas):
            lanes, rows = placed[c]
            out[c][lanes] = cells[rows]
    return out


@functools.lru_cache(maxsize=64)
def _a_rows_by_cta(layout, lane_offset: int, ws_reading: str):
    """Per column block of ``reference.tmem_mma_operands.a_row_lanes``: {cta: (lanes, row indices)};
    once per data-path layout, lane alignment and reading of spec question Q-WS-A-LANES (read-only)."""
    with following({"Q-WS-A-LANES": ws_reading}):
        groups = TO.a_row_lanes(layout, lane_offset)
    out = []
    for where in groups:
        per_cta = {}
        for c in range(layout.cta_group):
            mine = where[:, 0] == c
            per_cta[c] = (where[mine, 1], np.nonzero(mine)[0])
            per_cta[c][0].flags.writeable = per_cta[c][1].flags.writeable = False
        out.append(per_cta)
    return tuple(out)


def _row_region(layout, cells: np.ndarray, ctas: int, rng, lane_offset: int = 0) -> list[np.ndarray]:
    """Per-CTA ``[128, ncols]`` regions with row i of ``cells`` in the lane of D[i][0]."""
    out = []
    placed = _rows_by_cta(layout, lane_offset)
    for c in range(ctas):
        region = V.random_words(rng, (LANES, cells.shape[1]))
        lanes, rows = placed[c]
        region[lanes] = cells[rows]
        out.append(region)
    return out


def _scale_region(codes: np.ndarray, scale_id: int, rng, by_half: bool = False) -> np.ndarray:
    """Scale factors at byte ``scale_id`` of their cells; the other bytes random (same in every quarter).
    ``by_half``: B's halves in quarters 0-1 and 2-3 (spec question Q-SFB-2X2)."""
    cells = TO.pack_scale_factors(codes, scale_id, by_half)
    noise = np.tile(V.random_words(rng, (32, cells.shape[1])), (4, 1)) & _unread_scale_bits(
        np.shape(codes), scale_id, by_half, reading("Q-K96-SFW"))
    return cells | noise


@functools.lru_cache(maxsize=256)
def _unread_scale_bits(shape: tuple[int, int], scale_id: int, by_half: bool, k96_reading: str) -> np.ndarray:
    """The cell bits an MMA does not read of ``shape`` scale factors at ``scale_id`` (``~`` the cells
    of all-0xFF codes); once per arguments and reading of spec question Q-K96-SFW, which places
    the factors past byte 3 (read-only)."""
    with following({"Q-K96-SFW": k96_reading}):
        out = ~TO.pack_scale_factors(np.full(shape, 0xFF), scale_id, by_half)
    out.flags.writeable = False
    return out


def d_region(op: MmaOp, c_codes: np.ndarray, rng, lane_offset: int = 0, column: int = D_COL) -> TmemRegion:
    """The D region before the MMA: C at its data-path cells, random words elsewhere."""
    layout = layout_for(op.m, op.cta_group, sparse=op.sparse, ws=op.ws)
    ncols = columns_used(layout, op.n)
    before = V.random_words(rng, (op.cta_group, LANES, ncols))
    before.reshape(-1)[_d_cells_in_region(layout, op.n, lane_offset, ncols)] = np.asarray(c_codes).astype(np.uint32).reshape(-1)
    return TmemRegion(column, before, _all_known(before.shape))


@functools.lru_cache(maxsize=512)
def _d_cells_in_region(layout, n: int, lane_offset: int, ncols: int):
    """Where D[i][j] (row-major) lies in the flattened ``[cta_group, 128, ncols]`` D region:
    ``datapath_layouts.d_flat_index`` raveled (read-only), or the slice it equals when D fills
    consecutive cells in row-major order (the 4x1 Layouts A and D: a copy instead of a scatter).
    Once per layout, N, lane alignment and region width."""
    flat = d_flat_index(layout, n, lane_offset, ncols).reshape(-1)
    first = int(flat[0])
    if (flat == np.arange(first, first + flat.size)).all():
        return slice(first, first + flat.size)
    return flat


@functools.lru_cache(maxsize=256)
def _all_known(shape: tuple[int, ...]) -> np.ndarray:
    """An all-True ``known`` mask of ``shape`` (read-only, once per shape: every cell preloaded)."""
    out = np.ones(shape, dtype=bool)
    out.flags.writeable = False
    return out


def place_mma(p, logical: MmaLogical, rng, *, blocks: InBlocks | None = None, preload_a: bool = True,
              extra_smem=None, placed: bool = False) -> tuple[dict, InBlocks, Preloads, TmemRegion]:
    """Record fields, in blocks and preloads of an MMA (shared with the synchronization patterns).

    ``preload_a=False``: A in Tensor Memory is left to the kernel (a tcgen05.cp); ``extra_smem(staging)``
    stages more shared memory after A and B and returns record fields. ``placed``: Tensor Memory
    columns from :func:`tmem_columns` (else :data:`FIXED_COLUMNS`); the lane alignment of D, A and
    the metadata is ``logical.lane_offset``.
    """
    op = logical.op
    cg = op.cta_group
    layout = layout_for(op.m, cg, sparse=op.sparse, ws=op.ws)
    mc, nc = op.m // cg, op.n // cg
    blocks = blocks or InBlocks(cg)
    rec: dict = {"idesc": p["idesc"], "flags": R.FLAG_ENABLE_INPUT_D if op.enable_input_d else 0}
    stagings = [Staging() for _ in range(cg)]
    absolute = p.get("lbo_mode") == "absolute"        # both smem operands (K-major 128B, _row_valid)
    lbo_set = p.get("lbo_mode") == "relative_lbo_set"
    if absolute:
        rec["flags"] |= R.FLAG_B_LBO_ABSOLUTE | (R.FLAG_A_LBO_ABSOLUTE if p["a_operand"] != "tmem" else 0)
    tile_seed = int(rng.integers(1 << 31))
    tiles = np.random.default_rng(tile_seed)
    tiles_start = tiles.bit_generator.state
    for c, st in enumerate(stagings):
        tiles.bit_generator.state = tiles_start        # the same placement in every CTA (one descriptor)
        if p["a_operand"] != "tmem":
            rec["a_desc"] = _smem_tile(st, p["a_operand"], op.a_type, op.kind, logical.a[c * mc:(c + 1) * mc], tiles,
                                       absolute=absolute, lbo_set=lbo_set)
        cols = slice(c * nc, (c + 1) * nc) if cg == 2 else slice(None)
        rec["b_desc"] = _smem_tile(st, p["b_layout"], op.b_type, op.kind, logical.b[:, cols].T, tiles,
                                   absolute=absolute, lbo_set=lbo_set)
        if extra_smem is not None:
            rec.update(extra_smem(st))
    smem = [st.padded() for st in stagings]
    rec["smem_bytes"] = max(len(s) for s in smem)
    rec["smem_src"] = blocks.add(smem, align=1024)      # each CTA's image, zero-padded to the longest
    # absolute leading-dimension mode: the image always moved up (the top for half the cases), so the
    # absolute LBOs (continuation addresses, §9.7.16.3.1.2) set the LBO bits 28-29 (addresses
    # >= 64 KiB) that relative LBOs never reach (field coverage, issue 15)
    relocate(rec, high_shift(rec["smem_bytes"], tile_seed + 1, always_up=absolute))
    lane = logical.lane_offset
    region = d_region(op, logical.c, rng, lane)
    tmem = {"d": list(region.before)}
    if p["a_operand"] == "tmem" and preload_a:
        tmem["a"] = _a_region(layout, op, logical, cg, rng, lane)
    if op.sparse:
        cells = TO.pack_metadata(op.kind, logical.meta, 0 if op.block_scaled else op.sparsity_selector,
                                 rows_per_cta=op.m // cg)
        garbage = V.random_words(rng, cells.shape)
        first, _ = TO.metadata_cells(op.kind, 0 if op.block_scaled else op.sparsity_selector)
        cells[:, :first] = garbage[:, :first]          # sub-columns the selector does not pick
        tmem["meta"] = _row_region(layout, cells, cg, rng, lane)
    if op.block_scaled:
        tmem["sfa"] = [_scale_region(logical.scale_a[c * mc:(c + 1) * mc], op.a_scale_id, rng) for c in range(cg)]
        parts = TO.scale_b_parts(op.n, cg)          # spec question Q-SFB-2CTA: all N in each CTA, or halves
        halves = TO.scale_b_by_half(op.m, cg)          # spec question Q-SFB-2X2: replicated, or by data-path half
        sfb = [_scale_region(logical.scale_b.T[first:first + ncols], op.b_scale_id, rng, halves)
               for _, first, ncols in parts]
        tmem["sfb"] = sfb * cg if len(sfb) == 1 else sfb
    cols = FIXED_COLUMNS
    if placed:
        cols = tmem_columns({k: v[0].shape[1] for k, v in tmem.items()}, rng)
    region = replace(region, column=cols.d)
    pre = Preloads(blocks)
    for key, cells in tmem.items():
        pre.add(getattr(cols, key), cells)
    rec.update(tm_d=lane << 16 | cols.d, tm_a=lane << 16 | cols.a, tm_sfa=cols.sfa, tm_sfb=cols.sfb,
               tm_meta=lane << 16 | cols.meta)
    rec["preload"] = pre.record()
    rec["readback"] = [cols.d, region.ncols]
    if op.disable_output_lane is not None:
        rec["dol"] = list(op.disable_output_lane)
    if op.zero_column_mask is not None:
        rec["zcm_desc"] = op.zero_column_mask.encode()
    return rec, blocks, pre, region


def untestable_reason(p) -> str | None:
    """Why an MMA case cannot get a defined expected result, or None (every tcgen05.mma case has one)."""
    return None


def mma_inputs(case, rng, mode: str) -> CaseInputs:
    p = case.params
    why = untestable_reason(p)
    if why:
        raise Untestable(why)
    op = mma_op(p, case.case_id)
    if T.mma_k(op.kind, op.sparse, k96=op.k96) != p["k"]:
        raise Untestable(f"case K {p['k']} differs from Table 39's K for kind::{op.kind}")
    logical = logical_operands(op, rng, mode)
    logical = replace(logical, lane_offset=lane_alignment(op, rng))
    rec, blocks, _, region = place_mma(p, logical, rng, placed=True)
    decisions = ()
    if op.sparse:
        decisions += ("sparsity metadata in Tensor Memory (reference.tmem_mma_operands)",)
    if op.block_scaled:
        decisions += ("scale factors in Tensor Memory: CUTLASS tmem_sf_frg (reference.tmem_mma_operands)",)
    if op.k96:
        decisions += ("K = 96 scale factors past byte 3 continue in the next column group: CUTLASS sm103 "
                      "(reference.tmem_mma_operands)",)
    if p["a_operand"] == "tmem":
        decisions += ("A in Tensor Memory: row i in the lane of D[i][0] (reference.tmem_mma_operands)",)
    return CaseInputs(rec, blocks.blocks(), LANES * region.ncols, {"mma": logical, "region": region}, decisions)
