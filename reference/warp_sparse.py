"""Warp-level ``mma.sp`` metadata: which threads hold it and how (PTX ISA §9.7.14.6.1, §9.7.14.6.2).

The metadata of a 16 x K sparse A lives in one 32-bit register per thread; a *sparsity selector*
names which threads of each group of four consecutive threads (a "quad": lanes 4q .. 4q+3,
``groupID`` q = lane >> 2) supply it. The text (§9.7.14.6.1) fixes how many:

    shape       A types                         threads per quad   selector
    m16n8k16    f16, bf16                       1                  0..3
    m16n8k32    f16, bf16                       2 (T0,T1 | T2,T3)  0..1
    m16n8k8     tf32                            1                  0..3
    m16n8k16    tf32                            2                  0..1
    m16n8k32    s8, u8                          2                  0..1
    m16n8k64    s8, u8                          4                  0
    m16n8k64    s4, u4                          2                  0..1
    m16n8k128   s4, u4                          4                  0
    m16n8k64    e4m3 e5m2 e3m2 e2m3 e2m1 (f8f6f4)  4               0
    m16n8k128   e2m1 (mxf4, mxf4nvf4)           4                  0

The register contents come from figures (missing here). One rule reproduces every public source:
A is consumed in *steps* of 32 bytes of dense A per row (K_step = 256 / element bits: 16 for f16,
8 for tf32, 32 for 8-bit types incl. f8f6f4's 6/4-bit containers, 64 for packed 4-bit). A step's
metadata is 16 bits per row (f16, tf32) or 32 bits per row (8-bit 2:4, 4-bit 4:8 pairs):

* 16 bits per row: one thread per step holds rows q and q+8, row q in bits 0-15, row q+8 in
  bits 16-31;
* 32 bits per row: two threads per step, the first holds row q, the second row q+8;

and the j-th selected thread of a quad takes step j (16-bit case) or step j // 2, row half j % 2
(32-bit case). Within a row's bits the chunk nibbles run from the LSB in K order
(:func:`reference.sparsity.pack_metadata_words`).

Sources: f16 m16n8k32 -- LLVM MLIR test ``sparse-mma-2-4-f16.mlir`` (lanes 2i / 2i+1 hold K columns
0-15 / 16-31, the first 8 rows' 16 bits low, the second 8 rows' high); f8f6f4 m16n8k64 and e2m1
m16n8k128 -- CuTe ``mma_traits_sm120_sparse.hpp`` ``ELayout`` (lane & 1 -> row + 8, lane >> 1 ->
second half of K); f16 k32, tf32 k16 and 8-bit k64 per warp -- CuTe
``mma_traits_sm90_gmma_sparse.hpp`` ``ELayout_64x32/64x16/64x64`` (same structure per warp).
Inferred from the rule only (no public figure found): m16n8k32 s8/u8 and m16n8k64 s4/u4 (one
32-bit-per-row step: lane & 1 of the selected pair -> row half).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from reference.errors import SpecError, expects_but_got
from reference.sparsity import PATTERN_1_2, PATTERN_2_4, PATTERN_4_8, SparsePattern, pack_metadata_words

SECTION = "9.7.14.6.1"
ROWS = 16
LANES = 32


@dataclass(frozen=True)
class WarpSparseShape:
    """One warp-level ``mma.sp`` shape/type family and its metadata distribution."""

    shape: str
    types: tuple[str, ...]
    k: int
    element_bits: int          # bits per A element as consumed (f8f6f4 6/4-bit types: 8-bit containers)
    pattern: SparsePattern
    threads_per_quad: int      # from the §9.7.14.6.1 text

    @property
    def k_step(self) -> int:
        return 256 // self.element_bits

    @property
    def steps(self) -> int:
        return self.k // self.k_step

    @property
    def row_bits_per_step(self) -> int:
        return self.k_step // self.pattern.chunk * 4

    @property
    def threads_per_step(self) -> int:
        return 2 * self.row_bits_per_step // 32

    @property
    def selectors(self) -> tuple[int, ...]:
        return tuple(range(4 // self.threads_per_quad))


F8F6F4_TYPES = ("e4m3", "e5m2", "e3m2", "e2m3", "e2m1")

WARP_SPARSE_SHAPES: tuple[WarpSparseShape, ...] = (
    WarpSparseShape("m16n8k16", ("f16", "bf16"), 16, 16, PATTERN_2_4, 1),
    WarpSparseShape("m16n8k32", ("f16", "bf16"), 32, 16, PATTERN_2_4, 2),
    WarpSparseShape("m16n8k8", ("tf32",), 8, 32, PATTERN_1_2, 1),
    WarpSparseShape("m16n8k16", ("tf32",), 16, 32, PATTERN_1_2, 2),
    WarpSparseShape("m16n8k32", ("s8", "u8"), 32, 8, PATTERN_2_4, 2),
    WarpSparseShape("m16n8k64", ("s8", "u8"), 64, 8, PATTERN_2_4, 4),
    WarpSparseShape("m16n8k64", ("s4", "u4"), 64, 4, PATTERN_4_8, 2),
    WarpSparseShape("m16n8k128", ("s4", "u4"), 128, 4, PATTERN_4_8, 4),
    WarpSparseShape("m16n8k64", F8F6F4_TYPES, 64, 8, PATTERN_2_4, 4),
    WarpSparseShape("m16n8k128", ("mxf4:e2m1",), 128, 4, PATTERN_4_8, 4),
)


def warp_sparse_shape(shape: str, a_type: str) -> WarpSparseShape:
    """The family of ``mma.sp.<shape>`` with A type ``a_type`` (``"mxf4:e2m1"`` for the mxf4 kinds)."""
    for s in WARP_SPARSE_SHAPES:
        if s.shape == shape and a_type in s.types:
            return s
    legal = "; ".join(f"{s.shape} {'/'.join(s.types)}" for s in WARP_SPARSE_SHAPES)
    raise SpecError(SECTION, "mma.sp shapes", expects_but_got("shape and A type", legal, f"{shape} {a_type}"))


def _check_selector(s: WarpSparseShape, selector: int) -> None:
    if not isinstance(selector, int) or isinstance(selector, bool) or selector not in s.selectors:
        raise SpecError(SECTION, "sparsity selector", expects_but_got(
            f"sparsity selector of {s.shape} {'/'.join(s.types)}", f"one of {list(s.selectors)}", selector))


def metadata_slot(s: WarpSparseShape, lane: int, selector: int) -> tuple[int, ...] | None:
    """What lane ``lane`` supplies: None, or (step, rows...) -- the rows whose bits it holds, low first."""
    _check_selector(s, selector)
    q, t = lane >> 2, lane & 3
    first = selector * s.threads_per_quad
    j = t - first
    if not 0 <= j < s.threads_per_quad:
        return None
    if s.threads_per_step == 1:
        return (j, q, q + 8)
    return (j // 2, q + 8 * (j % 2))


def metadata_owner_lanes(s: WarpSparseShape, selector: int) -> tuple[int, ...]:
    """Lanes whose metadata register the instruction reads for this selector."""
    return tuple(lane for lane in range(LANES) if metadata_slot(s, lane, selector) is not None)


def _row_step_bits(s: WarpSparseShape, meta: np.ndarray) -> np.ndarray:
    """(16, steps) array of each row's metadata bits for each step (uint64)."""
    chunks_per_step = s.k_step // s.pattern.chunk
    words = pack_metadata_words(meta).astype(np.uint64)            # 32-bit words of 8 chunks
    nib_per_word = 8
    if chunks_per_step == nib_per_word:
        return words
    # 16-bit steps: two steps per 32-bit word
    lo, hi = words & np.uint64(0xFFFF), words >> np.uint64(16)
    return np.stack([lo, hi], axis=-1).reshape(ROWS, -1)[:, : s.steps]


