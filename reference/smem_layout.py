"""Canonical shared-memory layouts of MMA operands (PTX ISA §9.7.16.3, §9.7.16.10.2-6).

A layout maps a logical element ``(mn, k)`` of an M×K (A) or N×K (B) operand to a bit address in
shared memory. It is the *pack* path of the executable spec: it evaluates the canonical-layout
table of §9.7.16.3.3 literally, as CuTe layouts ``Swizzle o (shape):(stride)`` in units of
elements, then turns element offsets into byte/bit addresses. (``reference.smem_image.read``
computes the same addresses a second way, from the prose definitions of LBO/SBO.)

Nothing here is tcgen05-only except the 128B-with-32B-atomicity swizzle and the absolute
leading-dimension mode, so the same function serves Hopper ``wgmma`` descriptors.

Units (§9.7.16.3.3): ``T = 128 / element bits`` elements fill one 128-bit (16-byte) *unit*::

      bit 0                                                      bit 127
     +------------+------------+-----   ---+--------------+-----------+
     | element 0  | element 1  |   ...     | element T-1  | (padding) |    one 16-byte unit
     +------------+------------+-----   ---+--------------+-----------+
      element i occupies bits [i*bits, (i+1)*bits) of the little-endian 128-bit unit

Padding exists only for the 4/6-bit types of kind::f8f6f4 / kind::mxf8f6f4 (§9.7.16.10.4.4:
"contiguously packed along with padding"): 16 elements per unit, i.e. 64 (4-bit) or 96 (6-bit)
data bits followed by 64 / 32 zero bits. Source of the exact format: the CUDA driver API text of
``CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B`` ("16 x U4 packed values ... 8 byte gaps between every
8 byte chunk") and ``16U6_ALIGN16B`` ("16 x U6 ... 4 byte gaps between every 12 byte chunk"),
the TMA types CUTLASS uses for ``float_e2m1/e2m3/e3m2_unpacksmem_t`` (``copy_sm90_desc.hpp``),
and the ``.b4x16_p64`` / ``.b6x16_p32`` TMA element types. kind::mxf4 / mxf4nvf4 pack two e2m1
per byte with no padding (§9.7.16.10.4.6): T = 32.

Swizzling (§9.7.16.3.3 last column, CuTe ``Swizzle<B,M,S>``, include/cute/swizzle.hpp) acts on
*byte* addresses: XOR bits [M+S, M+S+B) into bits [M, M+B)::

    Swizzle<3,4,3> (128B):        addr bits  9 8 7 | 6 5 4 | 3 2 1 0
                                             y y y   z z z             z ^= y  (16 B chunks, 128 B rows)
    Swizzle<2,4,3> (64B), <1,4,3> (32B): the low 2 / 1 bits of y and z
    Swizzle<2,5,2> (128B_base32B): bits 8 7 -> bits 6 5               (32 B chunks, 128 B rows;
                                   CUTLASS Layout_MN_SW128_32B_Atom, mma_traits_sm100.hpp)

Base offset (Table 41) and where the pattern starts — decision (documented in docs/layouts.md):
the swizzle is applied to the address *relative to the start of the repeating pattern*, and the
descriptor tells the hardware that start only modulo 1024 through ``base_offset``
(``= (pattern start >> 7) & 7``). So the y bits are taken from ``addr - 128 * base_offset``; the
z bits are those of ``addr`` itself (they lie below bit 7, which the base offset never touches).
With base offset 0 this is the absolute-address swizzle of TMA and CUTLASS (which advances the
start address inside a 128B row and keeps base offset 0, ``make_umma_desc``).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, replace

import numpy as np

from reference.errors import SpecError, expects_but_got
from reference.smem_descriptor import SmemDescriptor
from reference.spec_questions import resolve
from reference.tables import (
    A_B_TYPE_CODES,
    ELEMENT_BITS,
    KINDS,
    MAJORS,
    SWIZZLES,
    legal_swizzles,
    table52_swizzles,
)

SECTION = "9.7.16.3.3"

# ---------------------------------------------------------------------------------------------
# Elements in shared memory (§9.7.16.3.3 "T", §9.7.16.10.4.4, §9.7.16.10.4.6)
# ---------------------------------------------------------------------------------------------

# type word -> width of one element in shared memory, in bits (tf32 occupies a 32-bit container).
STORAGE_BITS: dict[str, int] = ELEMENT_BITS
PADDED_KINDS: tuple[str, ...] = ("f8f6f4", "mxf8f6f4")      # §9.7.16.10.4.4: 16 elements + padding
PACKED_FP4_KINDS: tuple[str, ...] = ("mxf4", "mxf4nvf4")    # §9.7.16.10.4.6: two e2m1 per byte
UNIT_BYTES = 16


@dataclass(frozen=True)
class ElementStorage:
    """How one operand element sits in shared memory.

    ``bits``: width in memory; ``per_unit``: T, elements per 16-byte unit; ``padded``: the unit
    ends in padding (4/6-bit types of kind::f8f6f4 / mxf8f6f4). Element i of a unit occupies
    bits [i*bits, (i+1)*bits).
    """

    dtype: str
    bits: int
    per_unit: int
    padded: bool = False

    @property
    def data_bits(self) -> int:
        """Bits of a unit that hold elements (the rest is padding)."""
        return self.bits * self.per_unit


def element_storage(dtype: str, kind: str | None = None) -> ElementStorage:
    """Storage of a ``dtype`` element (type word) in shared memory for MMA ``kind``.

    e2m1 is ambiguous by type word alone: kind::mxf4 / mxf4nvf4 (and ``kind=None``, where the
    spec's ``T = 128 / 4 = 32`` applies literally) pack two per byte; kind::f8f6f4 / mxf8f6f4
    use 16 elements + 8 bytes of padding per 16-byte unit. e2m3/e3m2 exist only in the padded
    form (16 elements + 4 bytes of padding).
    """
    if dtype not in STORAGE_BITS:
        raise SpecError("9.7.16.2.1", "Table 39 type words",
                        expects_but_got("dtype", "one of " + ", ".join(STORAGE_BITS), dtype))
    if kind is not None:
        if kind not in KINDS:
            raise SpecError("9.7.16.10", "MMA kinds", expects_but_got("kind", "one of " + ", ".join(KINDS), kind))
        if dtype not in A_B_TYPE_CODES[kind]:
            raise SpecError("9.7.16.4.2", "Tables 42-44",
                            expects_but_got(f"A/B type of kind::{kind}", "one of " + ", ".join(A_B_TYPE_CODES[kind]), dtype))
    bits = STORAGE_BITS[dtype]
    if bits == 6 or (bits == 4 and kind in PADDED_KINDS):
        return ElementStorage(dtype, bits, 16, padded=True)
    return ElementStorage(dtype, bits, 128 // bits)


# ---------------------------------------------------------------------------------------------
# Swizzle functors (§9.7.16.3.3 last column; CuTe Swizzle<B,M,S>)
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Swizzle:
    """CuTe ``Swizzle<B,M,S>`` on byte addresses: XOR bits [M+S, M+S+B) into bits [M, M+B)."""

    b: int
    m: int
    s: int

    def __call__(self, x):
        """Swizzled value of ``x`` (int or integer numpy array)."""
        return x ^ self.flips(x)

    def flips(self, x):
        """The bits the swizzle XORs into ``x``: its y bits moved down onto the z bits."""
        yyy = ((1 << self.b) - 1) << (self.m + self.s)
        return (x & yyy) >> self.s


@dataclass(frozen=True)
class SwizzleGeometry:
    """A swizzle mode's functor and row geometry.

    ``units_per_row``: 16-byte units in one swizzle row (S: the 1/2/4/8 of the canonical
    layouts, "(T,S,m)"); ``rows``: rows of one atom along the other dimension (8; 4 for
    128B_base32B, whose atom is 128 B x 4 rows: CUTLASS ``Layout_MN_SW128_32B_Atom``).
    """

    functor: Swizzle
    units_per_row: int
    rows: int

    @property
    def row_bytes(self) -> int:
        return self.units_per_row * UNIT_BYTES

    @property
    def atom_bytes(self) -> int:
        return self.row_bytes * self.rows


# Transcribed from the canonical-layout table of §9.7.16.3.3 (S and Swizzle<B,4,3> per row);
# 128B_base32B from CUTLASS (mma_sm100_desc.hpp: Swizzle<2,5,2> o ((T,8,m),(4,k))).
GEOMETRY: dict[str, SwizzleGeometry] = {
    "none": SwizzleGeometry(Swizzle(0, 4, 3), 1, 8),
    "32B": SwizzleGeometry(Swizzle(1, 4, 3), 2, 8),
    "64B": SwizzleGeometry(Swizzle(2, 4, 3), 4, 8),
    "128B": SwizzleGeometry(Swizzle(3, 4, 3), 8, 8),
    "128B_base32B": SwizzleGeometry(Swizzle(2, 5, 2), 8, 4),
}


def pattern_anchor(start_address: int, base_offset: int, reading: str | None = None) -> int:
    """The address the swizzle's row bits are counted from (Table 41 base offset), modulo 1024.

    Spec question ``Q-BASE-OFFSET``: ``pattern-anchor`` (the pick; module docstring) -- the pattern
    starts at ``128 * base_offset``; ``start-phase`` -- the row phase is counted from the start
    address's 128-byte row plus the base offset (anchor = start rounded down to 128 minus
    ``128 * base_offset``). They agree when the base offset is 0 and the start lies in the first
    128 bytes of a 1024-byte block, as every generated tile with base offset 0 does."""
    if resolve("Q-BASE-OFFSET", reading) == "start-phase":
        return start_address - start_address % 128 - (base_offset << 7)
    return base_offset << 7


def pattern_swizzle(address, swizzle: str, base_offset: int = 0, start_address: int | None = None):
    """Physical byte address of linear byte ``address`` under ``swizzle`` (Table 41 base offset).

    The y bits come from ``address - anchor`` (:func:`pattern_anchor`: ``128 * base_offset``
    under the pick, so the pattern starts there modulo 1024); see the module docstring.
    """
    fn = GEOMETRY[swizzle].functor
    if fn.b == 0:                 # no swizzle: nothing to XOR
        return address
    anchor = base_offset << 7 if start_address is None else pattern_anchor(start_address, base_offset)
    return address ^ fn.flips(address - anchor)     # = address ^ (fn(rel) ^ rel), rel = address - anchor


# ---------------------------------------------------------------------------------------------
# Canonical layouts as CuTe (shape):(stride) modes (§9.7.16.3.3)
# ---------------------------------------------------------------------------------------------

Mode = tuple[tuple[int, int], ...]   # ((extent, stride), ...): colexicographic, last extent unbounded


def canonical_modes(major: str, swizzle: str, t: int, lbo: int, sbo: int,
                    reading: str | None = None) -> tuple[Mode, Mode]:
    """The (MN mode, K mode) of the canonical layout, strides in elements (§9.7.16.3.3).

    ``lbo``/``sbo`` are in elements here (bytes / 16 * T). The repeat counts m and k are left
    unbounded (the last extent of each mode is never applied)::

        MN-major none     ((T,1,m),(8,k)) : ((1,T,SBO),(1T,LBO))
        MN-major S-swz    ((T,S,m),(8,k)) : ((1,T,LBO),(ST,SBO))     S = 2, 4, 8 (32B, 64B, 128B)
        MN-major 128B/32B ((T,8,m),(4,k)) : ((1,T,LBO),(8T,SBO))     (CUTLASS, not in the table)
        K-major  none     ((8,m),(T,2k))  : ((1T,SBO),(1,LBO))
        K-major  S-swz    ((8,m),(T,2k))  : ((ST,SBO),(1,T))     (T: Q-LBO-KSW's pick; LBO if honoured)
        K-major  128B/32B ((G,m),(T,2k))  : ((8T,SBO),(1,T))     (legal under Q-KMAJOR-BASE32B only;
                                                                  G = kmajor_group_rows: 8 or 4)
    """
    geo = GEOMETRY[swizzle]
    s = geo.units_per_row
    if major == "MN":
        if swizzle == "none":
            return ((t, 1), (1, t), (0, sbo)), ((8, t), (0, lbo))
        return ((t, 1), (s, t), (0, lbo)), ((geo.rows, s * t), (0, sbo))
    if swizzle == "none":
        return ((8, t), (0, sbo)), ((t, 1), (0, lbo))
    return ((kmajor_group_rows(swizzle), s * t), (0, sbo)), ((t, 1), (0, swizzled_k_unit_stride(lbo, t, reading)))


def kmajor_group_rows(swizzle: str, reading: str | None = None) -> int:
    """Rows of a K-major swizzled operand between two stride-byte-offset steps (§9.7.16.3.2: "the
    offset from the first 8 rows to the next 8 rows"): 8, except 128B with 32B atomicity under spec
    question ``Q-KMAJOR-BASE32B``'s reading ``legal-4-rows`` (the 32B atom's 4 rows, as DeepGEMM's
    K-major descriptor with kUseBase32 computes SBO). Under the pick (``table-53``) that layout is
    not legal at all (``check_combination``)."""
    if swizzle == "128B_base32B" and resolve("Q-KMAJOR-BASE32B", reading) == "legal-4-rows":
        return 4
    return 8


def swizzled_k_unit_stride(lbo, unit: int, reading: str | None = None):
    """Distance from one 16-byte unit along K to the next in a K-major swizzled layout, in the
    units of ``lbo`` (``unit`` = one 16-byte unit in those units): spec question ``Q-LBO-KSW``,
    ``assumed-16`` (the pick: Table 40 "not used, assumed to be 1") or ``honoured`` (the LBO)."""
    return lbo if resolve("Q-LBO-KSW", reading) == "honoured" else unit


def evaluate_mode(mode: Mode, coord):
    """Offset of integer coordinate(s) ``coord`` in a colexicographic ``mode`` (CuTe crd2idx, §9.7.16.3.3)."""
    offset = 0
    for extent, stride in mode[:-1]:
        offset = offset + (coord % extent) * stride
        coord = coord // extent
    return offset + coord * mode[-1][1]


# ---------------------------------------------------------------------------------------------
# The layout
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class SmemLayout:
    """An operand layout in shared memory: the descriptor's fields + major-ness + element storage.

    Byte quantities in bytes. ``leading_byte_offset`` is an address in ``lbo_mode="absolute"``.
    """

    major: str
    swizzle: str
    storage: ElementStorage
    start_address: int = 0
    leading_byte_offset: int = 0
    stride_byte_offset: int = 0
    base_offset: int = 0
    lbo_mode: str = "relative"

    def __post_init__(self) -> None:
        check_combination(self.major, self.swizzle, self.storage)
        self.descriptor()  # field ranges, 16-byte alignment, absolute-mode rules 1 and 3
        if self.lbo_mode == "absolute" and self.major != "K":
            raise SpecError("9.7.16.3.1.2.1", "absolute address mode restriction 2",
                            expects_but_got("major-ness in absolute leading-dimension mode", "K", self.major))

    def descriptor(self) -> SmemDescriptor:
        """The shared memory descriptor (§9.7.16.4.1, Table 40) of this layout."""
        return SmemDescriptor(self.start_address, self.leading_byte_offset, self.stride_byte_offset,
                              self.base_offset, self.lbo_mode, self.swizzle)

    @classmethod
    def from_descriptor(cls, desc: SmemDescriptor, major: str, storage: ElementStorage) -> SmemLayout:
        """The layout a descriptor (§9.7.16.4.1) describes for an operand of this major-ness and storage."""
        return cls(major, desc.swizzle, storage, desc.start_address, desc.leading_byte_offset,
                   desc.stride_byte_offset, desc.base_offset, desc.lbo_mode)

    def bit_addresses(self, mn, k, lbo_reading: str | None = None) -> np.ndarray:
        """Absolute bit address (byte address * 8 + bit) of element(s) ``(mn, k)`` (int64 arrays):
        the byte address of its 16-byte unit * 8 + its index in the unit * element bits
        (:meth:`unit_addresses`)."""
        unit, index = self.unit_addresses(mn, k, lbo_reading)
        return unit * 8 + index * self.storage.bits

    def unit_addresses(self, mn, k, lbo_reading: str | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(byte address of the 16-byte unit holding element(s) ``(mn, k)``, the element's index
        in that unit) (int64 arrays; ``mn`` and ``k`` broadcast, the index may keep the shape of
        the coordinate it depends on).

        Evaluates the canonical layout (element offset), splits it into 16-byte unit and index
        in the unit, moves, in absolute leading-dimension mode, the part of a row beyond its
        128-byte row to the leading-dimension address (§9.7.16.3.1.2), and swizzles the unit's
        byte address (Table 41 base offset). The MN and K modes are evaluated apart and split
        apart when one of them moves whole units only (every canonical layout: the mode that is
        not the leading dimension steps by whole units), so only their sum and the swizzle run
        over the whole tile.
        """
        mn = np.asarray(mn, dtype=np.int64)
        k = np.asarray(k, dtype=np.int64)
        t = self.storage.per_unit
        lbo_el = 0 if self.lbo_mode == "absolute" else self.leading_byte_offset // UNIT_BYTES * t
        sbo_el = self.stride_byte_offset // UNIT_BYTES * t
        if self.lbo_mode == "absolute":       # the field is the continuation address (§9.7.16.3.1.2), not a
            lbo_reading = "assumed-16"        # stride: spec question Q-LBO-KSW is about the relative mode
        mn_mode, k_mode = canonical_modes(self.major, self.swizzle, t, lbo_el, sbo_el, lbo_reading)
        e_mn, e_k = evaluate_mode(mn_mode, mn), evaluate_mode(k_mode, k)
        if not (e_mn % t).any():          # (e_mn + e_k) // t = e_mn // t + e_k // t, index e_k % t
            units_mn = e_mn // t
            units_k, index = np.divmod(e_k, t)
        elif not (e_k % t).any():
            units_mn, index = np.divmod(e_mn, t)
            units_k = e_k // t
        else:
            element = e_mn + e_k
            units_mn, units_k, index = element // t, 0, element % t
        linear_k = units_k * UNIT_BYTES
        if self.lbo_mode == "absolute":
            # The K run of a row starts at start % 128 inside its 128 B row; what passes the row
            # end continues in the same row of the chunk at the absolute address (CUTLASS SM103
            # K = 96: LBO = start address of the next buffer, 128B swizzle, base offset 0).
            in_row = self.start_address % 128 + (k // t) * UNIT_BYTES
            moved = self.leading_byte_offset - 128 + self.start_address % 128 - self.start_address
            linear_k = linear_k + np.where(in_row >= 128, moved, 0)
        linear = (self.start_address + units_mn * UNIT_BYTES) + linear_k
        return pattern_swizzle(linear, self.swizzle, self.base_offset, self.start_address), np.asarray(index)

    def bit_offset(self, mn: int, k: int) -> int:
        """Bit offset of element ``(mn, k)`` from the start address (§9.7.16.3.3)."""
        return int(self.bit_addresses(mn, k)) - self.start_address * 8

    def bit_offsets(self, mn: int, k: int) -> np.ndarray:
        """``(mn, k)`` int64 array: bit offset of every element of an mn×k tile from the start address."""
        rows, cols = np.arange(mn, dtype=np.int64)[:, None], np.arange(k, dtype=np.int64)[None, :]   # broadcast
        return self.bit_addresses(rows, cols) - self.start_address * 8


PATTERN_PERIOD = 1024     # bytes: every swizzle functor of Table 41 reads address bits below 10 only


def pattern_period(swizzle: str) -> int:
    """Bytes after which a swizzle pattern repeats: 2^(M + S + B) of its functor (the XOR reads
    address bits below that: 128B 1024, 64B and 128B_base32B 512, 32B 256); no swizzle: 16 (a
    unit)."""
    if swizzle == "none":
        return UNIT_BYTES
    fn = GEOMETRY[swizzle].functor
    return 1 << (fn.m + fn.s + fn.b)


@functools.lru_cache(maxsize=4096)
def first_period(layout: SmemLayout) -> tuple[SmemLayout, int]:
    """(``layout`` moved down by whole pattern periods (:func:`pattern_period`), the bytes it
    moved): every element of the moved layout sits exactly that many bytes lower (plans of
    addresses are computed once per period and moved back).

    Why: the canonical layout's offsets are relative to the start address; the absolute
    leading-dimension mode's jump is the difference of its two addresses (both move) and its
    split reads the start modulo 128 (a 128B layout: its period is 1024); the swizzle XORs
    address bits 4-6 (5-6) with bits 7-9 (7-8) of the address minus an anchor that moves with the
    start (``start-phase``) or is fixed (``128 * base offset``, the pick of Q-BASE-OFFSET):
    neither reads the bits at and above the period. A move whose layout would not be legal is not
    made (moved 0). Once per layout (layouts are immutable; nothing here reads a spec question)."""
    period = pattern_period(layout.swizzle)
    if layout.lbo_mode == "absolute":
        period = max(period, PATTERN_PERIOD)
    shift = layout.start_address - layout.start_address % period
    if layout.lbo_mode == "absolute":
        shift = min(shift, layout.leading_byte_offset - layout.leading_byte_offset % period)
    if not shift:
        return layout, 0
    moved = {"start_address": layout.start_address - shift}
    if layout.lbo_mode == "absolute":
        moved["leading_byte_offset"] = layout.leading_byte_offset - shift
    try:
        return replace(layout, **moved), shift
    except SpecError:
        return layout, 0


def check_combination(major: str, swizzle: str, storage: ElementStorage) -> None:
    """§9.7.16.10.3 Table 52 (type size × major-ness → swizzle), §9.7.16.10.6 Table 53 (atoms that exist)."""
    if major not in MAJORS:
        raise SpecError("9.7.16.10.6", "major-ness", expects_but_got("major", "K or MN", major))
    if swizzle not in SWIZZLES:
        raise SpecError("9.7.16.4.1", "Table 40", expects_but_got("swizzle", "one of " + ", ".join(SWIZZLES), swizzle))
    slot_bits = 128 // storage.per_unit       # padded 4/6-bit elements take 8-bit slots (Table 52 note)
    allowed = table52_swizzles(slot_bits, major)
    if swizzle not in allowed:
        size = f"{storage.bits}-bit"
        if not allowed:
            detail = expects_but_got(f"major-ness of a {size} operand", "K (packed 4-bit operands are never transposed;"
                                     " Table 49: mxf4/mxf4nvf4 have no transpose)", major)
        else:
            detail = expects_but_got(f"swizzle of a {size} {major}-major operand", "one of " + ", ".join(allowed), swizzle)
        raise SpecError("9.7.16.10.3", "Table 52", detail)
    if swizzle not in legal_swizzles(slot_bits, major):
        # Spec question Q-KMAJOR-BASE32B (pick table-53): Table 52 lists "all swizzling modes" for
        # K-major, but Table 53 has no K-major atom for 32B atomicity ("–") and the canonical-layout
        # table no row; CUTLASS make_umma_desc: "SWIZZLE_128B_BASE32B is invalid for Major-K".
        raise SpecError("9.7.16.10.6", "Table 53", expects_but_got(
            "swizzle of a K-major operand", "none, 32B, 64B or 128B (no K-major atom with 32B atomicity; spec "
            "question Q-KMAJOR-BASE32B)", swizzle))


def check_extents(mn: int, k: int) -> None:
    """A tile has at least one element in each dimension (§9.7.16.3.3 m, k >= 1)."""
    for name, value in (("mn", mn), ("k", k)):
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise SpecError(SECTION, "tile extent", expects_but_got(name, "a positive integer", value))


def check_tile(layout: SmemLayout, mn: int, k: int) -> None:
    """Rules that depend on the tile extent (mn×k elements) as well as on the layout (§9.7.16.3.1.2, Table 53).

    * A swizzle row never crosses its row-width-aligned block (the XOR permutes 16-byte units
      inside that block): K-major, the K run of a row; MN-major, the MN run of an atom row.
      For K-major swizzled layouts this also bounds K to one atom (Table 53: 8×S units), since
      the canonical K mode ``(T,2k):(1,T)`` has no stride to a second atom. The §9.7.16.3.1.2
      motivation states it for 128B: "K-dimension of 48B would overflow the 128B shared memory
      boundary if the data is packed contiguously".
    * Absolute leading-dimension mode (§9.7.16.3.1.2): only a K extent of 48 B; the part beyond
      the 128 B row fits the 128 B row at the absolute address.
    """
    check_extents(mn, k)
    geo = GEOMETRY[layout.swizzle]
    t = layout.storage.per_unit
    if layout.swizzle == "none":
        return
    w = geo.row_bytes
    start_in_row = layout.start_address % w
    if layout.major == "MN":
        run = min(-(-mn // t), geo.units_per_row) * UNIT_BYTES
        if start_in_row + run > w:
            raise SpecError("9.7.16.10.6", "Table 53 swizzle atom", expects_but_got(
                f"MN run of a {layout.swizzle} row ({run} B) from start address {layout.start_address:#x}",
                f"to stay inside its {w}-byte block", f"{start_in_row + run - w} bytes beyond it"))
        return
    run = -(-k // t) * UNIT_BYTES
    if layout.lbo_mode == "absolute":
        if run != 48:
            raise SpecError("9.7.16.3.1.2", "absolute address mode", expects_but_got(
                "K extent in absolute leading-dimension mode", "48 bytes", f"{run} bytes"))
        beyond = start_in_row + run - w
        if beyond > 0 and layout.leading_byte_offset % w + beyond > w:
            raise SpecError("9.7.16.3.1.2", "absolute address mode", expects_but_got(
                "second chunk at the leading-dimension address", "to lie within one aligned 128-byte row",
                f"{beyond} bytes from {layout.leading_byte_offset:#x}"))
        return
    if start_in_row + run > w:
        raise SpecError("9.7.16.3.1.2", "Table 53 swizzle atom", expects_but_got(
            f"K run of a K-major {layout.swizzle} row ({run} B) from start address {layout.start_address:#x}",
            f"to stay inside its {w}-byte row (use the absolute leading-dimension mode for K = 48 B)",
            f"{start_in_row + run - w} bytes beyond it"))
