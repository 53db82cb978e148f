"""Inputs of warp-level ``mma.sp`` cases (§9.7.14.6.1; fragments §9.7.14.6.2).

Logical operands (16 x K/2 compressed A, metadata, K x 8 B, 16 x 8 C) are exact by construction
(``values.py``) and reach the registers through ``reference.warp_mma_fragments.scatter`` and
``reference.warp_sparse.warp_metadata_registers``. Lanes the sparsity selector does not name get
random metadata registers (the instruction must not read them). Metadata nibbles: the six ordered
pairs for ``mma.sp::ordered_metadata``; every pair of distinct indices for plain ``mma.sp``, whose
text calls only the four equal-index values invalid. Register order per thread: A, B, C, E, then
for the block-scaled kinds scale-a-data, scale-b-data.

Block-scaled kinds (``.kind::mxf8f6f4/mxf4/mxf4nvf4.block_scale``, §9.7.14.3): scale codes are
powers of two near 1 (``values.scale_codes``; ue4m3 with its ignored bit 7 set at random), so D
stays exact. The selectors ``{byte-id, thread-id}`` are runtime values (case record ``aux[0..3]``:
byte-id-a, thread-id-a, byte-id-b, thread-id-b) drawn from Table 37, byte-id-b different from
byte-id-a whenever the table allows two values (a device that swaps or ignores one is seen). The
factors reach the registers through ``reference.warp_block_scaling.place_scales``; every other
byte of the scale registers, and the registers of lanes the selectors do not name, are random.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from generators.inputs import values as V
from generators.inputs.block import InBlocks, register_bytes
from generators.inputs.types import CaseInputs
from reference import sparsity as SP
from reference import warp_block_scaling as WB
from reference import warp_mma_fragments as WF
from reference.tmem_packing import container_byte
from reference.warp_sparse import (
    F8F6F4_TYPES,
    metadata_owner_lanes,
    warp_metadata_registers,
    warp_sparse_shape,
)

# bits per element as the fragments hold them (f8f6f4 4/6-bit types: 8-bit containers)
FRAGMENT_BITS = {"f16": 16, "bf16": 16, "tf32": 32, "s8": 8, "u8": 8, "s4": 4, "u4": 4,
                 "e4m3": 8, "e5m2": 8, "e3m2": 8, "e2m3": 8, "e2m1": 8}
ALL_DISTINCT_2_4 = np.array([n for n in range(16) if (n & 3) != (n >> 2)], dtype=np.uint8)
ORDERED_2_4 = np.array(sorted(SP.ORDERED_NIBBLES), dtype=np.uint8)
TF32_NIBBLES = np.array(sorted(SP.TF32_NIBBLES), dtype=np.uint8)
PACKED_FP4_KINDS = ("mxf4", "mxf4nvf4")          # e2m1 packed 8 per register, 4:8 pair sparsity


@dataclass(frozen=True)
class WarpScales:
    """Scale factors of a block-scaled warp-level MMA: codes scale_A (16 x SF), scale_B (SF x 8)."""

    scale_type: str
    a: np.ndarray
    b: np.ndarray
    selectors: WB.ScaleSelectors


@dataclass(frozen=True)
class WarpLogical:
    shape: str
    k: int
    a_type: str
    b_type: str
    c_type: str
    d_type: str
    a: np.ndarray           # 16 x K/2 codes
    meta: np.ndarray        # 16 x K/chunk nibbles
    b: np.ndarray           # K x 8 codes
    c: np.ndarray           # 16 x 8 codes
    satfinite: bool
    pattern: SP.SparsePattern
    context: str
    scales: WarpScales | None = None


def _pattern(a_type: str, kind: str | None) -> SP.SparsePattern:
    if a_type == "tf32":
        return SP.PATTERN_1_2
    return SP.PATTERN_4_8 if a_type in ("s4", "u4") or kind in PACKED_FP4_KINDS else SP.PATTERN_2_4


def _fragment_bits(fmt: str, kind: str | None) -> int:
    return 4 if kind in PACKED_FP4_KINDS else FRAGMENT_BITS[fmt]


def _fragment_codes(fmt: str, codes: np.ndarray, kind: str | None) -> np.ndarray:
    """Codes as the registers carry them (f8f6f4 6/4-bit types in 8-bit containers)."""
    if fmt in F8F6F4_TYPES and fmt not in ("e4m3", "e5m2") and kind not in PACKED_FP4_KINDS:
        return container_byte(fmt, codes).astype(np.uint64)
    return codes


def _selectors(sf: int, rng) -> WB.ScaleSelectors:
    """Table 37 values; byte-id-b differs from byte-id-a where two values are legal."""
    ids = WB.BYTE_IDS[sf]
    byte_a = int(rng.choice(ids))
    byte_b = int(rng.choice([b for b in ids if b != byte_a] or [byte_a]))
    return WB.ScaleSelectors(byte_a, int(rng.choice(WB.THREAD_IDS_A)), byte_b, int(rng.choice(WB.THREAD_IDS_B)))


def _scales(p, rng) -> tuple[WarpScales, np.ndarray]:
    """The scale factors and the (32, 2) scale-a-data / scale-b-data registers."""
    sf = WB.warp_scale_factor_count(p["kind"], p["scale_vec"], p["scale_type"])
    sel = _selectors(sf, rng)
    noise = p["scale_type"] == "ue4m3"
    a = V.scale_codes(p["scale_type"], (16, sf), rng, sign_noise=noise)
    b = V.scale_codes(p["scale_type"], (sf, 8), rng, sign_noise=noise)
    a, b = special_scales(p["scale_type"], a, b, int(rng.integers(1 << 16)))
    ra = WB.place_scales(V.random_words(rng, 32), a, WB.scale_a_sources(sf, sel))
    rb = WB.place_scales(V.random_words(rng, 32), b, WB.scale_b_sources(sf, sel))
    return WarpScales(p["scale_type"], a, b, sel), np.stack([ra, rb], axis=1)


def _accumulator(c_type: str, satfinite: bool, pool_limit: float, rng) -> np.ndarray:
    if c_type == "s32":
        c = rng.integers(-64, 65, size=(16, 8)).astype(np.int64)
        if satfinite:
            near = rng.random((16, 8)) < 0.25
            c = np.where(near, np.where(rng.random((16, 8)) < 0.5, (1 << 31) - 1 - c % 50, -(1 << 31) + c % 50), c)
        return (c & 0xFFFFFFFF).astype(np.uint64)
    return V.accumulator_codes(c_type, (16, 8), rng, limit=pool_limit)


# rows of the 16 x 8 tile that carry special values (special_values); the column of B that is all
# +0 (its scale factors carry the special scale values, special_scales)
B_ROW, C_ROW, A_ROWS = 6, 7, 8
ZERO_ROWS, ZERO_COLUMNS = (C_ROW, 14), (3, 4)


def special_scales(scale_type: str, a: np.ndarray, b: np.ndarray, turn: int) -> tuple[np.ndarray, np.ndarray]:
    """Scale factors with their special value classes where they multiply only zeros (issue 15):
    scale_A of rows ZERO_ROWS (A all +0 there) and scale_B of columns ZERO_COLUMNS (B all +0
    there), so D = C whatever the scale (NaN scales: NaN). The classes go round the slots from
    ``turn`` on (all of them in every case with 3 or more scale blocks)."""
    specials = list(V.class_codes(scale_type).values())
    a, b = a.copy(), b.copy()
    sf = a.shape[1]
    for i, (row, blk) in enumerate((r, j) for r in ZERO_ROWS for j in range(sf)):
        a[row, blk] = specials[(turn + i) % len(specials)]
    for i, (col, blk) in enumerate((c, j) for c in ZERO_COLUMNS for j in range(sf)):
        b[blk, col] = specials[(turn + i + 1) % len(specials)]
    return a, b


def _nibble_with(pat: SP.SparsePattern, pool: np.ndarray, position: int, keep: bool) -> int:
    """The first nibble of ``pool`` that keeps (``keep``) or prunes chunk ``position``."""
    kept = SP.kept_positions(pat, pool[None, :])[0]
    return int(pool[np.flatnonzero((kept == position).any(axis=1) == keep)[0]])


def special_values(a_type, b_type, c_type, pat, pool, a, meta, b, c):
    """Special value classes (``values.class_codes``) in exactly computable places (issue 15).

    Float A/B: every row keeps element 0 of chunk 0 (B row 0, +-Inf and NaN in columns 5-7, so no
    Inf meets a pruned 0: dense and gathered readings agree) and only row B_ROW keeps element 0 of
    chunk 1 (B row k*: the finite specials, D[B_ROW] = 1 x B[k*]); rows A_ROWS.. each hold one A
    special (max, -max, min normal, +-Inf, NaN) at their kept element of chunk 2 against a B row of
    1s, all other A elements of those rows +0 and C 0, so D = the special; +0 and -0 in A and B among
    the ordinary rows, -0 in C[0, 0] (added to nonzero products). C_ROW: A all +0 and the C specials,
    so D = C (s32: its maximum and minimum); row 14 of A and columns ZERO_COLUMNS of B are all +0
    too (their scale factors carry special values, :func:`special_scales`). Where a row or
    column of D would be a sum of zeros only, C is made nonzero (the sign of an all-zero sum is
    where IEEE and the hardware model differ, ``values.py``). Subnormal inputs are left out."""
    a, meta, b, c = a.copy(), meta.copy(), b.copy(), c.copy()
    chunk, kept = pat.chunk, pat.kept
    floats = a_type not in V.INT_POOLS
    if floats and meta.shape[1] >= 3:
        meta[:, 0] = _nibble_with(pat, pool, 0, True)
        meta[:, 1] = _nibble_with(pat, pool, 0, False)
        meta[B_ROW, 1] = _nibble_with(pat, pool, 0, True)
        pos = SP.kept_positions(pat, meta)                          # (16, chunks, kept)
        one_a, one_b = V.element_codes(a_type, [1.0])[0], V.element_codes(b_type, [1.0])[0]
        sa = {n: v for n, v in V.class_codes(a_type).items() if n not in ("+0", "-0", "subnormal")}
        sb = V.class_codes(b_type)
        # B row k*: finite specials seen through D[B_ROW] = 1 x B[k*]
        a[B_ROW] = 0
        a[B_ROW, kept + int(np.flatnonzero(pos[B_ROW, 1] == 0)[0])] = one_a
        c[B_ROW] = 0
        finite_b = [sb[n] for n in ("max normal", "-max normal", "min normal") if n in sb]
        b[chunk, :len(finite_b)] = finite_b
        # B row 0 (kept in every row): Inf and NaN in columns 5-7
        b[0, 5:5 + len([n for n in ("+Inf", "-Inf", "NaN") if n in sb])] = [sb[n] for n in ("+Inf", "-Inf", "NaN")
                                                                           if n in sb]
        for i, code in enumerate(sa.values()):                        # A specials, one per row
            r = A_ROWS + i
            a[r] = 0
            a[r, 2 * kept] = code
            b[2 * chunk + pos[r, 2, 0]] = one_b
            c[r] = 0
        a[0, 1], a[1, 1] = V.class_codes(a_type)["-0"], 0
        b[1, 2], b[2, 3] = sb["-0"], 0
    one_c = V.element_codes(c_type, [1.0])[0]
    for col in ZERO_COLUMNS:
        b[:, col] = 0
        c[:, col] = np.where(c[:, col] == 0, one_c, c[:, col])          # no all-zero sums
    for row in ZERO_ROWS:
        a[row] = 0
        c[row] = np.where(c[row] == 0, one_c, c[row])
    if c_type == "s32":
        c[C_ROW, :2] = [(1 << 31) - 1, 1 << 31]
    else:
        sc = V.class_codes(c_type)
        c[C_ROW, :6] = [sc[n] for n in ("max normal", "-max normal", "min normal", "+Inf", "-Inf", "NaN")]
        c[0, 0] = sc["-0"]
    return a, meta, b, c


def warp_inputs(case, rng) -> CaseInputs:
    p = case.params
    kind = p["kind"]
    k = int(p["shape"].split("k")[1])
    fam = warp_sparse_shape(p["shape"], "mxf4:e2m1" if kind in PACKED_FP4_KINDS else p["a_type"])
    pat = _pattern(p["a_type"], kind)
    pool = V.NARROW if p["d_type"] == "f16" else V.WIDE
    a = V.operand_codes(p["a_type"], (16, k // 2), rng, pool, tf32_noise=True)
    b = V.operand_codes(p["b_type"], (k, 8), rng, pool, tf32_noise=True)
    context = "mma.sp::ordered_metadata" if p["ordered_metadata"] else "mma.sp"
    nibbles = TF32_NIBBLES if pat.kept == 1 else (ORDERED_2_4 if p["ordered_metadata"] else ALL_DISTINCT_2_4)
    meta = rng.choice(nibbles, size=(16, k // pat.chunk))
    c = _accumulator(p["c_type"], p["satfinite"], 8.0, rng)
    a, meta, b, c = special_values(p["a_type"], p["b_type"], p["c_type"], pat, nibbles, a, meta, b, c)
    scales, scale_regs = _scales(p, rng) if kind in WB.SCALE_VECS else (None, np.zeros((32, 0), dtype=np.uint32))
    logical = WarpLogical(p["shape"], k, p["a_type"], p["b_type"], p["c_type"], p["d_type"], a, meta, b, c,
                          p["satfinite"], pat, context, scales)
    fa = WF.a_fragment(k // 2, _fragment_bits(p["a_type"], kind))
    fb = WF.b_fragment(k, _fragment_bits(p["b_type"], kind))
    fc = WF.cd_fragment(16 if p["c_type"] == "f16" else 32)
    e = warp_metadata_registers(fam, meta, p["selector"])
    owners = np.zeros(32, dtype=bool)
    owners[list(metadata_owner_lanes(fam, p["selector"]))] = True
    e = np.where(owners, e, V.random_words(rng, 32))
    regs = np.concatenate([WF.scatter(fa, _fragment_codes(p["a_type"], a, kind)),
                           WF.scatter(fb, _fragment_codes(p["b_type"], b, kind)),
                           WF.scatter(fc, c), e[:, None], scale_regs], axis=1)
    blocks = InBlocks(1)
    rec = {"regs_src": blocks.add(register_bytes(regs))}
    decisions = ("warp-level mma.sp metadata register layout (reference.warp_sparse)",)
    if scales is not None:
        sel = scales.selectors
        rec["aux"] = [sel.byte_id_a, sel.thread_id_a, sel.byte_id_b, sel.thread_id_b]
        decisions += ("warp-level scale-factor lanes and bytes (reference.warp_block_scaling, CUTLASS SM120 SFA/SFB "
                      "layouts)",)
    d_regs = 2 if p["d_type"] == "f16" else 4
    return CaseInputs(rec, blocks.blocks(), 32 * d_regs, {"warp": logical}, decisions)
