"""Shared memory descriptor (PTX ISA §9.7.16.4.1, Tables 40-41).

64-bit value describing a multiplicand matrix in shared memory::

    63  61 60      53 52 51 49 48 46 45        32 31 30 29        16 15 14 13         0
   +------+----------+--+-----+-----+-----------+-----+------------+-----+------------+
   |swizz.| 0 (8 b)  |LM|base | 001 | SBO enc.  | 0 0 | LBO enc.   | 0 0 | start enc. |
   +------+----------+--+-----+-----+-----------+-----+------------+-----+------------+

   enc(x) = (x & 0x3FFFF) >> 4     (byte quantities, 16-byte aligned, 18 significant bits)
   LM     = leading-dimension stride mode: 0 relative byte offset, 1 absolute byte address
   swizzle: 0 none, 1 128B with 32B atomicity, 2 128B, 4 64B, 6 32B; 3, 5, 7 invalid.

Errata (shared/spec/NOTES.md item 2): bits 53-60 are "0xb00000000" in the text; the field is 0.
Bits 46-48 are the constant 0b001. Bits 14-15 and 30-31 are not listed by Table 40: reserved, 0.
"""

from __future__ import annotations

from dataclasses import dataclass

from reference.errors import SpecError, expects_but_got
from reference.tables import SWIZZLE_PATTERN_BYTES, SWIZZLES

SECTION = "9.7.16.4.1"

SWIZZLE_CODES: dict[str, int] = {"none": 0, "128B_base32B": 1, "128B": 2, "64B": 4, "32B": 6}
SWIZZLE_NAMES: dict[int, str] = {code: name for name, code in SWIZZLE_CODES.items()}
LBO_MODES: tuple[str, ...] = ("relative", "absolute")
ADDRESS_LIMIT = 1 << 18            # enc() keeps 18 bits of a byte quantity
FIXED_CONSTANT = 0b001             # bits 46-48


def descriptor_encode(x: int) -> int:
    """matrix-descriptor-encode(x) = (x & 0x3FFFF) >> 4 (Table 40)."""
    return (x & 0x3FFFF) >> 4


def check_byte_quantity(name: str, x: int) -> int:
    """A start address / LBO / SBO: an int in [0, 2^18), 16-byte aligned (§9.7.16.4.1)."""
    if not isinstance(x, int) or isinstance(x, bool):
        raise SpecError(SECTION, "Table 40", expects_but_got(name, "an integer number of bytes", x))
    if not 0 <= x < ADDRESS_LIMIT:
        raise SpecError(SECTION, "Table 40", expects_but_got(name, f"0 <= value < 0x{ADDRESS_LIMIT:x} (18 bits encoded as (x & 0x3FFFF) >> 4)", x))
    if x % 16:
        raise SpecError(SECTION, "16-byte alignment", expects_but_got(name, "a multiple of 16 bytes", x))
    return x


def base_offset_for(pattern_start_address: int, swizzle: str) -> int:
    """Base offset for a swizzle pattern that starts at ``pattern_start_address`` (Table 41).

    0 when the pattern starts on its boundary (1024 B for 128B, 512 B for 64B, 256 B for 32B);
    otherwise ``(pattern start addr >> 0x7) & 0x7``. No swizzling has no pattern: 0.
    """
    if swizzle not in SWIZZLE_CODES:
        raise SpecError(SECTION, "Table 40", expects_but_got("swizzle", "one of " + ", ".join(SWIZZLES), swizzle))
    boundary = SWIZZLE_PATTERN_BYTES[swizzle]
    if boundary == 0 or pattern_start_address % boundary == 0:
        return 0
    return (pattern_start_address >> 0x7) & 0x7


