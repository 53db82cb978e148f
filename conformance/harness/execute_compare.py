"""Comparing one case's output words with its expected sections (``conformance.harness.oracles``).

Per section: elements with a zero mask are not compared; a predicate (spec-model tolerance)
replaces bit equality where a section has one; "any NaN" elements accept every NaN. Output words
still holding the poison where the expected bits are defined were never written. A failure is a
:class:`conformance.harness.compare.ComparisonFailure` whose message names the spec section, case ID,
section, number of mismatches, the first few (row, col) with expected/actual bits and values, max
abs/rel error, the documented decisions the expectation rests on, and a reproduction command.
"""

from __future__ import annotations

import numpy as np

from conformance.harness.compare import ComparisonFailure, mismatch_message
from conformance.harness.device import POISON
from conformance.harness.oracles.common import Expected, Section

SHOW_SECTIONS = 4


def display(words: np.ndarray, value_type: str) -> np.ndarray:
    """Words as values for a message: f32 / f16 (low 16 bits) / s32 / u32."""
    w = np.asarray(words, dtype=np.uint32)
    if value_type == "f32":
        return w.view(np.float32)
    if value_type == "f16":
        return (w & np.uint32(0xFFFF)).astype(np.uint16).view(np.float16)
    if value_type == "s32":
        return w.view(np.int32)
    return w


def _is_nan(words: np.ndarray, value_type: str) -> np.ndarray:
    w = np.asarray(words, dtype=np.uint32)
    if value_type == "f16":
        h = w & np.uint32(0xFFFF)
        return ((h >> 10) & 0x1F == 0x1F) & ((h & 0x3FF) != 0)
    return ((w >> 23) & 0xFF == 0xFF) & ((w & 0x7FFFFF) != 0)


def section_mismatch(section: Section, actual: np.ndarray) -> np.ndarray:
    """bool array: elements of ``section`` whose actual word is not acceptable (by the predicate
    where there is one, else in the compared bits: a zero mask compares nothing)."""
    if section.accept is not None:
        bad = ~np.asarray(section.accept(actual), dtype=bool)
    else:
        bad = ((actual ^ section.expected) & section.mask) != 0
    if section.nan_any is not None:
        bad &= ~(section.nan_any & _is_nan(actual, section.value_type))
    return bad


def unwritten(section: Section, actual: np.ndarray) -> np.ndarray:
    """Defined elements whose word still holds the poison the host wrote before the launch."""
    poison = actual == np.uint32(POISON)
    if not poison.any():                  # (the usual case: no element to look at further)
        return poison
    return poison & (section.mask != 0) & ((section.expected & section.mask) != (POISON & section.mask))


def compare_case(expected: Expected, outputs: np.ndarray, *, section_id: str, case_id: str, repro: str) -> None:
    """Raise ComparisonFailure listing every failing section (the first few in full)."""
    outputs = np.asarray(outputs, dtype=np.uint32)
    messages, total = [], 0
    for sec in expected.sections:
        if sec.index.size and int(sec.index.max()) >= outputs.size:
            raise ComparisonFailure(f"§{section_id} {case_id}: section {sec.name} reaches output word "
                                    f"{int(sec.index.max())}, but the case has {outputs.size}")
        actual = outputs[sec.index]
        for kind, bad in (("not written", unwritten(sec, actual)), ("mismatch", section_mismatch(sec, actual))):
            if not bad.any():
                continue
            total += 1
            if len(messages) >= SHOW_SECTIONS:
                continue
            exp = display(sec.expected & sec.mask if sec.accept is None else sec.expected, sec.value_type)
            act = display(actual, sec.value_type)
            numeric = sec.value_type in ("f32", "f16")
            what = f"{sec.name} elements [{sec.labels[0]}, {sec.labels[1]}]"
            text = mismatch_message(section=section_id, case_id=case_id, expected=exp.reshape(sec.index.shape),
                                    actual=act.reshape(sec.index.shape), mismatch=bad, what=what, repro=repro,
                                    numeric=numeric)
            if kind == "not written":
                text = text.replace(" differ", " were not written (still the poison 0xdeadbeef)", 1)
            messages.append(text.rsplit("\n  reproduce:", 1)[0])
            break
    if messages:
        lines = messages
        if total > len(messages):
            lines.append(f"  ... and {total - len(messages)} more failing section(s)")
        if expected.decisions:
            lines.append("  expectation rests on decisions: " + "; ".join(expected.decisions))
        lines.append(f"  reproduce: {repro}")
        raise ComparisonFailure("\n".join(lines))
