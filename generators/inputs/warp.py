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
