"""pytest plugin: outcome log, baselines, skips/flakes lists, flake reruns, sharding, crash records.

Reads the options ``--results``, ``--baseline``, ``--flake-reruns``, ``--shard`` (declared in
:mod:`conformance.plugin`) and declares ``--skips`` and ``--flakes``.  Roles:

* a pytest-xdist worker (or a run without xdist) turns each finished test into one
  :class:`results.outcome_log.Outcome` and appends it to ``outcomes<tag>-<worker>.jsonl``; the
  first worker to finish collecting writes the manifest ``expected-cases<tag>.jsonl``;
* the xdist controller writes ``run<tag>.json`` and, when a worker dies mid-test, the ``Crash``
  record of that test (``outcomes<tag>-controller.jsonl``); the other tests go on in a new worker.

Baseline verdicts change what pytest sees: an expected failure or known flake is reported as
xfailed (does not fail the run), an unexpected pass as failed.
"""

from __future__ import annotations

import json
import os
import platform
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from _pytest.runner import runtestprotocol

from conformance.harness.case_status import (
    CASE_MARKER,
    CaseIdentity,
    case_details,
    case_identity,
    exception_kind,
    item_identity,
    phase_status,
)
from results.baseline import (
    Baseline,
    PatternList,
    apply_expectations,
    attempts_verdict,
    parse_baseline,
    parse_pattern_files,
    parse_shard,
    shard_select,
)
from results.outcome_log import (
    ExpectedCase,
    NotRun,
    Outcome,
    OutcomeWriter,
    clear_run,
    manifest_path,
    not_run_path,
    outcome_path,
    read_manifest,
    run_info_path,
    run_tag,
    write_json_atomic,
    write_jsonl_exclusive,
)
from results.status import RAW_FAILURES, Status, worst

RESTART_EXIT_CODE = 75


@dataclass
class _State:
    results_dir: Path | None
    tag: str
    role: str  # "main", "worker" or "controller"
    writer_name: str
    baseline: Baseline | None
    skips: PatternList
    flakes: PatternList
    shard: tuple[int, int] | None
    reruns: int
    run_info: dict[str, str] = field(default_factory=dict)
    pending: dict[str, list[Any]] = field(default_factory=dict)
    #: node ID -> plain-data identity of a running case, for its outcome record (kept here, not on
    #: the reports: pytest-xdist would send it to the controller with every report)
    identities: dict[str, dict] = field(default_factory=dict)
    writer: OutcomeWriter | None = None
    manifest: dict[str, ExpectedCase] | None = None
    start: float = field(default_factory=time.time)

    def write(self, outcome: Outcome) -> None:
        if self.results_dir is None:
            return
        if self.writer is None:
            self.writer = OutcomeWriter(outcome_path(self.results_dir, self.tag, self.writer_name))
        self.writer.append(outcome)


_STATE = pytest.StashKey[_State]()


class _Hooks:
    @pytest.hookspec
    def pytest_cts_not_run(self, config):
        """Return legal variants not run at the chosen level: iterable of
        ``results.outcome_log.NotRun(case_id, section, family, reason)``."""


def pytest_addhooks(pluginmanager) -> None:
    pluginmanager.add_hookspecs(_Hooks)


def pytest_addoption(parser) -> None:
    group = parser.getgroup("tcgen05-cts")
    group.addoption("--skips", action="append", default=[], metavar="FILE",
                    help="file of regexes (one per line) of case IDs not to run (status Skip)")
    group.addoption("--flakes", action="append", default=[], metavar="FILE",
                    help="file of regexes of known-flaky case IDs: their failures are Flake")


def _state(config) -> _State:
    return config.stash[_STATE]


def set_run_info(config, **fields: str) -> None:
    """Record ``toolchain``, ``driver`` or ``device`` for the outcomes this process writes (a no-op
    outside a pytest session, e.g. for a benchmark's stand-in config)."""
    stash = getattr(config, "stash", None)
    if stash is None or _STATE not in stash:
        return
    _state(config).run_info.update({k: str(v) for k, v in fields.items() if v})


