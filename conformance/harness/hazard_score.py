"""Kernel mutation score of the hazard checker (issue 14): delete each synchronization step.

One pytest session (in-process) collects the execution tier with ``--device sim`` (hazard checker
on, the simulator's default); :class:`HazardScorePlugin` then takes over the run loop:

1. the cases are grouped by kernel (execution cases: the kernel is keyed by instruction
   spelling; other items can name a kernel with ``@pytest.mark.hazard_kernel(name, ptx)`` and
   read their PTX through :func:`conformance.harness.execute_batch.edited_source`); every case
   runs once unchanged, and the cases that do not pass are left out;
2. for each kernel, each synchronization site of its PTX (``generators.ptx.sync_sites``) is
   deleted in turn (:func:`conformance.harness.execute_batch.edit_sources`) and the kernel's
   passing cases run, one case per launch, until one fails: a hazard, a mismatch, a timeout or a
   crash *catches* the deletion. The case that caught the previous deletion of the kernel runs
   first. A site that :func:`generators.ptx.sync_redundancy.redundancy` proves redundant is not run
   (``run_redundant=True`` runs it too) and is reported with its reason;
3. a survivor says whether any case reaches its site: the baseline runs under
   :func:`ptxsim.device.override_trace`, which records the PTX lines each launch executed, so a
   site none of the kernel's passing cases executed is "not reached". For a kernel the simulator
   never launched (a ``hazard_kernel`` item checked some other way), the deletion's cases run once
   more with the site replaced by ``trap;`` instead: when none traps, the site is not reached.

``--rescore PATH`` (:class:`Prior`) takes the result a run saved (``--save``): a deletion it caught
keeps that verdict without running, when its kernel's PTX is the same (the saved SHA-256 of the
kernel text; a record saved without one is trusted and counted in ``unverified``); everything
else is scored anew, and a kernel all of whose deletions are carried over is not even run
unchanged. This is for work on the checker or the redundancy analyses, which only add catches:
a checker that became more permissive needs a full run.

Cases run cheapest first (by their baseline duration), except that the case that caught the
previous deletion of the kernel runs first. Failures are reported with ``--tb=native`` (pytest's
own traceback rendering costs more than the launch).

Cases run through pytest's own test protocol and the mutation score's run loop
(:mod:`conformance.harness.mutation`), i.e. the very harness code of the execution tier.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field, fields
from functools import cached_property, partial
from pathlib import Path

import pytest

from conformance.harness.execute_batch import _exec_case, edit_sources, restrict_batches
from conformance.harness.mutation import check_collection, first_failure, run_reports
from generators.ptx.kernel import render
from generators.ptx.sync_redundancy import redundancy
from generators.ptx.sync_sites import delete_site, sync_sites, trap_site
from ptxsim.device import override_trace
from ptxsim.trace import Trace
from reference.targets import ptx_version

#: families whose cases are broken on purpose (negative execution cases): nothing to delete
NEGATIVE_FAMILIES = ("sync.hazard",)
MARK = "hazard_kernel"


@dataclass
class Deletion:
    """One deleted site of one kernel and what became of it."""

    kernel: str
    instruction: str
    key: str
    where: str                      # the site: kind (step) at line N: `text`
    caught_by: str | None = None    # node ID of the first failing case
    how: str = ""                   # hazard / timeout / crash / mismatch
    redundant: str | None = None    # the analysis' reason, when provably redundant
    ran: int = 0                    # cases run with the site deleted
    reached: bool | None = None     # survivors: whether some case executes the site (trap probe)
    ptx_sha: str = ""               # SHA-256 of the kernel's PTX (``--rescore`` compares it)
    carried: bool = False           # verdict carried over from an earlier run (``--rescore``)

    @property
    def scored(self) -> bool:
        """Counted in ``caught X/Y``: every deletion except provably redundant survivors."""
        return self.caught_by is not None or self.redundant is None


@dataclass
class HazardResult:
    deletions: list[Deletion] = field(default_factory=list)
    baseline_pass: int = 0
    baseline_other: list[tuple[str, str]] = field(default_factory=list)
    kernels: int = 0
    unscored_kernels: list[str] = field(default_factory=list)    # kernels none of whose cases pass
    unverified: int = 0             # carried-over verdicts saved without a kernel hash (``--rescore``)

    def to_json(self) -> dict:
        return {"deletions": [asdict(d) for d in self.deletions], "baseline_pass": self.baseline_pass,
                "baseline_other": self.baseline_other, "kernels": self.kernels,
                "unscored_kernels": self.unscored_kernels, "unverified": self.unverified}

    @classmethod
    def from_json(cls, data: dict) -> HazardResult:
        return cls([Deletion(**d) for d in data["deletions"]], data["baseline_pass"],
                   [tuple(o) for o in data["baseline_other"]], data["kernels"], data["unscored_kernels"],
                   data.get("unverified", 0))

    def merge(self, other: HazardResult) -> None:
        self.deletions += other.deletions
        self.baseline_pass += other.baseline_pass
        self.baseline_other += other.baseline_other
        self.kernels += other.kernels
        self.unscored_kernels += other.unscored_kernels
        self.unverified += other.unverified

    @property
    def caught(self) -> int:
        return sum(d.caught_by is not None for d in self.deletions)

    @property
    def scored(self) -> int:
        return sum(d.scored for d in self.deletions)

    @property
    def carried(self) -> int:
        return sum(d.carried for d in self.deletions)


@dataclass(frozen=True)
class KernelUnderTest:
    name: str
    instruction: str
    ptx: str

    @cached_property
    def sha(self) -> str:
        return hashlib.sha256(self.ptx.encode()).hexdigest()


@dataclass
class Prior:
    """The deletions an earlier run caught (``--rescore``), by ``(kernel, site key)``."""

    path: str
    caught: dict[tuple[str, str], dict]

    @classmethod
    def load(cls, paths) -> Prior:
        """Read saved results (a path or several, e.g. one per ``-j`` shard); ValueError naming the
        file and what is wrong with it."""
        paths = [paths] if isinstance(paths, (str, Path)) else list(paths)
        caught: dict[tuple[str, str], dict] = {}
        for path in paths:
            caught.update(cls._caught(path))
        return cls(", ".join(str(p) for p in paths), caught)

    @staticmethod
    def _caught(path) -> dict[tuple[str, str], dict]:
        try:
            data = json.loads(Path(path).read_text())
            records = data["deletions"]
            known = {f.name for f in fields(Deletion)}
            caught = {}
            for r in records:
                if not isinstance(r, dict) or not {"kernel", "key", "caught_by"} <= set(r) or set(r) - known:
                    raise ValueError(f"a deletion record with the fields of Deletion, but got {str(r)[:120]}")
                if r["caught_by"]:
                    caught[(r["kernel"], r["key"])] = r
        except OSError as exc:
            raise ValueError(f"--rescore expects a readable hazard-score result (--save), but got {path!r}: "
                             f"{exc.strerror}") from None
        except (KeyError, TypeError, json.JSONDecodeError) as exc:
            raise ValueError(f"--rescore expects a hazard-score result file (--save), but {path!r} is not one "
                             f"({type(exc).__name__}: {exc})") from None
        except ValueError as exc:
            raise ValueError(f"--rescore expects a hazard-score result file (--save), but {path!r} has {exc}") from None
        return caught

    def carried(self, kernel: KernelUnderTest, key: str) -> Deletion | None:
        """The earlier verdict for deleting ``key`` from ``kernel``, if caught there and the kernel
        is the same."""
        r = self.caught.get((kernel.name, key))
        if r is None or (r.get("ptx_sha") and r["ptx_sha"] != kernel.sha):
            return None
        return Deletion(**{**r, "ptx_sha": r.get("ptx_sha") or "", "carried": True})


def kernel_of(item) -> KernelUnderTest | None:
    """The kernel an item runs: its execution case's kernel, or its ``hazard_kernel`` mark."""
    xc = _exec_case(item)
    if xc is not None:
        case = xc.case
        if case.family in NEGATIVE_FAMILIES:
            return None
        target = case.targets[0]            # site keys do not depend on the target (sync_sites)
        ptx = render(case.kernel, target, case.ptx_version or ptx_version(target, case.features))
        return KernelUnderTest(case.kernel.name, case.kernel.instruction, ptx)
    mark = item.get_closest_marker(MARK)
    if mark is not None:
        name, ptx = mark.args[:2]
        return KernelUnderTest(name, mark.kwargs.get("instruction", name), ptx)
    return None


