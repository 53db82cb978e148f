"""Shared-memory images of MMA operands: pack a logical matrix, read it back like hardware (§9.7.16.3).

Two independent paths:

* :func:`pack` places element codes at the addresses of :class:`reference.smem_layout.SmemLayout`
  (the CuTe canonical-layout table of §9.7.16.3.3, evaluated mode by mode).
* :func:`read` gets only the 64-bit descriptor (or its decoded fields), the tile shape, the
  element type and the major-ness, and computes every address from the prose definitions of the
  strides (§9.7.16.3.1 leading dimension, §9.7.16.3.2 stride dimension, Table 53 atoms) as an
  address generator walking 16-byte units — no CuTe modes, no shared helper with ``pack``.

A round trip ``read(pack(layout, codes), layout.descriptor(), ...) == codes`` therefore checks
the two readings of the spec against each other.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from reference.errors import SpecError, expects_but_got
from reference.smem_descriptor import SmemDescriptor
from reference.smem_layout import (
    SmemLayout,
    check_combination,
    check_extents,
    element_storage,
    first_period,
    kmajor_group_rows,
    pattern_anchor,
    swizzled_k_unit_stride,
)
from reference.spec_questions import following, reading

SECTION = "9.7.16.3"


@dataclass(frozen=True)
class SmemImage:
    """Bytes of shared memory ``[base_address, base_address + len(data))``."""

    base_address: int
    data: bytes

    @property
    def end_address(self) -> int:
        return self.base_address + len(self.data)


# ---------------------------------------------------------------------------------------------
# pack: logical matrix -> image (addresses from SmemLayout)
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class _PackPlan:
    """Where :func:`pack` puts the elements of an mn×k tile (arrays read-only, offsets from ``lo``).

    ``lo``/``hi``: the byte range of the 16-byte units the tile touches (``lo`` <= the start
    address); ``top_bit``: the highest element's first bit, from ``lo``. Whole-byte elements:
    ``starts``, the byte offsets of every element's bytes (element-major, least significant byte
    first). 4/6-bit elements: ``unit_rows``, the touched units (from ``lo``, in 16-byte rows);
    ``slots``, for each of their ``T`` element slots the row-major index of the element there (the
    element count where none is: gaps of a partly filled unit); ``holes``, the data bytes of those
    empty slots as all-ones codes (None when every slot is filled)."""

    lo: int
    hi: int
    top_bit: int
    starts: np.ndarray | None = None
    unit_rows: np.ndarray | None = None
    slots: np.ndarray | None = None
    holes: np.ndarray | None = None

    def moved(self, shift: int) -> _PackPlan:
        """The plan of the layout ``shift`` bytes higher (offsets from ``lo`` stay)."""
        if not shift:
            return self
        return _PackPlan(self.lo + shift, self.hi + shift, self.top_bit, self.starts, self.unit_rows, self.slots,
                         self.holes)


def _pack_plan(layout: SmemLayout, mn: int, k: int, lbo_reading: str, base_reading: str,
               kmajor_reading: str) -> _PackPlan:
    """The :class:`_PackPlan` of an mn×k tile in ``layout``; SpecError when two elements share
    bits. Depends on the layout and the readings of spec questions Q-LBO-KSW, Q-BASE-OFFSET and
    Q-KMAJOR-BASE32B only; computed once for the layout moved into its first pattern period
    (``smem_layout.first_period``), then moved back."""
    base, shift = first_period(layout)
    return _period_plan(base, mn, k, lbo_reading, base_reading, kmajor_reading).moved(shift)


def _unit_bytes(slot_codes: np.ndarray, per_unit: int, bits: int) -> np.ndarray:
    """``uint8[units, per_unit * bits / 8]``: the data bytes of 16-byte units whose ``per_unit``
    element slots hold ``slot_codes`` (unit-major) of ``bits`` < 8 bits each. Slot i occupies
    bits [i*bits, (i+1)*bits) of the little-endian unit, so every g = 8 / gcd(bits, 8) slots fill
    g*bits/8 whole bytes, packed as one little-endian word (4-bit: g = 2, one byte; 6-bit: g = 4,
    three bytes of a 32-bit word)::

        word = e0 | e1 << bits | ... | e(g-1) << (g-1)*bits
        unit = word(e0..)[bytes 0 .. g*bits/8 - 1]  word(eg..)[bytes 0 ..]  ...
    """
    units = slot_codes.size // per_unit
    group = 8 // math.gcd(bits, 8)
    width = group * bits // 8                                   # bytes one group fills
    word_type = np.dtype(f"<u{next(w for w in (1, 2, 4, 8) if 8 * w >= group * bits)}")
    slots = slot_codes.astype(word_type).reshape(-1, group)
    word = slots[:, 0].copy()
    for i in range(1, group):
        word |= slots[:, i] << word_type.type(i * bits)
    data = word.view(np.uint8).reshape(-1, word_type.itemsize)[:, :width]
    return data.reshape(units, per_unit * bits // 8)


def _overlap_error() -> SpecError:
    return SpecError(SECTION, "canonical layout", expects_but_got(
        "layout", "distinct bits for distinct elements (LBO/SBO too small for the tile)", "overlapping elements"))


@functools.lru_cache(maxsize=2048)
def _period_plan(layout: SmemLayout, mn: int, k: int, lbo_reading: str, base_reading: str,
                 kmajor_reading: str) -> _PackPlan:
    check_extents(mn, k)
    with following({"Q-BASE-OFFSET": base_reading, "Q-KMAJOR-BASE32B": kmajor_reading}):
        units, index = layout.unit_addresses(np.arange(mn)[:, None], np.arange(k)[None, :],     # broadcast: mn x k
                                             lbo_reading=lbo_reading)
    storage = layout.storage
    count = mn * k
    lo = min(int(units.min()), layout.start_address)
    hi = int(units.max()) + 16
    # element e starts at bit (units[e] - lo) * 8 + index[e] * bits of the image, index < T: two
    # elements share bits exactly when they share (unit, index)
    if storage.bits % 8 == 0:
        width = storage.bits // 8
        first = ((units - lo) + index * width).ravel()       # byte offset of every element's first byte
        taken = np.zeros(hi - lo, dtype=bool)
        taken[first] = True
        if np.count_nonzero(taken) != count:
            raise _overlap_error()
        starts = first if width == 1 else (first[:, None] + np.arange(width)).ravel()    # element, byte
        plan = _PackPlan(lo, hi, int(first.max()) * 8, starts=starts)
    else:
        row = (units - lo) >> 4                               # the element's unit, in 16-byte rows from lo
        touched = np.zeros((hi - lo) // 16, dtype=bool)
        touched[row] = True
        unit_rows = np.flatnonzero(touched)
        if unit_rows.size != touched.size:                # gaps: touched unit -> its row among unit_rows
            row = (np.cumsum(touched) - 1)[row]
        t = storage.per_unit
        position = (row * t + index).ravel()              # the element's slot among the touched units'
        slots = np.full(unit_rows.size * t, count, dtype=np.int64)
        slots[position] = np.arange(count)
        empty = slots == count
        n_empty = np.count_nonzero(empty)
        if slots.size - n_empty != count:
            raise _overlap_error()
        holes = None
        if n_empty:
            holes = _unit_bytes(np.where(empty, np.uint64((1 << storage.bits) - 1), np.uint64(0)), t, storage.bits)
        last = int(position.max())                        # the highest slot that holds an element
        plan = _PackPlan(lo, hi, int(unit_rows[last // t]) * 128 + last % t * storage.bits, unit_rows=unit_rows,
                         slots=slots, holes=holes)
    for arr in (plan.starts, plan.unit_rows, plan.slots, plan.holes):
        if arr is not None:
            arr.flags.writeable = False
    return plan


def tile_footprint(layout: SmemLayout, mn: int, k: int) -> tuple[int, int, int]:
    """(lo, hi, last) of an mn×k tile in ``layout`` under the readings in force: [lo, hi) the
    16-byte units it touches (lo <= the start address), ``last`` its highest element's bit offset
    from the start address (``layout.bit_offsets(mn, k).max()``). SpecError when two elements
    share bits. Cached with :func:`pack`'s plan (one address evaluation serves both)."""
    plan = _pack_plan(layout, mn, k, reading("Q-LBO-KSW"), reading("Q-BASE-OFFSET"), reading("Q-KMAJOR-BASE32B"))
    return plan.lo, plan.hi, plan.top_bit + 8 * (plan.lo - layout.start_address)