@dataclass(frozen=True)
class SmemDescriptor:
    """Shared memory descriptor fields, byte quantities in bytes (not the >>4 encoding)."""

    start_address: int = 0
    leading_byte_offset: int = 0      # relative: byte offset; absolute: byte address (§9.7.16.3.1)
    stride_byte_offset: int = 0
    base_offset: int = 0              # 0..7, Table 41
    lbo_mode: str = "relative"        # "relative" | "absolute" (bit 52)
    swizzle: str = "none"             # "none" | "128B_base32B" | "128B" | "64B" | "32B"

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        """Check every field rule of §9.7.16.4.1 and §9.7.16.3.1.2.1; raise SpecError."""
        check_byte_quantity("start_address", self.start_address)
        check_byte_quantity("leading_byte_offset", self.leading_byte_offset)
        check_byte_quantity("stride_byte_offset", self.stride_byte_offset)
        if self.swizzle not in SWIZZLE_CODES:
            raise SpecError(SECTION, "Table 40", expects_but_got("swizzle", "one of " + ", ".join(SWIZZLES), self.swizzle))
        if self.lbo_mode not in LBO_MODES:
            raise SpecError(SECTION, "Table 40 bit 52", expects_but_got("lbo_mode", "relative or absolute", self.lbo_mode))
        if not isinstance(self.base_offset, int) or not 0 <= self.base_offset <= 7:
            raise SpecError(SECTION, "Table 40 bits 49-51", expects_but_got("base_offset", "an integer 0..7", self.base_offset))
        if self.lbo_mode == "absolute":
            if self.swizzle != "128B":
                raise SpecError("9.7.16.3.1.2.1", "absolute address mode restriction 1",
                                expects_but_got("swizzle in absolute leading-dimension mode", "128B (16B atomicity)", self.swizzle))
            if self.base_offset != 0:
                raise SpecError("9.7.16.3.1.2.1", "absolute address mode restriction 3",
                                expects_but_got("base_offset in absolute leading-dimension mode", "0", self.base_offset))

    def encode(self) -> int:
        """The 64-bit descriptor value (Table 40)."""
        return (descriptor_encode(self.start_address)
                | descriptor_encode(self.leading_byte_offset) << 16
                | descriptor_encode(self.stride_byte_offset) << 32
                | FIXED_CONSTANT << 46
                | self.base_offset << 49
                | (1 if self.lbo_mode == "absolute" else 0) << 52
                | SWIZZLE_CODES[self.swizzle] << 61)

    @classmethod
    def decode(cls, value: int) -> SmemDescriptor:
        """Fields of a 64-bit descriptor value; rejects reserved bits, bad constant, swizzle 3/5/7."""
        return decode_smem_descriptor(value)

    def to_json(self) -> dict:
        """The CLI's JSON object (field names as in ``tcgen05-cts decode smem``)."""
        return {
            "start_address": self.start_address,
            "leading_byte_offset": self.leading_byte_offset,
            "stride_byte_offset": self.stride_byte_offset,
            "base_offset": self.base_offset,
            "lbo_mode": self.lbo_mode,
            "swizzle": self.swizzle,
        }


def decode_smem_descriptor(value: int) -> SmemDescriptor:
    """Decode a 64-bit shared memory descriptor (Table 40), written apart from ``encode``.

    Reads each field with its own literal mask so that a round trip through encode and decode
    checks the bit positions twice.
    """
    if not isinstance(value, int) or not 0 <= value < 1 << 64:
        raise SpecError(SECTION, "Table 40", expects_but_got("shared memory descriptor", "a 64-bit unsigned value", value))
    reserved = value & ((0b11 << 14) | (0b11 << 30))
    if reserved:
        raise SpecError(SECTION, "Table 40 reserved bits 14-15, 30-31",
                        expects_but_got("reserved bits", "0", hex(reserved)))
    constant = (value >> 46) & 0b111
    if constant != FIXED_CONSTANT:
        raise SpecError(SECTION, "Table 40 bits 46-48", expects_but_got("fixed constant", "0b001", bin(constant)))
    high = (value >> 53) & 0xFF
    if high:
        raise SpecError(SECTION, "Table 40 bits 53-60 (NOTES.md item 2)", expects_but_got("bits 53-60", "0", hex(high)))
    code = value >> 61
    if code not in SWIZZLE_NAMES:
        raise SpecError(SECTION, "Table 40 bits 61-63", expects_but_got("swizzle mode", "0, 1, 2, 4 or 6 (3, 5, 7 are invalid)", code))
    return SmemDescriptor(
        start_address=(value & 0x3FFF) << 4,
        leading_byte_offset=((value >> 16) & 0x3FFF) << 4,
        stride_byte_offset=((value >> 32) & 0x3FFF) << 4,
        base_offset=(value >> 49) & 0x7,
        lbo_mode="absolute" if (value >> 52) & 1 else "relative",
        swizzle=SWIZZLE_NAMES[code],
    )
