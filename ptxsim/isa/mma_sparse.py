"""Sparse A (§9.7.16.10.8, §9.7.14.6.1): metadata nibbles -> kept positions -> dense A.

The hook ``sparsity_metadata`` sees the kept positions ``int[M, chunks, kept]`` (element position
inside its chunk of each kept element, in storage order). They come from the reference MMA
model's ``reference.sparsity.kept_positions`` when that module is on this branch; until then from
the INTERIM rule below, which is the text's: a 2:4 / 4:8 nibble holds two 2-bit indices (bits 1-0
first, bits 3-2 second; 4:8 indices name pairs of elements), 1:2 is 0b0100 (element 0) or 0b1110
(element 1). Two equal indices name no layout (SpecError).
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass

import numpy as np

from reference.errors import SpecError, expects_but_got

HAVE_REFERENCE = importlib.util.find_spec("reference.sparsity") is not None
SECTION = "9.7.16.10.8"


@dataclass(frozen=True)
class Pattern:
    """``kept`` of every ``chunk`` elements, moved in units of ``unit`` (4:8 keeps pairs)."""

    name: str
    chunk: int
    kept: int
    unit: int


PATTERNS = {"1:2": Pattern("1:2", 2, 1, 1), "2:4": Pattern("2:4", 4, 2, 1), "4:8": Pattern("4:8", 8, 4, 2)}
KIND_PATTERN = {"tf32": "1:2", "f16": "2:4", "f8f6f4": "2:4", "mxf8f6f4": "2:4", "i8": "2:4",
                "mxf4": "4:8", "mxf4nvf4": "4:8"}


def pattern_of(kind: str) -> Pattern:
    """The sparsity granularity of a tcgen05 kind (§9.7.16.10.8 table)."""
    return PATTERNS[KIND_PATTERN[kind]]


def kept_positions_of(pattern: Pattern, nibbles) -> np.ndarray:
    """``int[rows, chunks, kept]``: where each kept element sits in its chunk."""
    nib = np.asarray(nibbles, dtype=np.int64)
    if HAVE_REFERENCE:
        from reference import sparsity as SP
        return SP.kept_positions(SP.PATTERN_1_2 if pattern.kept == 1 else SP.PATTERN_2_4 if pattern.unit == 1
                                 else SP.PATTERN_4_8, nib).astype(np.int64)
    # INTERIM: the text's rule (module docstring)
    if pattern.kept == 1:
        bad = (nib != 0b0100) & (nib != 0b1110)
        if bad.any():
            raise SpecError(SECTION + ".1", "meaningful metadata values", expects_but_got(
                "1:2 metadata nibble", "0b0100 or 0b1110", f"{int(nib[bad][0]):#06b}"))
        return np.where(nib == 0b1110, 1, 0)[..., None]
    idx0, idx1 = nib & 3, nib >> 2
    if (idx0 == idx1).any():
        raise SpecError(SECTION, "meaningful metadata values", expects_but_got(
            f"{pattern.name} metadata nibble", "two distinct indices", f"{int(nib[idx0 == idx1][0]):#06b}"))
    u = pattern.unit
    per = [np.stack([idx0 * u + e, idx1 * u + e], axis=-1) for e in range(u)]
    return np.stack(per, axis=-1).reshape(nib.shape + (pattern.kept,))


def expand_sparse(pattern: Pattern, compressed, positions) -> np.ndarray:
    """Dense ``rows x chunks*chunk`` codes: kept element e of chunk g at g*chunk + positions[r, g, e]."""
    comp = np.asarray(compressed)
    pos = np.asarray(positions, dtype=np.int64)
    rows, chunks, kept = pos.shape
    if comp.shape != (rows, chunks * kept):
        raise SpecError(SECTION, "sparse A", expects_but_got("compressed A", f"shape {(rows, chunks * kept)}", comp.shape))
    if pos.min() < 0 or pos.max() >= pattern.chunk:
        raise SpecError(SECTION, "sparse A", expects_but_got("kept positions", f"0..{pattern.chunk - 1}",
                                                            f"{int(pos.min())}..{int(pos.max())}"))
    dense = np.zeros((rows, chunks * pattern.chunk), dtype=comp.dtype)
    cols = pos + (np.arange(chunks) * pattern.chunk)[None, :, None]
    r = np.broadcast_to(np.arange(rows)[:, None, None], cols.shape)
    dense[r.reshape(-1), cols.reshape(-1)] = comp.reshape(-1)
    return dense
