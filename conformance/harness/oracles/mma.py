"""Expected D of tcgen05.mma{.sp}{.ws} cases and of the synchronization patterns (§9.7.16.10).

D comes from ``reference.mma_semantics.mma`` on the case's *logical* operands and is placed in
the read-back region through ``reference.datapath_layouts.d_placement`` (the lanes/columns the
kernel's read-back covers). Sections:

* ``D`` (M x N): written elements compared bit for bit (16-bit D: the low 16 bits; the upper half
  of the cell is not defined by §9.7.16.10.4.1); elements the disable-output-lane vector keeps
  hold their old cell (all 32 bits); spec-ambiguous elements (``.ashift`` row 0 and, with
  cta_group::2, row M/2) are not compared;
* ``TMEM outside D``: every other cell of the region keeps its preloaded value.

Semantic cases (exact-by-construction inputs) are checked against both numerics models first:
the spec model's tolerance must be 0 and both models must give the same codes, else the inputs
are not what they claim (:class:`OracleError`). Numerics companions compare under ``--numerics``:
``hardware`` bit for bit with the published sm_100 model, ``spec`` within the spec model's bound.
"""

from __future__ import annotations

import functools
from dataclasses import fields, replace

import numpy as np

from conformance.harness.oracles.common import (
    FULL,
    LANES,
    Expected,
    OracleError,
    OutPiece,
    Section,
    piece,
    region_grid,
    region_section_bits,
    region_sections,
)
from generators.inputs.types import NUMERICS
from reference.datapath_layouts import d_flat_index, d_placement, layout_for
from reference.mma_semantics import mma, mma_models
from reference.numerics_spec import spec_accepts
from reference.tmem_mma_operands import column_blocks


def _exact_check(op, hw, spec, case_id: str) -> None:
    """Spec tolerance 0 and the two models' codes equal on every compared element (written, not
    ambiguous); the compared-element mask is only built when some element would fail."""
    inexact = spec.d_tol != 0
    if inexact.any() and (inexact & hw.written & ~hw.ambiguous).any():
        raise OracleError(f"{case_id}: inputs are not exact by construction (spec tolerance {float(spec.d_tol.max()):g})")
    hw_d, spec_d = np.asarray(hw.d), np.asarray(spec.d)
    same = hw_d == spec_d if hw_d.dtype == spec_d.dtype else hw_d.astype(np.uint32) == spec_d.astype(np.uint32)
    if same.all():
        return
    written = hw.written & ~hw.ambiguous
    if (~same & written).any():
        i, j = (int(v) for v in np.argwhere(~same & written)[0])
        raise OracleError(f"{case_id}: spec and hardware models disagree at D({i}, {j}) on exact inputs")


def d_result(lg, model: str):
    """D of the logical operands; with ``lg.a_blocks`` (spec question Q-WS-A-LANES) column block ``b``
    of D is that of ``a_blocks[b]`` times B."""
    def of(a):
        return mma(lg.op, a, lg.b, lg.c, model=model, meta=lg.meta, scale_a=lg.scale_a, scale_b=lg.scale_b,
                   lane_offset=lg.lane_offset)
    if not lg.a_blocks:
        return of(lg.a)
    layout = layout_for(lg.op.m, lg.op.cta_group, sparse=lg.op.sparse, ws=lg.op.ws)
    block = column_blocks(layout, lg.op.n)[None, :]
    out = of(lg.a_blocks[0])
    for b, a in enumerate(lg.a_blocks[1:], start=1):
        part = of(a)
        out = replace(out, **{f.name: np.where(block == b, getattr(part, f.name), getattr(out, f.name))
                              for f in fields(out) if isinstance(getattr(out, f.name), np.ndarray)
                              and getattr(out, f.name).shape[-1:] == (lg.op.n,)})
    return out


def d_results(lg):
    """(hardware, spec) results of the MMA on the logical operands (``mma_models``: the
    model-independent steps once, each numerics model on its own; per column block with
    ``lg.a_blocks``)."""
    if lg.a_blocks:
        return d_result(lg, "hardware"), d_result(lg, "spec")
    out = mma_models(lg.op, lg.a, lg.b, lg.c, models=("hardware", "spec"), meta=lg.meta, scale_a=lg.scale_a,
                     scale_b=lg.scale_b, lane_offset=lg.lane_offset)
    return out["hardware"], out["spec"]


def mma_sections(case, inputs, spec, numerics: str, mode: str, results=None) -> list[Section]:
    """Sections of the D region (see the module docstring); ``results`` overrides D (patterns)."""
    lg, region = inputs.logical["mma"], inputs.logical["region"]
    op = lg.op
    if results is None:
        if mode == NUMERICS:
            results = d_result(lg, "hardware" if numerics == "hardware" else "spec")
        else:
            hw, sp = d_results(lg)
            _exact_check(op, hw, sp, case.case_id)
            results = hw
    layout = layout_for(op.m, op.cta_group, sparse=op.sparse, ws=op.ws)
    p = piece(spec, inputs.record, "region")
    idx, flat, covered, outside_bits = _d_cells(layout, op.n, lg.lane_offset, p.offset, p.cols, inputs.out_words,
                                                region.before.shape)
    spec_tolerance = mode == NUMERICS and numerics == "spec"
    # the old cells of D (gathered only where some element keeps its own, or for the tolerance)
    before = region.before.reshape(-1)[flat] if spec_tolerance or not results.written.all() else None
    bits = 16 if op.d_type == "f16" else 32
    d_codes = np.asarray(results.d).astype(np.uint32, copy=False)
    expected, mask = _d_expected(results, d_codes, before, np.uint32((1 << bits) - 1))
    value_type = {"f32": "f32", "f16": "f16", "s32": "s32"}[op.d_type]
    accept = None
    if spec_tolerance:
        accept = _spec_acceptor(op.d_type, results, before)
    sections = [Section("D", idx, expected, mask, value_type=value_type, accept=accept, labels=("row i", "col j"))]
    if region.known.all():            # every cell known: the compared bits are those outside D (cached)
        sections.append(region_section_bits("TMEM outside D", p, inputs.out_words, region.before, outside_bits))
    else:
        sections.append(region_sections("TMEM outside D", p, inputs.out_words, region.before, region.known,
                                        exclude=covered))
    return sections


