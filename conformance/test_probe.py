"""Probe family: which reading of each spec question this device follows (docs/spec-questions.md).

One test per question of ``reference.spec_questions``: its probe kernel (``generators.probes``)
runs with one case per reading; the result is the reading the device follows, or "none of the
known readings" with the raw data. Not Pass/Fail: a probe passes whenever it observed something
(the observation is the property ``variant.observed`` of its outcome, JUnit section ``probe``)
and skips when it cannot run here. Cases that depend on a question whose observation differs
from the reading of their expected values fail naming the question
(``conformance.harness.probes``).
"""

import pytest

from conformance.harness.case_status import cts_case
from conformance.harness.probes import observe
from reference.spec_questions import QUESTIONS

pytestmark = [pytest.mark.probe, pytest.mark.execute]
SECTION = FAMILY = "probe"


def pytest_generate_tests(metafunc):
    """Every question; none when ``--family``/``--section`` select other cases (select probes with ``-m probe``)."""
    if "qid" not in metafunc.fixturenames:
        return
    cfg = metafunc.config
    families, sections = cfg.getoption("family"), cfg.getoption("section")
    chosen = (not families or FAMILY in families) and (not sections or any(FAMILY.startswith(s) for s in sections))
    metafunc.parametrize("qid", [pytest.param(q, id=q, marks=cts_case(case_id=f"probe.{q}", section=SECTION,
                                                                       family=FAMILY, question=q))
                                 for q in (QUESTIONS if chosen else ())])


def test_probe(qid, request, record_property):
    obs = observe(request.config, request.getfixturevalue("cts_device"), qid)
    variant = {"question": qid, "observed": obs.observed or "not observed", "pick": obs.pick,
               "expected": obs.expected, "probe_case": obs.case_id}
    if obs.raw:
        variant["raw"] = obs.raw
    record_property("variant", variant)
    if obs.skip:
        pytest.skip(obs.skip if obs.skip.startswith("NotSupported:") else f"{qid}: {obs.skip}")
    print(obs.summary())
