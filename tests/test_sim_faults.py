"""Fault injection plumbing: hooks are the identity until a fault is active; fault files load."""

import textwrap

import pytest

from conformance.harness.device_sim import faults_from_environment
from ptxsim import HOOKS, Fault, FaultSet, Livelock, SimDevice, load_faults
from ptxsim.faults.model import MbarrierEvent
from tests.sim_ptx import run_kernel
from tests.sim_ptx_tcgen05 import TCGEN05_ALLOC

pytestmark = pytest.mark.reference

ISSUE_HOOKS = ("smem_desc", "instr_desc", "zero_column_mask", "sparsity_metadata", "scale_factors",
               "tmem_ld_map", "tmem_st_map", "cp_decompress", "shift", "mma_result", "mbarrier")

FAULT_FILE = '''
from dataclasses import replace
from ptxsim import Fault

FAULTS = [
    Fault("drop-commit", "mbarrier", lambda ev, ctx: None if ev.kind == "commit" else ev,
          "tcgen05.commit never arrives"),
    Fault("double-arrive", "mbarrier", lambda ev, ctx: replace(ev, count=2 * ev.count),
          "every arrive counts twice"),
]
'''


def test_hook_points_of_the_issue_exist_and_are_documented():
    assert set(ISSUE_HOOKS) <= set(HOOKS)
    from pathlib import Path
    doc = (Path(__file__).resolve().parent.parent / "docs" / "sim.md").read_text()
    for hook in HOOKS:
        assert f"`{hook}`" in doc, hook


def test_no_fault_is_the_identity():
    value = object()
    assert FaultSet().apply("smem_desc", value, operand="a") is value
    assert FaultSet([Fault("x", "mbarrier", lambda v, c: None)]).apply("smem_desc", value) is value


def test_active_fault_transforms_with_context():
    f = Fault("shift-col", "mma_result", lambda v, ctx: v + ctx.delta)
    assert FaultSet([f]).apply("mma_result", 40, delta=2) == 42


def test_fault_file_changes_the_simulated_hardware(tmp_path):
    path = tmp_path / "my_faults.py"
    path.write_text(FAULT_FILE)
    faults = load_faults(path)
    assert [f.name for f in faults] == ["drop-commit", "double-arrive"]
    spins = run_kernel(SimDevice(), TCGEN05_ALLOC, "tmem_alloc", 128 * 3, extra=(64,)).reshape(128, 3)[:, 2]
    assert spins.tolist() == [0] * 128
    dropped = run_kernel(SimDevice(faults[:1]), TCGEN05_ALLOC, "tmem_alloc", 128 * 3, extra=(64,)).reshape(128, 3)[:, 2]
    assert dropped.tolist() == [100] * 128          # the bounded wait ran out


def test_wait_that_nothing_can_satisfy_is_a_livelock(tmp_path):
    """With a huge spin bound the kernel would spin for ages; the simulator stops it early."""
    path = tmp_path / "f.py"
    path.write_text(FAULT_FILE)
    endless = TCGEN05_ALLOC.replace("setp.lt.u32 %p0, %r5, 100;", "setp.lt.u32 %p0, %r5, 0x7FFFFFFF;")
    dev = SimDevice(load_faults(path)[:1], livelock_spins=200)
    with pytest.raises(Livelock, match="keeps failing its wait"):
        run_kernel(dev, endless, "tmem_alloc", 128 * 3, extra=(64,))


def test_faults_from_environment(tmp_path):
    path = tmp_path / "f.py"
    path.write_text(FAULT_FILE)
    env = {"TCGEN05_CTS_SIM_FAULTS_FROM": str(path)}
    assert [f.name for f in faults_from_environment(env)] == ["drop-commit", "double-arrive"]
    env["TCGEN05_CTS_SIM_FAULTS"] = "double-arrive"
    assert [f.name for f in faults_from_environment(env)] == ["double-arrive"]
    env["TCGEN05_CTS_SIM_FAULTS"] = "nope"
    with pytest.raises(ValueError, match="nope"):
        faults_from_environment(env)


@pytest.mark.parametrize("text,message", [
    ("X = 1\n", "FAULTS list"),
    ("FAULTS = [1]\n", "Fault items"),
    ("from ptxsim import Fault\nFAULTS = [Fault('a', 'nope', print)]\n", "hook expects one of"),
    ("from ptxsim import Fault\nFAULTS = [Fault('a', 'shift', print), Fault('a', 'shift', print)]\n",
     "appears twice"),
])
def test_bad_fault_files(tmp_path, text, message):
    path = tmp_path / "bad.py"
    path.write_text(textwrap.dedent(text))
    with pytest.raises(ValueError, match=message):
        load_faults(path)


def test_missing_fault_file():
    with pytest.raises(ValueError, match="existing Python file"):
        load_faults("/nonexistent/faults.py")


def test_mbarrier_event_fields():
    ev = MbarrierEvent("commit", cta=0, address=0x400)
    assert (ev.count, ev.tx, ev.complete_pending) == (1, 0, True)
