"""Shared memory descriptor (§9.7.16.4.1, Tables 40-41) against hand-computed values and spec examples."""

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reference.errors import SpecError
from reference.smem_descriptor import SmemDescriptor, base_offset_for, decode_smem_descriptor
from tests.spec_texts import spec_text

pytestmark = pytest.mark.reference


def field(value: int, lo: int, width: int) -> int:
    """Test-local bit extraction, independent of the module's masks."""
    return (value >> lo) % (1 << width)


def test_hand_computed_value():
    # start 0x400 -> enc 0x40 (bits 0-13); LBO 256 -> enc 0x10 << 16; SBO 1024 -> enc 0x40 << 32;
    # constant 0b001 at bit 46; swizzle 128B = 2 at bits 61-63.
    d = SmemDescriptor(start_address=0x400, leading_byte_offset=256, stride_byte_offset=1024, swizzle="128B")
    assert d.encode() == 0x40 + (0x10 << 16) + (0x40 << 32) + (1 << 46) + (2 << 61) == 0x4000404000100040


@pytest.mark.parametrize("swizzle,code", [("none", 0), ("128B_base32B", 1), ("128B", 2), ("64B", 4), ("32B", 6)])
def test_swizzle_codes(swizzle, code):
    assert field(SmemDescriptor(swizzle=swizzle).encode(), 61, 3) == code


def test_absolute_mode_bit_52_and_base_offset_bits():
    v = SmemDescriptor(leading_byte_offset=0x1230, lbo_mode="absolute", swizzle="128B").encode()
    assert field(v, 52, 1) == 1 and field(v, 16, 14) == 0x123
    assert field(SmemDescriptor(base_offset=5, swizzle="64B").encode(), 49, 3) == 5


def test_constant_bits_46_to_48_and_zero_bits_53_to_60():
    v = SmemDescriptor().encode()
    assert field(v, 46, 3) == 0b001
    assert field(v, 53, 8) == 0  # NOTES.md item 2: the "0xb00000000" of the text is a typo for 0


# §9.7.16.3.3 worked examples: (example, LBO bytes, SBO bytes, LBO encoding, SBO encoding).
# K-major swizzled: LBO "not used, assumed to be 1" -> encoding 1 (16 bytes).
CANONICAL_EXAMPLES = [
    ("K-Major, no-swizzling and tf32", 64 * 4, 32 * 4, 16, 8),
    ("K-Major, 32B swizzling and tf32", 16, 64 * 4, 1, 16),
    ("MN-Major, no-swizzling and bf16", 128 * 2, 64 * 2, 16, 8),
    ("MN-Major, 32B swizzling and bf16", 128 * 2, 256 * 2, 16, 32),
    ("MN-Major, 64B swizzling and bf16", 256 * 2, 512 * 2, 32, 64),
]


@pytest.mark.parametrize("name,lbo,sbo,lbo_enc,sbo_enc", CANONICAL_EXAMPLES, ids=[e[0] for e in CANONICAL_EXAMPLES])
def test_canonical_layout_example_encodings(name, lbo, sbo, lbo_enc, sbo_enc):
    v = SmemDescriptor(leading_byte_offset=lbo, stride_byte_offset=sbo).encode()
    assert (field(v, 16, 14), field(v, 32, 14)) == (lbo_enc, sbo_enc)


def test_canonical_examples_are_transcribed_from_the_spec():
    text = spec_text("ptx-9.7.16-tcgen05.md")
    section = text[text.index("##### 9.7.16.3.3."):text.index("#### 9.7.16.4.")]
    found = re.findall(r"Encoding of LBO in descriptor \| (.*?) \|\s*\n\s*\| Encoding of SBO in descriptor \| (.*?) \|", section)
    encodings = [(re.findall(r"\d+", lbo)[-1], re.findall(r"\d+", sbo)[-1]) for lbo, sbo in found]
    assert [(int(a), int(b)) for a, b in encodings] == [(e[3], e[4]) for e in CANONICAL_EXAMPLES]
    for name, *_ in CANONICAL_EXAMPLES:
        assert name.split(",")[0] in section


@pytest.mark.parametrize("addr,swizzle,expected", [
    (0, "128B", 0), (1024, "128B", 0), (0x480, "128B", 1), (0x780, "128B", 7),
    (512, "64B", 0), (0x280, "64B", 5), (256, "32B", 0), (0x180, "32B", 3), (0x180, "none", 0),
])
def test_table41_base_offset(addr, swizzle, expected):
    assert base_offset_for(addr, swizzle) == expected


byte_quantity = st.integers(0, (1 << 14) - 1).map(lambda x: x * 16)


@st.composite
def descriptors(draw):
    mode = draw(st.sampled_from(["relative", "absolute"]))
    swizzle = "128B" if mode == "absolute" else draw(st.sampled_from(["none", "128B_base32B", "128B", "64B", "32B"]))
    base = 0 if mode == "absolute" else draw(st.integers(0, 7))
    return SmemDescriptor(draw(byte_quantity), draw(byte_quantity), draw(byte_quantity), base, mode, swizzle)


@settings(max_examples=400, deadline=None)
@given(descriptors())
def test_round_trip(d):
    v = d.encode()
    assert 0 <= v < 1 << 64
    assert decode_smem_descriptor(v) == d
    assert field(v, 0, 14) * 16 == d.start_address and field(v, 32, 14) * 16 == d.stride_byte_offset


@pytest.mark.parametrize("kwargs,rule", [
    (dict(start_address=8), "16-byte alignment"),
    (dict(leading_byte_offset=24), "16-byte alignment"),
    (dict(stride_byte_offset=1 << 18), "Table 40"),
    (dict(start_address=-16), "Table 40"),
    (dict(base_offset=8), "bits 49-51"),
    (dict(swizzle="16B"), "Table 40"),
    (dict(lbo_mode="sideways"), "bit 52"),
    (dict(lbo_mode="absolute", swizzle="64B"), "restriction 1"),
    (dict(lbo_mode="absolute", swizzle="128B", base_offset=1), "restriction 3"),
])
def test_invalid_fields_name_their_rule(kwargs, rule):
    with pytest.raises(SpecError, match=re.escape(rule)):
        SmemDescriptor(**kwargs)


VALID = SmemDescriptor(swizzle="128B").encode()


@pytest.mark.parametrize("value,rule", [
    *[((VALID & ~(7 << 61)) | (code << 61), "bits 61-63") for code in (3, 5, 7)],
    (VALID & ~(1 << 46), "bits 46-48"), (VALID | (1 << 47), "bits 46-48"),
    (VALID | (1 << 53), "bits 53-60"), (VALID | (1 << 60), "bits 53-60"),
    (VALID | (1 << 14), "reserved"), (VALID | (1 << 31), "reserved"),
    (1 << 64, "64-bit"), (-1, "64-bit"),
])
def test_decode_rejects(value, rule):
    with pytest.raises(SpecError, match=re.escape(rule)):
        decode_smem_descriptor(value)
