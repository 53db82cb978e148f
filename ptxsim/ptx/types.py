"""PTX fundamental types (PTX ISA §5.2.2) and how the simulator stores them.

Storage convention: every non-predicate register is a row of a ``uint64`` array holding the
register's bits zero-extended from its declared width.  An instruction reads the low ``bits`` of
a register and views them as its own type; a result is written back extended to the register's
width (sign-extended for signed types, as ``ld.s8``/``cvt.s32.s8`` require, zero-extended otherwise).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import ml_dtypes
import numpy as np

_UNSIGNED = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}
_SIGNED = {8: np.int8, 16: np.int16, 32: np.int32, 64: np.int64}


@dataclass(frozen=True)
class PtxType:
    """One PTX type word: ``name`` (``u32``), ``kind`` (b, u, s, f, pred), ``bits``."""

    name: str
    kind: str
    bits: int

    @cached_property
    def udtype(self) -> type:
        """Unsigned numpy type of the same width (the raw bits)."""
        return _UNSIGNED[self.bits]

    @cached_property
    def dtype(self):
        """Numpy type the values are computed in."""
        if self.kind == "s":
            return _SIGNED[self.bits]
        if self.kind == "f":
            return {16: np.float16, 32: np.float32, 64: np.float64}[self.bits]
        if self.kind == "bf":
            return ml_dtypes.bfloat16
        return _UNSIGNED[self.bits]

    @property
    def mask(self) -> int:
        return (1 << self.bits) - 1

    def from_u64(self, raw):
        """Typed values from register storage (array or scalar of uint64)."""
        bits = np.asarray(raw).astype(self.udtype)
        return bits if self.kind in "bu" else bits.view(self.dtype)

    def to_bits(self, values):
        """The raw bits (unsigned numpy type of this width) of typed values."""
        arr = np.asarray(values, dtype=self.dtype)
        return arr if self.kind in "bu" else arr.view(self.udtype)

    def to_u64(self, values, reg_bits: int = 64):
        """Register storage for typed values written into a ``reg_bits``-wide register."""
        arr = np.asarray(values, dtype=self.dtype)
        if self.kind == "s" and reg_bits > self.bits:
            return arr.astype(_SIGNED[reg_bits]).view(_UNSIGNED[reg_bits]).astype(np.uint64)
        bits = arr if self.kind in "bu" else arr.view(self.udtype)
        return bits.astype(np.uint64)

    def scalar(self, value: int | float):
        """A numpy scalar of this type for an immediate operand (integers wrap modulo 2^bits)."""
        if isinstance(value, (float, np.floating)):          # a numpy float32 parameter value too
            if self.kind not in ("f", "bf"):
                raise ValueError(f"a {self.name} operand expects an integer immediate, but got {value!r}")
            return self.dtype(value)
        if self.kind in ("f", "bf"):
            # PTX integer immediates of float instructions are the bits (0fXXXXXXXX is decoded to bits too)
            return np.array(value & self.mask, dtype=self.udtype).view(self.dtype)[()]
        return np.array(value & self.mask, dtype=self.udtype).view(self.dtype)[()]


def _build() -> dict[str, PtxType]:
    types = {"pred": PtxType("pred", "pred", 1)}
    for bits in (8, 16, 32, 64):
        for kind in "bus":
            types[f"{kind}{bits}"] = PtxType(f"{kind}{bits}", kind, bits)
    for bits in (16, 32, 64):
        types[f"f{bits}"] = PtxType(f"f{bits}", "f", bits)
    types["bf16"] = PtxType("bf16", "bf", 16)
    # packed pairs: stored as their raw bits
    types["f16x2"] = PtxType("f16x2", "b", 32)
    types["bf16x2"] = PtxType("bf16x2", "b", 32)
    types["f32x2"] = PtxType("f32x2", "b", 64)
    return types


TYPES: dict[str, PtxType] = _build()


def ptx_type(name: str) -> PtxType:
    """The type for a type word without its dot (``u32``); KeyError names it otherwise."""
    try:
        return TYPES[name]
    except KeyError:
        raise KeyError(f"PTX type expects one of {', '.join(TYPES)}, but got {name!r}") from None
