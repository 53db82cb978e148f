"""Canonical shared-memory layouts (§9.7.16.3.3) against the spec's worked examples and tables.

Expected values come from the spec text (the five "Exact layout" strings and their LBO/SBO
tables, Table 53) and from closed forms written here, never from the code under test.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from reference.errors import SpecError
from reference.smem_choice import choose_layout, image_bytes
from reference.smem_layout import SmemLayout, check_tile, element_storage, pattern_swizzle
from reference.tables import SWIZZLE_PATTERN_BYTES, TABLE_53
from tests.spec_texts import spec_text

pytestmark = pytest.mark.reference

# ---------------------------------------------------------------------------------------------
# The five worked examples of §9.7.16.3.3, transcribed: exact layout (elements), LBO/SBO in
# elements ("64*sizeof(tf32)" -> 64; None = "NA"), and the printed descriptor encodings.
# ---------------------------------------------------------------------------------------------

EXAMPLES = [
    # (major, swizzle, dtype, bytes/elem, exact layout, LBO el, SBO el, LBO enc, SBO enc)
    ("K", "none", "tf32", 4, "Swizzle<0,4,3> o ((8,2),(4,4)):((4,32),(1,64))", 64, 32, 16, 8),
    ("K", "32B", "tf32", 4, "Swizzle<1,4,3> o ((8,2),(4,4)):((8,64),(1,4))", None, 64, 1, 16),
    ("MN", "none", "bf16", 2, "Swizzle<0,4,3> o ((8,1,2),(8,2)):((1,8,64),(8,128))", 128, 64, 16, 8),
    ("MN", "32B", "bf16", 2, "Swizzle<1,4,3> o ((8,2,2),(8,2)):((1,8,128),(16,256))", 128, 256, 16, 32),
    ("MN", "64B", "bf16", 2, "Swizzle<2,4,3> o ((8,4,2),(8,2)):((1,8,256),(32,512))", 256, 512, 32, 64),
]
IDS = [f"{e[0]}-{e[1]}-{e[2]}" for e in EXAMPLES]


def parse_exact(text: str):
    """'Swizzle<B,M,S> o (shape):(stride)' -> (B, M, S, mn shape, k shape, mn stride, k stride)."""
    m = re.fullmatch(r"Swizzle<(\d),(\d),(\d)> o \(\((.*?)\),\((.*?)\)\):\(\((.*?)\),\((.*?)\)\)", text.replace(" ", "").replace("o(", " o ("))
    assert m, text
    b, mm, s = (int(x) for x in m.group(1, 2, 3))
    tup = [tuple(int(x) for x in g.split(",")) for g in m.group(4, 5, 6, 7)]
    return b, mm, s, tup[0], tup[1], tup[2], tup[3]


def cute_index(coord: int, shape: tuple[int, ...], stride: tuple[int, ...]) -> int:
    """CuTe crd2idx of an integer coordinate into a flat colexicographic (shape):(stride)."""
    total = 0
    for extent, step in zip(shape, stride, strict=True):
        total += (coord % extent) * step
        coord //= extent
    return total


def cute_swizzle(x: int, b: int, m: int, s: int) -> int:
    """CuTe Swizzle<B,M,S>: x ^ ((x & (((1<<B)-1) << (M+S))) >> S)."""
    return x ^ ((x & (((1 << b) - 1) << (m + s))) >> s)


@pytest.mark.parametrize("example", EXAMPLES, ids=IDS)
def test_worked_example_exact_layout_element_by_element(example):
    major, swizzle, dtype, size, exact, lbo_el, sbo_el, _, _ = example
    b, m, s, mn_shape, k_shape, mn_stride, k_stride = parse_exact(exact)
    lbo = 16 if lbo_el is None else lbo_el * size        # "1 (assumed)": encoded 1 = 16 bytes
    layout = SmemLayout(major, swizzle, element_storage(dtype), 0, lbo, sbo_el * size)
    mn_total, k_total = int(np.prod(mn_shape)), int(np.prod(k_shape))
    got = layout.bit_offsets(mn_total, k_total)
    for i in range(mn_total):
        for j in range(k_total):
            byte = (cute_index(i, mn_shape, mn_stride) + cute_index(j, k_shape, k_stride)) * size
            assert got[i, j] == cute_swizzle(byte, b, m, s) * 8, (i, j)


@pytest.mark.parametrize("example", EXAMPLES, ids=IDS)
def test_worked_example_descriptor_choice_and_encodings(example):
    """choose_layout picks the example's LBO/SBO; encoded fields are the printed ones."""
    major, swizzle, dtype, _, exact, _, _, lbo_enc, sbo_enc = example
    _, _, _, mn_shape, k_shape, _, _ = parse_exact(exact)
    mn, k = int(np.prod(mn_shape)), int(np.prod(k_shape))
    if (major, swizzle) == ("K", "32B"):
        k = 8   # one 32-byte atom row of tf32: the example's K = 16 overlaps (see next test)
    value = choose_layout(major, swizzle, dtype, mn, k).descriptor().encode()
    assert (value >> 16) & 0x3FFF == lbo_enc
    assert (value >> 32) & 0x3FFF == sbo_enc