def _d_expected(results, d_codes: np.ndarray, before: np.ndarray, d_bits: np.uint32):
    """(expected word, compared bits) of each D element: written elements hold D's code (``d_bits``
    compared), disabled ones keep their old cell (all 32 bits), ambiguous ones compare nothing.
    (Without disable-output-lane every element is written: no selection, and ``before`` may be None.)"""
    if results.written.all():
        expected, mask = d_codes, _all_bits(d_codes.shape, int(d_bits))
    else:
        expected = np.where(results.written, d_codes, before)
        mask = np.where(results.written, d_bits, np.uint32(FULL))
    if results.ambiguous.any():
        mask = np.where(results.ambiguous, np.uint32(0), mask)
    return expected, mask


@functools.lru_cache(maxsize=256)
def _all_bits(shape: tuple[int, ...], bits: int) -> np.ndarray:
    """uint32[shape] (read-only) of ``bits`` everywhere: the compared bits of a D written whole
    (one per shape and D width)."""
    mask = np.full(shape, bits, dtype=np.uint32)
    mask.setflags(write=False)
    return mask


@functools.lru_cache(maxsize=1024)
def _d_cells(layout, n: int, lane_offset: int, offset: int, cols: int, out_words: int, shape: tuple[int, int, int]):
    """(output word of each D[i][j], its flat cell in the ``shape`` region, bool cells D covers,
    uint32 compared bits of the other cells: all 32 outside D, none on it) of D placed by
    ``reference.datapath_layouts.d_placement`` (read-only; one per layout, N, lane
    alignment, region piece (its first word and width) and region shape). The output words are
    those of the cells in the region's grid of words (``region_grid``, which the rest of the
    region's section uses too)."""
    p = OutPiece("region", offset, LANES, cols)
    if shape[:2] == (layout.cta_group, LANES):      # the region D's synthesis placed C in (cached there)
        flat = d_flat_index(layout, n, lane_offset, shape[2])
    else:
        where = d_placement(layout, n, lane_offset)
        flat = np.ravel_multi_index((where[..., 0], where[..., 1], where[..., 2]), shape)
    idx = region_grid(p, out_words, shape[0], shape[2]).reshape(-1)[flat]
    covered = np.zeros(shape, dtype=bool)
    covered.reshape(-1)[flat] = True
    outside_bits = np.where(covered, np.uint32(0), np.uint32(FULL))
    for arr in (idx, flat, covered, outside_bits):
        arr.setflags(write=False)
    return idx, flat, covered, outside_bits


def _spec_acceptor(d_type: str, res, before):
    bits = 16 if d_type == "f16" else 32

    def accept(words: np.ndarray) -> np.ndarray:
        words = np.asarray(words, dtype=np.uint32)
        codes = (words & np.uint32((1 << bits) - 1)).astype(np.uint16 if bits == 16 else np.uint32)
        ok = spec_accepts(d_type, codes, res.d_value, res.d_tol)
        return np.where(res.written, ok, words == before) | res.ambiguous
    return accept


def mma_expected(case, inputs, spec, numerics: str, mode: str) -> Expected:
    return Expected(mma_sections(case, inputs, spec, numerics, mode), inputs.decisions)


# -- synchronization patterns ----------------------------------------------------------------------

def pattern_expected(case, inputs, spec, numerics: str, mode: str) -> Expected:
    """D after the pattern's MMA(s) and the pattern's loaded register (§9.7.16.6.4)."""
    lg, region, extra = inputs.logical["mma"], inputs.logical["region"], inputs.logical["pattern"]
    hw, sp = d_results(lg)
    _exact_check(lg.op, hw, sp, case.case_id)
    if extra["pattern"] == "pipelined_same_thread":     # the second MMA accumulates into the first's D
        lg2 = replace(lg, op=replace(lg.op, enable_input_d=True), c=np.asarray(hw.d))
        hw2, sp2 = d_results(lg2)
        _exact_check(lg2.op, hw2, sp2, case.case_id)
        hw = hw2
    sections = mma_sections(case, inputs, spec, numerics, mode, results=hw)
    if extra["dump"]:
        sections.append(_pattern_register(case, inputs, spec, hw, region, extra))
    return Expected(sections, inputs.decisions)


def _pattern_register(case, inputs, spec, hw, region, extra) -> Section:
    from conformance.harness.oracles.common import register_section

    op = inputs.logical["mma"].op
    layout = layout_for(op.m, op.cta_group)
    after = region.before[0].copy()
    where = d_placement(layout, op.n)
    after[where[..., 1], where[..., 2]] = np.asarray(hw.d).astype(np.uint32)
    regs = np.zeros((128, 1), dtype=np.uint32)
    column = extra["ld_column"] - region.column
    if extra["pattern"].endswith("ld_mma"):          # warp 0 loads lanes 0-31 before the MMA
        regs[:32, 0] = region.before[0, :32, column]
    else:                                             # warp 1 loads lanes 32-63 after it
        regs[32:64, 0] = after[32:64, column]
    return register_section("ld register %v0", piece(spec, inputs.record, "registers"), inputs.out_words, regs, FULL)
