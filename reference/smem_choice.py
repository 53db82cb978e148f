"""Descriptor choice: the LBO/SBO/base offset a kernel puts in its descriptor for a tile (§9.7.16.3).

For an mn×k tile in a chosen (major-ness, swizzle) at a given start address, the compact canonical
tiling is chosen: atoms (or core matrices) are packed back to back with the MN index running
fastest, which is the order of all five worked examples of §9.7.16.3.3:

    K-major, no swizzle   core matrix = 8 rows × 16 B = 128 B
                          SBO = 128 B (next 8 rows), LBO = 128 B × ceil(mn/8) (next 16 B of K)
    K-major, swizzled     atom = 8 rows × W B (W = 32/64/128)
                          SBO = 8·W (next 8 rows), LBO "not used, assumed to be 1": 16 B
                          (128B_base32B, legal only under spec question Q-KMAJOR-BASE32B:
                          8 rows, or 4 under its reading legal-4-rows)
                          (encoded 1, as the §9.7.16.3.3 example and CUTLASS make_umma_desc)
    MN-major, no swizzle  core matrix = 16 B of MN × 8 rows of K = 128 B
                          SBO = 128 B (next 16 B of MN), LBO = 128 B × ceil(mn/T) (next 8 K)
    MN-major, swizzled    atom = W B of MN × R rows of K (R = 8; 4 for 128B_base32B)
                          LBO = R·W (next atom along MN), SBO = R·W × ceil(mn/(W/16·T)) (next R K)

The base offset is the Table 41 value for the address where the tile's swizzle pattern starts
(``pattern_start``, by default the start address itself).
"""

from __future__ import annotations

import functools

from reference.errors import SpecError, expects_but_got
from reference.smem_descriptor import ADDRESS_LIMIT, base_offset_for
from reference.smem_image import tile_footprint
from reference.smem_layout import (
    GEOMETRY,
    UNIT_BYTES,
    SmemLayout,
    check_combination,
    check_extents,
    check_tile,
    element_storage,
    first_period,
    kmajor_group_rows,
)
from reference.spec_questions import following, reading

SECTION = "9.7.16.3"
CORE_MATRIX_BYTES = 8 * UNIT_BYTES   # 8 rows of one 16-byte unit