def pack(layout: SmemLayout, codes, *, fill: int = 0) -> SmemImage:
    """Image of the mn×k matrix ``codes`` (raw element codes, unsigned) stored in ``layout``.

    The image spans the 16-byte units the tile touches (and starts no later than the start
    address); the padding of touched 4/6-bit units is 0, other bytes no element occupies (gaps
    between atoms, units a swizzle leaves empty) hold ``fill``. Raises SpecError when two elements would share bits (a layout whose strides
    overlap) or a code does not fit the element width.
    """
    codes = np.asarray(codes)
    if codes.ndim != 2 or codes.size == 0 or codes.dtype.kind not in "iu":
        raise SpecError(SECTION, "operand matrix", expects_but_got("codes", "a non-empty 2-D integer array", codes.shape))
    storage = layout.storage
    bits = storage.bits
    if codes.dtype.kind == "i" and int(codes.min()) < 0:
        raise SpecError(SECTION, "element width", expects_but_got(f"{storage.dtype} codes", "unsigned raw codes", int(codes.min())))
    if int(codes.max()) >> bits:
        raise SpecError(SECTION, "element width", expects_but_got(f"{storage.dtype} codes", f"< 2^{bits}", hex(int(codes.max()))))
    mn, k = codes.shape
    plan = _pack_plan(layout, mn, k, reading("Q-LBO-KSW"), reading("Q-BASE-OFFSET"), reading("Q-KMAJOR-BASE32B"))
    if plan.starts is not None:      # whole bytes: byte j of every element (little-endian) at its offset
        image = np.full(plan.hi - plan.lo, fill, dtype=np.uint8)
        image[plan.starts] = codes.astype(f"<u{bits // 8}", order="C").ravel().view(np.uint8)
        return SmemImage(plan.lo, image.tobytes())
    # 4/6-bit elements: the data bytes of every touched unit at once (empty slots: 0, or fill's bits)
    small = codes.astype(np.uint8, order="C").ravel()      # codes < 2^bits (checked above)
    in_slots = small[plan.slots] if plan.holes is None else np.append(small, np.uint8(0))[plan.slots]
    data = _unit_bytes(in_slots, storage.per_unit, bits)
    if plan.holes is not None and fill:
        data |= plan.holes & np.uint8(fill)
    image = np.full(((plan.hi - plan.lo) // 16, 16), fill, dtype=np.uint8)
    image[plan.unit_rows, :data.shape[1]] = data
    if storage.padded:  # padding bits of every touched unit are zero (TMA writes them)
        image[plan.unit_rows, data.shape[1]:] = 0
    return SmemImage(plan.lo, image.tobytes())


# ---------------------------------------------------------------------------------------------
# read: image + descriptor -> logical matrix (addresses from the descriptor fields alone)
# ---------------------------------------------------------------------------------------------

def _unit_addresses(desc: SmemDescriptor, major: str, per_unit: int, mn, k):
    """Linear (unswizzled) byte address of the 16-byte unit holding element (mn, k).

    K-major (rows = MN, 16-byte units run along K):
      no swizzle  row r, unit u: start + (r mod 8)*16 + (r div 8)*SBO + u*LBO
                  (LBO: "stride from the first column to the second column of the 8x2 tile";
                   SBO: "offset from the first 8 rows to the next 8 rows")
      swizzled    start + (r mod 8)*W + (r div 8)*SBO + u*16   (LBO "not used"; W = row bytes;
                  u*LBO under spec question Q-LBO-KSW's reading honoured; 128B_base32B is
                  legal only under Q-KMAJOR-BASE32B, whose legal-4-rows reading puts 4 rows
                  between SBO steps: r mod 4, r div 4)
                  absolute LBO mode: the part of the row past its 128-byte row is read from
                  the LBO address onwards, same row (§9.7.16.3.1.2)
    MN-major (16-byte units run along MN, rows = K):
      no swizzle  unit v, K row j: start + v*SBO + (j mod 8)*16 + (j div 8)*LBO
                  (SBO: "offset from the first row to the next row"; LBO: "stride from the
                   first 8 columns to the next 8 columns")
      swizzled    start + (v mod S)*16 + (v div S)*LBO + (j mod R)*W + (j div R)*SBO
                  (LBO: "stride from the first (swizzle-byte-size/16) rows to the next";
                   SBO: "offset from the first 8 columns to the next 8 columns"; R = 8, and 4
                   for 128B with 32B atomicity, whose atom is 8x4 units, Table 53)
    """
    row_bytes = {"none": 16, "32B": 32, "64B": 64, "128B": 128, "128B_base32B": 128}[desc.swizzle]
    start, lbo, sbo = desc.start_address, desc.leading_byte_offset, desc.stride_byte_offset
    if major == "K":
        r, u = mn, k // per_unit
        if desc.swizzle == "none":
            return start + (r % 8) * 16 + (r // 8) * sbo + u * lbo
        g = kmajor_group_rows(desc.swizzle)      # 8 (4: Q-KMAJOR-BASE32B legal-4-rows)
        row = (r % g) * row_bytes + (r // g) * sbo
        if desc.lbo_mode == "absolute":
            in_row = start % 128 + u * 16
            return np.where(in_row < 128, start + row + u * 16, lbo + row + in_row - 128)
        return start + row + u * swizzled_k_unit_stride(lbo, 16)
    v, j = mn // per_unit, k
    if desc.swizzle == "none":
        return start + v * sbo + (j % 8) * 16 + (j // 8) * lbo
    units_per_row = row_bytes // 16
    rows = 4 if desc.swizzle == "128B_base32B" else 8
    return start + (v % units_per_row) * 16 + (v // units_per_row) * lbo + (j % rows) * row_bytes + (j // rows) * sbo


def _swizzled(address, desc: SmemDescriptor):
    """Physical address: the 16-byte (32-byte) chunk index inside its row XOR the row's phase.

    phase = bits 7.. of the address relative to the pattern start (``128 * base_offset``
    modulo 1024; spec question Q-BASE-OFFSET: ``reference.smem_layout.pattern_anchor``), as many bits as there are chunk-index bits: 128B 3, 64B 2, 32B 1; 32-byte
    chunks of 128B_base32B 2 (TMA: "swizzle 32B chunks within 128B span").
    """
    if desc.swizzle == "none":
        return address
    chunk_shift, phase_mask = {"32B": (4, 1), "64B": (4, 3), "128B": (4, 7), "128B_base32B": (5, 3)}[desc.swizzle]
    phase = ((address - pattern_anchor(desc.start_address, desc.base_offset)) // 128) % (phase_mask + 1)
    return address ^ (phase << chunk_shift)


def _located(linear, desc: SmemDescriptor, index, bits: int, base_address: int):
    """(physical unit address, first bit of each element from ``base_address``) of the elements
    whose linear unit addresses are ``linear`` (``index``: element within its unit)."""
    unit = _swizzled(linear, desc)
    return unit, (unit - base_address) * 8 + index * bits


def _gather_plan(first_bit, bits: int):
    """How to read ``bits``-bit elements starting at bits ``first_bit`` of the image bytes (one
    gather of the bytes holding them):

      ("bytes", offsets[..., n])   whole-byte elements: byte j of each element (little-endian)
      ("window", lo, hi, shift)    elements of at most 9 bits: the 16-bit window of bytes lo, hi
                                   (hi = lo + 1 when the element crosses into it, else lo: the
                                   window's upper byte is then masked off), shifted right
      ("bits", first_bit)          anything else: bit by bit from the unpacked image
    """
    if bits % 8 == 0 and not (first_bit % 8).any():
        offsets = (first_bit // 8)[..., None] + np.arange(bits // 8)
        return ("bytes", offsets)
    if bits <= 9:
        lo, shift = first_bit // 8, first_bit % 8
        return ("window", lo, np.where(shift + bits > 8, lo + 1, lo), shift.astype(np.uint16))
    return ("bits", first_bit)


def _gathered(data: np.ndarray, plan, bits: int) -> np.ndarray:
    """uint64 element codes read from the image bytes ``data`` by a :func:`_gather_plan`."""
    if plan[0] == "bytes":
        offsets = plan[1]
        width = offsets.shape[-1]
        if width in (1, 2, 4, 8):
            return data[offsets].view(f"<u{width}")[..., 0].astype(np.uint64)
        out = np.zeros(offsets.shape[:-1], dtype=np.uint64)
        for j in range(width):
            out |= data[offsets[..., j]].astype(np.uint64) << np.uint64(8 * j)
        return out
    if plan[0] == "window":
        _, lo, hi, shift = plan
        window = data[lo].astype(np.uint16) | (data[hi].astype(np.uint16) << np.uint16(8))
        return ((window >> shift) & np.uint16((1 << bits) - 1)).astype(np.uint64)
    first_bit = plan[1]
    image_bits = np.unpackbits(data, bitorder="little")
    out = np.zeros(first_bit.shape, dtype=np.uint64)
    for b in range(bits):
        out |= image_bits[first_bit + b].astype(np.uint64) << np.uint64(b)
    return out


@dataclass(frozen=True)
class _ReadPlan:
    """The address arithmetic of one read, relative to an address ``shift`` (arrays read-only):
    linear unit addresses, the unit index along the leading dimension, element within unit,
    extremes of the physical units and of the first bits (the bounds check), the gather plan
    (byte offsets or first bits)."""

    linear: np.ndarray
    unit_along: np.ndarray
    index: np.ndarray
    unit_lo: int
    unit_hi: int
    bit_lo: int
    bit_hi: int
    gather: tuple


def _read_only(*arrays) -> None:
    for a in arrays:
        if isinstance(a, np.ndarray):
            a.flags.writeable = False


def _plan_of(linear, unit_along, index, desc: SmemDescriptor, bits: int, base_address: int) -> _ReadPlan:
    unit, first_bit = _located(linear, desc, index, bits, base_address)
    gather = _gather_plan(first_bit, bits)
    return _ReadPlan(linear, unit_along, index, int(unit.min()), int(unit.max()), int(first_bit.min()),
                     int(first_bit.max()), gather)


def _plan_shift(desc: SmemDescriptor) -> int:
    """The part of the start address a read plan leaves out (added to every address afterwards).

    Every address of a relative-mode descriptor is the start address plus offsets from the other
    fields, and the swizzle XORs bits 4-6 with a phase from bits 7-9 counted from the pattern anchor
    (``128 * base_offset``, or under Q-BASE-OFFSET's reading ``start-phase`` the start's 128-byte row
    less that): moving the start by a multiple of 1024 moves every physical address by the same
    amount (by any multiple of 16 without a swizzle). Absolute mode (the LBO is an address): none.
    """
    if desc.lbo_mode == "absolute":
        return 0
    period = 16 if desc.swizzle == "none" else 1024
    return desc.start_address - desc.start_address % period


@functools.lru_cache(maxsize=64)
def _tile_indices(major: str, per_unit: int, mn: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    """(element within its unit, index of its unit along the leading dimension) of every element
    of an mn×k tile (read-only): K-major, units run along K; MN-major, along MN."""
    rows, cols = np.meshgrid(np.arange(mn, dtype=np.int64), np.arange(k, dtype=np.int64), indexing="ij")
    along = cols if major == "K" else rows
    index, unit_along = along % per_unit, along // per_unit
    _read_only(index, unit_along)
    return index, unit_along


@functools.lru_cache(maxsize=256)     # ~90 KB a plan on average (the execute tier's MMA tiles)
def _address_plan(fields: tuple, major: str, bits: int, per_unit: int, mn: int, k: int,
                  lbo_reading: str, base_reading: str, kmajor_reading: str) -> _ReadPlan:
    """The :class:`_ReadPlan` of an mn×k read through the descriptor ``SmemDescriptor(*fields)``
    from an image at address 0: pure address arithmetic, a function of the descriptor's every
    field, the tile shape, the element storage and the readings of spec questions Q-LBO-KSW,
    Q-KMAJOR-BASE32B (:func:`_unit_addresses`) and Q-BASE-OFFSET (:func:`_swizzled`), which are the
    readings in force when it is built (in the key: a plan is only reused under the same readings).

    The elements of one 16-byte unit share its address (:func:`_unit_addresses` reads only the
    unit index along the leading dimension), so the addresses are computed once per unit, at the
    unit's first element, and repeated over its elements."""
    desc = SmemDescriptor(*fields)
    index, unit_along = _tile_indices(major, per_unit, mn, k)
    if major == "K":
        rows, cols = np.meshgrid(np.arange(mn, dtype=np.int64), np.arange(0, k, per_unit, dtype=np.int64),
                                 indexing="ij")
    else:
        rows, cols = np.meshgrid(np.arange(0, mn, per_unit, dtype=np.int64), np.arange(k, dtype=np.int64),
                                 indexing="ij")
    axis = 1 if major == "K" else 0

    def per_element(a):
        return np.repeat(a, per_unit, axis=axis)[:mn, :k]
    linear_units = np.asarray(_unit_addresses(desc, major, per_unit, rows, cols), dtype=np.int64)
    linear = np.ascontiguousarray(per_element(linear_units))
    unit = per_element(_swizzled(linear_units, desc))
    first_bit = unit * 8 + index * bits
    plan = _ReadPlan(linear, unit_along, index, int(unit.min()), int(unit.max()), int(first_bit.min()),
                     int(first_bit.max()), _gather_plan(first_bit, bits))
    _read_only(plan.linear, *plan.gather[1:])
    return plan


def _moved(gather: tuple, offset: int) -> tuple:
    """A :func:`_gather_plan` for elements ``offset`` bytes further into the image."""
    if offset == 0:
        return gather
    if gather[0] == "bytes":
        return ("bytes", gather[1] + offset)
    if gather[0] == "window":
        return ("window", gather[1] + offset, gather[2] + offset, gather[3])
    return ("bits", gather[1] + 8 * offset)


def _out_of_image(image: SmemImage, unit_lo: int, unit_hi: int) -> SpecError:
    return SpecError(SECTION, "shared memory image", expects_but_got(
        "addresses of the tile", f"inside the image [{image.base_address:#x}, {image.end_address:#x})",
        f"[{unit_lo:#x}, {unit_hi + 16:#x})"))


def read(image: SmemImage, descriptor: SmemDescriptor | int, mn: int, k: int, dtype: str, major: str,
         *, kind: str | None = None, units=None) -> np.ndarray:
    """The mn×k matrix of element codes (uint64) that a descriptor selects from ``image``.

    ``descriptor`` is the 64-bit value or its decoded fields; every address comes from those
    fields (start address, LBO/SBO, base offset, leading-dimension mode, swizzle).
    ``units(linear, unit)``: optional transform of each element's linear (pre-swizzle) 16-byte-unit
    address, ``unit`` = the index of its unit along the leading dimension (K for K-major, MN for
    MN-major); the simulator's fault hook ``smem_units``, None for the spec. It gets fresh arrays;
    when it returns other addresses, they are located and read without the plan.
    """
    desc = SmemDescriptor.decode(descriptor) if isinstance(descriptor, int) else descriptor
    storage = element_storage(dtype, kind)
    check_combination(major, desc.swizzle, storage)
    check_extents(mn, k)
    shift = _plan_shift(desc)
    fields = (desc.start_address - shift, desc.leading_byte_offset, desc.stride_byte_offset, desc.base_offset,
              desc.lbo_mode, desc.swizzle)
    plan = _address_plan(fields, major, storage.bits, storage.per_unit, mn, k,
                         reading("Q-LBO-KSW"), reading("Q-BASE-OFFSET"), reading("Q-KMAJOR-BASE32B"))
    if units is not None:
        linear = np.asarray(units(plan.linear + shift, plan.unit_along.copy()), dtype=np.int64)
        if linear.shape != plan.linear.shape or not np.array_equal(linear - shift, plan.linear):
            located = _plan_of(linear, plan.unit_along, plan.index, desc, storage.bits, image.base_address)
            return _read_located(image, located, 0, 0, storage.bits)
    return _read_located(image, plan, shift, shift - image.base_address, storage.bits)


def _read_located(image: SmemImage, plan: _ReadPlan, unit_shift: int, byte_shift: int, bits: int) -> np.ndarray:
    """The codes at ``plan``'s addresses, its units ``unit_shift`` bytes higher and its first bits
    ``byte_shift`` bytes further from the image base; SpecError when they leave the image."""
    unit_lo, unit_hi = plan.unit_lo + unit_shift, plan.unit_hi + unit_shift
    if plan.bit_lo + 8 * byte_shift < 0 or (plan.bit_hi + 8 * byte_shift + bits) > len(image.data) * 8:
        raise _out_of_image(image, unit_lo, unit_hi)
    data = np.frombuffer(image.data, dtype=np.uint8)
    return _gathered(data, _moved(plan.gather, byte_shift), bits)
