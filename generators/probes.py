"""Probe cases of the spec questions (``reference.spec_questions``, docs/spec-questions.md), and
which questions a suite case depends on.

A probe of question Q is one of the suite's own cases (found in the smoke level by its
parameters) whose outcome differs between Q's readings, with inputs synthesised once per reading:
under reading R the inputs are placed, and the expected values computed, as R says. A device
passes the comparison of exactly the reading it follows (``conformance.harness.probes``).

:func:`questions_of` says which questions a case's expected values depend on, from its parameters.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable

import numpy as np

from generators.inputs import SEMANTIC, CaseInputs, seed_of, synthesize
from generators.params import Case
from reference.spec_questions import QUESTIONS, following, question


@dataclass(frozen=True)
class Probe:
    """How question ``qid`` is probed: the base case (a predicate over smoke cases, the first match
    wins), what the probe kernel does, and how its inputs differ from the case's own."""

    qid: str
    kernel: str
    pick_case: Callable[[Case], bool]
    inputs: Callable[[Case], CaseInputs] = synthesize


def _mma_with(change) -> Callable[[Case], CaseInputs]:
    """The case's MMA inputs (``generators.inputs.mma``) with ``change(logical)`` applied."""
    def build(case: Case) -> CaseInputs:
        from generators.inputs import mma as MI

        rng = np.random.default_rng(seed_of(case.case_id))
        logical = change(MI.logical_operands(MI.mma_op(case.params), rng, SEMANTIC))
        rec, blocks, _, region = MI.place_mma(case.params, logical, rng)
        return CaseInputs(rec, blocks.blocks(), MI.LANES * region.ncols, {"mma": logical, "region": region}, ())
    return build


def _all_0110(logical):
    return replace(logical, meta=np.full_like(logical.meta, 0b0110))


def _p(case: Case, **want) -> bool:
    return all(case.params.get(k) == v for k, v in want.items())


PROBES: dict[str, Probe] = {p.qid: p for p in (
    Probe("Q-ZCM-SPAN", "tcgen05.mma.ws kind::f16 M=32 N=64, zero-column mask of Table 45 example 2 (skip 2, use 3)",
          lambda c: c.family == "mma.ws" and _p(c, kind="f16", m=32, zcm="example2", sparse=False)),
    Probe("Q-LBO-KSW", "tcgen05.mma kind::f16 cta_group::2 M=256 N=16, B K-major 32B swizzle, descriptor LBO 32..1008 B",
          lambda c: c.family == "mma" and _p(c, lbo_mode="relative_lbo_set")),
    Probe("Q-META-0110", "tcgen05.mma.sp kind::f16, every metadata nibble 0b0110",
          lambda c: c.family == "mma.sp" and _p(c, kind="f16", lbo_mode="relative", ashift=False), _mma_with(_all_0110)),
    Probe("Q-META-TMEM", "tcgen05.mma.sp kind::f16 cta_group::1 M=128, random metadata (which lane holds a row's chunks)",
          lambda c: c.family == "mma.sp" and _p(c, kind="f16", m=128, cta_group=1, ws=False, lbo_mode="relative",
                                                 ashift=False)),
    Probe("Q-TF32-TRUNC", "tcgen05.mma kind::tf32, operands with nonzero low 13 container bits",
          lambda c: c.family == "mma" and _p(c, kind="tf32", ashift=False, lbo_mode="relative", sparse=False)),
    Probe("Q-K96-SFW", "tcgen05.mma kind::mxf4 K = 96 block32 cta_group::2 M=256 N=16, B scale id 2 (bytes 2-4)",
          lambda c: c.family == "mma" and _p(c, k=96, n=16)),
    Probe("Q-CP-NIBBLE", "tcgen05.cp .b8x16.b4x16_p64 (4-bit to 8-bit decompression), then tcgen05.ld",
          lambda c: c.family == "cp" and _p(c, decompress="b4x16_p64")),
    Probe("Q-ASHIFT-ROW0", "tcgen05.mma kind::f16 .ashift M=128 N=8 (A in Tensor Memory): D row 0",
          lambda c: c.family == "mma" and _p(c, kind="f16", ashift=True)),
)}


def probe_for(qid: str) -> Probe | None:
    question(qid)
    return PROBES.get(qid)


def probe_case(qid: str) -> Case:
    """The suite case a question's probe runs (first smoke case the probe's predicate accepts)."""
    from generators.variants import cases

    probe = PROBES[qid]
    for c in cases("smoke", negatives=False):
        if c.legal and probe.pick_case(c):
            return c
    raise LookupError(f"probe of {qid} expects a smoke case its predicate accepts, but got none")


def probe_inputs(qid: str, case: Case) -> dict[str, CaseInputs]:
    """``{reading: inputs placed as that reading says}`` for every reading of ``qid``."""
    build = PROBES[qid].inputs
    out = {}
    for r in QUESTIONS[qid].reading_ids():
        with following({qid: r}):
            out[r] = build(case)
    return out


# -- which questions a case depends on ---------------------------------------------------------------

def _k_major_swizzled(layout) -> bool:
    return isinstance(layout, str) and layout.endswith("_k") and not layout.startswith("swnone") and layout != "tmem"


def _k96_groups_differ(p) -> bool:
    """Whether a K = 96 case reads a scale-factor byte past byte 3 from an operand whose columns of
    one set of four bytes are not a multiple of 4 (where Q-K96-SFW's readings part)."""
    from generators.inputs.mma import mma_op
    from reference.tmem_mma_operands import scale_factor_columns

    op = mma_op(p)
    sf = op.scale_factors
    operands = ((op.m // op.cta_group, op.a_scale_id), (op.n, op.b_scale_id))
    return any(sid + sf - 1 >= 4 and scale_factor_columns(mn) % 4 for mn, sid in operands)


def questions_of(case: Case) -> tuple[str, ...]:
    """The spec questions whose reading changes this case's expected values (from its parameters).

    Questions the suite's cases never meet are absent: metadata 0b0110 (never fed), ``.ashift``
    row 0 (compared nowhere while unsettled).
    """
    p = case.params
    if case.family == "cp":
        return ("Q-CP-NIBBLE",) if p.get("decompress") == "b4x16_p64" else ()
    if not case.family.startswith("mma") and case.family != "sync":
        return ()
    out = []
    zcm = p.get("zcm")
    if zcm not in (None, "off"):
        from generators.inputs.mma import ZCM

        if ZCM[zcm].skip_span != ZCM[zcm].use_span:
            out.append("Q-ZCM-SPAN")
    if p.get("sparse") and p.get("kind") in ("f16", "tf32") and p.get("m", 0) // p.get("cta_group", 1) == 128:
        out.append("Q-META-TMEM")
    if p.get("k") == 96 and _k96_groups_differ(p):
        out.append("Q-K96-SFW")
    if "tf32" in (p.get("a_type"), p.get("b_type")) and case.family != "sync":
        out.append("Q-TF32-TRUNC")
    if p.get("lbo_mode") == "relative_lbo_set" and (_k_major_swizzled(p.get("a_operand"))
                                                     or _k_major_swizzled(p.get("b_layout"))):
        out.append("Q-LBO-KSW")
    return tuple(out)


__all__ = ["Probe", "PROBES", "probe_for", "probe_case", "probe_inputs", "questions_of"]