def test_worked_example_k_major_32b_overlaps_itself():
    """Erratum: ((8,2),(4,4)):((8,64),(1,4)) maps (mn=1,k=0) and (mn=0,k=8) to the same element.

    K spans 16 tf32 = 64 B but a 32B-swizzle row is 32 B wide; the tile is rejected.
    """
    _, _, _, mn_shape, k_shape, mn_stride, k_stride = parse_exact(EXAMPLES[1][4])
    assert cute_index(1, mn_shape, mn_stride) == cute_index(8, k_shape, k_stride) == 8
    layout = SmemLayout("K", "32B", element_storage("tf32"), 0, 16, 256)
    with pytest.raises(SpecError, match="32-byte row"):
        check_tile(layout, 16, 16)
    check_tile(layout, 16, 8)


def test_examples_match_the_spec_text():
    text = spec_text("ptx-9.7.16-tcgen05.md")
    section = text[text.index("##### 9.7.16.3.3."):text.index("#### 9.7.16.4.")]
    exact = re.findall(r"Exact layout : (Swizzle<[^\n]*)", section)
    assert [e.strip() for e in exact] == [e[4] for e in EXAMPLES]
    encodings = re.findall(r"Encoding of (LBO|SBO) in descriptor \| (?:\(\w+\) >> 4 = )?(\d+)", section)
    assert [int(v) for _, v in encodings] == [x for e in EXAMPLES for x in (e[7], e[8])]


# ---------------------------------------------------------------------------------------------
# Table 53: swizzle atoms. An atom is (rows x cols) 128-bit units, MN first; it must be laid
# out as one contiguous block of rows*cols*16 bytes that uses neither LBO nor SBO.
# ---------------------------------------------------------------------------------------------

ATOM_CASES = [(sw, mj, dt) for sw, mj in sorted(TABLE_53) for dt in ("bf16", "e4m3", "tf32")
              if mj == "K" or (sw == "128B_base32B") == (dt == "tf32")]     # Table 52


