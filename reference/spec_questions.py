"""Spec questions: points where the PTX ISA text is ambiguous, contradicts itself or public code,
with the candidate readings, their sources and the suite's current pick (docs/spec-questions.md).

Each :class:`Question` has a stable ID (``Q-ZCM-SPAN``), the sections it concerns, two or more
:class:`Reading` s precise enough to compute an outcome, and ``pick`` (the reading the suite's
expected values follow unless told otherwise). The reference functions that depend on a question
take an explicit ``reading=`` argument; left at ``None`` it resolves through :func:`reading`:

* the readings in force inside :func:`following` (innermost first; ``exact=True`` ignores the
  process defaults), else
* the process defaults (:func:`set_defaults`, the ``--reading Q=R`` option), else
* the question's ``pick``.

The simulated device follows its own ``readings={...}`` exactly (``ptxsim.SimDevice``), so a run
with ``--sim-reading Q=R`` (the device) and ``--reading Q=R`` (the expectation) can differ.
"""

from __future__ import annotations

import contextlib
import contextvars
from dataclasses import dataclass
from typing import Iterator, Mapping

from reference.errors import SpecError, expects_but_got

NONE_OF_THEM = "none of the known readings"


@dataclass(frozen=True)
class Reading:
    """One candidate reading: ``id`` (short word), what it computes, and where it comes from."""

    id: str
    summary: str
    sources: tuple[str, ...]


@dataclass(frozen=True)
class Question:
    """One open point of the spec text; ``probe`` says which kernel tells the readings apart."""

    id: str
    title: str
    sections: tuple[str, ...]
    readings: tuple[Reading, ...]
    pick: str
    probe: str
    listed_in: tuple[str, ...]

    def reading_ids(self) -> tuple[str, ...]:
        return tuple(r.id for r in self.readings)

    def reading(self, rid: str) -> Reading:
        for r in self.readings:
            if r.id == rid:
                return r
        raise SpecError(self.sections[0], f"spec question {self.id}",
                        expects_but_got(f"reading of {self.id}", "one of " + ", ".join(self.reading_ids()), rid))


def _q(qid, title, sections, readings, pick, probe, listed_in) -> Question:
    return Question(qid, title, tuple(sections), tuple(Reading(i, s, tuple(src)) for i, s, src in readings), pick,
                    probe, tuple(listed_in))