def compact_strides(major: str, swizzle: str, per_unit: int, mn: int) -> tuple[int, int]:
    """(LBO, SBO) in bytes of the compact canonical tiling of an ``mn``-wide tile (§9.7.16.3.1-2; module docstring)."""
    geo = GEOMETRY[swizzle]
    if major == "K":
        if swizzle == "none":
            return CORE_MATRIX_BYTES * -(-mn // 8), CORE_MATRIX_BYTES
        return UNIT_BYTES, kmajor_group_rows(swizzle) * geo.row_bytes
    if swizzle == "none":
        return CORE_MATRIX_BYTES * -(-mn // per_unit), CORE_MATRIX_BYTES
    atoms_mn = -(-mn // (geo.units_per_row * per_unit))
    return geo.atom_bytes, geo.atom_bytes * atoms_mn


def choose_layout(major: str, swizzle: str, dtype: str, mn: int, k: int, start_address: int = 0, *,
                  kind: str | None = None, pattern_start: int | None = None,
                  continuation_address: int | None = None) -> SmemLayout:
    """The layout (and so the descriptor) for an mn×k tile of ``dtype`` at ``start_address``.

    ``kind`` selects the 4-bit storage (see ``element_storage``). ``pattern_start``: where the
    tile's swizzle pattern starts (default: the start address), giving the Table 41 base offset.
    ``continuation_address``: for a K-major 128B tile with K = 48 B whose row would pass its
    128-byte row, the address of the second chunk; selects the absolute leading-dimension mode
    (§9.7.16.3.1.2; base offset must then be 0). Cached per reading of spec question
    Q-KMAJOR-BASE32B (which makes K-major 128B_base32B legal, and sets its SBO).
    """
    return _choose_layout(major, swizzle, dtype, mn, k, start_address, kind, pattern_start, continuation_address,
                          reading("Q-KMAJOR-BASE32B"))


@functools.lru_cache(maxsize=8192)
def _choose_layout(major, swizzle, dtype, mn, k, start_address, kind, pattern_start, continuation_address,
                   kmajor_reading) -> SmemLayout:
    with following({"Q-KMAJOR-BASE32B": kmajor_reading}):
        return _chosen(major, swizzle, dtype, mn, k, start_address, kind, pattern_start, continuation_address)


def _chosen(major, swizzle, dtype, mn, k, start_address, kind, pattern_start, continuation_address) -> SmemLayout:
    check_extents(mn, k)
    storage = element_storage(dtype, kind)
    check_combination(major, swizzle, storage)
    lbo, sbo = compact_strides(major, swizzle, storage.per_unit, mn)
    anchor = start_address if pattern_start is None else pattern_start
    if not isinstance(anchor, int) or isinstance(anchor, bool) or anchor < 0:
        raise SpecError("9.7.16.4.1", "Table 41", expects_but_got("pattern start address", "a non-negative integer", anchor))
    base_offset = base_offset_for(anchor, swizzle)
    mode = "relative"
    if continuation_address is not None:
        mode, lbo = "absolute", continuation_address
    for name, value in (("leading byte offset", lbo), ("stride byte offset", sbo)):
        if value >= ADDRESS_LIMIT:
            raise SpecError("9.7.16.4.1", "Table 40", expects_but_got(
                f"{name} of a {mn}x{k} {major}-major {swizzle} tile", f"< 0x{ADDRESS_LIMIT:x} bytes", value))
    layout = SmemLayout(major, swizzle, storage, start_address, lbo, sbo, base_offset, mode)
    check_tile(layout, mn, k)
    lo, hi = image_extent(layout, mn, k)
    if hi > ADDRESS_LIMIT:
        raise SpecError("9.7.16.4.1", "Table 40", expects_but_got(
            "end of the tile's image", f"<= 0x{ADDRESS_LIMIT:x} (18-bit shared memory addresses)", hex(hi)))
    return layout


def image_extent(layout: SmemLayout, mn: int, k: int) -> tuple[int, int]:
    """[lo, hi): the byte range of 16-byte units an mn×k tile touches (lo <= start address; §9.7.16.3.3).
    That of ``smem_image.tile_footprint`` (computed with the tile's pack plan, so the ``pack`` that
    usually follows reuses it); for a layout whose elements overlap (no pack plan), computed once
    per layout moved into its first pattern period (``smem_layout.first_period``)."""
    try:
        lo, hi, _ = tile_footprint(layout, mn, k)
        return lo, hi
    except SpecError:
        pass
    base, shift = first_period(layout)
    lo, hi = _period_extent(base, mn, k, reading("Q-LBO-KSW"), reading("Q-BASE-OFFSET"), reading("Q-KMAJOR-BASE32B"))
    return lo + shift, hi + shift


@functools.lru_cache(maxsize=2048)
def _period_extent(layout: SmemLayout, mn: int, k: int, lbo_reading: str, base_reading: str,
                   kmajor_reading: str) -> tuple[int, int]:
    with following({"Q-LBO-KSW": lbo_reading, "Q-BASE-OFFSET": base_reading, "Q-KMAJOR-BASE32B": kmajor_reading}):
        units = layout.bit_offsets(mn, k) // (8 * UNIT_BYTES) * UNIT_BYTES + layout.start_address
    return min(int(units.min()), layout.start_address), int(units.max()) + UNIT_BYTES


def image_bytes(layout: SmemLayout, mn: int, k: int) -> int:
    """Size in bytes of the shared-memory image of an mn×k tile (``image_extent`` hi - lo; §9.7.16.3.3)."""
    lo, hi = image_extent(layout, mn, k)
    return hi - lo
