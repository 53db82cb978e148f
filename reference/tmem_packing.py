"""Packing of A elements in Tensor Memory (§9.7.16.10.4.3, §9.7.16.10.4.5) and the 8-bit container.

``.kind::mxf8f6f4`` (text §9.7.16.10.4.3): each 4-bit or 6-bit element sits in an 8-bit container;
containers are packed contiguously, four per 32-bit word. Container bits (Figures 199-201)::

    bit      7 6 5 4 3 2 1 0
    e2m1     0 0 S E E M 0 0      code << 2
    e3m2     0 0 S E E E M M      code
    e2m3     0 0 S E E M M M      code
    8-bit    S E E E E M M M      code (e4m3, e5m2 as is)

Sources: the same 8-bit container feeds warp-level ``mma ... .kind::f8f6f4``; NVIDIA/cutlass
``include/cute/atom/mma_traits_sm120.hpp`` (``fp4_shift_A``): "MMA F8F6F4 expects the four-bit data
to be in the middle of the eight-bit container ... 0b0000ABCD --> 0b00ABCD00", "NOT needed for FP6";
and the PTX ISA's ``.b6p2x16`` (§5.5.1.1.1: "6-bits of data at the LSB and 2-bits of padding at the
MSB"). Decision: the Tensor Memory container is that container. A consequence worth knowing: e2m1
in its container reads as the e2m3 code with two zero mantissa bits (both have bias 1).

``.kind::mxf4`` / ``.kind::mxf4nvf4`` (text §9.7.16.10.4.5): two e2m1 per byte. Decision (Figure
204 missing): element 2k in the low nibble, 2k+1 in the high nibble, as CUTLASS's packed
``float_e2m1_t`` arrays (``cutlass/float_subbyte.h``) and the no-padding shared-memory packing of
§9.7.16.10.4.6 (text).

Bytes fill a 32-bit cell little-endian: element (or byte) k of a row is byte k % 4 of column k // 4.
"""

from __future__ import annotations

import numpy as np

from reference.errors import SpecError, expects_but_got

SECTION_MXF8 = "9.7.16.10.4.3"
SECTION_MXF4 = "9.7.16.10.4.5"
CODE_BITS: dict[str, int] = {"e2m1": 4, "e3m2": 6, "e2m3": 6, "e4m3": 8, "e5m2": 8}
CONTAINER_SHIFT: dict[str, int] = {"e2m1": 2, "e3m2": 0, "e2m3": 0, "e4m3": 0, "e5m2": 0}


def _check_codes(fmt: str, codes, section: str) -> np.ndarray:
    if fmt not in CODE_BITS:
        raise SpecError(section, "A packing", expects_but_got("A element type", "one of " + ", ".join(CODE_BITS), fmt))
    arr = np.asarray(codes, dtype=np.int64)
    if arr.size and (arr.min() < 0 or arr.max() >= 1 << CODE_BITS[fmt]):
        raise SpecError(section, "A packing", expects_but_got(f"{fmt} codes", f"integers in [0, {1 << CODE_BITS[fmt]})", int(arr.max())))
    return arr


def container_byte(fmt: str, codes) -> np.ndarray:
    """8-bit containers of ``fmt`` codes (§9.7.16.10.4.3, Figures 199-201)."""
    arr = _check_codes(fmt, codes, SECTION_MXF8)
    return (arr << CONTAINER_SHIFT[fmt]).astype(np.uint8)


def container_code(fmt: str, containers) -> np.ndarray:
    """The codes held by 8-bit containers (padding bits ignored)."""
    if fmt not in CODE_BITS:
        raise SpecError(SECTION_MXF8, "A packing", expects_but_got("A element type", "one of " + ", ".join(CODE_BITS), fmt))
    arr = np.asarray(containers, dtype=np.int64)
    return ((arr >> CONTAINER_SHIFT[fmt]) & ((1 << CODE_BITS[fmt]) - 1)).astype(np.uint8)


def bytes_to_words(data) -> np.ndarray:
    """Little-endian: byte k -> bits 8*(k%4) of word k//4 (length padded with zero bytes). A 2-D
    ``data`` packs each row (the last axis) the same way."""
    raw = np.asarray(data, dtype=np.uint8)
    pad = (-raw.shape[-1]) % 4 if raw.ndim else 0
    if raw.ndim != 1 and raw.ndim != 2:
        raw = raw.reshape(-1)
        pad = (-raw.size) % 4
    if pad:
        raw = np.concatenate([raw, np.zeros(raw.shape[:-1] + (pad,), dtype=np.uint8)], axis=-1)
    raw = np.ascontiguousarray(raw)
    return raw.view("<u4").reshape(raw.shape[:-1] + (-1,)).astype(np.uint32)


def words_to_bytes(words) -> np.ndarray:
    """Inverse of :func:`bytes_to_words`."""
    w = np.asarray(words, dtype=np.uint32)
    return ((w[:, None] >> np.arange(0, 32, 8, dtype=np.uint32)) & 0xFF).astype(np.uint8).ravel()


def pack_a_row(kind: str, fmt: str, codes) -> np.ndarray:
    """The 32-bit Tensor Memory cells (columns) holding one row of A (K codes), per kind (a 2-D
    ``codes``: each of its rows)."""
    if kind == "mxf8f6f4":
        return bytes_to_words(container_byte(fmt, codes))
    if kind in ("mxf4", "mxf4nvf4"):
        if fmt != "e2m1":
            raise SpecError(SECTION_MXF4, "A packing", expects_but_got(f"A type of kind::{kind}", "e2m1", fmt))
        arr = _check_codes(fmt, codes, SECTION_MXF4)
        if arr.shape[-1] % 2:
            raise SpecError(SECTION_MXF4, "A packing", expects_but_got("number of e2m1 codes in a row", "an even count", arr.shape[-1]))
        return bytes_to_words((arr[..., 0::2] | (arr[..., 1::2] << 4)).astype(np.uint8))
    raise SpecError("9.7.16.10.4.2", "A packing", expects_but_got("kind with A in Tensor Memory packing rules", "mxf8f6f4, mxf4 or mxf4nvf4", kind))


def unpack_a_row(kind: str, fmt: str, words, k: int) -> np.ndarray:
    """The ``k`` codes of one A row from its Tensor Memory cells (inverse of :func:`pack_a_row`)."""
    data = words_to_bytes(words)
    if kind == "mxf8f6f4":
        return container_code(fmt, data[:k])
    if kind in ("mxf4", "mxf4nvf4"):
        nibbles = np.stack([data & 0xF, data >> 4], axis=1).ravel()
        return nibbles[:k].astype(np.uint8)
    raise SpecError("9.7.16.10.4.2", "A packing", expects_but_got("kind with A in Tensor Memory packing rules", "mxf8f6f4, mxf4 or mxf4nvf4", kind))


def a_row_columns(kind: str, k: int) -> int:
    """32-bit columns one row of K elements of A takes in Tensor Memory."""
    per_word = {"mxf8f6f4": 4, "mxf4": 8, "mxf4nvf4": 8}.get(kind)
    if per_word is None:
        raise SpecError("9.7.16.10.4.2", "A packing", expects_but_got("kind", "mxf8f6f4, mxf4 or mxf4nvf4", kind))
    return -(-k // per_word)
