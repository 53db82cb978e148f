"""``--device sim``: the harness's adapter over the standalone simulator :mod:`ptxsim`.

:class:`SimBackend` gives a :class:`ptxsim.SimDevice` the device-layer interface of
``conformance.harness.device`` (the shape of the PyCUDA backend): ``load`` takes the kernel's PTX
(``wants == "ptx"``) and ``launch`` runs ``kernel(case_table, ncases)`` over the cases per
``docs/kernel-abi.md`` in one arena, turning the simulator's errors into the harness's
``CaseTimeout``/``CaseCrash``.  Faults named in the environment (``--faults-from``) are activated
here, so the simulator itself reads no environment variable.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

from conformance.harness.device import CaseCrash, CaseTimeout, LaunchResult, plan_arena
from ptxsim import Fault, SimDevice, load_faults
from ptxsim.device import SimModule
from ptxsim.errors import Livelock, SimError, StepLimit
from ptxsim.faults.model import ProbeSet

ENV_FAULTS_FROM = "TCGEN05_CTS_SIM_FAULTS_FROM"
ENV_FAULTS = "TCGEN05_CTS_SIM_FAULTS"
ENV_READINGS = "TCGEN05_CTS_SIM_READINGS"
ENV_HAZARDS = "TCGEN05_CTS_SIM_HAZARDS"      # "off" switches the hazard checker off (--sim-hazards off)


#: failed waits in a row with nothing observable happening before a launch of the suite's kernels
#: is a Livelock (reported as a Timeout). The suite's kernels wait only in the bounded
#: ``mbarrier.try_wait`` loop of ``generators.ptx.steps.WaitMbarrier`` (WAIT_BOUND = 2^20 tries, then
#: error 1); a wait nothing can complete (a removed commit: the hazard cases and the hazard score)
#: ends as a Timeout at any limit below that bound, and nothing else in those kernels counts
#: spins, so the limit only sets what such a case costs: 20,000 (``SimDevice``'s default, kept for
#: client kernels, whose spin loops the suite does not write) made each ~1.5 s of CPU.
SUITE_LIVELOCK_SPINS = 1_000


def hazards_from_environment(environ=os.environ) -> bool:
    """Whether the simulated device runs its hazard checker (on unless ``TCGEN05_CTS_SIM_HAZARDS=off``)."""
    value = environ.get(ENV_HAZARDS, "on")
    if value not in ("on", "off"):
        raise ValueError(f"{ENV_HAZARDS} expects on or off, but got {value!r}")
    return value == "on"


class SimBackend:
    """The simulated sm_100a device behind the harness's device interface."""

    kind = "sim"
    name = "tcgen05-cts simulator (sm_100a)"
    compute_capability = (10, 0)
    wants = "ptx"              # load() takes PTX text, not a cubin

    def __init__(self, faults: Iterable[Fault] = (), **options) -> None:
        # the suite's own kernels are held to the letter of the spec: the hazard checker's spec
        # questions at their picks, not the readings the real clients follow (docs/sim.md)
        options.setdefault("strict", True)
        options.setdefault("livelock_spins", SUITE_LIVELOCK_SPINS)
        self.sim = SimDevice(faults, **options)

    @property
    def driver_version(self) -> str:
        from ptxsim.device import SIM_VERSION

        return f"sim-{SIM_VERSION}"

    def __getattr__(self, name):           # memory, faults, run, active_faults, ...
        return getattr(self.sim, name)

    def load(self, ptx: str | bytes) -> SimModule:
        return self.sim.load(ptx)

    def launch(self, module: SimModule, kernel_name: str, case_records: bytes, buffers, grid, block,
               cluster_dims=(1, 1, 1), *, case_ids: Sequence[str] = (), shared_bytes: int = 0) -> LaunchResult:
        """Run ``kernel(case_table, ncases)`` over the cases (kernel ABI); a ``LaunchResult``."""
        sim = self.sim
        program = module.kernel(kernel_name)
        geometry = sim.geometry(program, grid, block, cluster_dims)
        ctas = geometry.cluster_size
        ids = list(case_ids) or [f"case {i}" for i in range(len(buffers))]
        if int(np.prod(geometry.grid)) < len(buffers) * ctas:
            raise ValueError(f"grid expects at least {len(buffers) * ctas} CTAs, but got {grid}")
        plan = plan_arena(case_records, buffers, ctas)
        base = sim.memory.alloc(plan.total)
        try:
            plan = plan_arena(case_records, buffers, ctas, base=base)
            sim.memory.write(base, plan.host_image(case_records, buffers))
            probe = sim.active_faults if isinstance(sim.active_faults, ProbeSet) else None
            if probe is not None:
                probe.effects = set()
            try:
                seconds = sim.run(module, kernel_name, [base, len(buffers)], geometry.grid, geometry.block,
                                  geometry.cluster, shared_bytes)
            except (StepLimit, Livelock) as exc:
                raise CaseTimeout(ids, f"{kernel_name}: {exc}") from exc
            except SimError as exc:
                raise CaseCrash(ids, f"{kernel_name}: {type(exc).__name__}: {exc}") from exc
            finally:
                if probe is not None:
                    probe.take(ids)
            image = sim.memory.read_array(base, plan.total)
        finally:
            sim.memory.free(base)
        return LaunchResult(plan.outputs(image), plan.status_words(image), seconds)


def faults_from_environment(environ=os.environ) -> tuple[Fault, ...]:
    """Faults to activate: the files in ``TCGEN05_CTS_SIM_FAULTS_FROM`` (``os.pathsep``-separated),
    restricted to the comma-separated names in ``TCGEN05_CTS_SIM_FAULTS`` (all when unset)."""
    files = [p for p in environ.get(ENV_FAULTS_FROM, "").split(os.pathsep) if p]
    faults = [f for path in files for f in load_faults(path)]
    names = [n.strip() for n in environ.get(ENV_FAULTS, "").split(",") if n.strip()]
    if names:
        known = {f.name: f for f in faults}
        missing = [n for n in names if n not in known]
        if missing:
            raise ValueError(f"{ENV_FAULTS} expects fault names from {ENV_FAULTS_FROM}, but got {', '.join(missing)}")
        faults = [known[n] for n in names]
    return tuple(faults)


def readings_from_environment(environ=os.environ) -> dict[str, str]:
    """Spec-question readings the simulated device follows: ``TCGEN05_CTS_SIM_READINGS`` =
    ``QID=R,QID=R`` (``--sim-reading``; docs/spec-questions.md)."""
    from reference.spec_questions import parse_assignments

    return parse_assignments([t for t in environ.get(ENV_READINGS, "").split(",") if t.strip()])


def parse_cache_dir() -> Path:
    """Where the simulator keeps parsed PTX across processes and runs (:mod:`ptxsim.ptx.parse_cache`):
    ``sim-parse`` in the toolchain's cache directory (``$TCGEN05_CTS_CACHE`` or ``~/.cache/tcgen05-cts``)."""
    from conformance.harness.toolchain import cache_dir

    return cache_dir() / "sim-parse"


def open_sim_device(faults: Iterable[Fault] | None = None) -> tuple[SimBackend, str]:
    """``(device, "")`` for ``--device sim`` (the shape ``conformance.harness.devices.open_device`` expects)."""
    return SimBackend(faults_from_environment() if faults is None else faults, readings=readings_from_environment(),
                      hazards=hazards_from_environment(), parse_cache=parse_cache_dir()), ""
