"""From pytest's reports to case statuses and case identities (pure functions, no hooks).

Status of one phase report (setup / call / teardown):

* call passed -> ``Pass``; xpass (non-strict) or ``[XPASS(strict)]`` -> ``UnexpectedPass``;
* failed -> ``Crash`` / ``Timeout`` when the exception was :class:`conformance.harness.device.CaseCrash` /
  :class:`~conformance.harness.device.CaseTimeout` (or pytest-timeout's "Timeout >"), else ``Fail``;
* skipped by xfail -> ``ExpectedFail``; skipped with a reason starting ``NotSupported:`` ->
  ``NotSupported``; other skips -> ``Skip``;
* passed setup/teardown say nothing (``None``).

A case's status is the worst of its phases (see :data:`results.status.SEVERITY`).

Case identity: ``case_id``, ``section``, ``family`` and variant fields come, first found wins, from
the test's user properties (``record_property("case_id", ...)``, ``"section"``, ``"family"``,
``"variant"`` as a dict, ``"sections"`` as a list), the ``cts_case`` marker (``case_id=``,
``section=``, ``family=``, ``sections=`` every section the case exercises, its own first,
``statements=`` the normative statements it checks; other keywords are variant fields), the module's ``SECTION`` / ``FAMILY`` constants; the case ID falls
back to the pytest node ID.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping

import pytest

from results.outcome_log import plain_value
from results.status import Status

NOT_SUPPORTED_PREFIX = "NotSupported:"
CASE_MARKER = "cts_case"
_IDENTITY_KEYS = ("case_id", "section", "family", "sections", "statements")
_LIST_KEYS = ("sections", "statements")
DETAILS_LIMIT = 4000


class Deferred(Sequence):
    """A list of strings computed on first use: ``Deferred(fn, arg)`` is ``list(fn(arg))``.

    Every collected item declares its ``sections`` and ``statements`` at collection time, but only
    the items that run (or a results manifest) read them: ``pytest -m execute --level default``
    collects the assembly tier's 17,000 cases too, only to deselect them, and deriving their
    statements was half of the collection time."""

    __slots__ = ("_fn", "_arg", "_value")

    def __init__(self, fn: Callable[[Any], Iterable[str]], arg: Any) -> None:
        self._fn, self._arg, self._value = fn, arg, None

    def _list(self) -> list[str]:
        if self._value is None:
            self._value = list(self._fn(self._arg))
            self._fn = self._arg = None
        return self._value

    def __getitem__(self, index):
        return self._list()[index]

    def __len__(self) -> int:
        return len(self._list())

    def __iter__(self):
        return iter(self._list())

    def __eq__(self, other) -> bool:
        return list(self) == (list(other) if isinstance(other, (Deferred, list, tuple)) else other)

    __hash__ = None

    def __repr__(self) -> str:
        return repr(self._list())


def cts_case(case_id: str | None = None, section: str | None = None, family: str | None = None,
             sections: Iterable[str] | None = None, statements: Iterable[str] | None = None,
             **variant: Any) -> pytest.MarkDecorator:
    """The marker that declares a test's case identity at collection time (``sections`` and
    ``statements`` may be :class:`Deferred`: computed when first read)."""
    kwargs = {k: v for k, v in (("case_id", case_id), ("section", section), ("family", family)) if v is not None}
    for key, values in (("sections", sections), ("statements", statements)):
        if values is not None:
            kwargs[key] = values if isinstance(values, Deferred) else list(values)
    return getattr(pytest.mark, CASE_MARKER)(**kwargs, **variant)


@dataclass(frozen=True)
class CaseIdentity:
    case_id: str
    section: str = ""
    family: str = ""
    variant: dict[str, Any] = field(default_factory=dict)
    sections: tuple[str, ...] = ()
    statements: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        """Plain data only (pytest-xdist sends report attributes through execnet)."""
        return {"case_id": self.case_id, "section": self.section, "family": self.family,
                "variant": {str(k): plain_value(v) for k, v in self.variant.items()},
                "sections": list(self.sections), "statements": list(self.statements)}


def case_identity(nodeid: str, user_properties: Iterable[tuple[str, Any]] = (),
                  marker_kwargs: Mapping[str, Any] | None = None,
                  module_constants: Mapping[str, Any] | None = None, *,
                  lists: bool | Iterable[str] = True) -> CaseIdentity:
    """Resolve a case's identity (see the module docstring for the order). ``lists``: which of
    ``sections`` and ``statements`` to derive (True: both); the others stay empty (nothing that
    needs them is written, and deriving statements costs ~1 ms a case)."""
    props = dict(user_properties)
    marker = dict(marker_kwargs or {})
    module = dict(module_constants or {})

    def pick(key: str, module_key: str | None, default: str) -> str:
        for source in (props.get(key), marker.get(key), module.get(module_key) if module_key else None):
            if source not in (None, ""):
                return str(source)
        return default

    variant = {k: v for k, v in marker.items() if k not in _IDENTITY_KEYS and k != "variant"}
    for extra in (marker.get("variant"), props.get("variant")):
        if isinstance(extra, Mapping):
            variant.update(extra)
    section = pick("section", "SECTION", "")
    wanted = set(_LIST_KEYS) if lists is True else set(lists or ())
    found = {key: _first_list(props.get(key), marker.get(key)) if key in wanted else () for key in _LIST_KEYS}
    sections = found["sections"]
    if section and sections and sections[0] != section:   # the own section always leads
        sections = (section,) + tuple(s for s in sections if s != section)
    return CaseIdentity(pick("case_id", None, nodeid), section, pick("family", "FAMILY", ""), variant, sections,
                        found["statements"])


def _first_list(*sources: Any) -> tuple[str, ...]:
    for source in sources:
        if isinstance(source, (list, tuple, Deferred)) and source:
            return tuple(str(s) for s in source)
    return ()


def item_identity(item: pytest.Item, *, lists: bool | Iterable[str] = True) -> CaseIdentity:
    marker = item.get_closest_marker(CASE_MARKER)
    module = getattr(item, "module", None)
    constants = {k: getattr(module, k) for k in ("SECTION", "FAMILY") if hasattr(module, k)} if module else {}
    return case_identity(item.nodeid, getattr(item, "user_properties", ()),
                         marker.kwargs if marker is not None else None, constants, lists=lists)


def skip_reason(report: Any) -> str:
    """The reason of a skipped report (``Skipped: `` prefix removed)."""
    longrepr = getattr(report, "longrepr", None)
    text = str(longrepr[2]) if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr or "")
    return text[len("Skipped: "):] if text.startswith("Skipped: ") else text


def report_text(report: Any) -> str:
    text = getattr(report, "longreprtext", None)
    if text is None:
        text = str(getattr(report, "longrepr", "") or "")
    return text if len(text) <= DETAILS_LIMIT else text[:DETAILS_LIMIT] + "\n... (truncated)"


def phase_status(report: Any) -> Status | None:
    """Status said by one phase report (``None`` for a passing setup or teardown)."""
    outcome, when = report.outcome, report.when
    wasxfail = getattr(report, "wasxfail", None)
    if outcome == "passed":
        if wasxfail is not None:
            return Status.UNEXPECTED_PASS
        return Status.PASS if when == "call" else None
    if outcome == "skipped":
        if wasxfail is not None:
            return Status.EXPECTED_FAIL
        return Status.NOT_SUPPORTED if skip_reason(report).startswith(NOT_SUPPORTED_PREFIX) else Status.SKIP
    kind = getattr(report, "cts_kind", None)
    if kind in (Status.CRASH.value, Status.TIMEOUT.value):
        return Status(kind)
    if when == "???":  # pytest-xdist: the worker died while running this case
        return Status.CRASH
    text = report_text(report)
    if text.startswith("[XPASS(strict)]"):
        return Status.UNEXPECTED_PASS
    if "Failed: Timeout >" in text:  # pytest-timeout
        return Status.TIMEOUT
    return Status.FAIL


def exception_kind(excinfo: Any) -> str | None:
    """``"Crash"`` / ``"Timeout"`` for the device layer's exceptions, else ``None``."""
    if excinfo is None:
        return None
    from conformance.harness.device import CaseCrash, CaseTimeout

    if excinfo.errisinstance(CaseCrash):
        return Status.CRASH.value
    if excinfo.errisinstance(CaseTimeout):
        return Status.TIMEOUT.value
    return None


def case_details(reports: list[Any], final: Status) -> str:
    """The text a reader needs: the failure, skip reason or expectation note of the case."""
    parts = []
    for report in reports:
        note = getattr(report, "cts_note", "")
        status = getattr(report, "cts_raw", None)
        if status is None:
            continue
        if report.outcome == "skipped" and getattr(report, "wasxfail", None) is None:
            parts.append(skip_reason(report))
        elif status != Status.PASS.value:
            prefix = f"[{report.when}] " if report.when not in ("call", "???") else ""
            xfail = getattr(report, "wasxfail", None)
            head = f"{xfail}\n" if xfail and xfail != note else ""
            parts.append(prefix + head + report_text(report))
        if note:
            parts.append(note)
    attempts = getattr(reports[-1], "cts_attempts", None) if reports else None
    if attempts:
        parts.append(f"attempts: {', '.join(attempts)}")
    text = "\n".join(p for p in parts if p)
    return text if len(text) <= DETAILS_LIMIT else text[:DETAILS_LIMIT] + "\n... (truncated)"
