"""pack → read round trips and bijectivity of every legal (major, swizzle, element size) layout.

``pack`` places codes with the CuTe canonical layouts (§9.7.16.3.3); ``read`` recomputes every
address from the 64-bit descriptor using the prose stride definitions (§9.7.16.3.1-2). Agreement
on random tiles, strides and start addresses checks each reading against the other.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from reference.errors import SpecError
from reference.smem_choice import choose_layout, image_extent
from reference.smem_image import SmemImage, pack, read
from reference.smem_layout import SmemLayout, element_storage
from reference.spec_questions import following
from reference.tables import SWIZZLES

pytestmark = pytest.mark.reference

STORAGES = [("f16", None), ("bf16", None), ("tf32", None), ("f32", None), ("s32", None), ("e4m3", None),
            ("e5m2", None), ("u8", "i8"), ("s8", None), ("e2m3", None), ("e3m2", "f8f6f4"),
            ("e2m1", "mxf4"), ("e2m1", "mxf8f6f4")]
ROW_BYTES = {"none": 16, "32B": 32, "64B": 64, "128B": 128, "128B_base32B": 128}
ATOM_ROWS = {"none": 8, "32B": 8, "64B": 8, "128B": 8, "128B_base32B": 4}


def legal(major: str, swizzle: str, bits: int) -> bool:
    """Table 52 written out: K-major every swizzle but 32B atomicity (no K atom in Table 53);
    MN-major 8/16-bit all but 128B_base32B, 32-bit only 128B_base32B, packed 4-bit never;
    ``bits`` is the slot width (padded 4/6-bit f8f6f4 elements take 8-bit slots)."""
    if major == "K":
        return swizzle != "128B_base32B"
    if bits in (8, 16):
        return swizzle != "128B_base32B"
    return bits == 32 and swizzle == "128B_base32B"


LEGAL = [(mj, sw, dt, kd) for mj in ("K", "MN") for sw in SWIZZLES for dt, kd in STORAGES
         if legal(mj, sw, 128 // element_storage(dt, kd).per_unit)]
LEGAL_IDS = [f"{mj}-{sw}-{dt}-{kd}" for mj, sw, dt, kd in LEGAL]


def random_codes(seed: int, shape: tuple[int, int], bits: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 1 << bits, size=shape, dtype=np.uint64)


def round_trip(layout: SmemLayout, codes: np.ndarray, dtype: str, kind: str | None) -> None:
    image = pack(layout, codes)
    back = read(image, layout.descriptor().encode(), codes.shape[0], codes.shape[1], dtype, layout.major, kind=kind)
    assert (back == codes).all()


# ---------------------------------------------------------------------------------------------
# Every legal layout is a bijection onto its image
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("major,swizzle,dtype,kind", LEGAL, ids=LEGAL_IDS)
def test_layout_is_a_bijection_onto_its_image(major, swizzle, dtype, kind):
    """Two atoms (core matrices) each way: distinct elements get distinct bits, every 16-byte
    unit of [lo, hi) holds exactly T elements, and the image is exactly those units."""
    storage = element_storage(dtype, kind)
    t, units_row = storage.per_unit, ROW_BYTES[swizzle] // 16
    mn, k = (2 * units_row * t, 2 * ATOM_ROWS[swizzle]) if major == "MN" else (16, units_row * t * (2 if swizzle == "none" else 1))
    layout = choose_layout(major, swizzle, dtype, mn, k, 0x1000, kind=kind)
    bits = layout.bit_offsets(mn, k).ravel()
    assert np.unique(bits).size == bits.size
    units, counts = np.unique(bits // 128, return_counts=True)
    assert (counts == t).all()
    lo, hi = image_extent(layout, mn, k)
    assert (lo, hi) == (0x1000, 0x1000 + 16 * units.size)
    assert units.tolist() == list(range(units.size))
    assert ((bits % 128) // storage.bits < t).all() and ((bits % 128) % storage.bits == 0).all()


@pytest.mark.parametrize("major,swizzle,dtype,kind", LEGAL, ids=LEGAL_IDS)
def test_round_trip_every_legal_combination(major, swizzle, dtype, kind):
    storage = element_storage(dtype, kind)
    t, units_row = storage.per_unit, ROW_BYTES[swizzle] // 16
    mn, k = (3 * units_row * t - 1, 17) if major == "MN" else (40, units_row * t if swizzle != "none" else 3 * t + 1)
    layout = choose_layout(major, swizzle, dtype, mn, k, 0x2380, kind=kind)
    round_trip(layout, random_codes(7, (mn, k), storage.bits), dtype, kind)


# ---------------------------------------------------------------------------------------------
# Hypothesis: random shapes, start addresses, pattern starts, strides
# ---------------------------------------------------------------------------------------------

@st.composite
def tiles(draw):
    major, swizzle, dtype, kind = draw(st.sampled_from(LEGAL))
    t = element_storage(dtype, kind).per_unit
    width = ROW_BYTES[swizzle]
    start = draw(st.integers(0, 0x1800)) * 16
    room = (width - start % width) // 16          # units left in the start's swizzle row
    if major == "K":
        mn = draw(st.integers(1, 40))
        k = draw(st.integers(1, (5 if swizzle == "none" else room) * t))
    else:
        k = draw(st.integers(1, 40))
        full = swizzle == "none" or room == width // 16
        mn = draw(st.integers(1, (3 * width // 16 if full else room) * t))
    pattern = draw(st.sampled_from([start, start - start % 1024, start - start % 128]))
    return major, swizzle, dtype, kind, mn, k, start, pattern


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tile=tiles(), seed=st.integers(0, 2**32 - 1))
def test_round_trip_random_tiles(tile, seed):
    major, swizzle, dtype, kind, mn, k, start, pattern = tile
    layout = choose_layout(major, swizzle, dtype, mn, k, start, kind=kind, pattern_start=pattern)
    round_trip(layout, random_codes(seed, (mn, k), layout.storage.bits), dtype, kind)


@settings(max_examples=120, deadline=None)
@given(tile=tiles(), seed=st.integers(0, 2**32 - 1), pads=st.tuples(st.integers(0, 12), st.integers(0, 12)),
       inner_is_mn=st.booleans(), base_offset=st.integers(0, 7), junk_lbo=st.integers(1, 0x3FF0 // 16))
def test_round_trip_arbitrary_strides(tile, seed, pads, inner_is_mn, base_offset, junk_lbo):
    """read follows whatever LBO/SBO/base offset the descriptor carries, not the compact choice."""
    major, swizzle, dtype, kind, mn, k, start, _ = tile
    storage = element_storage(dtype, kind)
    t, width, rows = storage.per_unit, ROW_BYTES[swizzle], ATOM_ROWS[swizzle]
    if major == "K" and swizzle != "none":      # SBO only; LBO is "not used"
        lbo, sbo = junk_lbo * 16, rows * width + 16 * pads[0]
    else:
        block = 128 if swizzle == "none" else rows * width
        n_mn = -(-mn // (t * width // 16)) if major == "MN" else -(-mn // 8)
        n_k = -(-k // (rows if major == "MN" else t))
        inner = block + 16 * pads[0]
        outer = inner * (n_mn if inner_is_mn else n_k) + 16 * pads[1]
        mn_stride, k_stride = (inner, outer) if inner_is_mn else (outer, inner)
        # MN-major swizzled: LBO steps along MN, SBO along K; otherwise SBO along MN, LBO along K.
        lbo, sbo = (mn_stride, k_stride) if (major == "MN" and swizzle != "none") else (k_stride, mn_stride)
    assume(lbo < 1 << 18 and sbo < 1 << 18)
    layout = SmemLayout(major, swizzle, storage, start, lbo, sbo, base_offset if swizzle != "none" else 0)
    assume(image_extent(layout, mn, k)[1] <= 1 << 18)
    round_trip(layout, random_codes(seed, (mn, k), storage.bits), dtype, kind)


@settings(max_examples=60, deadline=None)
@given(in_row=st.integers(0, 7), mn=st.integers(1, 40), seed=st.integers(0, 2**32 - 1),
       dtype=st.sampled_from([("e2m1", "mxf4", 96), ("e4m3", None, 48), ("bf16", None, 24)]),
       gap=st.integers(0, 40))
def test_round_trip_absolute_leading_dimension(in_row, mn, seed, dtype, gap):
    name, kind, k = dtype
    start = 0x2000 + 16 * in_row
    continuation = 0x2000 + 1024 * (-(-mn // 8)) + 128 * gap
    layout = choose_layout("K", "128B", name, mn, k, start, kind=kind, continuation_address=continuation)
    assert layout.lbo_mode == "absolute" and layout.base_offset == 0
    round_trip(layout, random_codes(seed, (mn, k), layout.storage.bits), name, kind)


@settings(max_examples=80, deadline=None)
@given(tile=tiles(), periods=st.integers(1, 40), base_offset=st.integers(0, 7), absolute=st.booleans())
def test_pack_plan_moves_with_whole_pattern_periods(tile, periods, base_offset, absolute):
    """``pack`` computes a layout's addresses once per pattern period (16 bytes without swizzle,
    256-1024 with): the plan of a layout ``periods`` periods up equals the one computed at its own
    address (under both readings of Q-BASE-OFFSET), also in absolute leading-dimension mode (both
    addresses move), and so does its image extent."""
    from reference.smem_image import _pack_plan, _period_plan
    from reference.smem_layout import PATTERN_PERIOD, pattern_period

    major, swizzle, dtype, kind, mn, k, start, pattern = tile
    if absolute:
        mn, k, dtype, kind, swizzle, major = min(mn, 40), 48, "e4m3", None, "128B", "K"
        start = 0x2000 + 16 * (start // 16 % 8)
        layout = choose_layout("K", "128B", "e4m3", mn, k, start, continuation_address=0x2000 + 1024 * -(-mn // 8))
    else:
        layout = choose_layout(major, swizzle, dtype, mn, k, start, kind=kind, pattern_start=pattern)
        if swizzle != "none":
            layout = SmemLayout(layout.major, swizzle, layout.storage, layout.start_address,
                                layout.leading_byte_offset, layout.stride_byte_offset, base_offset)
    up = periods * (PATTERN_PERIOD if absolute else pattern_period(layout.swizzle))
    moved = SmemLayout(layout.major, layout.swizzle, layout.storage, layout.start_address + up,
                       layout.leading_byte_offset + (up if layout.lbo_mode == "absolute" else 0),
                       layout.stride_byte_offset, layout.base_offset, layout.lbo_mode)
    for base_reading in ("pattern-anchor", "start-phase"):
        try:
            direct = _period_plan(moved, mn, k, "assumed-16", base_reading, "table-53")
        except SpecError:
            continue
        shifted = _pack_plan(moved, mn, k, "assumed-16", base_reading, "table-53")
        assert (shifted.lo, shifted.hi, shifted.top_bit) == (direct.lo, direct.hi, direct.top_bit)
        with following({"Q-BASE-OFFSET": base_reading}):
            units = moved.bit_offsets(mn, k) // 128 * 16 + moved.start_address
            assert image_extent(moved, mn, k) == (min(int(units.min()), moved.start_address), int(units.max()) + 16)
        for name in ("starts", "unit_rows", "slots", "holes"):
            got, want = getattr(shifted, name), getattr(direct, name)
            assert (got is None and want is None) or np.array_equal(got, want)


@settings(max_examples=80, deadline=None)
@given(tile=tiles())
def test_tile_footprint_is_the_extent_and_last_bit_offset(tile):
    """``tile_footprint`` (from pack's plan) gives ``image_extent``'s [lo, hi) and the highest
    element's bit offset ``bit_offsets(mn, k).max()``; it refuses a layout whose elements overlap."""
    from reference.smem_image import tile_footprint

    major, swizzle, dtype, kind, mn, k, start, pattern = tile
    layout = choose_layout(major, swizzle, dtype, mn, k, start, kind=kind, pattern_start=pattern)
    lo, hi, last = tile_footprint(layout, mn, k)
    units = layout.bit_offsets(mn, k) // 128 * 16 + layout.start_address
    assert (lo, hi) == (min(int(units.min()), layout.start_address), int(units.max()) + 16)
    assert last == int(layout.bit_offsets(mn, k).max())
    with pytest.raises(SpecError, match="overlapping"):
        tile_footprint(SmemLayout("K", "none", element_storage("bf16"), 0, 128, 128), 16, 16)


# ---------------------------------------------------------------------------------------------
# Image contents and errors
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype,kind,data_bytes", [("e2m1", "f8f6f4", 8), ("e3m2", None, 12), ("e2m3", "mxf8f6f4", 12)])
def test_padding_is_zero_and_fill_elsewhere(dtype, kind, data_bytes):
    """16 elements, then 8 (4-bit) or 4 (6-bit) zero bytes per unit (§9.7.16.10.4.4)."""
    layout = choose_layout("K", "128B", dtype, 8, 16, 0, kind=kind)
    codes = np.full((8, 16), (1 << layout.storage.bits) - 1, dtype=np.uint64)
    data = np.frombuffer(pack(layout, codes, fill=0xA5).data, dtype=np.uint8).reshape(-1, 16)
    touched = data[:, 0] != 0xA5
    assert touched.sum() == 8
    assert (data[touched, :data_bytes] == 0xFF).all() and (data[touched, data_bytes:] == 0).all()
    assert (data[~touched] == 0xA5).all()


def test_empty_slots_of_a_partly_filled_unit_hold_fill():
    """K-major no-swizzle e2m1 of kind::mxf4 (32 per unit, two per byte), K = 5: each row's unit
    holds elements 0-4 in nibbles 0-4; its other nibbles are not written (they keep ``fill``)."""
    layout = choose_layout("K", "none", "e2m1", 8, 5, 0, kind="mxf4")
    codes = np.random.default_rng(3).integers(0, 16, size=(8, 5), dtype=np.uint64)
    image = pack(layout, codes, fill=0xA5)
    data = np.frombuffer(image.data, dtype=np.uint8).reshape(-1, 16)
    for row in range(8):
        nibbles = [int(c) for c in codes[row]] + [0x5 if i % 2 == 0 else 0xA for i in range(5, 32)]
        want = [nibbles[2 * j] | nibbles[2 * j + 1] << 4 for j in range(16)]
        assert data[(row * 16 + layout.start_address - image.base_address) // 16].tolist() == want


def test_element_codes_land_at_their_bits():
    """K-major 128B e2m1 (packed): element (0, 1) is the high nibble of the first byte."""
    layout = choose_layout("K", "128B", "e2m1", 8, 32, 0)
    codes = np.zeros((8, 32), dtype=np.uint64)
    codes[0, 1] = 0x9
    assert pack(layout, codes).data[0] == 0x90


def test_pack_rejects_overlapping_layouts_and_bad_codes():
    st16 = element_storage("bf16")
    overlapping = SmemLayout("K", "none", st16, 0, 128, 128)      # LBO = SBO: units collide
    with pytest.raises(SpecError, match="overlapping"):
        pack(overlapping, np.zeros((16, 16), dtype=np.uint16))
    good = choose_layout("K", "none", "bf16", 8, 8)
    with pytest.raises(SpecError, match="< 2\\^16"):
        pack(good, np.full((8, 8), 1 << 16))
    with pytest.raises(SpecError, match="unsigned"):
        pack(good, np.full((8, 8), -1))
    with pytest.raises(SpecError, match="2-D integer"):
        pack(good, np.zeros((8,), dtype=np.uint16))


def test_read_rejects_addresses_outside_the_image_and_bad_descriptors():
    layout = choose_layout("MN", "64B", "bf16", 64, 16, 0x400)
    image = pack(layout, np.ones((64, 16), dtype=np.uint16))
    with pytest.raises(SpecError, match="inside the image"):
        read(SmemImage(image.base_address + 16, image.data[16:]), layout.descriptor(), 64, 16, "bf16", "MN")
    with pytest.raises(SpecError, match="fixed constant"):
        read(image, 0, 64, 16, "bf16", "MN")                      # bits 46-48 must be 0b001
    with pytest.raises(SpecError, match="Table 52"):
        read(image, layout.descriptor(), 64, 16, "tf32", "MN")
