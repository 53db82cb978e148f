"""tcgen05.cp: shared memory rows into Tensor Memory, with multicast and decompression (§9.7.16.9).

Shapes (§9.7.16.2.3, §9.7.16.9.2): ``.<rows>x<bits>b`` copies ``rows`` source rows of ``bits``
bits (16 or 32 bytes, i.e. 4 or 8 columns) to Tensor Memory at ``taddr`` (lane L, column C).
Source row r goes to lane L + d for each d in its destination list (Figures missing; CuTe atoms
``SM100_UTCCP_*`` in NVIDIA/cutlass ``include/cute/atom/copy_traits_sm100.hpp``, ``ValID``)::

    .128x256b, .128x128b          d = r                                 (r < 128)
    .4x256b                       d = 32*r                              (r < 4: one row per quarter)
    .64x128b.warpx2::02_13        d = r, r + 64                         (rows 0-31 -> warps 0 and 2,
                                                                          rows 32-63 -> warps 1 and 3)
    .64x128b.warpx2::01_23        d = r%32 + 64*(r//32) + {0, 32}       (rows 0-31 -> warps 0 and 1,
                                                                          rows 32-63 -> warps 2 and 3)
    .32x128b.warpx4               d = r + {0, 32, 64, 96}               (every warp gets all 32 rows)

The text fixes which shapes need which multicast and the warp pairs; the lists agree with it
("each warp in the warp pair receives half of the data": rows 0-31 or rows 32-63).
Byte k of a row lands in byte k % 4 (little-endian) of column C + k // 4.

``.cta_group::2`` copies into the Tensor Memory of both CTAs of the pair (text). Decision: each CTA
receives the rows read at the descriptor's addresses in its own shared memory (as tcgen05.mma
::2 reads each CTA's operands; CUTLASS's ``*_2cta`` atoms give both CTAs the same layout).

Decompression ``.b8x16.b4x16_p64`` / ``.b8x16.b6x16_p32`` (§9.7.16.9.1, Figures 194-198): each
16-byte source chunk = 16 elements packed LSB-first (4-bit: element i in byte i//2, low nibble first;
6-bit: bits 6i..6i+5 of the 12-byte little-endian stream) then 8 / 4 bytes of padding (ignored) ->
16 bytes, byte i = the 8-bit container of element i (:mod:`reference.tmem_packing`: 6-bit codes in
bits 5-0; 4-bit codes in bits 5-2). The 4-bit placement is a decision: ``ldmatrix``'s
``.b8x16.b4x16_p64`` puts them in bits 3-0 (CUTLASS ``mma_traits_sm120.hpp``), the MMA container
in bits 5-2; we take the MMA container (the copy feeds tcgen05.mma). ``nibble_shift=0`` gives the
other reading; a hardware case (tcgen05.cp then tcgen05.ld) settles it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from reference.errors import SpecError, expects_but_got
from reference.spec_questions import resolve
from reference.tmem import COLUMNS, LANES, TmemAddress, memories_for, split_address
from reference.tmem_packing import CONTAINER_SHIFT, bytes_to_words

SECTION = "9.7.16.9.2"
SECTION_DECOMPRESS = "9.7.16.9.1"
# shape -> (rows, bytes per row, allowed .multicast values; None = no qualifier)
CP_SHAPES: dict[str, tuple[int, int, tuple[str | None, ...]]] = {
    "128x256b": (128, 32, (None,)),
    "4x256b": (4, 32, (None,)),
    "128x128b": (128, 16, (None,)),
    "64x128b": (64, 16, ("warpx2::02_13", "warpx2::01_23")),
    "32x128b": (32, 16, ("warpx4",)),
}
SOURCE_FORMATS: dict[str, tuple[int, int]] = {"b4x16_p64": (4, 8), "b6x16_p32": (6, 12)}  # bits, data bytes
E2M1_NIBBLE_SHIFT = CONTAINER_SHIFT["e2m1"]     # 2: bits 5-2 (decision above); ldmatrix reading: 0


def check_cp(shape: str, multicast: str | None, decompress: str | None = None) -> tuple[int, int]:
    """Shape / multicast / source-format rules of tcgen05.cp; returns (rows, bytes per row)."""
    if shape not in CP_SHAPES:
        raise SpecError(SECTION, "tcgen05.cp .shape", expects_but_got(".shape", "one of " + ", ".join("." + s for s in CP_SHAPES), shape))
    rows, row_bytes, allowed = CP_SHAPES[shape]
    if multicast not in allowed:
        want = "no .multicast" if allowed == (None,) else " or ".join("." + a for a in allowed)
        raise SpecError(SECTION, "shape requires multicast", expects_but_got(f".{shape}", want, multicast and "." + multicast))
    if decompress is not None and decompress not in SOURCE_FORMATS:
        raise SpecError(SECTION, "tcgen05.cp .src_fmt", expects_but_got(".src_fmt", ".b6x16_p32 or .b4x16_p64 (with .dst_fmt .b8x16)", decompress))
    return rows, row_bytes


def cp_destinations(shape: str, multicast: str | None = None) -> list[tuple[int, int]]:
    """``[(source row, lane offset), ...]`` of a tcgen05.cp shape (table in the module docstring)."""
    rows, _ = check_cp(shape, multicast)
    if shape in ("128x256b", "128x128b"):
        return [(r, r) for r in range(rows)]
    if shape == "4x256b":
        return [(r, 32 * r) for r in range(rows)]
    if multicast == "warpx2::02_13":
        return [(r, r + 64 * b) for r in range(rows) for b in (0, 1)]
    if multicast == "warpx2::01_23":
        return [(r, r % 32 + 64 * (r // 32) + 32 * b) for r in range(rows) for b in (0, 1)]
    return [(r, r + 32 * b) for r in range(rows) for b in range(4)]      # warpx4


def nibble_shift_for(reading: str | None = None) -> int:
    """Where a 4-bit value lands in its byte: spec question ``Q-CP-NIBBLE`` (``bits-5-2``, the
    pick: shift 2; ``bits-3-0``: shift 0)."""
    return 0 if resolve("Q-CP-NIBBLE", reading) == "bits-3-0" else E2M1_NIBBLE_SHIFT


def decompress_chunk(chunk, src_fmt: str, *, nibble_shift: int | None = None) -> np.ndarray:
    """16 source bytes (16 packed elements + padding) -> 16 bytes of 8-bit containers (§9.7.16.9.1);
    ``nibble_shift`` None: as spec question Q-CP-NIBBLE's reading in force says."""
    if src_fmt not in SOURCE_FORMATS:
        raise SpecError(SECTION_DECOMPRESS, "Optional Decompression", expects_but_got("source format", "b4x16_p64 or b6x16_p32", src_fmt))
    data = np.asarray(chunk, dtype=np.uint8)
    if data.shape != (16,):
        raise SpecError(SECTION_DECOMPRESS, "Optional Decompression", expects_but_got("source chunk", "16 bytes", data.shape))
    bits, data_bytes = SOURCE_FORMATS[src_fmt]
    stream = 0
    for k, byte in enumerate(data[:data_bytes]):        # padding bytes are ignored
        stream |= int(byte) << (8 * k)
    codes = np.array([(stream >> (bits * i)) & ((1 << bits) - 1) for i in range(16)], dtype=np.uint8)
    if nibble_shift is None:
        nibble_shift = nibble_shift_for()
    return (codes << nibble_shift).astype(np.uint8) if bits == 4 else codes