def pytest_configure(config) -> None:
    config.addinivalue_line("markers", f"{CASE_MARKER}(case_id=None, section=None, family=None, **variant): "
                                       "identity of a conformance case for the outcome log")
    try:
        baseline_file = config.getoption("baseline")
        shard_text = config.getoption("shard")
        state_args = dict(
            baseline=parse_baseline(Path(baseline_file)) if baseline_file else None,
            skips=parse_pattern_files([Path(p) for p in config.getoption("skips")]),
            flakes=parse_pattern_files([Path(p) for p in config.getoption("flakes")]),
            shard=parse_shard(shard_text) if shard_text else None,
            reruns=int(config.getoption("flake_reruns") or 0))
    except (OSError, ValueError) as exc:
        raise pytest.UsageError(str(exc)) from None
    if state_args["reruns"] < 0:
        raise pytest.UsageError(f"--flake-reruns expects N >= 0, but got {state_args['reruns']}")
    results = config.getoption("results")
    worker = config.workerinput.get("workerid") if hasattr(config, "workerinput") else None
    role = "worker" if worker else "main"
    state = _State(Path(results).resolve() if results else None, run_tag(state_args["shard"]), role,
                   worker or "main", **state_args)
    config.stash[_STATE] = state
    if state.results_dir is not None and role != "worker":
        state.results_dir.mkdir(parents=True, exist_ok=True)
        clear_run(state.results_dir, state.tag)
        _write_run_info(config, state, end=None, exitstatus=None)
    config.pluginmanager.register(_CtsOutcomes(config, state), "cts-outcomes")
    config.pluginmanager.register(_RestartGuard(state), "cts-restart-guard")


def _write_run_info(config, state: _State, end: float | None, exitstatus: int | None) -> None:
    write_json_atomic(run_info_path(state.results_dir, state.tag), {
        "level": config.getoption("level"), "device_option": config.getoption("device"),
        "numerics": config.getoption("numerics"), "shard": list(state.shard) if state.shard else None,
        "baseline": config.getoption("baseline"), "flake_reruns": state.reruns,
        "argv": list(sys.argv), "start": state.start, "end": end, "exitstatus": exitstatus,
        "python": platform.python_version(), "pytest": pytest.__version__, "host": platform.node()})


# --- the per-session plugin -------------------------------------------------------------------

def _mark_xfailed(report, note: str) -> None:
    report.outcome = "skipped"
    report.wasxfail = note


def _case_status(reports: list[Any]) -> Status:
    return worst(Status(r.cts_status) for r in reports if getattr(r, "cts_status", None)) or Status.PASS