QUESTIONS: dict[str, Question] = {q.id: q for q in (
    _q("Q-ZCM-SPAN", "Zero-column mask: which span field counts the zeroed columns", ["9.7.16.4.3"], [
        ("examples", "runs of 1-bits (columns read as zero) are skip_span+1 long, runs of 0-bits use_span+1",
         ["§9.7.16.4.3 worked examples 1-4", "NOTES.md item 1", "CUTLASS zero-column mask builder"]),
        ("table-prose", "Table 45's prose: runs of 1-bits are use_span+1 long, runs of 0-bits skip_span+1",
         ["§9.7.16.4.3 Table 45 bits 40-47 / 48-55 descriptions"]),
     ], "examples", "mma.ws kind::f16 M=32 N=64 with the mask of example 2 (skip 2, use 3): which D columns are A*B",
       ["NOTES.md item 1", "docs/mma.md", "README decisions"]),
    _q("Q-LBO-KSW", "K-major swizzled layouts: leading byte offset 'assumed 1' or honoured", ["9.7.16.4.1", "9.7.16.3.3"], [
        ("assumed-16", "the LBO field is ignored: the 16-byte units along K are 16 bytes apart (pre-swizzle)",
         ["§9.7.16.4.1 Table 40 'not used, assumed to be 1'", "CUTLASS make_umma_desc (writes 1)", "NOTES.md item 5"]),
        ("honoured", "16-byte unit u along K of a core-matrix row starts u * LBO bytes from the first (pre-swizzle)",
         ["a compiler comment saying the value is honoured (NOTES.md item 5)"]),
     ], "assumed-16", "kind::f16 MMA, K-major swizzled A and B placed with descriptor LBO = 32..1008 bytes (lbo_mode relative_lbo_set)",
       ["NOTES.md item 5", "docs/layouts.md item 3"]),
    _q("Q-META-0110", "2:4 / 4:8 metadata 0b0110 (indices 2 then 1) in tcgen05.mma.sp", ["9.7.16.10.8"], [
        ("as-listed", "0b0110 keeps chunk elements 2 and 1: the first stored element goes to position 2, the second to 1",
         ["§9.7.16.10.8.2/.3 list of meaningful values (seven, 0b0110 included)", "NOTES.md item 4"]),
        ("as-ordered", "0b0110 acts as 0b1001: the first stored element goes to position 1, the second to 2",
         ["warp-level mma.sp::ordered_metadata lists six ordered pairs only (§9.7.14.6.1)"]),
     ], "as-listed", "kind::f16 mma.sp M=128 N=8 with every metadata nibble 0b0110",
       ["NOTES.md item 4", "docs/mma.md", "docs/execute.md"]),
    _q("Q-META-TMEM", "Sparsity metadata of kind::f16/tf32 with 128 rows per CTA: which lane holds a row's chunks",
       ["9.7.16.10.8.4"], [
        ("cutlass-interleaved", "per 16 rows, row 8h+r: chunks 0-3 in bits 16h.. of lane r, chunks 4-7 of lane r+8",
         ["CUTLASS UMMA::tmem_e_frg (cute/atom/mma_traits_sm100.hpp:607-635)",
          "CUTLASS Sm1xxGemmSparseConfig::TensorEAtom_MMA_F16/TF32 (sm1xx_sparse_config.inl:115-122)",
          "docs/clients.md K4 (CuTe sparse kernels)"]),
        ("row-per-lane", "row i's word (chunk j at bits 4j) in lane i, as the 8-bit kinds' two words",
         ["Figures 262-265 missing; the earlier decision of reference/tmem_mma_operands.py"]),
     ], "cutlass-interleaved", "kind::f16 mma.sp cta_group::1 M=128 with random metadata",
       ["docs/clients.md K4", "reference/tmem_mma_operands.py"]),
    _q("Q-ASHIFT-ROW0", ".ashift: what row 0 of A is", ["9.7.16.10.9.1"], [
        ("keeps-a0", "row 0 keeps A[0] (nothing moves into it)", ["reference.mma_semantics decision", "docs/mma.md"]),
        ("zero", "row 0 is zero (D row 0 = C, or 0 without enable-input-d)", ["docs/mma.md 'D row 0: A[0]*B or 0'"]),
     ], "keeps-a0", "kind::f16 MMA with .ashift, M=128: D row 0",
       ["docs/mma.md", "reference/mma_semantics.py"]),
    _q("Q-FP8-ALIGN", "fp8 (kind::f8f6f4) alignment of products: truncation toward zero or toward -inf", ["9.7.16.10.6"], [
        ("toward-zero", "bits below the alignment point are dropped from the magnitude (trunc)",
         ["MMA-Sim Blackwell model (arXiv:2511.10909)", "docs/mma.md"]),
        ("toward-minus-inf", "two's-complement alignment: bits below the point round the value down (floor)",
         ["fixed-point adders that shift two's-complement significands"]),
     ], "toward-zero", "kind::f8f6f4 e4m3, D f32, C = 256 and one product -2^-18 per row (hardware model)",
       ["docs/mma.md"]),
    _q("Q-TF32-TRUNC", "tf32 operands: low 13 mantissa bits ignored (truncated) or rounded", ["9.7.16.10.6"], [
        ("truncate", "the low 13 bits of a tf32 operand's f32 container are ignored",
         ["NOTES.md item 10 (published measurements)", "docs/formats.md"]),
        ("round-nearest", "the f32 container is rounded to nearest-even at 10 mantissa bits",
         ["cvt.rna.tf32.f32 rounds; the MMA text does not say"]),
     ], "truncate", "kind::tf32 MMA whose operands carry nonzero low 13 bits", ["NOTES.md item 10", "docs/formats.md"]),
    _q("Q-K96-SFW", "K = 96 scale factors: column distance to the next set of four bytes when MN < 128",
       ["9.7.16.10.7"], [
        ("group-of-4", "W = ceil(ceil(MN/32)/4)*4 columns (4 for MN <= 128)",
         ["CUTLASS sm103 block-scaled collective", "reference/tmem_mma_operands.py",
          "CuTe oracle: tmem_sf_frg lays SFB of N = 192 K = 96 MMAs over 256 columns (docs/clients-cute.md CU6)"]),
        ("compact", "W = ceil(MN/32) columns (the next set follows at once)", ["the missing Figures 234-258 (not public)"]),
     ], "group-of-4", "kind::mxf4 K = 96 block32 (3 scale factors) N = 16, B scale id 2: byte 4 in the next column group", ["docs/mma.md", "docs/tmem.md"]),
    _q("Q-SFB-2CTA", "cta_group::2 block scaling: which CTA supplies B's scale factors", ["9.7.16.10.7"], [
        ("lead", "the issuing (even) CTA's SFB holds all N columns", ["reference/tmem_mma_operands.py", "docs/clients.md C3",
         "CuTe oracle: 2x1SM MMA_ScaleFactor puts all N SFB columns in every CTA (docs/clients-cute.md CU6)"]),
        ("split", "each CTA's SFB holds its own N/2 columns (CTA 0: 0..N/2-1, CTA 1: N/2..N-1) at the same address",
         ["Gluon TensorMemoryScalesLayout(cga_layout=[[1, 0]])", "docs/clients.md C3"]),
     ], "lead", "kind::mxf8f6f4 cta_group::2 M=256 N=128 with different SFB in the two CTAs",
       ["docs/clients.md C3", "NOTES.md (SFB under cta_group::2)"]),
    _q("Q-CP-NIBBLE", "tcgen05.cp 4-bit to 8-bit decompression: where the nibble lands", ["9.7.16.9.1"], [
        ("bits-5-2", "the 4-bit value goes to bits 5-2 of its byte (the MMA's 8-bit container)",
         ["CUTLASS mma_traits_sm120.hpp", "docs/tmem.md"]),
        ("bits-3-0", "the 4-bit value goes to bits 3-0 of its byte (as ldmatrix does)", ["ldmatrix .b4x16_p64", "docs/tmem.md"]),
     ], "bits-5-2", "tcgen05.cp .b4x16_p64 -> .b8x16, then tcgen05.ld", ["docs/tmem.md"]),
)}


