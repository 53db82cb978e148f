"""Structured sparsity of matrix A: metadata, compression and expansion (PTX ISA §9.7.16.10.8, §9.7.14.6.1).

A sparse MMA stores A (M x K) as M x K/2 kept elements plus metadata. The metadata is one 4-bit
value ("nibble") per chunk of each row; this module works on the *logical* metadata matrix
``meta[m, j]`` = nibble of chunk j of row m (placement in Tensor Memory or registers is elsewhere).

Granularities (§9.7.16.10.8 table; §9.7.14.6.1)::

    pattern  chunk  kept  unit   kinds / warp-level types
    1:2        2     1     1     tf32
    2:4        4     2     1     f16, bf16, f8f6f4, mxf8f6f4, i8 (s8/u8)
    4:8        8     4     2     mxf4, mxf4nvf4, s4/u4 (kept elements come in adjacent pairs)

Nibble of one chunk (bit 0 = LSB)::

     3   2   1   0
    +-------+-------+
    | idx1  | idx0  |   2:4 : kept element 0 sits at position idx0, element 1 at idx1
    +-------+-------+   4:8 : kept pair 0 at elements 2*idx0, 2*idx0+1; pair 1 at 2*idx1, 2*idx1+1
                        1:2 : 0b0100 -> kept element at position 0, 0b1110 -> position 1

The 1:2 reading treats a tf32 element as two 16-bit halves: 0b0100 names halves {0, 1} (element
0) and 0b1110 halves {2, 3} (element 1) -- the only two values the text calls meaningful.

Which nibbles are meaningful differs by instruction (``context``):

* ``"tcgen05"`` (§9.7.16.10.8.2/.3): 0b0100 0b1000 0b1100 0b1001 0b1101 0b0110 0b1110. The ordered
  six are VALID; 0b0110 (indices 2 then 1, out of order) is AMBIGUOUS -- NOTES.md item 4: decoded
  as "element 0 at 2, element 1 at 1" but never used in a pass/fail case. The rest are UNDEFINED.
* ``"mma.sp::ordered_metadata"`` (§9.7.14.6.1): the ordered six are VALID, the rest UNDEFINED.
* ``"mma.sp"`` (§9.7.14.6.1): every pair of distinct indices is VALID; 0b0000, 0b0101, 0b1010,
  0b1111 are "invalid values" (UNDEFINED).
* 1:2 in every context: 0b0100 and 0b1110 VALID, the rest UNDEFINED.

Packing of nibbles into 32-bit words (:func:`pack_metadata_words`): chunk j of a row sits at bits
4*(j % 8) .. 4*(j % 8)+3 of word j // 8, the first chunk in the lowest bits. Source: the
little-endian index storage described in LLVM's MLIR test
``mlir/test/Integration/Dialect/SparseTensor/GPU/CUDA/sparse-mma-2-4-f16.mlir`` (0x8888 = four
chunks with indices 0 and 2), and CuTe's metadata layouts (value index increases with K).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from reference import tables as T
from reference.errors import SpecError, expects_but_got
from reference.spec_questions import resolve

SECTION = "9.7.16.10.8"
WARP_SECTION = "9.7.14.6.1"

VALID, AMBIGUOUS, UNDEFINED = 0, 1, 2
STATUS_NAMES = ("valid", "spec-ambiguous", "undefined")
CONTEXTS = ("tcgen05", "mma.sp", "mma.sp::ordered_metadata")


@dataclass(frozen=True)
class SparsePattern:
    """A sparsity granularity: ``kept`` of every ``chunk`` elements, moved in units of ``unit``."""

    name: str
    chunk: int
    kept: int
    unit: int

    @property
    def positions(self) -> int:
        """Number of slots an index can name (4 for 2:4 and 4:8, 2 for 1:2)."""
        return self.chunk // self.unit


PATTERN_1_2 = SparsePattern("1:2", 2, 1, 1)
PATTERN_2_4 = SparsePattern("2:4", 4, 2, 1)
PATTERN_4_8 = SparsePattern("4:8", 8, 4, 2)

# §9.7.16.10.8 table (tcgen05.mma.sp kinds).
KIND_PATTERNS: dict[str, SparsePattern] = {
    "tf32": PATTERN_1_2, "f16": PATTERN_2_4, "f8f6f4": PATTERN_2_4, "mxf8f6f4": PATTERN_2_4,
    "i8": PATTERN_2_4, "mxf4": PATTERN_4_8, "mxf4nvf4": PATTERN_4_8,
}

# 2:4 nibbles with idx0 < idx1 (the six values of mma.sp::ordered_metadata, §9.7.14.6.1).
ORDERED_NIBBLES: frozenset[int] = frozenset({0b0100, 0b1000, 0b1100, 0b1001, 0b1101, 0b1110})
# §9.7.16.10.8.2/.3 list these seven for tcgen05 (NOTES.md item 4).
TCGEN05_NIBBLES: frozenset[int] = ORDERED_NIBBLES | {0b0110}
TF32_NIBBLES: dict[int, int] = {0b0100: 0, 0b1110: 1}     # nibble -> position of the kept element


def pattern_for_kind(kind: str) -> SparsePattern:
    """Sparsity granularity of a ``tcgen05.mma.sp`` kind (§9.7.16.10.8)."""
    T.check_kind(kind)
    return KIND_PATTERNS[kind]


def _check_context(context: str) -> None:
    if context not in CONTEXTS:
        raise SpecError(SECTION, "metadata context", expects_but_got("context", " or ".join(CONTEXTS), context))


def nibble_status(pattern: SparsePattern, nibbles, context: str = "tcgen05") -> np.ndarray:
    """VALID / AMBIGUOUS / UNDEFINED for every metadata nibble (see the module docstring)."""
    _check_context(context)
    nib = np.asarray(nibbles, dtype=np.int64)
    if pattern.kept == 1:
        return np.where(np.isin(nib, list(TF32_NIBBLES)), VALID, UNDEFINED)
    ordered = np.isin(nib, sorted(ORDERED_NIBBLES))
    if context == "mma.sp":
        return np.where((nib & 3) != (nib >> 2), VALID, UNDEFINED)
    status = np.where(ordered, VALID, UNDEFINED)
    if context == "tcgen05":
        status = np.where(nib == 0b0110, AMBIGUOUS, status)
    return status


def check_metadata(pattern: SparsePattern, meta, context: str = "tcgen05") -> np.ndarray:
    """Raise SpecError on the first UNDEFINED nibble; return the per-nibble status array."""
    nib = _nibbles(meta)
    _check_context(context)
    status = np.take(_status_table(pattern, context), nib)
    bad = status == UNDEFINED
    if np.any(bad):
        where = tuple(int(i) for i in np.argwhere(bad)[0])
        allowed = sorted(TF32_NIBBLES) if pattern.kept == 1 else sorted(
            TCGEN05_NIBBLES if context == "tcgen05" else ORDERED_NIBBLES)
        sec = SECTION if context == "tcgen05" else WARP_SECTION
        detail = expects_but_got(f"{pattern.name} metadata nibble at {where}",
                                 "one of " + ", ".join(f"{v:#06b}" for v in allowed)
                                 if context != "mma.sp" else "two distinct 2-bit indices",
                                 f"{int(nib[where]):#06b}")
        raise SpecError(sec, "meaningful metadata values", detail)
    return status


@functools.lru_cache(maxsize=None)
def _status_table(pattern: SparsePattern, context: str) -> np.ndarray:
    """:func:`nibble_status` of each nibble 0..15 (read-only), indexed by validated metadata."""
    table = nibble_status(pattern, np.arange(16), context)
    table.setflags(write=False)
    return table


def _nibbles(meta) -> np.ndarray:
    """Metadata as int64 nibbles, after checking each is 0..15 (unsigned: only the largest)."""
    nib = np.asarray(meta)
    if nib.dtype.kind not in "iu" or (nib.size and (nib.max() > 15 or (nib.dtype.kind == "i" and nib.min() < 0))):
        raise SpecError(SECTION, "metadata", expects_but_got("metadata nibbles", "integers 0..15", nib.dtype.name
                        if nib.dtype.kind not in "iu" else int(nib[(nib < 0) | (nib > 15)].flat[0])))
    return nib.astype(np.int64, copy=False)


def kept_positions(pattern: SparsePattern, meta, reading: str | None = None) -> np.ndarray:
    """Element positions (within the chunk) of the kept elements: shape ``meta.shape + (kept,)``.

    Decodes every pair of distinct indices (0b0110 as spec question ``Q-META-0110``'s ``reading``
    says: ``as-listed``, the pick, element 0 at 2 and element 1 at 1; ``as-ordered`` as 0b1001);
    raises SpecError for nibbles whose two indices coincide or, for 1:2, values other than 0b0100
    / 0b1110 (they name no layout).
    """
    nib = _nibbles(meta)
    if pattern.kept == 1:
        check_metadata(pattern, nib)
        return np.where(nib == 0b1110, 1, 0)[..., None]
    idx0, idx1 = nib & 3, nib >> 2
    same = idx0 == idx1
    if np.any(same):
        raise SpecError(SECTION, "meaningful metadata values", expects_but_got(
            f"{pattern.name} metadata nibble", "two distinct indices", f"{int(nib[same].flat[0]):#06b}"))
    if resolve("Q-META-0110", reading) == "as-ordered":      # 0b0110 read as 0b1001 (indices 1 then 2)
        swap = nib == 0b0110
        idx0, idx1 = np.where(swap, idx1, idx0), np.where(swap, idx0, idx1)
    unit = pattern.unit
    pos = [np.stack([idx0 * unit + u, idx1 * unit + u], axis=-1) for u in range(unit)]
    # kept elements in storage order: pair 0 (element 2*idx0, 2*idx0+1), then pair 1
    return np.stack(pos, axis=-1).reshape(nib.shape + (pattern.kept,))


def _check_shapes(pattern: SparsePattern, compressed: np.ndarray, nib: np.ndarray) -> int:
    if compressed.ndim != 2 or nib.ndim != 2 or compressed.shape[0] != nib.shape[0]:
        raise SpecError(SECTION, "sparse A", expects_but_got("compressed A and metadata", "2-D arrays with equal row counts",
                        f"{compressed.shape} and {nib.shape}"))
    if compressed.shape[1] != nib.shape[1] * pattern.kept:
        raise SpecError(SECTION, "sparse A", expects_but_got(
            f"compressed columns for {nib.shape[1]} {pattern.name} chunks", nib.shape[1] * pattern.kept, compressed.shape[1]))
    return nib.shape[1] * pattern.chunk


def expand(pattern: SparsePattern, compressed, meta, *, fill=0) -> np.ndarray:
    """Dense M x K matrix from compressed A (M x K/2) and metadata (M x K/chunk).

    Elements not named by the metadata are ``fill`` (0: the code of +0 in every element format).
    Works on codes or values alike; the result has the dtype of ``compressed``.
    """
    comp = np.asarray(compressed)
    nib = _nibbles(meta)
    k = _check_shapes(pattern, comp, nib)
    m, chunks = nib.shape
    pos = np.take(_position_table(pattern, resolve("Q-META-0110", None)), nib, axis=0)    # (M, chunks, kept)
    if pos.size and pos.min() < 0:
        kept_positions(pattern, nib)                                   # names no layout: raises
    flat = pos + _chunk_starts(m, chunks, pattern.chunk)              # (row * chunks + j) * chunk + pos
    dense = np.full(m * k, fill, dtype=comp.dtype)
    dense[flat.reshape(-1)] = comp.reshape(-1)
    return dense.reshape(m, k)


@functools.lru_cache(maxsize=None)
def _position_table(pattern: SparsePattern, reading: str) -> np.ndarray:
    """int64[16, kept] (read-only): :func:`kept_positions` of each nibble under spec question
    ``Q-META-0110``'s ``reading``; -1 for nibbles that name no layout (kept_positions raises)."""
    table = np.full((16, pattern.kept), -1, dtype=np.int64)
    for nibble in range(16):
        try:
            table[nibble] = kept_positions(pattern, np.array([nibble]), reading)[0]
        except SpecError:
            pass
    table.setflags(write=False)
    return table