def _message(report) -> str:
    crash = getattr(report.longrepr, "reprcrash", None)
    return crash.message if crash is not None else str(report.longrepr)


def failure_kind(reports) -> str:
    """hazard / timeout / crash / mismatch, read from the failing report's text."""
    text = "\n".join(_message(r) for r in reports if r.failed)
    if "HazardError" in text:
        return "hazard"
    if "CaseTimeout" in text or "timed out" in text or "Livelock" in text:
        return "timeout"
    if "CaseCrash" in text or "Error" in text.split(":", 1)[0]:
        return "crash"
    return "mismatch"


class HazardScorePlugin:
    """Replaces pytest's run loop with the baseline + one pass per deleted site (module docstring)."""

    def __init__(self, progress=None, shard: tuple[int, int] = (1, 1), run_redundant: bool = False,
                 prior: Prior | None = None) -> None:
        self.progress = progress or (lambda line: None)
        self.shard = shard
        self.run_redundant = run_redundant
        self.prior = prior
        self.result = HazardResult()
        self.executed: dict[str, set[int]] = {}     # kernel -> 1-based PTX lines its passing cases executed

    def _kernels(self, items) -> list[tuple[KernelUnderTest, list]]:
        groups: dict[str, tuple[KernelUnderTest, list]] = {}
        for item in items:
            k = kernel_of(item)
            if k is not None:
                groups.setdefault(k.name, (k, []))[1].append(item)
        index, count = self.shard
        return [g for i, g in enumerate(groups.values()) if i % count == index - 1]

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session):
        check_collection(session)
        kernels = self._kernels(session.items)
        self.result.kernels = len(kernels)
        if self.prior is not None:
            done = {k.name for k, _ in kernels if self._all_carried(k)}
            for kernel, _ in kernels:          # nothing left to run: record the verdicts only
                if kernel.name in done:
                    self._score_kernel(session, kernel, [])
            kernels = [(k, its) for k, its in kernels if k.name not in done]
        items = [it for _, its in kernels for it in its]
        cost = self._baseline(items)
        self.result.baseline_pass = len(cost)
        for kernel, its in kernels:
            mine = sorted((it for it in its if id(it) in cost), key=lambda it: cost[id(it)])
            if not mine:
                self.result.unscored_kernels.append(kernel.name)
                continue
            self.progress(f"kernel {kernel.name}: {kernel.instruction[:100]} ({len(mine)} passing case(s))")
            self._score_kernel(session, kernel, mine)
        return True

    def _all_carried(self, kernel: KernelUnderTest) -> bool:
        """Under ``--rescore``: whether the earlier run caught every deletion of ``kernel`` that is
        not provably redundant (then the kernel need not run at all)."""
        sites = sync_sites(kernel.ptx)
        return bool(sites) and all(
            self.prior.carried(kernel, site.key) is not None
            or (not self.run_redundant and redundancy(kernel.ptx, site) is not None) for site in sites)

    def _carry(self, d: Deletion, kernel: KernelUnderTest) -> None:
        self.result.unverified += not d.ptx_sha            # saved without a hash: trusted, not compared
        d.ptx_sha = kernel.sha
        self.result.deletions.append(d)
        self.progress(line(d))

    def _baseline(self, items) -> dict[int, float]:
        """Run every item once unchanged, recording the PTX lines its launches execute: ``{id(item):
        seconds}`` of the passing items; the others go to ``baseline_other``."""
        cost: dict[int, float] = {}
        for i, item in enumerate(items):
            trace = Trace(features=False)
            with override_trace(trace):
                reports = run_reports(item, items[i + 1] if i + 1 < len(items) else None)
            if any(r.failed for r in reports) or any(r.skipped for r in reports):
                outcome = "failed" if any(r.failed for r in reports) else "skipped"
                self.result.baseline_other.append((item.nodeid, outcome))
                continue
            cost[id(item)] = sum(r.duration for r in reports)
            for name, lines in trace.lines.items():
                self.executed.setdefault(name, set()).update(lines)
        return cost

    def _reached(self, session, kernel: KernelUnderTest, site, cases: list) -> bool:
        """Whether some passing case executes the site: from the baseline's executed lines, or by
        the ``trap;`` probe for a kernel the simulator never launched."""
        lines = self.executed.get(kernel.name)
        if lines is not None:
            return any(i + 1 in lines for i in site.lines)
        with edit_sources({kernel.name: partial(trap_site, key=site.key)}):
            return first_failure(session, cases, around=lambda it: restrict_batches([it])) is not None

    def _score_kernel(self, session, kernel: KernelUnderTest, cases: list) -> None:
        text = kernel.ptx.split("\n")
        sha = kernel.sha
        for site in sync_sites(kernel.ptx):
            carried = self.prior.carried(kernel, site.key) if self.prior is not None else None
            if carried is not None:
                self._carry(carried, kernel)
                continue
            d = Deletion(kernel.name, kernel.instruction, site.key, site.describe(text),
                         redundant=redundancy(kernel.ptx, site), ptx_sha=sha)
            if d.redundant is None or self.run_redundant:
                with edit_sources({kernel.name: partial(delete_site, key=site.key)}):
                    found = first_failure(session, cases, around=lambda it: restrict_batches([it]))
                d.ran = len(cases) if found is None else cases.index(found[0]) + 1
                if found is not None:
                    d.caught_by, d.how = found[0].nodeid, failure_kind(found[1])
                    cases = [found[0]] + [c for c in cases if c is not found[0]]
                else:
                    d.reached = self._reached(session, kernel, site, cases)
            self.result.deletions.append(d)
            self.progress(line(d))


def line(d: Deletion) -> str:
    if d.caught_by:
        return f"caught   {d.kernel} {d.key}  by {d.caught_by} ({d.how}{', carried over' if d.carried else ''})"
    if d.redundant:
        return f"survived {d.kernel} {d.where}  -- redundant: {d.redundant}"
    if d.reached is False:
        return f"survived {d.kernel} {d.where}  (not reached: none of the {d.ran} case(s) executes it)"
    return f"survived {d.kernel} {d.where}  (ran in {d.ran} case(s); none fails; not provably redundant)"


def hazard_score(pytest_args: list[str], progress=None, shard=(1, 1),
                 run_redundant: bool = False, prior: Prior | None = None) -> tuple[int, HazardResult]:
    """Run the session; (pytest exit code, result)."""
    plugin = HazardScorePlugin(progress, shard, run_redundant, prior)
    code = pytest.main(pytest_args, plugins=[plugin])
    return int(code), plugin.result
