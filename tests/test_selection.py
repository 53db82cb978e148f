"""``conformance.harness.selection``: a test function whose every case ``-m`` deselects is not
parametrized, and the cases that run are exactly those pytest's own ``-m`` would keep."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from conformance.harness.selection import TIER_MARKS, deselected_by_markexpr

pytest_plugins = ["pytester"]
ROOT = Path(__file__).resolve().parents[1]


def _metafunc(markexpr: str, marks: tuple[str, ...]):
    definition = SimpleNamespace(iter_markers=lambda: [SimpleNamespace(name=m) for m in marks])
    return SimpleNamespace(config=SimpleNamespace(option=SimpleNamespace(markexpr=markexpr)), definition=definition)


@pytest.mark.parametrize("expr, marks, skipped", [
    ("execute", ("assemble",), True),                  # another tier: no case can match
    ("execute and assemble", ("assemble",), True),
    ("not assemble", ("assemble",), True),
    ("execute", ("execute",), False),
    ("not execute", ("assemble",), False),
    ("", ("assemble",), False),
    ("execute or semantic", ("assemble",), False),     # a case could carry `semantic`
    ("semantic", ("assemble",), False),
    ("assemble and not slow", ("assemble",), False),
    ("execute and xfail", ("assemble",), True),
    ("(execute", ("assemble",), False),                # a bad expression: pytest reports it
])
def test_deselected_by_markexpr(expr, marks, skipped):
    assert deselected_by_markexpr(_metafunc(expr, marks)) is skipped


def _collected(pytester, *args) -> tuple[list[str], list]:
    items: list = []

    class Grab:
        def pytest_collection_finish(self, session):
            items.extend(session.items)

    pytester.inline_run(str(ROOT / "conformance"), "-p", "no:cacheprovider", "--collect-only", "--level", "smoke",
                        *args, plugins=[Grab()])
    return [it.nodeid for it in items], items


def test_m_keeps_exactly_what_pytest_keeps(pytester):
    """``-m execute`` at smoke: the cases collected are the unfiltered collection's items whose
    marks satisfy the expression, and no case carries a tier marker of its own (the rule
    :data:`TIER_MARKS` rests on)."""
    every, items = _collected(pytester)
    kept = [it.nodeid for it in items if "execute" in {m.name for m in it.iter_markers()}]
    own = {m.name for it in items for m in getattr(getattr(it, "callspec", None), "marks", ())}
    assert not own & TIER_MARKS
    chosen, _ = _collected(pytester, "-m", "execute")
    assert len(every) > len(chosen) > 200
    assert chosen == kept