@functools.lru_cache(maxsize=256)
def _chunk_starts(m: int, chunks: int, chunk: int) -> np.ndarray:
    """int64[m, chunks, 1] (read-only): flat index of the first element of each chunk of an
    m x (chunks * chunk) matrix."""
    starts = (np.arange(m * chunks, dtype=np.int64) * chunk).reshape(m, chunks, 1)
    starts.setflags(write=False)
    return starts


def compress(pattern: SparsePattern, dense, *, nonzero=None) -> tuple[np.ndarray, np.ndarray]:
    """Compressed A (M x K/2) and metadata (M x K/chunk) of a dense matrix that fits the pattern.

    ``nonzero`` (bool, M x K) says which elements are nonzero; default ``dense != 0`` (pass a
    value-based mask for codes, where -0 has a nonzero code). The metadata chosen is always one of
    the ordered (VALID) nibbles: the nonzero slots, padded with the lowest free slots. Raises
    SpecError when a chunk holds more nonzero elements than the pattern keeps (or, for 4:8, a
    nonzero element outside the kept pairs).
    """
    arr = np.asarray(dense)
    nz = (arr != 0) if nonzero is None else np.asarray(nonzero, dtype=bool)
    if arr.ndim != 2 or arr.shape[1] % pattern.chunk or nz.shape != arr.shape:
        raise SpecError(SECTION, "sparse A", expects_but_got(f"dense A for {pattern.name}",
                        f"a 2-D array with K a multiple of {pattern.chunk}", arr.shape))
    m, k = arr.shape
    chunks = k // pattern.chunk
    slot_nz = nz.reshape(m, chunks, pattern.positions, pattern.unit).any(axis=-1)   # (M, chunks, slots)
    want = pattern.kept // pattern.unit                                             # slots kept per chunk
    count = slot_nz.sum(axis=-1)
    if np.any(count > want):
        r, c = (int(i) for i in np.argwhere(count > want)[0])
        raise SpecError(SECTION, f"{pattern.name} sparsity", expects_but_got(
            f"nonzero {'pairs' if pattern.unit > 1 else 'elements'} in chunk {c} of row {r}", f"at most {want}", int(count[r, c])))
    # rank slots: nonzero slots first, then free slots, each by position; take the first `want`
    order = np.argsort(~slot_nz * pattern.positions + np.arange(pattern.positions), axis=-1, kind="stable")
    chosen = np.sort(order[..., :want], axis=-1)                                    # ascending slots
    if pattern.kept == 1:
        nib = np.where(chosen[..., 0] == 1, 0b1110, 0b0100)
    else:
        nib = chosen[..., 0] | (chosen[..., 1] << 2)
    pos = kept_positions(pattern, nib)
    cols = pos + (np.arange(chunks) * pattern.chunk)[None, :, None]
    rows = np.broadcast_to(np.arange(m)[:, None, None], cols.shape)
    comp = arr[rows, cols].reshape(m, chunks * pattern.kept)
    return comp, nib.astype(np.uint8)