def compress_chunk(codes, src_fmt: str, padding: int = 0) -> np.ndarray:
    """Pack 16 element codes as the source format (test/generator helper; padding byte value)."""
    bits, data_bytes = SOURCE_FORMATS[src_fmt]
    arr = np.asarray(codes, dtype=np.int64)
    if arr.shape != (16,) or arr.min() < 0 or arr.max() >= 1 << bits:
        raise SpecError(SECTION_DECOMPRESS, "Optional Decompression", expects_but_got("codes", f"16 integers of {bits} bits", codes))
    stream = sum(int(c) << (bits * i) for i, c in enumerate(arr))
    out = np.full(16, padding, dtype=np.uint8)
    out[:data_bytes] = [(stream >> (8 * k)) & 0xFF for k in range(data_bytes)]
    return out


def read_rows(smem: Sequence[bytes], address: Callable[[int, int], int], shape: str) -> np.ndarray:
    """Source rows of each CTA: ``uint8[ctas, rows, bytes]``; chunk c of row r at ``address(r, c)``.

    ``address(row, chunk)`` maps a row and its 16-byte chunk (0 or 0-1) to a shared memory byte
    address: the layout the source SmemDescriptor describes (canonical layouts are issue 3's).
    """
    if shape not in CP_SHAPES:
        check_cp(shape, None)                      # raises, naming the legal shapes
    rows, row_bytes, _ = CP_SHAPES[shape]
    out = np.zeros((len(smem), rows, row_bytes), dtype=np.uint8)
    for cta, memory in enumerate(smem):
        buf = np.frombuffer(bytes(memory), dtype=np.uint8)
        for r in range(rows):
            for c in range(row_bytes // 16):
                a = int(address(r, c))
                if a % 16 or a < 0 or a + 16 > buf.size:
                    raise SpecError("9.7.16.4.1", "16-byte alignment", expects_but_got(
                        f"address of row {r} chunk {c}", "a 16-byte aligned address inside shared memory", a))
                out[cta, r, 16 * c:16 * c + 16] = buf[a:a + 16]
    return out


def cp(tmem, taddr, shape: str, rows, *, cta_group: int = 1, multicast: str | None = None,
       decompress: str | None = None, nibble_shift: int | None = None) -> None:
    """``tcgen05.cp.cta_group::G.<shape>{.<multicast>}{.b8x16.<decompress>} [taddr], s-desc``.

    ``rows``: ``uint8[ctas, rows, bytes]`` from :func:`read_rows` (one CTA's rows for ::1, the
    pair's for ::2). Writes every destination cell of every CTA the operation touches.
    """
    n_rows, row_bytes = check_cp(shape, multicast, decompress)
    memories = memories_for(tmem, cta_group)
    src = np.asarray(rows, dtype=np.uint8)
    if src.shape != (len(memories), n_rows, row_bytes):
        raise SpecError(SECTION, "tcgen05.cp .shape", expects_but_got(
            f"source rows of .{shape} for .cta_group::{cta_group}", f"shape ({len(memories)}, {n_rows}, {row_bytes})", src.shape))
    base = taddr if isinstance(taddr, TmemAddress) else split_address(taddr)
    ncols = row_bytes // 4
    dest = cp_destinations(shape, multicast)
    top = base.lane + max(d for _, d in dest)
    if top >= LANES or base.column + ncols > COLUMNS:
        raise SpecError("9.7.16.1", "Tensor Memory shape", expects_but_got(
            f"cells of .{shape} at lane {base.lane} column {base.column}", f"lanes < {LANES}, columns < {COLUMNS}",
            f"lane {top}, column {base.column + ncols - 1}"))
    for memory, cta_rows in zip(memories, src, strict=True):
        data = cta_rows
        if decompress is not None:
            data = np.stack([np.concatenate([decompress_chunk(row[16 * c:16 * c + 16], decompress, nibble_shift=nibble_shift)
                                             for c in range(row_bytes // 16)]) for row in cta_rows])
        for r, d in dest:
            memory.cells[base.lane + d, base.column:base.column + ncols] = bytes_to_words(data[r])
