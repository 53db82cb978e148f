"""Expected results as *sections* of a case's output words, and how a section is compared.

A kernel's output (per CTA ``out_words`` u32, CTA rank r at ``r * out_words``; docs/kernel-abi.md)
is cut into sections with a meaning (D of an MMA, the rest of a Tensor Memory region, a register
dump, ...). A :class:`Section` holds, for each of its elements, the output word it lives in
(``index``), the expected word and a **bit mask** of the bits the spec defines (0 = the word is
undefined and not compared: the upper half of a 16-bit D cell, the row 0 of a shift, registers the
kernel never sets). Elements may instead be *accepted* by a predicate (spec-model tolerance) or
be "any NaN" (NaN payloads the text leaves open).

Where sections come from in the output: :func:`output_pieces` walks the kernel's steps (Readback
regions in record order, DumpRegs register blocks) exactly as the kernel writes them.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from generators.ptx.steps import DumpRegs, Readback

LANES = 128
FULL = 0xFFFFFFFF


class OracleError(Exception):
    """The expected-value step cannot vouch for its result (e.g. inputs that are not exact)."""


@dataclass
class Section:
    """Expected content of some output words (arrays share one shape, 2-D for messages)."""

    name: str
    index: np.ndarray                       # int64 positions in the case's output words
    expected: np.ndarray                    # uint32 expected words
    mask: np.ndarray                        # uint32 bits compared (0: not compared)
    value_type: str = "u32"                 # display: u32, s32, f32, f16 (low 16 bits)
    nan_any: np.ndarray | None = None       # True: any NaN of value_type is accepted
    accept: Callable[[np.ndarray], np.ndarray] | None = None   # words -> bool (replaces bit equality)
    labels: tuple[str, str] = ("row", "col")

    def __post_init__(self) -> None:
        self.index = np.asarray(self.index, dtype=np.int64)
        self.expected = _words(self.expected, self.index.shape)
        self.mask = _words(self.mask, self.index.shape)


def _words(x, shape: tuple[int, ...]) -> np.ndarray:
    """``x`` as uint32 words of ``shape``: an array of that shape and dtype is taken as it is (a
    section is never written to, so it may share memory with what its oracle passed), anything
    else converted or broadcast into a new array."""
    arr = np.asarray(x, dtype=np.uint32)
    return arr if arr.shape == shape else np.broadcast_to(arr, shape).copy()


@dataclass
class Expected:
    """All sections of one case, and the decisions (not spec text) they depend on."""

    sections: list[Section]
    decisions: tuple[str, ...] = ()
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class OutPiece:
    """One block of a CTA's output words: a read-back region or a register dump."""

    kind: str          # "region" | "registers"
    offset: int        # first word (per CTA)
    rows: int          # lanes (region) or threads (registers)
    cols: int          # columns or registers
    column: int = 0    # Tensor Memory column of a region


def output_pieces(spec, record: dict) -> list[OutPiece]:
    """The per-CTA output layout of a kernel (its Readback / DumpRegs steps in program order)."""
    pieces, offset = [], 0
    for step in spec.steps:
        if isinstance(step, Readback):
            slots = list(record.get("readback", ())) + [0] * 4
            for i in range(2):
                column, ncols = slots[2 * i], slots[2 * i + 1]
                if ncols:
                    pieces.append(OutPiece("region", offset, LANES, ncols, column))
                    offset += LANES * ncols
        elif isinstance(step, DumpRegs):
            pieces.append(OutPiece("registers", offset, spec.threads, len(step.regs)))
            offset += spec.threads * len(step.regs)
    return pieces


def piece(spec, record: dict, kind: str, nth: int = 0) -> OutPiece:
    found = [p for p in output_pieces(spec, record) if p.kind == kind]
    if len(found) <= nth:
        raise OracleError(f"output layout expects a {kind} block #{nth}, but the kernel has {len(found)}")
    return found[nth]


def region_index(p: OutPiece, out_words: int, cta, lane, column) -> np.ndarray:
    """Output word of cell (lane, column) of a region piece in CTA ``cta`` (column relative)."""
    return (np.asarray(cta) * out_words + p.offset + np.asarray(lane) * p.cols + np.asarray(column)).astype(np.int64)


def region_grid(p: OutPiece, out_words: int, ctas: int, ncols: int) -> np.ndarray:
    """``int64[ctas * 128, ncols]`` (read-only): the output word of every cell of a region piece
    (:func:`region_index` over all CTAs, lanes and columns; one per offset, width, output size and
    shape: the piece's Tensor Memory column does not move its words)."""
    return _region_grid(p.offset, p.cols, out_words, ctas, ncols)


@functools.lru_cache(maxsize=1024)
def _region_grid(offset: int, cols: int, out_words: int, ctas: int, ncols: int) -> np.ndarray:
    p = OutPiece("region", offset, LANES, cols)
    c, lane, col = np.arange(ctas)[:, None, None], np.arange(LANES)[None, :, None], np.arange(ncols)[None, None, :]
    idx = region_index(p, out_words, c, lane, col).reshape(ctas * LANES, ncols)     # (broadcast)
    idx.setflags(write=False)
    return idx


def region_sections(name: str, p: OutPiece, out_words: int, after: np.ndarray, known: np.ndarray,
                    exclude: np.ndarray | None = None, mask: np.ndarray | None = None) -> Section:
    """A region's cells (``after[cta, lane, col]``), compared where ``known`` and not ``exclude``."""
    keep = np.asarray(known, dtype=bool)
    if exclude is not None:
        keep = keep & ~np.asarray(exclude, dtype=bool)
    bits = np.where(keep, np.uint32(FULL) if mask is None else mask, np.uint32(0)).astype(np.uint32, copy=False)
    return region_section_bits(name, p, out_words, after, bits)


def region_section_bits(name: str, p: OutPiece, out_words: int, after: np.ndarray, bits: np.ndarray) -> Section:
    """A region's cells (``after[cta, lane, col]``) with the compared bits ``bits`` (uint32, the
    same shape; taken as they are: a section is never written to)."""
    ctas = after.shape[0]
    idx = region_grid(p, out_words, ctas, after.shape[2])
    return Section(name, idx, after.reshape(ctas * LANES, -1), bits.reshape(ctas * LANES, -1),
                   labels=("cta*128+lane", "column"))


def register_section(name: str, p: OutPiece, out_words: int, regs: np.ndarray, mask, cta: int = 0,
                     value_type: str = "u32", nan_any=None) -> Section:
    """A register dump ``regs[thread, register]`` of CTA ``cta``."""
    t, r = np.meshgrid(np.arange(p.rows), np.arange(p.cols), indexing="ij")
    idx = cta * out_words + p.offset + t * p.cols + r
    return Section(name, idx, regs, mask, value_type=value_type, nan_any=nan_any, labels=("thread", "register"))