def pack_metadata_words(meta) -> np.ndarray:
    """Rows of nibbles -> rows of uint32 words, chunk j at bits 4*(j % 8) of word j // 8."""
    nib = _nibbles(meta)
    m, n = nib.shape
    words = -(-n // 8)
    padded = np.zeros((m, words * 8), dtype=np.uint64)
    padded[:, :n] = nib
    shifts = (4 * np.arange(8, dtype=np.uint64))[None, None, :]
    return (padded.reshape(m, words, 8) << shifts).sum(axis=-1).astype(np.uint32)


def unpack_metadata_words(words, chunks: int) -> np.ndarray:
    """Inverse of :func:`pack_metadata_words`: the first ``chunks`` nibbles of each row."""
    w = np.asarray(words, dtype=np.uint64)
    shifts = (4 * np.arange(8, dtype=np.uint64))[None, None, :]
    nib = (w[:, :, None] >> shifts) & np.uint64(15)
    return nib.reshape(w.shape[0], -1)[:, :chunks].astype(np.uint8)


def check_sparsity_selector(kind: str, selector: int) -> int:
    """Sparsity selector rules (§9.7.16.10.8.4.5/.6): 0 for i8/f8f6f4; "assumed 0" for the mx kinds.

    Returns the selector the MMA uses (0 for the mx kinds). f16/tf32 accept 0..3 (the selector
    picks Tensor Memory sub-columns, Figures 262-265: a placement question, not a value one).
    """
    T.check_kind(kind)
    if not isinstance(selector, int) or isinstance(selector, bool) or not 0 <= selector <= 3:
        raise SpecError("9.7.16.10.8.4", "sparsity selector", expects_but_got("sparsity selector", "0..3", selector))
    if kind in ("i8", "f8f6f4") and selector:
        raise SpecError("9.7.16.10.8.4", "sparsity selector", expects_but_got(f"sparsity selector for kind::{kind}", "0", selector))
    return 0 if kind in T.BLOCK_SCALED_KINDS else selector