class _CtsOutcomes:
    """The hooks that need this session's state (registered by :func:`pytest_configure`)."""

    def __init__(self, config, state: _State) -> None:
        self.config = config
        self.state = state

    def pytest_sessionstart(self, session) -> None:
        state = self.state
        if state.role == "main" and self.config.pluginmanager.has_plugin("dsession"):
            state.role, state.writer_name = "controller", "controller"

    def pytest_sessionfinish(self, session, exitstatus) -> None:
        state = self.state
        if state.writer is not None:
            state.writer.close()
        if state.results_dir is not None and state.role != "worker":
            _write_run_info(self.config, state, end=time.time(), exitstatus=int(exitstatus))

    # -- collection -------------------------------------------------------------------------------

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, session, config, items) -> None:
        state = self.state
        if state.shard is not None:
            kept = shard_select(items, state.shard)
            keep = {id(item) for item in kept}
            dropped = [item for item in items if id(item) not in keep]
            if dropped:
                config.hook.pytest_deselected(items=dropped)
            items[:] = kept
        if state.skips.patterns:
            for item in items:
                source = state.skips.match(item_identity(item).case_id)
                if source is not None:
                    item.add_marker(pytest.mark.skip(reason=f"listed in skips file {source}"))

    def pytest_collection_finish(self, session) -> None:
        state = self.state
        if state.results_dir is None or self.config.option.collectonly:
            return
        if state.role == "worker" and state.writer_name != "gw0":
            return        # every worker collects the same items: the first one writes the manifest
        if manifest_path(state.results_dir, state.tag).exists():
            return        # a replaced worker after a crash: its predecessor wrote it
        entries = []
        for item in session.items:
            ident = item_identity(item, lists=("sections",))   # statements: when the case runs
            entries.append(ExpectedCase(ident.case_id, item.nodeid, ident.section, ident.family, ident.variant,
                                        ident.sections))
        write_jsonl_exclusive(manifest_path(state.results_dir, state.tag), entries)
        rows: list[NotRun] = []
        for result in self.config.hook.pytest_cts_not_run(config=self.config):
            rows.extend(result or ())
        if rows:
            write_jsonl_exclusive(not_run_path(state.results_dir, state.tag), rows)

    # -- per test ---------------------------------------------------------------------------------

    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_runtest_makereport(self, item, call):
        result = yield
        report = result.get_result()
        ident, case = _identity_of(item, lists=self.state.results_dir is not None)
        if call.when == "setup":
            self.state.identities[item.nodeid] = case
        report.cts_kind = exception_kind(call.excinfo)
        raw = phase_status(report)
        report.cts_raw = raw.value if raw is not None else None
        report.cts_status = None
        if raw is None:
            return
        verdict = apply_expectations(ident.case_id, raw, self.state.baseline, self.state.flakes)
        report.cts_status, report.cts_note = verdict.status.value, verdict.note
        if verdict.status in (Status.EXPECTED_FAIL, Status.FLAKE) and report.failed:
            _mark_xfailed(report, verdict.note)
        elif verdict.status == Status.UNEXPECTED_PASS and raw == Status.PASS:
            report.outcome = "failed"
            report.longrepr = f"[UnexpectedPass] {ident.case_id} {verdict.note}"

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_protocol(self, item, nextitem):
        """With ``--flake-reruns N``: rerun a failing test up to N times; disagreeing attempts: Flake."""
        reruns = self.state.reruns
        if reruns <= 0:
            return None
        item.ihook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
        attempts: list[Status] = []
        for _ in range(reruns + 1):
            reports = runtestprotocol(item, nextitem=nextitem, log=False)
            attempts.append(_case_status(reports))
            if attempts[-1] not in RAW_FAILURES:
                break
        if len(attempts) > 1:
            for report in reports:
                report.cts_attempts = [a.value for a in attempts]
            if attempts_verdict(attempts) == Status.FLAKE:
                note = f"Flake: attempts {', '.join(a.value for a in attempts)}"
                for report in reports:
                    if report.failed:
                        _mark_xfailed(report, note)
                reports[-1].cts_flake = note
        for report in reports:
            item.ihook.pytest_runtest_logreport(report=report)
        item.ihook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)
        return True

    def pytest_runtest_logreport(self, report) -> None:
        state = self.state
        if report.when == "???":
            if state.role == "controller" and not getattr(report, "cts_restart", False):
                _write_crash(state, report)
            return
        if state.role == "controller":
            return
        state.pending.setdefault(report.nodeid, []).append(report)
        if report.when == "teardown":
            _finish_case(state, state.pending.pop(report.nodeid))

    # -- worker crashes (xdist controller) --------------------------------------------------------

    @pytest.hookimpl(optionalhook=True)
    def pytest_handlecrashitem(self, crashitem, report, sched):
        """A worker died while running ``crashitem``; apply the baseline before pytest sees it."""
        state = self.state
        if _already_reported(state, _worker_id(report), crashitem):
            report.cts_restart = True  # the worker ended itself after reporting (device restart)
            report.outcome = "passed"
            return None
        entry = _manifest_entry(state, crashitem)
        marker = {"case_id": entry.case_id, "section": entry.section, "family": entry.family,
                  "variant": entry.variant, "sections": list(entry.sections)} if entry else None
        ident = case_identity(crashitem, (), marker, None)
        verdict = apply_expectations(ident.case_id, Status.CRASH, state.baseline, state.flakes)
        report.cts_case = ident.as_dict()
        report.cts_raw, report.cts_status, report.cts_note = Status.CRASH.value, verdict.status.value, verdict.note
        if verdict.status in (Status.EXPECTED_FAIL, Status.FLAKE):
            _mark_xfailed(report, verdict.note)
        return None

    def pytest_report_teststatus(self, report, config):
        if getattr(report, "cts_restart", False):
            return "worker restarted", "R", "WORKER RESTARTED"
        return None


class _RestartGuard:
    """Ends the worker after a test whose device context is beyond repair (see
    :func:`conformance.harness.device.request_worker_restart`); without xdist the session stops there."""

    def __init__(self, state: _State) -> None:
        self.state = state

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item, nextitem):
        yield
        from conformance.harness.device import restart_requested

        reason = restart_requested()
        if reason is None:
            return
        if self.state.role == "worker":
            if self.state.writer is not None:
                self.state.writer.close()
            sys.stderr.write(f"tcgen05-cts: restarting worker {self.state.writer_name}: {reason}\n")
            sys.stderr.flush()
            os._exit(RESTART_EXIT_CODE)
        item.session.shouldstop = f"device unusable: {reason}"


_IDENTITY = pytest.StashKey[tuple]()


