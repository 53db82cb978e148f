"""Zero-column mask descriptor (PTX ISA §9.7.16.4.3, Table 45).

64-bit value from which the N-bit mask of B columns to zero (1 = use 0s, 0 = use B) is
generated for ``tcgen05.mma.ws``::

    63 62 61      56 55     48 47     40 39 38 36 35 34 33 32 31  24 23  16 15   8 7    0
   +-----+----------+---------+---------+--+-----+--+--+--+--+------+------+------+------+
   | 0 0 | col.shift| use span|skip span|NZ|  0  |f3|f2|f1|f0| sc3  | sc2  | sc1  | sc0  |
   +-----+----------+---------+---------+--+-----+--+--+--+--+------+------+------+------+

Sub-masks: M = 128 → one of N bits; M = 64 → two of N/2; M = 32 → four of N/4; mask-i covers
columns [i*N/k, (i+1)*N/k) and uses fs_i and sc_i.

Erratum (shared/spec/NOTES.md item 1): Table 45 calls bits 40-47 "(count of consecutive columns
where B is used) - 1" and bits 48-55 "(count where 0s are used) - 1", but all four worked examples
say the opposite. We follow the examples (as does public Blackwell code): a run of 1-bits (zeroed
columns) is ``skip_span + 1`` long, a run of 0-bits (B used) is ``use_span + 1`` long. The pattern
starts with a run of value fs_i, and its first sc_i bits are dropped: bit j of sub-mask i is bit
``j + sc_i`` of that periodic pattern (LSB = lowest column).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from reference.errors import SpecError, expects_but_got
from reference.spec_questions import resolve

SECTION = "9.7.16.4.3"
SUBMASKS_PER_M: dict[int, int] = {128: 1, 64: 2, 32: 4}   # "Zero-Column Mask breakup" table
MAX_COLUMN_SHIFT: dict[int, int] = {128: 32, 64: 32, 32: 16}


def _err(rule: str, detail: str) -> SpecError:
    return SpecError(SECTION, rule, detail)


@dataclass(frozen=True)
class ZeroColumnMaskDescriptor:
    """Table 45 fields; ``skip_span``/``use_span`` are the raw 8-bit field values."""

    start_count: tuple[int, int, int, int] = (0, 0, 0, 0)
    first_span: tuple[int, int, int, int] = (0, 0, 0, 0)
    non_zero_mask: bool = False
    skip_span: int = 0
    use_span: int = 0
    column_shift: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "start_count", tuple(self.start_count))
        object.__setattr__(self, "first_span", tuple(self.first_span))
        self.validate()

    def validate(self) -> None:
        if len(self.start_count) != 4 or any(not isinstance(c, int) or not 0 <= c <= 255 for c in self.start_count):
            raise _err("Table 45 bits 0-31", expects_but_got("start_count", "4 integers 0..255", list(self.start_count)))
        if len(self.first_span) != 4 or any(f not in (0, 1) or isinstance(f, bool) for f in self.first_span):
            raise _err("Table 45 bits 32-35", expects_but_got("first_span", "4 values 0 or 1", list(self.first_span)))
        if not isinstance(self.non_zero_mask, bool):
            raise _err("Table 45 bit 39", expects_but_got("non_zero_mask", "a boolean", self.non_zero_mask))
        for name, lo in (("skip_span", 40), ("use_span", 48)):
            v = getattr(self, name)
            if not isinstance(v, int) or not 0 <= v <= 255:
                raise _err(f"Table 45 bits {lo}-{lo + 7}", expects_but_got(name, "an integer 0..255", v))
        if not isinstance(self.column_shift, int) or not 0 <= self.column_shift <= 32:
            raise _err("Table 45 bits 56-61", expects_but_got("column_shift", "0..32 (max 32; 16 for M=32)", self.column_shift))

    def encode(self) -> int:
        v = 0
        for i, count in enumerate(self.start_count):
            v |= count << (8 * i)
        for i, fs in enumerate(self.first_span):
            v |= fs << (32 + i)
        v |= int(self.non_zero_mask) << 39
        v |= self.skip_span << 40
        v |= self.use_span << 48
        v |= self.column_shift << 56
        return v

    @classmethod
    def decode(cls, value: int) -> ZeroColumnMaskDescriptor:
        return decode_zero_column_mask(value)

    def to_json(self) -> dict:
        return {
            "start_count": list(self.start_count),
            "first_span": list(self.first_span),
            "non_zero_mask": self.non_zero_mask,
            "skip_span": self.skip_span,
            "use_span": self.use_span,
            "column_shift": self.column_shift,
        }

    # -- mask generation -----------------------------------------------------------------
    def submasks(self, m: int, n: int, reading: str | None = None) -> list[int]:
        """The sub-masks mask0, mask1, ... for an MMA of shape M x N (each N/k bits).

        ``reading``: of spec question ``Q-ZCM-SPAN`` (``reference.spec_questions``; None = in force)."""
        k = check_mask_shape(m, n)
        if self.column_shift > MAX_COLUMN_SHIFT[m]:
            raise _err("Table 45 bits 56-61", expects_but_got(f"column_shift for M={m}", f"at most {MAX_COLUMN_SHIFT[m]}", self.column_shift))
        width = n // k
        if not self.non_zero_mask:
            return [0] * k
        return [submask_bits(self.first_span[i], self.start_count[i], self.skip_span, self.use_span, width, reading)
                for i in range(k)]

    def mask(self, m: int, n: int, reading: str | None = None) -> int:
        """The full N-bit mask: bit j = column j of B (1 = column replaced by zeros)."""
        subs = self.submasks(m, n, reading)
        width = n // len(subs)
        full = 0
        for i, sub in enumerate(subs):
            full |= sub << (i * width)
        return full


def check_mask_shape(m: int, n: int) -> int:
    """Number of sub-masks for M (128, 64, 32), with N divisible among them."""
    if m not in SUBMASKS_PER_M:
        raise _err("sub-mask breakup", expects_but_got("M", "128, 64 or 32", m))
    k = SUBMASKS_PER_M[m]
    if not isinstance(n, int) or n <= 0 or n % k:
        raise _err("sub-mask coverage", expects_but_got(f"N for M={m}", f"a positive multiple of {k}", n))
    return k


def zeroed_columns(mask: int, n: int, shift: int, reading: str | None = None) -> np.ndarray:
    """bool[n]: D columns whose B column the mask zeroes, with a column shift (§9.7.16.4.3 Table 45,
    example 4: B columns shift .. shift+N-1 are used). Spec question ``Q-ZCM-SHIFT``:
    ``used-columns`` (the pick) -- bit j is D column j (B column j + shift); ``b-columns`` -- bit j
    is B column j, so D column j is zeroed by bit j + shift (none past bit N-1)."""
    offset = shift if resolve("Q-ZCM-SHIFT", reading) == "b-columns" else 0
    j = np.arange(n) + offset
    return np.array([bool((mask >> int(b)) & 1) if b < n else False for b in j], dtype=bool)


def span_lengths(skip_span: int, use_span: int, reading: str | None = None) -> tuple[int, int]:
    """(length of a 1-run, length of a 0-run) under spec question ``Q-ZCM-SPAN``: ``examples``
    (the pick) 1-runs ``skip_span + 1``; ``table-prose`` 1-runs ``use_span + 1`` (NOTES.md item 1)."""
    if resolve("Q-ZCM-SPAN", reading) == "table-prose":
        return use_span + 1, skip_span + 1
    return skip_span + 1, use_span + 1


def submask_bits(first_span: int, start_count: int, skip_span: int, use_span: int, width: int,
                 reading: str | None = None) -> int:
    """One sub-mask of ``width`` bits (LSB = first column), following the worked examples.

    Runs alternate, starting with value ``first_span``: 1-runs are ``skip_span + 1`` long,
    0-runs ``use_span + 1`` (:func:`span_lengths`); the first ``start_count`` bits of the pattern
    are skipped.
    """
    ones, zeros = span_lengths(skip_span, use_span, reading)
    period = ones + zeros
    bits = 0
    for j in range(width):
        pos = (j + start_count) % period
        # position within the period, measured from the start of a run of value first_span
        if first_span:
            bit = 1 if pos < ones else 0
        else:
            bit = 0 if pos < zeros else 1
        bits |= bit << j
    return bits


def decode_zero_column_mask(value: int) -> ZeroColumnMaskDescriptor:
    """Decode a 64-bit zero-column mask descriptor; rejects reserved bits 36-38 and 62-63."""
    if not isinstance(value, int) or not 0 <= value < 1 << 64:
        raise _err("Table 45", expects_but_got("zero-column mask descriptor", "a 64-bit unsigned value", value))
    reserved = value & ((0b111 << 36) | (0b11 << 62))
    if reserved:
        raise _err("Table 45 reserved bits 36-38, 62-63", expects_but_got("reserved bits", "0", hex(reserved)))
    return ZeroColumnMaskDescriptor(
        start_count=tuple((value >> s) & 0xFF for s in (0, 8, 16, 24)),
        first_span=tuple((value >> s) & 1 for s in (32, 33, 34, 35)),
        non_zero_mask=bool((value >> 39) & 1),
        skip_span=(value >> 40) & 0xFF,
        use_span=(value >> 48) & 0xFF,
        column_shift=(value >> 56) & 0x3F,
    )