@pytest.mark.parametrize("swizzle,major,dtype", ATOM_CASES, ids=["-".join(c) for c in ATOM_CASES])
def test_table53_atom_is_one_contiguous_block(swizzle, major, dtype):
    storage = element_storage(dtype)
    units_mn, units_k = TABLE_53[(swizzle, major)]
    t = storage.per_unit
    mn, k = (units_mn * t, units_k) if major == "MN" else (units_mn, units_k * t)
    layout = SmemLayout(major, swizzle, storage, 0x2000, 0x10000, 0x20000)   # LBO/SBO far away
    units = np.unique(layout.bit_offsets(mn, k) // 128)
    assert units.tolist() == list(range(units_mn * units_k))


# ---------------------------------------------------------------------------------------------
# Swizzle patterns and the base offset (Table 41)
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("swizzle,chunk_bytes,chunks", [("32B", 16, 2), ("64B", 16, 4), ("128B", 16, 8), ("128B_base32B", 32, 4)])
def test_swizzle_permutes_chunks_by_row_phase(swizzle, chunk_bytes, chunks):
    """Within a 1024-byte pattern: chunk c of the row at bits 7.. is moved to chunk c ^ (row mod chunks)."""
    for address in range(0, 2048, 16):
        row = address >> 7
        chunk = (address % (chunks * chunk_bytes)) // chunk_bytes
        block = address - address % (chunks * chunk_bytes)
        expected = block + (chunk ^ (row % chunks)) * chunk_bytes + address % chunk_bytes
        assert pattern_swizzle(address, swizzle) == expected


@pytest.mark.parametrize("major,swizzle,dtype", [("K", "128B", "bf16"), ("K", "64B", "e4m3"), ("K", "32B", "tf32"),
                                                 ("MN", "128B", "f16"), ("MN", "128B_base32B", "tf32")])
@pytest.mark.parametrize("start", [0x80, 0x180, 0x300, 0x1380])
def test_pattern_starting_at_the_start_address(major, swizzle, dtype, start):
    """A tile whose pattern starts at a 128-aligned start address has the same offsets as at 0."""
    mn, k = (16, 16) if major == "K" else (64, 16)
    if dtype == "tf32" and major == "K":
        k = 8
    at_zero = choose_layout(major, swizzle, dtype, mn, k, 0)
    moved = choose_layout(major, swizzle, dtype, mn, k, start)
    assert moved.base_offset == ((start >> 7) & 7 if start % SWIZZLE_PATTERN_BYTES[swizzle] else 0)
    assert (moved.bit_offsets(mn, k) == at_zero.bit_offsets(mn, k)).all()


def test_base_offset_zero_means_absolute_address_swizzle():
    """Base offset 0 at start 0x480 (CUTLASS-style): swizzle phase from absolute address bits 7-9."""
    layout = choose_layout("K", "128B", "bf16", 8, 16, 0x480, pattern_start=0x400)
    assert layout.base_offset == 0
    rows = layout.bit_offsets(8, 16)[:, 0] // 8 + 0x480
    for r, address in enumerate(rows):
        phase = ((0x480 + 128 * r) >> 7) & 7
        assert address == 0x480 + 128 * r + 16 * (0 ^ phase)


# ---------------------------------------------------------------------------------------------
# Element packing inside a 16-byte unit (§9.7.16.10.4.4 / .6)
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype,kind,per_unit,bits", [
    ("e2m1", None, 32, 4), ("e2m1", "mxf4", 32, 4), ("e2m1", "mxf4nvf4", 32, 4),
    ("e2m1", "f8f6f4", 16, 4), ("e2m1", "mxf8f6f4", 16, 4), ("e3m2", None, 16, 6), ("e2m3", "mxf8f6f4", 16, 6),
    ("e4m3", None, 16, 8), ("s8", "i8", 16, 8), ("bf16", None, 8, 16), ("tf32", None, 4, 32),
])
def test_elements_inside_a_unit(dtype, kind, per_unit, bits):
    """K-major no swizzle: element k of row 0 sits at bit k*bits of the first unit."""
    layout = choose_layout("K", "none", dtype, 8, per_unit, kind=kind)
    assert layout.bit_offsets(8, per_unit)[0].tolist() == [i * bits for i in range(per_unit)]
    # 16 padded elements use 64 (4-bit) or 96 (6-bit) bits; the next unit along K starts at LBO.
    assert choose_layout("K", "none", dtype, 8, per_unit + 1, kind=kind).bit_offset(0, per_unit) == 8 * 128


# ---------------------------------------------------------------------------------------------
# Validity: Table 52, Table 53, §9.7.16.3.1.2.1, alignment
# ---------------------------------------------------------------------------------------------

INVALID = [
    # (major, swizzle, dtype, kind, message fragment)
    ("MN", "none", "tf32", None, "Table 52"), ("MN", "128B", "f32", None, "Table 52"),
    ("MN", "64B", "s32", None, "Table 52"), ("MN", "32B", "tf32", None, "Table 52"),
    ("MN", "128B_base32B", "bf16", None, "Table 52"), ("MN", "128B_base32B", "e4m3", None, "Table 52"),
    ("MN", "128B_base32B", "s8", None, "Table 52"),
    ("MN", "none", "e2m1", "mxf4", "never transposed"), ("MN", "128B", "e2m1", "mxf4nvf4", "never transposed"),
    ("MN", "none", "e2m1", None, "never transposed"), ("MN", "128B_base32B", "e2m1", "f8f6f4", "Table 52"),
    ("K", "128B_base32B", "bf16", None, "Table 53"), ("K", "128B_base32B", "tf32", None, "Table 53"),
    ("K", "none", "e3m2", "mxf4", "Tables 42-44"), ("K", "none", "bf16", "tf32", "Tables 42-44"),
    ("K", "none", "f64", None, "type words"), ("KM", "none", "bf16", None, "major"),
    ("K", "16B", "bf16", None, "Table 40"),
]


@pytest.mark.parametrize("major,swizzle,dtype,kind,fragment", INVALID, ids=[f"{a}-{b}-{c}-{d}" for a, b, c, d, _ in INVALID])
def test_invalid_combinations_are_rejected(major, swizzle, dtype, kind, fragment):
    with pytest.raises(SpecError, match=fragment):
        choose_layout(major, swizzle, dtype, 64, 16, kind=kind)


