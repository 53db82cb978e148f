"""The execution harness: batching, fault-generation keys, crash isolation (fake devices around the
simulator), and whole pytest runs of the execution tier (no device, the simulator, a fault)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import pytest

from conformance.harness.device import CaseCrash
from conformance.harness.device_sim import SimBackend
from conformance.harness.execute_batch import ExecCase, ExecutionService
from conformance.harness.execute_compare import compare_case
from conformance.harness.oracles import expected
from generators.variants import cases
from ptxsim.device import override_faults
from ptxsim.faults.catalogue import FAULTS

pytestmark = pytest.mark.reference
pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[1]
SMOKE = [c for c in cases("smoke") if c.legal]


class Counting:
    """A device that counts launches (and can crash on chosen cases) around the simulator."""

    def __init__(self, crash_on: str | None = None) -> None:
        self.sim = SimBackend()
        self.kind, self.name, self.compute_capability, self.driver_version = "sim", "counting", (10, 0), "x"
        self.launches: list[int] = []
        self.crash_on = crash_on

    def load(self, ptx):
        return self.sim.load(ptx)

    def launch(self, module, name, records, buffers, grid, block, cluster_dims=(1, 1, 1), *, case_ids=(), shared_bytes=0):
        self.launches.append(len(buffers))
        if self.crash_on in case_ids:
            raise CaseCrash(case_ids, "illegal instruction")
        return self.sim.launch(module, name, records, buffers, grid, block, cluster_dims, case_ids=case_ids,
                               shared_bytes=shared_bytes)


def _items(xcases):
    session = SimpleNamespace(items=[])
    config = SimpleNamespace(getoption=lambda name: None)
    for xc in xcases:
        session.items.append(SimpleNamespace(session=session, config=config,
                                             callspec=SimpleNamespace(params={"xcase": xc})))
    return session.items


def _copies(family, n):
    case = next(c for c in SMOKE if c.family == family)
    return [ExecCase(replace(case, case_id=f"{case.case_id}.copy{i}")) for i in range(n)]


def _check(run, xc):
    compare_case(expected(xc.case, run.inputs), run.outputs, section_id=xc.case.section, case_id=xc.case_id, repro="-")


def test_one_launch_serves_every_queued_case_of_a_kernel():
    xcs = _copies("wait", 4) + _copies("shift", 1)
    items, dev = _items(xcs), Counting()
    svc = ExecutionService(None, dev)
    for item, xc in zip(items, xcs, strict=True):
        run = svc.run_for(item, xc, svc.target_for(xc.case))
        assert run.error is None and run.skip is None
        _check(run, xc)                                  # each copy has its own inputs and results
    assert dev.launches == [4, 1]


def test_results_are_keyed_by_fault_generation():
    xcs = _copies("shift", 2)
    items, dev = _items(xcs), Counting()
    svc = ExecutionService(None, dev)
    target = svc.target_for(xcs[0].case)
    svc.run_for(items[0], xcs[0], target)
    fault = next(f for f in FAULTS if f.name == "shift-ignored")
    with override_faults((fault,)):
        run = svc.run_for(items[1], xcs[1], target)      # launched again, with the fault
        with pytest.raises(AssertionError, match="TMEM after shift"):
            _check(run, xcs[1])
    assert dev.launches == [2, 1]


def test_a_crashing_case_is_isolated():
    xcs = _copies("wait", 3)
    items, dev = _items(xcs), Counting(crash_on=xcs[1].case_id)
    svc = ExecutionService(None, dev)
    runs = [svc.run_for(item, xc, svc.target_for(xc.case)) for item, xc in zip(items, xcs, strict=True)]
    assert dev.launches == [3, 1, 1, 1]
    assert isinstance(runs[1].error, CaseCrash) and runs[0].error is None and runs[2].error is None
    _check(runs[2], xcs[2])


def _run(pytester, *args):
    return pytester.runpytest(str(ROOT / "conformance"), "-p", "conformance.plugin", "-p", "no:cacheprovider",
                              "-m", "execute", "-p", "no:randomly", *args)


def test_no_device_skips_every_case_as_not_supported(pytester):
    r = _run(pytester, "--device", "none", "--family", "wait", "-rs")
    r.assert_outcomes(skipped=2)
    assert "NotSupported: needs one of sm_100a" in r.stdout.str() and "found none" in r.stdout.str()


def test_simulator_runs_and_a_fault_fails_with_a_complete_message(pytester, monkeypatch, tmp_path):
    # --faults-from reaches the device through the environment (conformance/plugin.py): restore it
    # afterwards, or later simulator sessions of this process would inherit the fault
    monkeypatch.setenv("TCGEN05_CTS_SIM_FAULTS_FROM", "")
    r = _run(pytester, "--device", "sim", "--family", "shift", "--family", "wait")
    r.assert_outcomes(passed=4)
    faults = tmp_path / "faults.py"
    faults.write_text("from ptxsim.faults.catalogue import FAULTS\n"
                      "FAULTS = [f for f in FAULTS if f.name == 'shift-ignored']\n")
    results = tmp_path / "results"
    r = _run(pytester, "--device", "sim", "--family", "shift", "--faults-from", str(faults), "--results", str(results))
    r.assert_outcomes(failed=2)
    text = r.stdout.str()
    for piece in ("§9.7.16.9.3 tcgen05.shift.cta_group::1.down:", "TMEM after shift elements [cta*128+lane, column]",
                  "(row 1, col 0): expected 0x", "reproduce: python3 -m pytest", "--device=sim", "artifacts: "):
        assert piece in text, piece
    log = [json.loads(line) for f in results.glob("outcomes-*.jsonl") for line in f.read_text().splitlines()]
    assert {o["status"] for o in log} == {"Fail"} and {o["section"] for o in log} == {"9.7.16.9.3"}
    assert any((d / "case.npz").exists() and (d / "kernel.ptx").exists() for d in (results / "artifacts").iterdir())


def test_worker_queue_includes_the_item_already_taken_as_next():
    """pytest-xdist takes the next item off the worker's queue before running the current one;
    a batch that missed it would relaunch for every case."""
    import contextlib

    from conformance.harness.execute_batch import _worker_queue

    class Queue:
        @contextlib.contextmanager
        def lock(self):
            yield [5, 6, "SHUTDOWN"]

    interactor = SimpleNamespace(torun=Queue(), workerid="gw0", nextitem_index=4)
    config = SimpleNamespace(workerinput={}, pluginmanager=SimpleNamespace(get_plugins=lambda: [object(), interactor]))
    assert _worker_queue(config) == {4, 5, 6}
    assert _worker_queue(SimpleNamespace()) is None


def test_section_verdicts_per_element():
    """``section_mismatch`` / ``unwritten`` element by element, written out by hand: a zero mask
    compares nothing (not even the poison), a partial mask only its bits, a predicate replaces
    bit equality wherever it is given, and the poison counts as unwritten only where the expected
    defined bits differ from it."""
    import numpy as np

    from conformance.harness.execute_compare import section_mismatch, unwritten
    from conformance.harness.oracles.common import Section

    poison = 0xDEADBEEF
    sec = Section("s", np.arange(5), [1, 2, 3, 0x1234, poison], [0xFFFFFFFF, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF])
    actual = np.array([1, poison, 4, 0xABCD1234, poison], dtype=np.uint32)
    assert section_mismatch(sec, actual).tolist() == [False, False, True, False, False]
    assert unwritten(sec, actual).tolist() == [False, False, False, False, False]
    actual[0] = poison
    assert unwritten(sec, actual).tolist() == [True, False, False, False, False]
    assert not unwritten(sec, np.array([1, 2, 3, 4, 5], dtype=np.uint32)).any()
    odd = Section("p", np.arange(3), [0, 0, 0], [0, 0, 0], accept=lambda w: w % 2 == 1)
    assert section_mismatch(odd, np.array([1, 2, 3], dtype=np.uint32)).tolist() == [False, True, False]