def _identity_of(item, lists: bool) -> tuple[CaseIdentity, dict]:
    """The item's identity and its plain-data form, resolved once per item (three reports per
    test read it) and again only when the test added user properties since. Sections and
    statements only with ``lists`` (an outcome log is written): deriving them is ~1 ms a case."""
    props = len(getattr(item, "user_properties", ()))
    cached = item.stash.get(_IDENTITY, None)
    if cached is None or cached[0] != props:
        ident = item_identity(item, lists=lists)
        cached = item.stash[_IDENTITY] = (props, ident, ident.as_dict())
    return cached[1], cached[2]


def _finish_case(state: _State, reports: list[Any]) -> None:
    final = _case_status(reports)
    flake = getattr(reports[-1], "cts_flake", None)
    if flake:
        final = Status.FLAKE
    raw = worst(Status(r.cts_raw) for r in reports if getattr(r, "cts_raw", None)) or Status.PASS
    last = reports[-1]
    base = state.identities.pop(last.nodeid, None) or getattr(reports[0], "cts_case", None) or {"case_id": last.nodeid}
    ident = case_identity(base.get("case_id", last.nodeid), last.user_properties, base, None)
    props = dict(last.user_properties)
    details = case_details(reports, final)
    if flake and flake not in details:
        details = f"{flake}\n{details}".strip()
    state.write(Outcome(
        case_id=ident.case_id, status=final, section=ident.section, family=ident.family,
        duration=sum(getattr(r, "duration", 0.0) or 0.0 for r in reports),
        toolchain=str(props.get("toolchain") or state.run_info.get("toolchain", "")),
        driver=str(props.get("driver") or state.run_info.get("driver", "")),
        device=str(props.get("device") or state.run_info.get("device", "")),
        details=details, variant=ident.variant, nodeid=last.nodeid, raw_status=raw.value,
        attempts=tuple(getattr(last, "cts_attempts", None) or ()), worker=state.writer_name, time=time.time(),
        sections=ident.sections, statements=ident.statements))


def _manifest_entry(state: _State, nodeid: str) -> ExpectedCase | None:
    if state.manifest is None:
        state.manifest = {}
        if state.results_dir is not None:
            path = manifest_path(state.results_dir, state.tag)
            if path.exists():
                entries, _ = read_manifest(path)
                state.manifest = {e.nodeid: e for e in entries}
    return state.manifest.get(nodeid)


def _already_reported(state: _State, worker: str, nodeid: str) -> bool:
    """Whether the worker wrote the test's outcome before it ended (a deliberate restart)."""
    if state.results_dir is None or not worker:
        return False
    try:
        text = outcome_path(state.results_dir, state.tag, worker).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return f'"nodeid":{json.dumps(nodeid)}' in text


def _worker_id(report) -> str:
    gateway = getattr(getattr(report, "node", None), "gateway", None)
    return str(getattr(gateway, "id", "") or "")


def _write_crash(state: _State, report) -> None:
    case = getattr(report, "cts_case", None) or {"case_id": report.nodeid}
    status = Status(getattr(report, "cts_status", None) or Status.CRASH.value)
    details = "\n".join(p for p in (str(report.longrepr or ""), getattr(report, "cts_note", "")) if p)
    state.write(Outcome(
        case_id=case["case_id"], status=status, section=case.get("section", ""), family=case.get("family", ""),
        details=details, variant=case.get("variant", {}), nodeid=report.nodeid, raw_status=Status.CRASH.value,
        worker=_worker_id(report) or state.writer_name, time=time.time(), sections=tuple(case.get("sections") or ()),
        statements=tuple(case.get("statements") or ())))


# --- fixtures -----------------------------------------------------------------------------------

@pytest.fixture(scope="session")
def cts_device(request):
    """The device for ``--device`` (``None`` when no GPU is usable: gating then skips with a reason)."""
    from conformance.harness.devices import open_device

    device, _why = open_device(request.config.getoption("device"))
    if device is not None and device.kind != "none":
        set_run_info(request.config, device=device.name, driver=device.driver_version)
    return device


@pytest.fixture
def cts_repro(request) -> str:
    """One-line command that reruns the current test with this run's options."""
    from conformance.harness.compare import reproduction_command

    config = request.config
    return reproduction_command(request.node.nodeid, [f"--level={config.getoption('level')}",
                                                      f"--device={config.getoption('device')}",
                                                      f"--numerics={config.getoption('numerics')}"])


@pytest.fixture(scope="session")
def cts_results_dir(request) -> Path | None:
    """The ``--results`` directory (artifacts go under it), or ``None``."""
    return _state(request.config).results_dir