def _check_meta(s: WarpSparseShape, meta) -> np.ndarray:
    nib = np.asarray(meta)
    want = (ROWS, s.k // s.pattern.chunk)
    if nib.shape != want:
        raise SpecError(SECTION, "metadata", expects_but_got(f"metadata nibbles of {s.shape}", f"shape {want}", nib.shape))
    return nib


def warp_metadata_registers(s: WarpSparseShape, meta, selector: int) -> np.ndarray:
    """The 32 lanes' metadata registers (uint32; 0 in lanes the instruction does not read)."""
    bits = _row_step_bits(s, _check_meta(s, meta))
    lanes, rows, steps, shifts = _register_plan(s, selector)
    regs = np.zeros(LANES, dtype=np.uint64)
    np.bitwise_or.at(regs, lanes, bits[rows, steps] << shifts)
    return regs.astype(np.uint32)


@functools.lru_cache(maxsize=None)
def _register_plan(s: WarpSparseShape, selector: int) -> tuple[np.ndarray, ...]:
    """(lane, row, step, shift) of every row's bits in a lane's metadata register
    (:func:`metadata_slot` of each lane; once per shape and selector, read-only)."""
    plan = []
    for lane in range(LANES):
        slot = metadata_slot(s, lane, selector)
        if slot is None:
            continue
        step, *rows = slot
        plan += [(lane, row, step, s.row_bits_per_step * i) for i, row in enumerate(rows)]
    out = tuple(np.array([p[f] for p in plan], dtype=np.int64 if f < 3 else np.uint64) for f in range(4))
    for arr in out:
        arr.setflags(write=False)
    return out


def warp_metadata_from_registers(s: WarpSparseShape, regs, selector: int) -> np.ndarray:
    """Logical metadata nibbles (16 x K/chunk) read back from the lanes' registers."""
    r = np.asarray(regs, dtype=np.uint64)
    if r.shape != (LANES,):
        raise SpecError(SECTION, "metadata", expects_but_got("metadata registers", "32 values", r.shape))
    width = s.row_bits_per_step
    bits = np.zeros((ROWS, s.steps), dtype=np.uint64)
    for lane in range(LANES):
        slot = metadata_slot(s, lane, selector)
        if slot is None:
            continue
        step, *rows = slot
        for i, row in enumerate(rows):
            bits[row, step] = (r[lane] >> np.uint64(width * i)) & np.uint64((1 << width) - 1)
    chunks_per_step = s.k_step // s.pattern.chunk
    shifts = (4 * np.arange(chunks_per_step, dtype=np.uint64))[None, None, :]
    nib = (bits[:, :, None] >> shifts) & np.uint64(15)
    return nib.reshape(ROWS, -1).astype(np.uint8)