@pytest.mark.parametrize("major,swizzle,dtype", [("MN", "128B_base32B", "tf32"), ("MN", "128B", "bf16"),
                                                 ("MN", "none", "s8"), ("K", "128B", "tf32"), ("K", "none", "e2m1")])
def test_valid_combinations_are_accepted(major, swizzle, dtype):
    choose_layout(major, swizzle, dtype, 64, 8)


def test_absolute_mode_restrictions():
    st = element_storage("e2m1")
    with pytest.raises(SpecError, match="restriction 2"):       # K-major only
        SmemLayout("MN", "128B", element_storage("bf16"), 0, 0x800, 1024, 0, "absolute")
    with pytest.raises(SpecError, match="restriction 1"):       # 128B swizzle only
        SmemLayout("K", "64B", st, 0, 0x800, 512, 0, "absolute")
    with pytest.raises(SpecError, match="restriction 3"):       # base offset 0
        SmemLayout("K", "128B", st, 0x80, 0x800, 1024, 1, "absolute")
    with pytest.raises(SpecError, match="restriction 3"):
        choose_layout("K", "128B", "e2m1", 8, 96, 0x460, pattern_start=0x80, continuation_address=0x800)
    with pytest.raises(SpecError, match="48 bytes"):            # K must be 48 B
        choose_layout("K", "128B", "e2m1", 8, 64, 0x460, continuation_address=0x800)
    with pytest.raises(SpecError, match="one aligned 128-byte row"):
        choose_layout("K", "128B", "e2m1", 8, 96, 0x470, continuation_address=0x870)


def test_absolute_mode_splits_a_48_byte_row():
    """start 0x460 (96 B into its row), K = 96 e2m1 = 48 B: two units in the row, one at LBO."""
    layout = choose_layout("K", "128B", "e2m1", 16, 96, 0x460, continuation_address=0x800)
    units = layout.bit_offsets(16, 96) // 8 + 0x460
    row = lambda r: (r % 8) * 128 + (r // 8) * 1024  # noqa: E731
    for r in range(16):
        for u in range(3):
            linear = (0x460 + u * 16 if u < 2 else 0x800) + row(r)
            assert units[r, u * 32] == linear ^ (((linear >> 7) & 7) << 4)
    with pytest.raises(SpecError, match="absolute leading-dimension mode"):
        choose_layout("K", "128B", "e2m1", 16, 96, 0x460)
    assert choose_layout("K", "128B", "e2m1", 16, 96, 0x440).lbo_mode == "relative"   # fits its row


@pytest.mark.parametrize("kwargs,fragment", [
    ({"start_address": 0x408}, "16 bytes"),
    ({"start_address": 0x40000}, "0x40000"),
    ({"mn": 0}, "positive"), ({"k": -1}, "positive"), ({"mn": 2.0}, "positive"),
])
def test_alignment_and_ranges(kwargs, fragment):
    args = {"major": "K", "swizzle": "128B", "dtype": "bf16", "mn": 8, "k": 16, "start_address": 0} | kwargs
    with pytest.raises(SpecError, match=fragment):
        choose_layout(**args)


def test_tile_must_fit_the_address_space():
    with pytest.raises(SpecError, match="18-bit"):
        choose_layout("K", "none", "f32", 256, 256, 0x30000)
    with pytest.raises(SpecError, match="Table 40"):
        choose_layout("K", "none", "f32", 16384, 4)   # LBO = 128 B * 2048 does not fit 18 bits


def test_swizzle_row_must_not_cross_its_block():
    with pytest.raises(SpecError, match="128-byte row"):
        choose_layout("K", "128B", "bf16", 8, 64, 0x410)          # 128 B of K from 16 B into a row
    with pytest.raises(SpecError, match="64-byte block"):
        choose_layout("MN", "64B", "bf16", 64, 8, 0x420)          # a full 64 B MN run from 32 B in
    assert image_bytes(choose_layout("MN", "64B", "bf16", 8, 8, 0x420), 8, 8) > 0


def test_lbo_of_k_major_swizzled_layouts_is_ignored_by_the_formula():
    """§9.7.16.3.1.1: K-major swizzled LBO "not used, assumed to be 1" (NOTES.md item 5)."""
    st = element_storage("bf16")
    a = SmemLayout("K", "128B", st, 0, 16, 1024).bit_offsets(32, 64)
    b = SmemLayout("K", "128B", st, 0, 0x1230, 1024).bit_offsets(32, 64)
    assert (a == b).all()
