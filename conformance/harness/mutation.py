"""Mutation score of the execution tier on the simulated device (issue 8).

One pytest session (in-process) collects the execution tier as ``tcgen05-cts run`` would, with
``--device sim``; :class:`MutationPlugin` then takes over the run loop:

1. every collected case runs once without faults; cases that do not pass (fail, skip) are left
   out of the score (a case that fails on a fault-free device detects nothing). This baseline is a
   *dry run* of all faults (:class:`ptxsim.faults.model.ProbeSet`): every hook value passes
   unchanged, and each fault is tried on a copy to record the cases in which it would change a
   decoded effect (its *triggering* cases);
2. for each fault, its triggering cases run under :func:`ptxsim.device.override_faults`
   until the first one that fails (crash and timeout included): the fault is *caught* by that
   case; if none fails it *survived*. Order: the cases that caught earlier faults first (most
   recent first; faults cluster), then collection order.  A case the fault does not trigger in runs
   exactly as in the baseline (the simulator is deterministic and a fault is a pure function of
   ``(value, ctx)``), so it cannot catch the fault and is not run; ``exhaustive=True`` runs every
   passing case instead (for fault functions that keep state or read anything but their inputs).
   A fault the dry run finds impure (two equal calls, two answers) runs in every case anyway.

Cases run through pytest's own test protocol (``runtestprotocol``), i.e. the very harness code of
the execution tier. Contract for that tier: it must not cache launch results across cases (or must
key them by ``ptxsim.device.fault_generation()``), so that a fault switched on between two
cases reaches the second one.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field

import pytest
from _pytest.runner import runtestprotocol

from conformance.harness.execute_batch import _exec_case, restrict_batches
from ptxsim.device import override_faults
from ptxsim.faults.model import Fault


@dataclass
class MutationResult:
    """Per fault (in order): the node ID of the first case that caught it, or None."""

    caught_by: dict[str, str | None] = field(default_factory=dict)
    triggered: dict[str, int] = field(default_factory=dict)     # fault -> passing cases run under it
    baseline_pass: list[str] = field(default_factory=list)
    baseline_other: list[tuple[str, str]] = field(default_factory=list)   # (node ID, outcome)

    @property
    def caught(self) -> int:
        return sum(v is not None for v in self.caught_by.values())


def _outcome(reports) -> str:
    if any(r.failed for r in reports):
        return "failed"
    if any(r.skipped for r in reports):
        return "skipped"
    return "passed"


def run_item(item, nextitem) -> str:
    """Run one case through pytest's own test protocol: ``passed``, ``failed`` or ``skipped``."""
    return _outcome(run_reports(item, nextitem))


def run_reports(item, nextitem) -> list:
    return runtestprotocol(item, nextitem=nextitem, log=False)


def run_baseline(items) -> tuple[list, list[tuple[str, str]]]:
    """Run every item once: (the passing items, [(node ID, outcome) of the others])."""
    passing, others = [], []
    for i, item in enumerate(items):
        outcome = run_item(item, items[i + 1] if i + 1 < len(items) else None)
        if outcome == "passed":
            passing.append(item)
        else:
            others.append((item.nodeid, outcome))
    return passing, others


def first_failure(session, order, around=None):
    """Run ``order`` until a case fails (crash and timeout included): ``(item, its reports)``, or
    None. ``around(item)``: a context manager each case runs in (e.g. its own batch)."""
    for i, item in enumerate(order):
        nxt = order[i + 1] if i + 1 < len(order) else None
        with around(item) if around is not None else contextlib.nullcontext():
            reports = run_reports(item, nxt)
        if _outcome(reports) == "failed":
            session._setupstate.teardown_exact(None)
            return item, reports
    return None


def check_collection(session) -> None:
    if session.testsfailed and not session.config.option.continue_on_collection_errors:
        raise session.Interrupted(f"{session.testsfailed} error(s) during collection")


class MutationPlugin:
    """Replaces pytest's run loop with the baseline + one pass per fault (module docstring)."""

    def __init__(self, faults: list[Fault], progress=None, exhaustive: bool = False) -> None:
        self.faults = list(faults)
        self.exhaustive = exhaustive
        self.result = MutationResult()
        self.progress = progress or (lambda line: None)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session):
        check_collection(session)
        with override_faults(() if self.exhaustive else self.faults, probe=not self.exhaustive) as probe:
            passing, self.result.baseline_other = run_baseline(list(session.items))
        self.result.baseline_pass = [item.nodeid for item in passing]
        effects = None if self.exhaustive else probe.by_case
        impure = set() if self.exhaustive else probe.impure
        catchers: list = []                    # cases that caught a fault, most recent first
        for fault in self.faults:
            every = effects is None or fault.name in impure
            cases = [it for it in passing if every or _triggers(it, fault.name, effects)]
            self.result.triggered[fault.name] = len(cases)
            mine = {id(c) for c in cases}
            first = [c for c in catchers if id(c) in mine]
            seen = {id(c) for c in first}
            order = first + [item for item in cases if id(item) not in seen]
            with override_faults((fault,)), restrict_batches(order):
                found = first_failure(session, order)
            caught = found[0] if found is not None else None
            if caught is not None:
                catchers = [caught] + [c for c in catchers if c is not caught]
            self.result.caught_by[fault.name] = caught.nodeid if caught is not None else None
            self.progress(line(fault.name, self.result.caught_by[fault.name], len(cases)))
        return True


def _triggers(item, name: str, effects: dict[str, set[str]]) -> bool:
    """Whether the dry run saw fault ``name`` change a value in ``item``'s launch (items that are
    not execution cases, i.e. not launched through the batch service, always count)."""
    xc = _exec_case(item)
    return xc is None or name in effects.get(xc.case_id, ())


def line(name: str, caught: str | None, triggered: int | None = None) -> str:
    if caught:
        return f"caught   {name}  by {caught}"
    if triggered == 0:
        return f"survived {name}  (changes no decoded value in any passing case: no case exercises it)"
    if triggered is not None:
        return f"survived {name}  (ran in the {triggered} case(s) it could change; none fails)"
    return f"survived {name}"


def mutation_score(pytest_args: list[str], faults: list[Fault], progress=None,
                   exhaustive: bool = False) -> tuple[int, MutationResult]:
    """Run the session; (pytest exit code, result)."""
    plugin = MutationPlugin(faults, progress, exhaustive)
    code = pytest.main(pytest_args, plugins=[plugin])
    return int(code), plugin.result
