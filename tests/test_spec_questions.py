"""Spec questions (reference.spec_questions, generators.probes, conformance.harness.probes;
docs/spec-questions.md): the registry, the readings the simulated device follows, and the
self-test matrix -- for every question and every reading, the simulator set to that reading
makes the probe report exactly that reading."""

from __future__ import annotations

import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest

from generators.probes import PROBES, probe_case, questions_of
from reference import spec_questions as SQ
from reference.errors import SpecError
from reference.zero_column_mask import ZeroColumnMaskDescriptor

ROOT = Path(__file__).resolve().parents[1]
# Questions of the registry whose probe kernel is not written yet (docs/spec-questions.md "Left").
NO_PROBE_YET = {"Q-FP8-ALIGN", "Q-SFB-2CTA"}


def test_registry_is_well_formed():
    for qid, q in SQ.QUESTIONS.items():
        assert qid == q.id and qid.startswith("Q-")
        ids = q.reading_ids()
        assert len(ids) >= 2 and len(set(ids)) == len(ids), qid
        assert q.pick in ids, qid
        assert q.sections and q.probe and q.listed_in, qid
        assert all(r.sources and r.summary for r in q.readings), qid


def test_probes_cover_the_registry():
    assert set(PROBES) <= set(SQ.QUESTIONS)
    assert set(SQ.QUESTIONS) - set(PROBES) == NO_PROBE_YET


@pytest.mark.parametrize("bad, text", [("Q-NOPE=x", "spec question expects one of Q-ZCM-SPAN"),
                                       ("Q-ZCM-SPAN=x", "reading of Q-ZCM-SPAN expects one of examples, table-prose"),
                                       ("Q-ZCM-SPAN", "reading assignment expects QID=READING")])
def test_bad_assignment_is_one_line(bad, text):
    with pytest.raises(SpecError) as info:
        SQ.parse_assignment(bad)
    assert text in str(info.value) and "\n" not in str(info.value)


def test_sim_device_rejects_unknown_readings():
    from ptxsim import SimDevice

    with pytest.raises(SpecError, match="expects one of .*, but got 'Q-NOPE'"):
        SimDevice(readings={"Q-NOPE": "x"})
    assert SimDevice(readings={"Q-ZCM-SPAN": "table-prose"}).readings == {"Q-ZCM-SPAN": "table-prose"}


def test_resolution_order():
    q = "Q-ZCM-SPAN"
    assert SQ.reading(q) == "examples" and not SQ.is_explicit(q)
    try:
        SQ.set_defaults({q: "table-prose"})
        assert SQ.reading(q) == "table-prose" and SQ.is_explicit(q)
        with SQ.following({}, exact=True):          # the simulated device: its own readings only
            assert SQ.reading(q) == "examples" and not SQ.is_explicit(q)
        with SQ.following({q: "examples"}):
            assert SQ.reading(q) == "examples"
    finally:
        SQ.set_defaults({})
    assert SQ.reading(q) == "examples"


def test_zero_column_mask_readings_swap_the_runs():
    """§9.7.16.4.3 example 2 (skip 2, use 3): LSB-first 0000 111 ... vs 000 1111 ..."""
    d = ZeroColumnMaskDescriptor(non_zero_mask=True, skip_span=2, use_span=3)
    bits = lambda r: [(d.mask(128, 14, reading=r) >> j) & 1 for j in range(14)]  # noqa: E731
    assert bits("examples") == [0, 0, 0, 0, 1, 1, 1] * 2
    assert bits("table-prose") == [0, 0, 0, 1, 1, 1, 1] * 2


def test_metadata_0110_readings():
    from reference import sparsity as SP

    assert SP.kept_positions(SP.PATTERN_2_4, np.array([[0b0110]]), reading="as-listed").tolist() == [[[2, 1]]]
    assert SP.kept_positions(SP.PATTERN_2_4, np.array([[0b0110]]), reading="as-ordered").tolist() == [[[1, 2]]]


def test_questions_of_cases():
    probe = {q: probe_case(q) for q in PROBES}
    assert "Q-ZCM-SPAN" in questions_of(probe["Q-ZCM-SPAN"])
    assert "Q-LBO-KSW" in questions_of(probe["Q-LBO-KSW"])
    assert "Q-TF32-TRUNC" in questions_of(probe["Q-TF32-TRUNC"])
    assert questions_of(probe["Q-CP-NIBBLE"]) == ("Q-CP-NIBBLE",)
    assert "Q-K96-SFW" in questions_of(probe["Q-K96-SFW"])
    assert "Q-META-0110" not in questions_of(probe["Q-META-0110"])      # the suite never feeds 0b0110
    assert "Q-META-TMEM" in questions_of(probe["Q-META-TMEM"])


MATRIX = [(q, r) for q in PROBES for r in SQ.QUESTIONS[q].reading_ids()]


@pytest.mark.parametrize("qid, rid", MATRIX, ids=[f"{q}={r}" for q, r in MATRIX])
def test_simulator_set_to_a_reading_is_observed_following_it(qid, rid):
    from conformance.harness.device_sim import SimBackend
    from conformance.harness.probes import observe

    config = types.SimpleNamespace(stash=pytest.Stash())
    obs = observe(config, SimBackend(readings={qid: rid}), qid)
    assert (obs.observed, obs.pick, obs.raw) == (rid, SQ.QUESTIONS[qid].pick, "")
    assert obs.conflict == (rid != SQ.QUESTIONS[qid].pick)


ZCM_CASES = ["--family", "mma.ws", "-k", "zcm_example2 and m32n64 and not sp and b3"]


def _suite(*extra: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "conformance/test_execute_mma.py",
           "--device", "sim", *ZCM_CASES, *extra]
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_dependent_cases_fail_naming_the_question_then_pass_under_the_reading():
    other = _suite("--sim-reading", "Q-ZCM-SPAN=table-prose")
    assert other.returncode == 1, other.stdout[-2000:]
    assert "depends on spec question Q-ZCM-SPAN (device: table-prose; expected values: examples)" in other.stdout
    assert "--reading Q-ZCM-SPAN=table-prose" in other.stdout
    settled = _suite("--sim-reading", "Q-ZCM-SPAN=table-prose", "--reading", "Q-ZCM-SPAN=table-prose")
    assert settled.returncode == 0, settled.stdout[-2000:]
    assert " passed" in settled.stdout and "failed" not in settled.stdout
