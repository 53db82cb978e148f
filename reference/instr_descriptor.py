"""Instruction descriptor (PTX ISA §9.7.16.4.2, Tables 42, 43, 44).

32-bit value; its layout depends on the MMA kind.

Table 42 — kind::tf32, f16, f8f6f4, i8::

    31 30 29 28     24 23 22    17 16 15 14 13 12  10 9   7 6 5  4 3 2 1  0
   +-----+--+--------+--+--------+--+--+--+--+------+-----+-+----+-+-+----+
   |shift|0 |  M>>4  |0 |  N>>3  |tB|tA|nB|nA|btype |atype|0|dtyp|S|P|sel |
   +-----+--+--------+--+--------+--+--+--+--+------+-----+-+----+-+-+----+
   sel = sparsity selector, P = sparse, S = saturate (i8), shift = max shift (.ws)

Table 43 — kind::mxf8f6f4::

    31 30 29 28 27 26 24 23 22    17 16 15 14 13 12  10 9   7 6 5  4 3 2 1  0
   +--+-----+-----+-----+--+--------+--+--+--+--+------+-----+-+----+-+-+----+
   |0 |SFAid|M>>7 |  0  |ST|  N>>3  |tB|tA|nB|nA|btype |atype|0|SFBid|0|P| 0 |
   +--+-----+-----+-----+--+--------+--+--+--+--+------+-----+-+----+-+-+----+

Table 44 — kind::mxf4, mxf4nvf4: as Table 43 but btype is bits 10-11 (bit 12 reserved) and
bit 31 is the K dimension (0: dense K=64 / sparse K=128, 1: dense K=96).

Errata (NOTES.md item 3): public code writes M>>4 at bits 24-28 for the block-scaled formats;
identical for M in {128, 256}. We encode as the spec says and reject nonzero bits 24-26 on decode.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, fields

from reference import tables as T
from reference.errors import SpecError, expects_but_got

SECTION = "9.7.16.4.2"


def format_table(kind: str) -> str:
    """Which table lays out the descriptor of ``kind``: "Table 42", "Table 43" or "Table 44"."""
    T.check_kind(kind)
    return {"mxf8f6f4": "Table 43", "mxf4": "Table 44", "mxf4nvf4": "Table 44"}.get(kind, "Table 42")


# Fields each format has (CLI JSON keys, in order). Fields absent from a format are omitted.
COMMON_FIELDS = ("kind", "m", "n")
TABLE42_FIELDS = COMMON_FIELDS + ("d_type", "a_type", "b_type", "sparse", "sparsity_selector", "saturate",
                                  "negate_a", "negate_b", "transpose_a", "transpose_b", "max_shift")
TABLE43_FIELDS = COMMON_FIELDS + ("a_type", "b_type", "sparse", "negate_a", "negate_b", "transpose_a",
                                  "transpose_b", "scale_type", "a_scale_id", "b_scale_id")
TABLE44_FIELDS = TABLE43_FIELDS + ("k96",)
FORMAT_FIELDS = {"Table 42": TABLE42_FIELDS, "Table 43": TABLE43_FIELDS, "Table 44": TABLE44_FIELDS}


def _err(rule: str, detail: str) -> SpecError:
    return SpecError(SECTION, rule, detail)


def _flag(name: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise _err("Tables 42-44", expects_but_got(name, "a boolean", value))
    return value


@dataclass(frozen=True)
class InstrDescriptor:
    """Instruction descriptor fields in spec words (type words, M and N as numbers).

    Field-level rules (codes, ranges, Table 49, scale ids, reserved values) are checked on
    construction. The Table 39 shape rules depend on ``.cta_group`` and ``.ws``, which the
    descriptor does not hold: :meth:`check_legal` takes them as arguments.
    """

    kind: str
    m: int
    n: int
    a_type: str
    b_type: str
    d_type: str = "f32"
    sparse: bool = False
    sparsity_selector: int = 0
    saturate: bool = False
    negate_a: bool = False
    negate_b: bool = False
    transpose_a: bool = False
    transpose_b: bool = False
    max_shift: int = 0
    scale_type: str | None = None
    a_scale_id: int = 0
    b_scale_id: int = 0
    k96: bool = False

    def __post_init__(self) -> None:
        if self.kind in T.BLOCK_SCALED_KINDS and self.scale_type is None:
            object.__setattr__(self, "scale_type", "ue8m0")
        self.validate_fields()

    # -- field-level validation ------------------------------------------------------------
    @property
    def table(self) -> str:
        return format_table(self.kind)

    def validate_fields(self) -> None:
        """Rules a single descriptor value can break, whatever cta_group/.ws (Tables 42-44, 49)."""
        kind, table = T.check_kind(self.kind), format_table(self.kind)
        for name in ("sparse", "saturate", "negate_a", "negate_b", "transpose_a", "transpose_b", "k96"):
            _flag(name, getattr(self, name))
        codes = T.A_B_TYPE_CODES[kind]
        for name in ("a_type", "b_type"):
            if getattr(self, name) not in codes:
                raise _err(table, expects_but_got(f"{name} for kind::{kind}", "one of " + ", ".join(codes), getattr(self, name)))
        scaled = kind in T.BLOCK_SCALED_KINDS
        if scaled:
            if self.d_type != "f32":
                raise _err(table, expects_but_got(f"d_type for kind::{kind}", "f32 (implied; no dtype field)", self.d_type))
            if self.scale_type not in T.SCALE_TYPE_CODES[kind]:
                raise _err(f"{table} bit 23", expects_but_got(f"scale_type for kind::{kind}", " or ".join(T.SCALE_TYPE_CODES[kind]), self.scale_type))
            for name in ("a_scale_id", "b_scale_id"):
                ids = T.descriptor_scale_ids(kind, self.k96 is True)
                if getattr(self, name) not in ids:
                    raise _err(table, expects_but_got(f"{name} for kind::{kind}{' with K=96' if self.k96 else ''}", " or ".join(map(str, ids)), getattr(self, name)))
            absent = {"sparsity_selector": 0, "saturate": False, "max_shift": 0}
            if kind != "mxf4" and kind != "mxf4nvf4":
                absent["k96"] = False
        else:
            if self.d_type not in T.D_TYPES_BY_KIND[kind]:
                raise _err("Table 42 bits 4-5", expects_but_got(f"d_type for kind::{kind}", " or ".join(T.D_TYPES_BY_KIND[kind]), self.d_type))
            if self.max_shift not in T.MAX_SHIFT_CODES:
                raise _err("Table 42 bits 30-31", expects_but_got("max_shift", "0, 8, 16 or 32", self.max_shift))
            if not isinstance(self.sparsity_selector, int) or not 0 <= self.sparsity_selector <= 3:
                raise _err("Table 42 bits 0-1", expects_but_got("sparsity_selector", "0..3", self.sparsity_selector))
            if self.sparsity_selector and not self.sparse:
                raise _err("Table 42 bits 0-1", expects_but_got("sparsity_selector of a dense MMA", "0 (used only if Sparsity is enabled)", self.sparsity_selector))
            if self.sparsity_selector and kind in ("i8", "f8f6f4"):
                raise SpecError("9.7.16.10.8.4", "sparsity selector", expects_but_got(f"sparsity_selector for kind::{kind}", "0", self.sparsity_selector))
            if self.saturate and kind != "i8":
                raise _err("Table 42 bit 3", expects_but_got(f"saturate for kind::{kind}", "false (NA: integer types only)", True))
            absent = {"scale_type": None, "a_scale_id": 0, "b_scale_id": 0, "k96": False}
        for name, default in absent.items():
            if getattr(self, name) != default:
                raise _err(table, expects_but_got(f"{name} (not a field of the kind::{kind} format)", repr(default), getattr(self, name)))
        transpose_ok, negate_ok = T.TABLE_49[kind]
        if (self.negate_a or self.negate_b) and not negate_ok:
            raise SpecError("9.7.16.10.1", "Table 49", expects_but_got(f"negate for kind::{kind}", "false (negate not supported)", True))
        if (self.transpose_a or self.transpose_b) and not transpose_ok:
            raise SpecError("9.7.16.10.1", "Table 49", expects_but_got(f"transpose for kind::{kind}", "false (transpose not supported)", True))
        self._check_m_n_fields()

    def _check_m_n_fields(self) -> None:
        scaled = self.kind in T.BLOCK_SCALED_KINDS
        m_shift, m_bits = (7, 2) if scaled else (4, 5)
        if not isinstance(self.m, int) or self.m <= 0 or self.m % (1 << m_shift) or (self.m >> m_shift) >= 1 << m_bits:
            raise _err(f"{self.table} M>>{m_shift}", expects_but_got("m", f"a positive multiple of {1 << m_shift} below {(1 << m_bits) << m_shift}", self.m))
        if not isinstance(self.n, int) or self.n <= 0 or self.n % 8 or (self.n >> 3) >= 64:
            raise _err(f"{self.table} bits 17-22", expects_but_got("n", "a positive multiple of 8 below 512", self.n))

    # -- Table 39 legality ---------------------------------------------------------------
    def check_legal(self, cta_group: int | None = None, ws: bool | None = None) -> tuple[int, bool]:
        """Check against Tables 39, 50, 52 and .ws rules for the given cta_group/.ws.

        ``None`` means "any": the descriptor is legal if some (cta_group, ws) makes it legal.
        Returns that (cta_group, ws); raises the SpecError of the first combination otherwise.
        """
        groups = (1, 2) if cta_group is None else (cta_group,)
        wss = (False, True) if ws is None else (ws,)
        first: SpecError | None = None
        for cg, w in itertools.product(groups, wss):
            try:
                self._check_legal_for(cg, w)
                return cg, w
            except SpecError as exc:
                first = first or exc
        raise first  # type: ignore[misc]  # at least one combination was tried

    def _check_legal_for(self, cta_group: int, ws: bool) -> None:
        if cta_group not in (1, 2):
            raise SpecError("9.7.16.10.9.1", ".cta_group", expects_but_got("cta_group", "1 or 2", cta_group))
        T.check_types(self.kind, self.d_type, self.a_type, self.b_type, self.scale_type)
        T.check_shape(self.kind, self.m, self.n, cta_group=cta_group, sparse=self.sparse, ws=ws, k96=self.k96)
        if self.max_shift and not ws:
            raise _err("Table 42 bits 30-31", expects_but_got("max_shift without .ws", "0 (B-reuse shift is a .ws feature)", self.max_shift))
        for side, flag, typ in (("A", self.transpose_a, self.a_type), ("B", self.transpose_b, self.b_type)):
            if flag and not T.table52_swizzles(_slot_bits(typ), "MN"):
                raise SpecError("9.7.16.10.3", "Table 52", expects_but_got(f"transpose_{side.lower()} with {typ} ({_slot_bits(typ)}-bit)", "false (no MN-major layout for this type size)", True))
        if self.transpose_b and _slot_bits(self.b_type) == 8 and self.n not in T.TABLE_50[cta_group]:
            raise SpecError("9.7.16.10.1", "Table 50", expects_but_got(f"N for 8-bit transposed B with cta_group::{cta_group}",
                            f"{T.TABLE_50[cta_group][0]} <= N <= 256 in steps of {T.TABLE_50[cta_group][0]}", self.n))

    # -- encoding ------------------------------------------------------------------------
    def encode(self) -> int:
        """The 32-bit descriptor value (Table 42, 43 or 44)."""
        kind = self.kind
        v = int(self.sparse) << 2
        v |= int(self.negate_a) << 13 | int(self.negate_b) << 14
        v |= int(self.transpose_a) << 15 | int(self.transpose_b) << 16
        v |= (self.n >> 3) << 17
        codes = T.A_B_TYPE_CODES[kind]
        v |= codes[self.a_type] << 7 | codes[self.b_type] << 10
        if kind in T.BLOCK_SCALED_KINDS:
            v |= self.b_scale_id << 4
            v |= T.SCALE_TYPE_CODES[kind][self.scale_type] << 23
            v |= (self.m >> 7) << 27
            v |= self.a_scale_id << 29
            v |= int(self.k96) << 31
        else:
            v |= self.sparsity_selector
            v |= int(self.saturate) << 3
            v |= T.D_TYPE_CODES[self.d_type] << 4
            v |= (self.m >> 4) << 24
            v |= T.MAX_SHIFT_CODES[self.max_shift] << 30
        return v

    @classmethod
    def decode(cls, value: int, kind: str) -> InstrDescriptor:
        return decode_instr_descriptor(value, kind)

    def to_json(self) -> dict:
        """The CLI's JSON object: the fields the kind's format has (``tcgen05-cts decode idesc``)."""
        return {name: getattr(self, name) for name in FORMAT_FIELDS[self.table]}


FIELD_NAMES = tuple(f.name for f in fields(InstrDescriptor))


def _slot_bits(type_word: str) -> int:
    """Bits an A/B element takes in shared memory for the kinds that can transpose (Table 52 note:
    the 4/6-bit types of f8f6f4/mxf8f6f4 sit in 8-bit slots; mxf4 kinds never transpose)."""
    return max(8, T.ELEMENT_BITS[type_word])


def _lookup(table: dict[str, int], code: int, what: str, rule: str) -> str:
    for word, c in table.items():
        if c == code:
            return word
    raise _err(rule, expects_but_got(what, "one of codes " + ", ".join(f"{c} ({w})" for w, c in table.items()), code))


def decode_instr_descriptor(value: int, kind: str) -> InstrDescriptor:
    """Decode a 32-bit instruction descriptor of ``kind``; rejects reserved bits and bad codes.

    Written apart from ``encode`` (literal masks per field), so a round trip checks both.
    """
    T.check_kind(kind)
    table = format_table(kind)
    if not isinstance(value, int) or not 0 <= value < 1 << 32:
        raise _err(table, expects_but_got("instruction descriptor", "a 32-bit unsigned value", value))
    bit = lambda i: bool((value >> i) & 1)  # noqa: E731
    common = dict(kind=kind, sparse=bit(2), negate_a=bit(13), negate_b=bit(14), transpose_a=bit(15),
                  transpose_b=bit(16), n=((value >> 17) & 0x3F) * 8)
    if table == "Table 42":
        reserved = value & ((1 << 6) | (1 << 23) | (1 << 29))
        if reserved:
            raise _err("Table 42 reserved bits 6, 23, 29", expects_but_got("reserved bits", "0", hex(reserved)))
        codes = T.A_B_TYPE_CODES[kind]
        return InstrDescriptor(
            **common,
            sparsity_selector=value & 0x3,
            saturate=bit(3),
            d_type=_lookup(T.D_TYPE_CODES, (value >> 4) & 0x3, "dtype code", "Table 42 bits 4-5"),
            a_type=_lookup(codes, (value >> 7) & 0x7, f"atype code for kind::{kind}", "Table 42 bits 7-9"),
            b_type=_lookup(codes, (value >> 10) & 0x7, f"btype code for kind::{kind}", "Table 42 bits 10-12"),
            m=((value >> 24) & 0x1F) * 16,
            max_shift=(0, 8, 16, 32)[(value >> 30) & 0x3],
        )
    reserved_mask = 0b11 | (1 << 3) | (1 << 6) | (0b111 << 24)
    if table == "Table 43":
        reserved_mask |= 1 << 31
        b_code = (value >> 10) & 0x7
    else:
        reserved_mask |= 1 << 12
        b_code = (value >> 10) & 0x3
    reserved = value & reserved_mask
    if reserved:
        raise _err(f"{table} reserved bits", expects_but_got("reserved bits (incl. 24-26, NOTES.md item 3)", "0", hex(reserved)))
    codes = T.A_B_TYPE_CODES[kind]
    return InstrDescriptor(
        **common,
        d_type="f32",
        b_scale_id=(value >> 4) & 0x3,
        a_type=_lookup(codes, (value >> 7) & 0x7, f"atype code for kind::{kind}", f"{table} bits 7-9"),
        b_type=_lookup(codes, b_code, f"btype code for kind::{kind}", f"{table} bits 10-12"),
        scale_type=_lookup(T.SCALE_TYPE_CODES[kind], (value >> 23) & 1, f"scale type code for kind::{kind}", f"{table} bit 23"),
        m=((value >> 27) & 0x3) * 128,
        a_scale_id=(value >> 29) & 0x3,
        k96=bit(31) if table == "Table 44" else False,
    )
