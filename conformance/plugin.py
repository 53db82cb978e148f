"""pytest plugin of the suite: command-line options shared by every tier.

Options are declared here once, so the modules that read them never race to add them.
"""

from __future__ import annotations

import atexit
import gc

import pytest

LEVELS = ("smoke", "default", "exhaustive")

# Outcome log, baselines, sharding and crash attribution (results/ + conformance/outcomes_plugin.py).
pytest_plugins = ["conformance.outcomes_plugin"]


def pytest_addoption(parser) -> None:
    group = parser.getgroup("tcgen05-cts")
    group.addoption("--level", choices=LEVELS, default="smoke",
                    help="variant-matrix level (default: smoke)")
    group.addoption("--ptxas", action="append", default=[], metavar="PATH",
                    help="ptxas to assemble with (repeatable: results keyed by toolchain version)")
    group.addoption("--section", action="append", default=[], metavar="S",
                    help="only cases of this spec section (prefix match, repeatable)")
    group.addoption("--family", action="append", default=[], metavar="F",
                    help="only cases of this instruction family (repeatable)")
    group.addoption("--device", choices=("cuda", "sim", "none"), default="cuda",
                    help="execution backend; cuda skips with a reason where no GPU is found")
    group.addoption("--load", choices=("cubin", "ptx"), default="cubin",
                    help="with --device cuda: load kernels as cubins assembled by ptxas for the device's SASS "
                         "architecture (default), or as PTX text JIT-compiled by the driver (cuModuleLoadDataEx)")
    group.addoption("--numerics", choices=("spec", "hardware"), default="spec",
                    help="numerics model for numerics cases (default: spec)")
    group.addoption("--results", default=None, metavar="DIR",
                    help="results directory (outcome log, JUnit, artifacts)")
    group.addoption("--baseline", default=None, metavar="FILE",
                    help="CSV case_id,Status of expected outcomes")
    group.addoption("--flake-reruns", type=int, default=0, metavar="N",
                    help="rerun failing cases N times; a status change is a Flake")
    group.addoption("--faults-from", action="append", default=[], metavar="FILE",
                    help="with --device sim: Python file defining FAULTS = [Fault(...)] to activate")
    group.addoption("--sim-hazards", choices=("on", "off"), default="on",
                    help="with --device sim: the hazard checker (docs/sim.md \"Hazard checker\"; default on)")
    group.addoption("--shard", default=None, metavar="I/N",
                    help="run every N-th case starting at I (stable stride sharding)")
    group.addoption("--sim-reading", action="append", default=[], metavar="QID=R",
                    help="with --device sim: the simulated device follows reading R of spec question QID "
                         "(repeatable; docs/spec-questions.md)")
    group.addoption("--reading", action="append", default=[], metavar="QID=R",
                    help="expected values follow reading R of spec question QID instead of the suite's pick (repeatable)")


def pytest_configure(config) -> None:
    """Hand ``--faults-from`` files to the simulated device (read in every xdist worker via the env)."""
    import os

    _configure_readings(config)
    config.addinivalue_line("markers", "hazard_kernel(name, ptx): the kernel a test runs, for tcgen05-cts hazard-score "
                                       "(conformance/harness/hazard_score.py)")
    files = config.getoption("faults_from")
    if files:
        os.environ["TCGEN05_CTS_SIM_FAULTS_FROM"] = os.pathsep.join(os.path.abspath(f) for f in files)
    if config.getoption("sim_hazards", "on") == "off":
        os.environ["TCGEN05_CTS_SIM_HAZARDS"] = "off"


def _configure_readings(config) -> None:
    """``--reading``: the reference's defaults in this process; ``--sim-reading``: the simulated
    device's readings, handed over in the environment (as ``--faults-from``). Bad ones: usage error."""
    import os

    from reference.errors import SpecError
    from reference.spec_questions import parse_assignments, set_defaults

    try:
        expect = parse_assignments(config.getoption("reading"))
        device = parse_assignments(config.getoption("sim_reading"))
    except SpecError as exc:
        raise __import__("pytest").UsageError(f"--reading/--sim-reading: {exc}") from None
    set_defaults(expect)
    if device:
        os.environ["TCGEN05_CTS_SIM_READINGS"] = ",".join(f"{q}={r}" for q, r in device.items())
    else:
        os.environ.pop("TCGEN05_CTS_SIM_READINGS", None)


def pytest_cts_not_run(config):
    """Legal variants of the next level that this level leaves out (coverage matrix "not run").

    Computed once (the first xdist worker, which collects like the others, or the single process),
    and only when a results directory is written; kept on disk between runs
    (:mod:`conformance.harness.not_run`). The reason names the level that has them.
    """
    from conformance.harness.not_run import NEXT_LEVEL, not_run

    level = config.getoption("--level")
    worker = getattr(config, "workerinput", {}).get("workerid", "gw0")   # not the environment: a run
    if level not in NEXT_LEVEL or not config.getoption("--results") or worker != "gw0":   # nested in a worker
        return []
    return not_run(level, config.getoption("--section"), config.getoption("--family"))


def pytest_unconfigure(config) -> None:
    """End this worker's CUDA launcher process (it pops and detaches its context), or pop this
    process's own context: every process ends with an empty context stack. Objects frozen at the
    end of a nested session's collection are given back (pytester must not leave them frozen)."""
    import sys

    if getattr(config, "_cts_gc_frozen", False):
        gc.unfreeze()

    launcher = sys.modules.get("conformance.harness.cuda_launcher")
    if launcher is not None:
        launcher.close_isolated_device()
    device_cuda = sys.modules.get("conformance.harness.device_cuda")
    if device_cuda is not None:
        device_cuda.close_cuda_device()


def pytest_report_header(config) -> list[str]:
    """The execution setup in the run header: device, and how a GPU gets its kernels."""
    device = config.getoption("device")
    line = f"tcgen05-cts: --device {device}"
    if device == "cuda":
        load = config.getoption("load")
        line += (" --load cubin (ptxas assembles each kernel for the device's SASS architecture)" if load == "cubin"
                 else " --load ptx (the driver JIT-compiles each kernel's PTX)")
    return [line]


@pytest.hookimpl(wrapper=True)
def pytest_collection(session):
    """No garbage collection while collecting: collection only builds what the session keeps
    (34,000 items at ``--level default``), and the generational collector walked it over and over
    (~2 s per process); :func:`pytest_collection_finish` collects once."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        return (yield)
    finally:
        if enabled:
            gc.enable()


def pytest_collection_finish(session) -> None:
    """Move everything collection built (the items, their cases and marks; alive until the session
    ends) out of the garbage collector's reach, so the collections during the run, and pytest's at
    its end, do not walk it again and again. A session run inside another one (pytester) gives it
    back at ``pytest_unconfigure``; an outermost session keeps it frozen through pytest's final
    collections and gives it back at exit (the interpreter's last collection then frees it: native
    extensions such as Triton's report objects never freed as leaks)."""
    nested = gc.get_freeze_count() > 0
    gc.collect()
    gc.freeze()
    session.config._cts_gc_frozen = nested
    if not nested:
        atexit.register(gc.unfreeze)

