"""JUnit XML, one file per spec section, built from an outcome log with junitparser.

Each ``<testsuite>`` is one section (name ``§<id> <title>``), with properties ``section``,
``toolchain``, ``driver`` and ``device`` (values joined with ``; `` when cases differ).  Each
``<testcase>`` is one case: ``name`` = case ID, ``classname`` = family, ``time`` = duration, and
properties ``status`` (the suite's own status, lossless), ``section``, ``toolchain``, ``device``,
``driver`` and one ``variant.<field>`` per variant field.

Status -> JUnit result: Fail, UnexpectedPass -> ``<failure>``; Crash, Timeout, Missing ->
``<error>``; Skip, NotSupported, ExpectedFail -> ``<skipped>``; Pass, Flake -> none (passed).
"""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

from junitparser import Error, Failure, JUnitXml, Properties, Property, Skipped, TestCase, TestSuite

from reference.sections import SECTIONS
from results.outcome_log import Outcome
from results.status import Status

UNSECTIONED = "unsectioned"

_FAILURE = {Status.FAIL, Status.UNEXPECTED_PASS}
_ERROR = {Status.CRASH, Status.TIMEOUT, Status.MISSING}
_SKIPPED = {Status.SKIP, Status.NOT_SUPPORTED, Status.EXPECTED_FAIL}
_XML_BAD = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _xml_text(text: str, limit: int = 8000) -> str:
    text = _XML_BAD.sub("?", text)
    return text if len(text) <= limit else text[:limit] + "..."


def section_of(outcome: Outcome) -> str:
    return outcome.section or UNSECTIONED


def suite_name(section: str) -> str:
    title = SECTIONS.get(section)
    return f"§{section} {title}" if title else section


def junit_file_name(section: str) -> str:
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", section)
    return f"section-{safe}.xml"


def _testcase(outcome: Outcome) -> TestCase:
    case = TestCase(outcome.case_id, outcome.family or "unknown", round(outcome.duration, 6))
    props = Properties()
    fields = [("status", outcome.status.value), ("section", outcome.section),
              ("toolchain", outcome.toolchain), ("device", outcome.device), ("driver", outcome.driver)]
    fields += [(f"variant.{k}", v) for k, v in sorted(outcome.variant.items())]
    if outcome.raw_status and outcome.raw_status != outcome.status.value:
        fields.append(("raw_status", outcome.raw_status))
    for name, value in fields:
        props.add_property(Property(name, _xml_text(str(value))))
    case.append(props)
    message = _xml_text(f"{outcome.status.value}: {outcome.details}".strip().splitlines()[0], 500)
    result = None
    if outcome.status in _FAILURE:
        result = Failure(message, outcome.status.value)
    elif outcome.status in _ERROR:
        result = Error(message, outcome.status.value)
    elif outcome.status in _SKIPPED:
        result = Skipped(message, outcome.status.value)
    if result is not None:
        result.text = _xml_text(outcome.details)
        case.result = [result]
    return case


def _joined(values) -> str:
    return "; ".join(sorted({v for v in values if v}))


def section_suite(section: str, outcomes: list[Outcome]) -> TestSuite:
    suite = TestSuite(suite_name(section))
    suite.add_property("section", section)
    suite.add_property("toolchain", _joined(o.toolchain for o in outcomes))
    suite.add_property("driver", _joined(o.driver for o in outcomes))
    suite.add_property("device", _joined(o.device for o in outcomes))
    suite.add_testcases([_testcase(o) for o in sorted(outcomes, key=lambda o: o.case_id)])
    return suite


def write_junit(outcomes: list[Outcome], out_dir: Path) -> list[Path]:
    """Write ``section-<id>.xml`` per section into ``out_dir``; returns the paths written."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    by_section: dict[str, list[Outcome]] = defaultdict(list)
    for outcome in outcomes:
        by_section[section_of(outcome)].append(outcome)
    written = []
    for section in sorted(by_section):
        xml = JUnitXml(f"tcgen05-cts {suite_name(section)}")
        xml.add_testsuite(section_suite(section, by_section[section]))
        path = out_dir / junit_file_name(section)
        xml.write(str(path), pretty=True)
        written.append(path)
    return written