# -- resolution ------------------------------------------------------------------------------------

_DEFAULTS: dict[str, str] = {}
_CURRENT: contextvars.ContextVar[tuple[Mapping[str, str], bool] | None] = contextvars.ContextVar(
    "spec_question_readings", default=None)


def question(qid: str) -> Question:
    """The question ``qid``; one-line error naming the known IDs otherwise."""
    try:
        return QUESTIONS[qid]
    except KeyError:
        raise SpecError("9.7.16", "spec questions", expects_but_got(
            "spec question", "one of " + ", ".join(QUESTIONS), qid)) from None


def check_readings(readings: Mapping[str, str] | None) -> dict[str, str]:
    """``{QID: reading}`` validated (known question, known reading of it)."""
    out = {}
    for qid, rid in dict(readings or {}).items():
        out[qid] = question(qid).reading(rid).id
    return out


def parse_assignment(text: str) -> tuple[str, str]:
    """``"Q-ZCM-SPAN=table-prose"`` -> ``("Q-ZCM-SPAN", "table-prose")``, validated."""
    qid, sep, rid = str(text).partition("=")
    if not sep:
        raise SpecError("9.7.16", "spec questions", expects_but_got("reading assignment", "QID=READING", text))
    qid, rid = qid.strip(), rid.strip()
    question(qid).reading(rid)
    return qid, rid


def parse_assignments(texts) -> dict[str, str]:
    return dict(parse_assignment(t) for t in texts or ())


def set_defaults(readings: Mapping[str, str] | None) -> None:
    """Process-wide readings of the expected values (``--reading``); ``None``/``{}`` = the picks."""
    _DEFAULTS.clear()
    _DEFAULTS.update(check_readings(readings))


def defaults() -> dict[str, str]:
    return dict(_DEFAULTS)


def reading(qid: str) -> str:
    """The reading of ``qid`` in force here (module docstring)."""
    q = question(qid)
    current = _CURRENT.get()
    if current is not None:
        mapping, exact = current
        if qid in mapping:
            return mapping[qid]
        if exact:
            return q.pick
    return _DEFAULTS.get(qid, q.pick)


def is_explicit(qid: str) -> bool:
    """Whether ``qid``'s reading was chosen (``following`` or ``--reading``), not left at the pick:
    the reference then marks nothing of it spec-ambiguous."""
    current = _CURRENT.get()
    if current is not None and qid in current[0]:
        return True
    return (current is None or not current[1]) and qid in _DEFAULTS


def resolve(qid: str, given: str | None) -> str:
    """An explicit ``reading=`` argument (validated), else :func:`reading`."""
    return question(qid).reading(given).id if given is not None else reading(qid)


def in_force() -> dict[str, str]:
    """Every question's reading in force here."""
    return {qid: reading(qid) for qid in QUESTIONS}


@contextlib.contextmanager
def following(readings: Mapping[str, str] | None, exact: bool = False) -> Iterator[dict[str, str]]:
    """Inside the block the reference follows ``readings``; with ``exact`` every other question
    follows its pick (not the process defaults): the simulated device's own readings."""
    checked = check_readings(readings)
    outer = _CURRENT.get()
    if not exact and outer is not None:
        merged = dict(outer[0])
        merged.update(checked)
        token = _CURRENT.set((merged, outer[1]))
    else:
        token = _CURRENT.set((checked, exact))
    try:
        yield checked
    finally:
        _CURRENT.reset(token)


__all__ = ["Reading", "Question", "QUESTIONS", "NONE_OF_THEM", "question", "check_readings", "parse_assignment",
           "parse_assignments", "set_defaults", "defaults", "reading", "resolve", "is_explicit", "in_force", "following"]
