"""Running the probes of the spec questions on a device (docs/spec-questions.md).

:func:`observe` launches a question's probe kernel (``generators.probes``) once per reading
(inputs placed as that reading says; a launch that traps matches no reading, except a reading
under which the kernel is illegal, ``Probe.refused``, which only a refused launch matches, and a
reading under which its outcome is undefined, ``Probe.undefined``, which a refused launch or a
completed one that no other reading matched matches) and
compares each with the expected values computed under that reading. The device follows the reading(s) whose comparison passes: exactly one is the
observation; none is "none of the known readings", reported with the raw differences. Results are
kept per device and question for the session (the suite's cases ask for them too: a case that
depends on a question whose observed reading is not the one its expected values follow fails
naming the question, :func:`reading_conflicts`).
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from conformance.harness.compare import ComparisonFailure
from conformance.harness.device import CaseCrash, CaseTimeout, check_status
from conformance.harness.execute_batch import ExecCase
from conformance.harness.execute_compare import compare_case
from conformance.harness.oracles import expected
from generators.inputs import NUMERICS, SEMANTIC
from generators.probes import PROBES, probe_case, probe_inputs, questions_of
from reference.spec_questions import NONE_OF_THEM, following, question, reading

_OBSERVED = pytest.StashKey[dict]()
RAW_LIMIT = 1500


@dataclass(frozen=True)
class Observation:
    """What one device did on one question's probe."""

    qid: str
    observed: str            # a reading id, NONE_OF_THEM, or "" (not run: see skip)
    pick: str
    expected: str            # the reading the suite's expected values follow in this run
    case_id: str = ""
    raw: str = ""            # the raw differences when no reading matched (or an undefined-outcome reading
                             # matched by a completed launch: how its D differs from the defined readings')
    skip: str = ""

    @property
    def conflict(self) -> bool:
        """The device follows another *known* reading than the expected values. "None of the known
        readings" is no conflict: the dependent cases' own comparisons decide (a faulty device)."""
        return bool(self.observed) and self.observed not in (self.expected, NONE_OF_THEM)

    def summary(self) -> str:
        if self.skip:
            return f"{self.qid}: not observed ({self.skip})"
        return f"{self.qid}: observed {self.observed}; suite's pick {self.pick}; expected values follow {self.expected}"


def observe(config, device, qid: str) -> Observation:
    """The observation of ``qid`` on ``device`` (run once per session and device)."""
    cache = config.stash.setdefault(_OBSERVED, {})
    key = (id(device), qid)
    if key not in cache:
        cache[key] = None                   # in progress: a probe that depends on this one skips it
        cache[key] = _observe(config, device, qid)
    return cache[key]


def _settled_elsewhere(config, device, qid: str, case) -> dict[str, str]:
    """The readings this device was observed to follow on the other questions the probe case of
    ``qid`` depends on: its inputs and expected values follow them, so that one question's probe
    does not read another question's disagreement as its own."""
    cache = config.stash.setdefault(_OBSERVED, {})
    out = {}
    for other in questions_of(case):
        if other == qid or cache.get((id(device), other), ()) is None:
            continue
        seen = observe(config, device, other).observed
        if seen and seen != NONE_OF_THEM:
            out[other] = seen
    return out


def _observe(config, device, qid: str) -> Observation:
    from conformance.harness.execute_batch import service

    q = question(qid)
    base = dict(qid=qid, pick=q.pick, expected=reading(qid))
    if qid not in PROBES:
        why = q.no_probe_reason
        return Observation(observed="", skip=f"no probe: {why}" if why else "no probe kernel yet", **base)
    if device is None or device.kind == "none":
        return Observation(observed="", skip="no device", **base)
    case = probe_case(qid)
    base["case_id"] = case.case_id
    svc = service(config, device)
    target = svc.target_for(case)
    if target is None:
        return Observation(observed="", skip=f"NotSupported: needs {' or '.join(case.targets)}", **base)
    settled = _settled_elsewhere(config, device, qid, case)
    with following(settled):
        inputs = probe_inputs(qid, case)
    module = svc.module(case, target)
    probe = PROBES[qid]
    matched, raw, undefined_by_d = [], [], ""
    # one launch per reading (data placed for another reading may trap); an undefined-outcome
    # reading last: it matches a refused launch, or a completed one no defined reading matched
    for r in sorted(inputs, key=lambda r: r in probe.undefined):
        try:
            outputs, status, _ = svc._launch(module, case, [(ExecCase(case), inputs[r])])
            problem = check_status(case.case_id, status[0])
        except (CaseCrash, CaseTimeout) as exc:
            problem = f"{type(exc).__name__}: {exc}"
        if r in probe.refused:        # a legality reading: the device refuses the kernel
            if problem:
                matched.append(r)
            else:
                raw.append(f"[{r}] expects the launch refused, but it completed")
            continue
        if r in probe.undefined:      # a legality reading of a runtime value: whatever the defined ones do not predict
            if problem or not matched:
                matched.append(r)
                undefined_by_d = "" if problem else "\n".join(raw)     # what the device computed instead
            else:
                raw.append(f"[{r}] expects a refused launch or a D no other reading predicts, but got {matched[0]}'s")
            continue
        if not problem:
            with following({**settled, qid: r}):
                # bit for bit against the hardware model (a reading may make inputs inexact)
                exp = expected(case, inputs[r], numerics="hardware",
                               mode=NUMERICS if case.family.startswith("mma") else SEMANTIC)
            try:
                compare_case(exp, outputs[0], section_id=case.section, case_id=case.case_id, repro="")
                matched.append(r)
                continue
            except ComparisonFailure as exc:
                problem = str(exc)
        raw.append(f"[data placed and expected as {r}] {problem}")
    if len(matched) == 1:
        return Observation(observed=matched[0], raw=undefined_by_d[:RAW_LIMIT], **base)
    if matched:
        raise AssertionError(f"probe of {qid} cannot tell {', '.join(matched)} apart (case {case.case_id})")
    return Observation(observed=NONE_OF_THEM, raw="\n".join(raw)[:RAW_LIMIT], **base)


def reading_conflicts(config, device, case, **context) -> list[Observation]:
    """The observations that contradict the readings ``case``'s expected values follow
    (``context``: ``mode``, ``numerics`` of ``generators.probes.questions_of``)."""
    return [o for o in (observe(config, device, q) for q in questions_of(case, **context)) if o.conflict]


def conflict_message(case_id: str, conflicts: list[Observation]) -> str:
    parts = [f"{o.qid} (device: {o.observed}; expected values: {o.expected})" for o in conflicts]
    hint = " ".join(f"--reading {o.qid}={o.observed}" for o in conflicts if o.observed != NONE_OF_THEM)
    return (f"{case_id}: depends on spec question {', '.join(parts)}; see docs/spec-questions.md"
            + (f"; rerun with {hint} to expect the device's reading" if hint else ""))


__all__ = ["Observation", "observe", "reading_conflicts", "conflict_message"]
