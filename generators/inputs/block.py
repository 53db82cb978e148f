"""Building the in block of a case (docs/kernel-abi.md): staging image, TMEM preloads, registers.

An in block is per CTA; the blocks of a CTA pair have the same length and the same offsets (one
case record serves both CTAs: CTA rank r reads ``in_ptr + r * in_cta_stride``). :class:`InBlocks`
keeps one bytearray per CTA and hands out offsets valid in all of them.

Shared-memory staging: :class:`Staging` places operand images at 16-byte aligned offsets of the
staging buffer (relative addresses: the kernel adds the 1024-aligned buffer address to the
descriptors' start address). :func:`tile_start` varies where a tile starts, so the start address
and base offset fields matter (a device that drops them reads other bytes):

* no swizzle: a 1024-aligned block + 16*j (j in 0..7): start addresses off the 128-byte grid;
* swizzled, half of the tiles: the repeating pattern starts at the block + 128*j (j in 1..7) and
  the tile starts there, so the descriptor carries base offset j (Table 41: "(pattern start addr
  >> 0x7) & 0x7"); the layout relative to the pattern start is the canonical one;
* swizzled K-major tiles shorter than a swizzle row, the other half: the tile starts 16*u bytes
  into the row of an aligned pattern (base offset 0), as descriptors that step along K inside a
  swizzle atom do (CUTLASS advances the start address by the K offset).

:func:`relocate` then moves half of the images up the window (``smem_dst``, a multiple of 1024,
so base offsets and swizzle phases stay): a quarter end exactly at the buffer's end
(``SMEM_CAPACITY``), a quarter anywhere, so every start-address bit is set by some case. Images
with absolute-mode LBOs always move up (the top for half of them), so their LBOs, which are
addresses (§9.7.16.3.1.2), reach above 64 KiB.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from generators.ptx import record as R
from reference.smem_descriptor import SmemDescriptor
from reference.smem_image import SmemImage, pack
from reference.smem_layout import SmemLayout

LANES = 128
PATTERN_ALIGN = 1024


class InBlocks:
    """Per-CTA in blocks with shared offsets (pieces appended at ``align``-byte offsets). Every CTA's
    block has the same length (each piece is zero-padded to the longest of its CTAs); the pieces
    are kept and joined once, by :meth:`blocks`."""

    def __init__(self, ctas: int) -> None:
        self.pieces: list[list[bytes]] = [[] for _ in range(ctas)]
        self.length = 0

    @property
    def ctas(self) -> int:
        return len(self.pieces)

    def add(self, per_cta: list[bytes] | bytes, align: int = 256) -> int:
        """Append one piece per CTA (or the same piece to every CTA); returns its offset."""
        pieces = per_cta if isinstance(per_cta, list) else [per_cta] * self.ctas
        if len(pieces) != self.ctas:
            raise ValueError(f"in block pieces expect one per CTA ({self.ctas}), but got {len(pieces)}")
        off = -(-self.length // align) * align
        size = max(len(p) for p in pieces)
        for parts, p in zip(self.pieces, pieces, strict=True):
            if off > self.length:
                parts.append(bytes(off - self.length))     # zeros up to the offset
            parts.append(bytes(p))
            if size > len(p):
                parts.append(bytes(size - len(p)))         # zeros up to the longest piece
        self.length = off + size
        return off

    def blocks(self) -> tuple[bytes, ...]:
        size = -(-self.length // 16) * 16
        return tuple(b"".join(parts + [bytes(size - self.length)]) for parts in self.pieces)


class Staging:
    """The shared-memory image of one CTA: operand images at relative addresses."""

    def __init__(self, fill: int = 0) -> None:
        self.image = bytearray()
        self.fill = fill

    def next_address(self, align: int = PATTERN_ALIGN) -> int:
        return -(-len(self.image) // align) * align

    def put(self, address: int, image: SmemImage) -> None:
        end = image.base_address + len(image.data)
        if end > R.SMEM_CAPACITY:
            raise ValueError(f"staging image expects at most {R.SMEM_CAPACITY} bytes, but got {end}")
        if len(self.image) < end:
            self.image.extend(bytes([self.fill]) * (end - len(self.image)))
        self.image[image.base_address:end] = image.data

    def place(self, layout: SmemLayout, codes) -> None:
        """Pack ``codes`` (mn x k) with ``layout`` (whose start address is relative) and store it."""
        self.put(layout.start_address, pack(layout, np.asarray(codes, dtype=np.uint64)))

    def put_bytes(self, address: int, data: bytes) -> None:
        self.put(address, SmemImage(address, bytes(data)))

    def padded(self) -> bytes:
        size = -(-len(self.image) // 16) * 16
        return bytes(self.image) + bytes([self.fill]) * (size - len(self.image))


ROW_BYTES = {"none": 16, "32B": 32, "64B": 64, "128B": 128, "128B_base32B": 128}


def tile_start(staging: Staging, swizzle: str, major: str, k_run: int, rng) -> tuple[int, int]:
    """(start address, pattern start) of the next tile in ``staging`` (module docstring)."""
    block = staging.next_address()
    if swizzle == "none":
        return block + 16 * int(rng.integers(0, 8)), block
    if rng.random() < 0.5:
        start = block + 128 * int(rng.integers(1, 8))
        return start, start
    room = ROW_BYTES[swizzle] - k_run
    if major == "K" and room >= 16:
        return block + 16 * int(rng.integers(1, room // 16 + 1)), block
    return block, block


def top_shift(image_bytes: int) -> int:
    """The shift (a multiple of 1024) that puts a staged image of ``image_bytes`` at the top of the
    buffer (0 when it fills the buffer)."""
    return max(0, (R.SMEM_CAPACITY - image_bytes) // PATTERN_ALIGN * PATTERN_ALIGN)


def high_shift(image_bytes: int, seed: int, always_up: bool = False) -> int:
    """Where (a multiple of 1024) a staged image of ``image_bytes`` goes: 0 for half the seeds, the
    top of the buffer for a quarter, anywhere in between for the rest. ``always_up``: never 0 (the
    top for half the seeds, anywhere above 0 for the rest)."""
    top = top_shift(image_bytes) // PATTERN_ALIGN
    rng = np.random.default_rng(seed)
    draw = rng.random()
    if always_up:
        draw = 0.5 + draw / 2
    if top <= 0 or draw < 0.5:
        return 0
    return PATTERN_ALIGN * (top if draw < 0.75 else int(rng.integers(1, top + 1)))


DESCRIPTOR_FIELDS = (("a_desc", R.FLAG_A_LBO_ABSOLUTE), ("b_desc", R.FLAG_B_LBO_ABSOLUTE),
                     ("s_desc", R.FLAG_S_LBO_ABSOLUTE))


def relocate(rec: dict, shift: int) -> None:
    """Move the staged image ``shift`` bytes up: ``smem_dst`` and the descriptors' start addresses
    (and absolute LBOs, §9.7.16.3.1.2) follow (a multiple of 1024 keeps Table 41's base offsets)."""
    if shift % PATTERN_ALIGN:
        raise ValueError(f"staging shift expects a multiple of {PATTERN_ALIGN}, but got {shift}")
    rec["smem_dst"] = shift
    for name, flag in DESCRIPTOR_FIELDS:
        if name in rec and shift:
            d = SmemDescriptor.decode(int(rec[name]))
            lbo = d.leading_byte_offset + (shift if rec.get("flags", 0) & flag else 0)
            rec[name] = replace(d, start_address=d.start_address + shift, leading_byte_offset=lbo).encode()


def region_bytes(cells: np.ndarray) -> bytes:
    """A preload region ``uint32[128 lanes, ncols]`` as the kernel reads it ([lane][column] u32)."""
    arr = np.asarray(cells, dtype="<u4")
    if arr.ndim != 2 or arr.shape[0] != LANES:
        raise ValueError(f"preload region expects shape (128, ncols), but got {arr.shape}")
    return arr.tobytes()


def register_bytes(regs: np.ndarray) -> bytes:
    """Per-thread register inputs ``uint32[threads, registers]`` ([thread][register] u32)."""
    return np.asarray(regs, dtype=np.uint32).astype("<u4").tobytes()


class Preloads:
    """The ``preload`` record slots: up to 6 regions {tmem column, ncols, in offset}."""

    def __init__(self, blocks: InBlocks) -> None:
        self.blocks = blocks
        self.slots: list[tuple[int, int, int]] = []

    def add(self, column: int, per_cta_cells: list[np.ndarray]) -> None:
        if len(self.slots) == R.PRELOAD_SLOTS:
            raise ValueError(f"preload regions expect at most {R.PRELOAD_SLOTS}, but got more")
        ncols = per_cta_cells[0].shape[1]
        off = self.blocks.add([region_bytes(c) for c in per_cta_cells])
        self.slots.append((column, ncols, off))

    def record(self) -> list[int]:
        return [v for slot in self.slots for v in slot]
