"""Scale-factor operands of warp-level block-scaled ``mma`` / ``mma.sp`` (public PTX ISA §9.7.14.3
"Block Scaling for mma.sync": Tables 35-37, Figures 43-45; used by ``mma.sp::ordered_metadata``
with ``.kind::mxf8f6f4/mxf4/mxf4nvf4.block_scale``, §9.7.14.6).

``D = (A * scale_A) * (B * scale_B) + C``: scale_A is 16 x SF, scale_B is SF x 8 (Table 35: SF = 1,
2, 4 for ``.scale_vec::1X/2X/4X``); row m of A and column n of B are cut into SF chunks of K / SF
consecutive logical elements (``reference.block_scaling.per_k``; sparse K is the logical K). Every
thread holds one 32-bit ``scale-a-data`` and one ``scale-b-data`` register; the selector tuples
``{byte-id, thread-id}`` say which threads of each quad (lanes 4q .. 4q+3) and which bytes of their
registers the instruction reads. From the text:

* ``thread-id-a`` (0 or 1) picks a thread *pair* of every quad: lane % 4 in {0, 1} or {2, 3};
* ``thread-id-b`` (0..3) picks one thread of every quad: lane % 4 == thread-id-b;
* ``byte-id``: 1X one byte (0..3); 2X a byte pair (0: bytes 0-1, 2: bytes 2-3); 4X all four
  bytes (byte-id 0). Table 37 lists these values; any other is undefined behaviour.

Which row / column a selected thread supplies and which byte holds which K chunk are drawn in
Figures 43-45 (images, not in the texts available here). Decision, from CUTLASS's SM120
block-scaled atoms (``cute/atom/mma_traits_sm120.hpp``: ``SFALayout`` ``((2,2,8),K):((8,0,1),16)``
-- lane t holds row ``8*(t%2) + t//4``, the pair bit ``(t//2)%2`` a broadcast mode --, ``SFBLayout``
``((4,8),K):((0,1),8)`` -- lane t holds column ``t//4``; the atoms pack the K/VS factors of a
thread in K order into one uint8/uint16/uint32 register, i.e. byte ``byte-id + j`` holds chunk j)
and a public sm_120 kernel's hardware probe of the 1X form (same row map)::

    scale_A[m, j]  <-  lane 4*(m % 8) + 2*thread-id-a + m // 8,  byte byte-id-a + j
    scale_B[j, n]  <-  lane 4*n + thread-id-b,                   byte byte-id-b + j
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from reference.errors import SpecError, expects_but_got

SECTION = "9.7.14.3"
LANES, ROWS, COLS = 32, 16, 8

# Table 36: kind -> {scale_vec: scale types}; the default when .scale_vec_size is omitted (mma text:
# mxf8f6f4 1X, mxf4 2X; mxf4nvf4 must name it).
SCALE_VECS: dict[str, dict[str, tuple[str, ...]]] = {
    "mxf8f6f4": {"scale_vec::1X": ("ue8m0",)},
    "mxf4": {"scale_vec::2X": ("ue8m0",)},
    "mxf4nvf4": {"scale_vec::2X": ("ue8m0",), "scale_vec::4X": ("ue8m0", "ue4m3")},
}
DEFAULT_SCALE_VEC = {"mxf8f6f4": "scale_vec::1X", "mxf4": "scale_vec::2X"}
SF_OF = {"scale_vec::1X": 1, "scale_vec::2X": 2, "scale_vec::4X": 4}

# Table 37: SF -> legal byte-id values (A and B alike); thread-id-a / thread-id-b for every SF.
BYTE_IDS = {1: (0, 1, 2, 3), 2: (0, 2), 4: (0,)}
THREAD_IDS_A = (0, 1)
THREAD_IDS_B = (0, 1, 2, 3)


@dataclass(frozen=True)
class ScaleSelectors:
    """The two selector tuples ``{byte-id-a, thread-id-a}``, ``{byte-id-b, thread-id-b}``."""

    byte_id_a: int
    thread_id_a: int
    byte_id_b: int
    thread_id_b: int


def warp_scale_factor_count(kind: str, scale_vec: str | None, scale_type: str) -> int:
    """SF of a warp-level block-scaled MMA (Tables 35/36; ``scale_vec`` None takes the default)."""
    if kind not in SCALE_VECS:
        raise SpecError(SECTION, "Table 36", expects_but_got("block-scaled kind", ", ".join(SCALE_VECS), kind))
    vec = DEFAULT_SCALE_VEC.get(kind) if scale_vec is None else scale_vec
    if vec is None:
        raise SpecError(SECTION, "Table 36", expects_but_got(
            f".scale_vec_size of kind::{kind}", "an explicit .scale_vec::2X or ::4X", None))
    if vec not in SCALE_VECS[kind]:
        raise SpecError(SECTION, "Table 36", expects_but_got(
            f".scale_vec_size of kind::{kind}", " or ".join(SCALE_VECS[kind]), vec))
    if scale_type not in SCALE_VECS[kind][vec]:
        raise SpecError(SECTION, "Table 36", expects_but_got(
            f"scale type of kind::{kind}.{vec}", " or ".join(SCALE_VECS[kind][vec]), scale_type))
    return SF_OF[vec]


def check_selectors(sf: int, sel: ScaleSelectors) -> None:
    """Table 37: the selector values defined for SF (any other value is undefined behaviour)."""
    if sf not in BYTE_IDS:
        raise SpecError(SECTION, "Table 35", expects_but_got("scale factors per row", "1, 2 or 4", sf))
    legal = (("byte-id-a", sel.byte_id_a, BYTE_IDS[sf]), ("thread-id-a", sel.thread_id_a, THREAD_IDS_A),
             ("byte-id-b", sel.byte_id_b, BYTE_IDS[sf]), ("thread-id-b", sel.thread_id_b, THREAD_IDS_B))
    for name, value, allowed in legal:
        if value not in allowed:
            raise SpecError(SECTION, "Table 37", expects_but_got(
                f"{name} with scale_vec::{sf}X", " or ".join(map(str, allowed)), value))


def scale_a_source(sf: int, byte_id: int, thread_id: int, row: int, chunk: int) -> tuple[int, int]:
    """(lane, byte) of the register ``scale-a-data`` that holds scale_A[row, chunk]."""
    if not (0 <= row < ROWS and 0 <= chunk < sf):
        raise SpecError(SECTION, "Table 35", expects_but_got("scale_A element", f"row < 16, chunk < {sf}", (row, chunk)))
    return 4 * (row % 8) + 2 * thread_id + row // 8, byte_id + chunk


def scale_b_source(sf: int, byte_id: int, thread_id: int, col: int, chunk: int) -> tuple[int, int]:
    """(lane, byte) of the register ``scale-b-data`` that holds scale_B[chunk, col]."""
    if not (0 <= col < COLS and 0 <= chunk < sf):
        raise SpecError(SECTION, "Table 35", expects_but_got("scale_B element", f"col < 8, chunk < {sf}", (col, chunk)))
    return 4 * col + thread_id, byte_id + chunk


def scale_a_sources(sf: int, sel: ScaleSelectors) -> np.ndarray:
    """int ``[16, SF, 2]``: (lane, byte) of every scale_A element."""
    check_selectors(sf, sel)
    return np.array([[scale_a_source(sf, sel.byte_id_a, sel.thread_id_a, m, j) for j in range(sf)]
                     for m in range(ROWS)], dtype=np.int64)


def scale_b_sources(sf: int, sel: ScaleSelectors) -> np.ndarray:
    """int ``[SF, 8, 2]``: (lane, byte) of every scale_B element."""
    check_selectors(sf, sel)
    return np.array([[scale_b_source(sf, sel.byte_id_b, sel.thread_id_b, n, j) for n in range(COLS)]
                     for j in range(sf)], dtype=np.int64)


def _registers(regs) -> np.ndarray:
    r = np.asarray(regs, dtype=np.uint64)
    if r.shape != (LANES,):
        raise SpecError(SECTION, "scale-a-data / scale-b-data", expects_but_got("scale registers", "32 values", r.shape))
    return r


def scales_from_registers(regs, sources: np.ndarray) -> np.ndarray:
    """uint8 scale codes (the shape of ``sources`` less its last axis) read from the 32 lanes' registers."""
    r = _registers(regs)
    lane, byte = sources[..., 0], sources[..., 1]
    return ((r[lane] >> (8 * byte).astype(np.uint64)) & np.uint64(0xFF)).astype(np.uint8)


def place_scales(regs, codes, sources: np.ndarray) -> np.ndarray:
    """uint32[32]: ``regs`` with the bytes named by ``sources`` replaced by ``codes`` (others kept)."""
    r = _registers(regs).copy()
    c = np.asarray(codes, dtype=np.uint64)
    if c.shape != sources.shape[:-1]:
        raise SpecError(SECTION, "Table 35", expects_but_got("scale codes", f"shape {sources.shape[:-1]}", c.shape))
    for (lane, byte), code in zip(sources.reshape(-1, 2).tolist(), c.reshape(-1).tolist(), strict=True):
        shift = np.uint64(8 * byte)
        r[lane] = (r[lane] & ~(np.uint64(0xFF) << shift) & np.uint64(0xFFFFFFFF)) | (np.uint64(code) << shift)
    return r.astype(np.uint32)


def owner_lanes(sources: np.ndarray) -> tuple[int, ...]:
    """The lanes whose scale register the instruction reads."""
    return tuple(sorted(set(sources[..., 0].reshape(-1).tolist())))
