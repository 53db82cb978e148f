"""Inputs of warp-level ``mma.sp`` cases (§9.7.14.6.1; fragments §9.7.14.6.2).

Logical operands (16 x K/2 compressed A, metadata, K x 8 B, 16 x 8 C) are exact by construction
(``values.py``) and reach the registers through ``reference.warp_mma_fragments.scatter`` and
``reference.warp_sparse.warp_metadata_registers``. Lanes the sparsity selector does not name get
random metadata registers (the instruction must not read them). Metadata nibbles: the six ordered
pairs for ``mma.sp::ordered_metadata``; every pair of distinct indices for plain ``mma.sp``, whose
text calls only the four equal-index values invalid. Register order per thread: A, B, C, E.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from generators.inputs import values as V
from generators.inputs.block import InBlocks, register_bytes
from generators.inputs.types import CaseInputs, Untestable
from reference import sparsity as SP
from reference import warp_mma_fragments as WF
from reference.tmem_packing import container_byte
from reference.warp_sparse import F8F6F4_TYPES, warp_metadata_registers, warp_sparse_shape

# bits per element as the fragments hold them (f8f6f4 4/6-bit types: 8-bit containers)
FRAGMENT_BITS = {"f16": 16, "bf16": 16, "tf32": 32, "s8": 8, "u8": 8, "s4": 4, "u4": 4,
                 "e4m3": 8, "e5m2": 8, "e3m2": 8, "e2m3": 8, "e2m1": 8}
ALL_DISTINCT_2_4 = np.array([n for n in range(16) if (n & 3) != (n >> 2)], dtype=np.uint8)
ORDERED_2_4 = np.array(sorted(SP.ORDERED_NIBBLES), dtype=np.uint8)
TF32_NIBBLES = np.array(sorted(SP.TF32_NIBBLES), dtype=np.uint8)


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


def _pattern(a_type: str) -> SP.SparsePattern:
    if a_type == "tf32":
        return SP.PATTERN_1_2
    return SP.PATTERN_4_8 if a_type in ("s4", "u4") else SP.PATTERN_2_4


def _fragment_codes(fmt: str, codes: np.ndarray) -> np.ndarray:
    """Codes as the registers carry them (f8f6f4 6/4-bit types in 8-bit containers)."""
    if fmt in F8F6F4_TYPES and fmt not in ("e4m3", "e5m2"):
        return container_byte(fmt, codes).astype(np.uint64)
    return codes


def _accumulator(c_type: str, satfinite: bool, pool_limit: float, rng) -> np.ndarray:
    if c_type == "s32":
        c = rng.integers(-64, 65, size=(16, 8)).astype(np.int64)
        if satfinite:
            near = rng.random((16, 8)) < 0.25
            c = np.where(near, np.where(rng.random((16, 8)) < 0.5, (1 << 31) - 1 - c % 50, -(1 << 31) + c % 50), c)
        return (c & 0xFFFFFFFF).astype(np.uint64)
    return V.element_codes(c_type, V.accumulator_values((16, 8), rng, limit=pool_limit))


# rows of the 16 x 8 tile that carry special values (special_values)
B_ROW, C_ROW, A_ROWS = 6, 7, 8


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
    the ordinary rows, -0 in C where the row's sum is nonzero. C_ROW: A all +0 and the C specials,
    so D = C (s32: its maximum and minimum). Subnormal inputs are left out (``values.py``)."""
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
    a[C_ROW] = 0
    if c_type == "s32":
        c[C_ROW, :2] = [(1 << 31) - 1, 1 << 31]
    else:
        sc = V.class_codes(c_type)
        c[C_ROW, :6] = [sc[n] for n in ("max normal", "-max normal", "min normal", "+Inf", "-Inf", "NaN")]
        c[0, 0] = sc["-0"]
    return a, meta, b, c


def warp_inputs(case, rng) -> CaseInputs:
    p = case.params
    if p["kind"] not in (None, "f8f6f4"):
        raise Untestable(f"warp-level block-scaled mma.sp (.kind::{p['kind']}): the scale-factor registers "
                         "(byte-id / thread-id selection) are not modelled by the reference")
    k = int(p["shape"].split("k")[1])
    fam = warp_sparse_shape(p["shape"], p["a_type"])
    pat = _pattern(p["a_type"])
    pool = V.NARROW if p["d_type"] == "f16" else V.WIDE
    a = V.element_codes(p["a_type"], V.element_values(p["a_type"], (16, k // 2), rng, pool), rng, tf32_noise=True)
    b = V.element_codes(p["b_type"], V.element_values(p["b_type"], (k, 8), rng, pool), rng, tf32_noise=True)
    context = "mma.sp::ordered_metadata" if p["ordered_metadata"] else "mma.sp"
    nibbles = TF32_NIBBLES if pat.kept == 1 else (ORDERED_2_4 if p["ordered_metadata"] else ALL_DISTINCT_2_4)
    meta = rng.choice(nibbles, size=(16, k // pat.chunk))
    c = _accumulator(p["c_type"], p["satfinite"], 8.0, rng)
    a, meta, b, c = special_values(p["a_type"], p["b_type"], p["c_type"], pat, nibbles, a, meta, b, c)
    logical = WarpLogical(p["shape"], k, p["a_type"], p["b_type"], p["c_type"], p["d_type"], a, meta, b, c,
                          p["satfinite"], pat, context)
    fa = WF.a_fragment(k // 2, FRAGMENT_BITS[p["a_type"]])
    fb = WF.b_fragment(k, FRAGMENT_BITS[p["b_type"]])
    fc = WF.cd_fragment(16 if p["c_type"] == "f16" else 32)
    e = warp_metadata_registers(fam, meta, p["selector"])
    owners = np.zeros(32, dtype=bool)
    from reference.warp_sparse import metadata_owner_lanes
    owners[list(metadata_owner_lanes(fam, p["selector"]))] = True
    e = np.where(owners, e, V.random_words(rng, 32))
    regs = np.concatenate([WF.scatter(fa, _fragment_codes(p["a_type"], a)), WF.scatter(fb, _fragment_codes(p["b_type"], b)),
                           WF.scatter(fc, c), e[:, None]], axis=1)
    blocks = InBlocks(1)
    rec = {"regs_src": blocks.add(register_bytes(regs))}
    d_regs = 2 if p["d_type"] == "f16" else 4
    decisions = ("warp-level mma.sp metadata register layout (reference.warp_sparse)",)
    return CaseInputs(rec, blocks.blocks(), 32 * d_regs, {"warp": logical}, decisions)
