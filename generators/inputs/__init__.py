"""Input synthesis: the case record, operand images and logical inputs of one case
(docs/kernel-abi.md, docs/execute.md).

:func:`synthesize` returns a :class:`CaseInputs`: the 256-byte case record's family fields, one in
block per CTA, the number of output words per CTA, and the *logical* inputs the expected-value
step (``conformance/oracles``) computes from. Values are exact by construction (``values.py``);
placement goes through the reference's writers (shared-memory layouts ``reference.smem_choice`` +
``reference.smem_image.pack``, Tensor Memory operands ``reference.tmem_mma_operands``, D through
``reference.datapath_layouts``), never through the simulator's readers.

Seeds: ``crc32(case ID)`` (stable across runs and processes). ``mode="numerics"`` gives MMA
cases random full-mantissa operands instead (numerics companions, compared under ``--numerics``).
A case whose expected result the reference cannot define raises :class:`Untestable`.

Modules: ``mma.py`` (tcgen05.mma*), ``patterns.py`` (§9.7.16.6.4), ``movement.py`` (ld, ld.red,
st, wait, cp, shift, fence, commit, alloc), ``warp.py`` (warp-level mma.sp), ``values.py``
(value pools), ``block.py`` (in blocks, staging, preloads).
"""

from __future__ import annotations

import zlib

import numpy as np

from generators.inputs import movement as _mv
from generators.inputs.mma import mma_inputs
from generators.inputs.patterns import pattern_inputs
from generators.inputs.types import MODES, NUMERICS, SEMANTIC, CaseInputs, TmemRegion, Untestable
from generators.inputs.warp import warp_inputs
from generators.params import Case
from generators.ptx import record as R

__all__ = ["CaseInputs", "TmemRegion", "Untestable", "SEMANTIC", "NUMERICS", "synthesize", "case_record", "seed_of"]

_MOVEMENT = {"ld": _mv.ld_inputs, "ld.red": _mv.ld_inputs, "st": _mv.st_inputs, "wait": _mv.wait_inputs,
             "cp": _mv.cp_inputs, "shift": _mv.shift_inputs, "fence": _mv.fence_inputs, "commit": _mv.commit_inputs,
             "alloc": _mv.alloc_inputs}


def seed_of(case_id: str) -> int:
    return zlib.crc32(case_id.encode())


def synthesize(case: Case, mode: str = SEMANTIC) -> CaseInputs:
    """Record fields, per-CTA in blocks, output size and logical inputs of a legal ``case``."""
    if mode not in MODES:
        raise ValueError(f"mode expects one of {', '.join(MODES)}, but got {mode!r}")
    if not case.legal:
        raise Untestable(f"{case.case_id} is a negative case (it must not assemble; nothing to run)")
    rng = np.random.default_rng(seed_of(case.case_id + ("#numerics" if mode == NUMERICS else "")))
    if case.family.startswith("mma"):
        return mma_inputs(case, rng, mode)
    if mode == NUMERICS:
        raise ValueError(f"mode numerics expects an MMA case, but got family {case.family!r}")
    if case.family == "warp.mma.sp":
        return warp_inputs(case, rng)
    if case.family in ("sync", "sync.hazard"):
        return pattern_inputs(case, rng)
    return _MOVEMENT[case.family](case, rng)


def case_record(case: Case, inputs: CaseInputs, in_ptr: int = 0, out_ptr: int = 0, status_ptr: int = 0) -> bytes:
    """The packed 256-byte record (pointers as given; in_cta_stride = one CTA's block length)."""
    fields = dict(inputs.record)
    fields.update(in_ptr=in_ptr, out_ptr=out_ptr, status_ptr=status_ptr, out_words=inputs.out_words,
                  in_cta_stride=len(inputs.in_block))
    return R.pack_case_record(fields)
