"""Field and value coverage: which bits of the descriptors and tcgen05 operands the cases set to
0 and to 1, and which value classes of each operand element type their inputs contain.

A fault that only shows for one bit value or one class of values (an address bit the hardware
drops, a decoder that mishandles -128) can only be caught by a case that has it. The words are
taken from the case record and logical inputs that input synthesis hands the kernel
(``generators.inputs.synthesize``), never re-derived from the case parameters:

* descriptors: instruction descriptor per layout (Tables 42, 43, 44; §9.7.16.4.2), shared-memory
  descriptor (Table 40, §9.7.16.4.1; A, B and the ``tcgen05.cp`` source), zero-column mask
  (Table 45, §9.7.16.4.3);
* tcgen05 operands: Tensor Memory addresses (lane << 16 | column, §9.7.16.1.1) of D, A, the scale
  factors, the metadata and the taddr of ld/st/cp/shift (each warp adds its lane quarter), the
  disable-output-lane vector (§9.7.16.10.9.1), the scale-input-d immediate;
* values (:func:`value_classes`): A, B, C, the scale factors (tcgen05 and warp-level), per element type.

Shared-memory addresses are relative to the kernel's 1024-aligned staging buffer (the kernel adds
the buffer's address; docs/kernel-abi.md), so the address bits reported are the ones the suite
chooses. Everything here is a pure function of (case, inputs) pairs; ``field_holes`` turns the
tallies into holes, each matched against ``field_justifications.JUSTIFIED``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from reference import formats as F
from reference.instr_descriptor import format_table


@dataclass(frozen=True)
class BitField:
    """Bits ``lo .. lo + width - 1`` of a word; ``fixed`` = the value a legal word always has there
    (reserved bits: 0; the smem descriptor's constant: 0b001), None for a field."""

    name: str
    lo: int
    width: int = 1
    fixed: int | None = None

    def bits(self) -> range:
        return range(self.lo, self.lo + self.width)


@dataclass(frozen=True)
class Word:
    """A descriptor or operand: its width, section and fields."""

    name: str
    bits: int
    section: str
    fields: tuple[BitField, ...]

    def field_of(self, bit: int) -> tuple[BitField, int]:
        """(field, bit index within the field) of ``bit``."""
        for f in self.fields:
            if f.lo <= bit < f.lo + f.width:
                return f, bit - f.lo
        raise ValueError(f"{self.name} bit expects 0..{self.bits - 1} inside a field, but got {bit}")


def _reserved(lo: int, width: int = 1) -> BitField:
    return BitField("reserved", lo, width, 0)


_IDESC_COMMON = (BitField("sparse", 2), BitField("A type", 7, 3), BitField("negate A", 13), BitField("negate B", 14),
                 BitField("transpose A", 15), BitField("transpose B", 16), BitField("N>>3", 17, 6))
_IDESC_SCALED = _IDESC_COMMON + (_reserved(0, 2), _reserved(3), BitField("SFB id", 4, 2), _reserved(6),
                                 BitField("scale type", 23), _reserved(24, 3), BitField("M>>7", 27, 2),
                                 BitField("SFA id", 29, 2))
WORDS: dict[str, Word] = {w.name: w for w in (
    Word("idesc Table 42", 32, "9.7.16.4.2", _IDESC_COMMON + (
        BitField("sparsity selector", 0, 2), BitField("saturate", 3), BitField("D type", 4, 2), _reserved(6),
        BitField("B type", 10, 3), _reserved(23), BitField("M>>4", 24, 5), _reserved(29), BitField("max shift", 30, 2))),
    Word("idesc Table 43", 32, "9.7.16.4.2", _IDESC_SCALED + (BitField("B type", 10, 3), _reserved(31))),
    Word("idesc Table 44", 32, "9.7.16.4.2", _IDESC_SCALED + (BitField("B type", 10, 2), _reserved(12),
                                                              BitField("K=96", 31))),
    Word("smem descriptor", 64, "9.7.16.4.1", (
        BitField("start address>>4", 0, 14), _reserved(14, 2), BitField("LBO>>4", 16, 14), _reserved(30, 2),
        BitField("SBO>>4", 32, 14), BitField("fixed constant 0b001", 46, 3, 0b001), BitField("base offset", 49, 3),
        BitField("LBO mode", 52), _reserved(53, 8), BitField("swizzle", 61, 3))),
    Word("zero-column mask", 64, "9.7.16.4.3", tuple(BitField(f"start count {i}", 8 * i, 8) for i in range(4)) + (
        BitField("first span", 32, 4), _reserved(36, 3), BitField("non-zero mask", 39), BitField("skip span", 40, 8),
        BitField("use span", 48, 8), BitField("column shift", 56, 6), _reserved(62, 2))),
    *(Word(f"taddr {role}", 32, "9.7.16.1.1", (BitField("column", 0, 16), BitField("lane", 16, 16)))
      for role in ("D", "A", "SFA", "SFB", "metadata", "ld/st", "cp", "shift")),
    Word("disable-output-lane cta_group::1", 128, "9.7.16.10.9.1", (BitField("lane", 0, 128),)),
    Word("disable-output-lane cta_group::2", 256, "9.7.16.10.9.1", (BitField("CTA 0 lane", 0, 128),
                                                                   BitField("CTA 1 lane", 128, 128))),
    Word("scale-input-d", 4, "9.7.16.10.9.1", (BitField("exponent", 0, 4),)),
)}

MMA_FAMILIES = ("mma", "mma.sp", "mma.ws", "mma.ws.sp", "sync")
TADDR_ROLE = {"ld": "ld/st", "ld.red": "ld/st", "st": "ld/st", "wait": "ld/st", "cp": "cp", "commit": "cp",
              "fence": "cp", "shift": "shift"}


# -- words of one case ----------------------------------------------------------------------------

def _dol_value(words) -> int:
    return sum(int(w) << (32 * i) for i, w in enumerate(words))


def case_words(case, inputs) -> list[tuple[str, int]]:
    """(word name, value) of every descriptor and operand the kernel of ``case`` receives."""
    rec, out = inputs.record, []
    for key in ("a_desc", "b_desc", "s_desc"):
        if key in rec:
            out.append(("smem descriptor", int(rec[key])))
    logical = inputs.logical.get("mma")
    if case.family in MMA_FAMILIES and logical is not None:
        op = logical.op
        out.append((f"idesc {format_table(op.kind)}", int(rec["idesc"])))
        if op.zero_column_mask is not None:
            out.append(("zero-column mask", int(rec["zcm_desc"])))
        if op.disable_output_lane is not None:
            out.append((f"disable-output-lane cta_group::{op.cta_group}", _dol_value(rec["dol"])))
        out.append(("taddr D", int(rec["tm_d"])))
        if "a_desc" not in rec:
            out.append(("taddr A", int(rec["tm_a"])))
        if op.block_scaled:
            out += [("taddr SFA", int(rec["tm_sfa"])), ("taddr SFB", int(rec["tm_sfb"]))]
        if op.sparse:
            out.append(("taddr metadata", int(rec["tm_meta"])))
        if op.enable_input_d and case.params.get("scale_input_d") is not None:
            out.append(("scale-input-d", int(op.scale_input_d)))
    role = TADDR_ROLE.get(case.family)
    if role and "taddr" in rec:
        quarters = range(4) if role == "ld/st" else range(1)     # each warp adds its lane quarter
        out += [(f"taddr {role}", int(rec["taddr"]) + (32 * w << 16)) for w in quarters]
    return out


# -- value classes ----------------------------------------------------------------------------------

def _min_normal(f: F.Format) -> float:
    return 2.0 ** -f.bias if f.mantissa_bits == 0 else 2.0 ** (1 - f.bias)


def possible_classes(fmt: str) -> tuple[str, ...]:
    """The value classes format ``fmt`` has (§5.2.1, §5.2.3; OCP MX v1.0 §5.3)."""
    f = F.get_format(fmt)
    if not f.is_float:
        sign = ("negative", "most negative") if f.signed else ("upper half",)
        return ("zero", "max") + sign
    out = ["+0", "-0"] if f.mantissa_bits else []
    if not f.signed:
        out = out[:1]
    if f.mantissa_bits:
        out.append("subnormal")
    out += ["min normal", "max normal"]
    if f.signed:
        out.append("negative")
    if f.has_inf:
        out += ["+Inf", "-Inf"]
    if f.has_nan:
        out.append("NaN")
    return tuple(out)


def value_classes(fmt: str, codes) -> set[str]:
    """The classes of :func:`possible_classes` present among ``codes``."""
    f = F.get_format(fmt)
    codes = np.asarray(codes).ravel()
    if codes.size == 0:
        return set()
    v = F.decode(fmt, codes)
    if not f.is_float:
        v = v.astype(np.int64)
        found = {"zero": (v == 0).any(), "max": (v == int(F.max_finite(fmt))).any()}
        if f.signed:
            found.update({"negative": (v < 0).any(), "most negative": (v == -(1 << (f.bits - 1))).any()})
        else:
            found["upper half"] = (v >= 1 << (f.bits - 1)).any()
        return {k for k, hit in found.items() if hit}
    v = v.astype(np.float64)
    mag = np.abs(v)
    finite = np.isfinite(v)
    mn = _min_normal(f)
    found = {"+0": ((v == 0) & ~np.signbit(v)).any(), "-0": ((v == 0) & np.signbit(v)).any(),
             "subnormal": (finite & (mag > 0) & (mag < mn)).any(), "min normal": (mag == mn).any(),
             "max normal": (mag == F.max_finite(fmt)).any(), "negative": (finite & (v < 0)).any(),
             "+Inf": (v == np.inf).any(), "-Inf": (v == -np.inf).any(), "NaN": np.isnan(v).any()}
    return {k for k, hit in found.items() if hit} & set(possible_classes(fmt))


def case_values(case, inputs) -> list[tuple[str, str, np.ndarray]]:
    """(operand, element type, codes) of the value operands of ``case`` (MMA and warp-level mma.sp)."""
    mma = inputs.logical.get("mma")
    if mma is not None:
        op = mma.op
        out = [("A", op.a_type, mma.a), ("B", op.b_type, mma.b), ("C", op.d_type, mma.c)]
        if mma.scale_a is not None:
            out += [("SFA", op.scale_type, mma.scale_a), ("SFB", op.scale_type, mma.scale_b)]
        return out
    warp = inputs.logical.get("warp")
    if warp is not None:
        out = [("warp A", warp.a_type, warp.a), ("warp B", warp.b_type, warp.b), ("warp C", warp.c_type, warp.c)]
        scales = getattr(warp, "scales", None)
        if scales is not None:
            out += [("warp SFA", scales.scale_type, scales.a), ("warp SFB", scales.scale_type, scales.b)]
        return out
    return []


# -- tallies and holes --------------------------------------------------------------------------------

@dataclass
class Tally:
    """Bits seen 0 and seen 1 per word, value classes seen per (operand, type), cases counted."""

    zeros: dict[str, int] = field(default_factory=dict)
    ones: dict[str, int] = field(default_factory=dict)
    classes: dict[tuple[str, str], set] = field(default_factory=dict)
    cases: int = 0

    def add_word(self, name: str, value: int) -> None:
        mask = (1 << WORDS[name].bits) - 1
        self.ones[name] = self.ones.get(name, 0) | (value & mask)
        self.zeros[name] = self.zeros.get(name, 0) | (~value & mask)

    def add_values(self, operand: str, fmt: str, codes) -> None:
        self.classes.setdefault((operand, fmt), set()).update(value_classes(fmt, codes))

    def add_case(self, case, inputs) -> None:
        self.cases += 1
        for name, value in case_words(case, inputs):
            self.add_word(name, value)
        for operand, fmt, codes in case_values(case, inputs):
            self.add_values(operand, fmt, codes)


@dataclass(frozen=True)
class Hole:
    """A bit never seen at one value, or a value class never seen.

    ``what``: ``bit`` or ``class``; ``word``: the word, or ``<operand> <type>``; ``item``: ``bit N
    (field[i])`` or the class name; ``missing``: ``0``/``1`` for bits, ``value`` for classes."""

    what: str
    word: str
    field: str
    item: str
    missing: str
    section: str


def bit_holes(tally: Tally) -> list[Hole]:
    out = []
    for name in sorted(tally.ones):
        word = WORDS[name]
        for bit in range(word.bits):
            f, i = word.field_of(bit)
            label = f"{f.name}[{i}]" if f.width > 1 else f.name
            for value, seen in (("0", tally.zeros[name]), ("1", tally.ones[name])):
                if not (seen >> bit) & 1:
                    out.append(Hole("bit", name, f.name, f"bit {bit} ({label})", value, word.section))
    return out


VALUE_SECTION = {"A": "9.7.16.10.9.1", "B": "9.7.16.10.9.1", "C": "9.7.16.10.9.1", "SFA": "9.7.16.10.7",
                 "SFB": "9.7.16.10.7", "warp A": "9.7.14.6.1", "warp B": "9.7.14.6.1", "warp C": "9.7.14.6.1",
                 "warp SFA": "9.7.14.3", "warp SFB": "9.7.14.3"}


def class_holes(tally: Tally) -> list[Hole]:
    out = []
    for (operand, fmt), seen in sorted(tally.classes.items()):
        for cls in possible_classes(fmt):
            if cls not in seen:
                out.append(Hole("class", f"{operand} {fmt}", fmt, cls, "value", VALUE_SECTION[operand]))
    return out


def field_holes(tally: Tally) -> list[Hole]:
    return bit_holes(tally) + class_holes(tally)


def tally_cases(pairs: Iterable[tuple[object, object]]) -> Tally:
    """The tally of (case, inputs) pairs."""
    tally = Tally()
    for case, inputs in pairs:
        tally.add_case(case, inputs)
    return tally
