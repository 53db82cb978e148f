"""``SimDevice``: the simulator behind the device-layer interface (``--device sim``).

It has the shape of the PyCUDA backend (``conformance.device.Device``): ``load`` takes the PTX
text (the simulator interprets PTX; a cubin is refused with a clear message) and ``launch`` runs
``kernel(case_table, ncases)`` over the cases per ``docs/kernel-abi.md``, batch by batch of whole
clusters executed in lock step.  ``run`` is the plain launch underneath (any parameters, memory
managed by the caller through ``device.memory``).
"""

from __future__ import annotations

import contextlib
import os
import time
from dataclasses import dataclass
from typing import Iterable, Sequence

import numpy as np

import conformance.sim.ops_alu  # noqa: F401  (registers handlers)
import conformance.sim.ops_bits  # noqa: F401
import conformance.sim.ops_bulk  # noqa: F401
import conformance.sim.ops_ctrl  # noqa: F401
import conformance.sim.ops_cvt  # noqa: F401
import conformance.sim.ops_mbarrier  # noqa: F401
import conformance.sim.ops_mem  # noqa: F401
import conformance.sim.ops_mma_sp  # noqa: F401
import conformance.sim.ops_tcgen05  # noqa: F401
import conformance.sim.ops_tcgen05_cp  # noqa: F401
import conformance.sim.ops_tcgen05_ldst  # noqa: F401
import conformance.sim.ops_tcgen05_mma  # noqa: F401
from conformance.sim import scheduler
from conformance.sim.compiler import KernelProgram
from conformance.sim.errors import Livelock, SimError, StepLimit, UnimplementedError
from conformance.sim.faults import Fault, FaultSet, ProbeSet, load_faults
from conformance.sim.machine import Geometry, Machine
from conformance.sim.memory import GlobalMemory
from conformance.sim.ptx_parser import Module, parse_ptx
from conformance.sim.ptx_types import TYPES

SIM_VERSION = "0.2"
_OVERRIDE: FaultSet | None = None          # set by override_faults (mutation score): wins over a device's own
_GENERATION = 0                            # bumped whenever the override changes
ENV_FAULTS_FROM = "TCGEN05_CTS_SIM_FAULTS_FROM"
ENV_FAULTS = "TCGEN05_CTS_SIM_FAULTS"


@dataclass
class SimModule:
    """A loaded PTX module: parsed text and one compiled program per ``.entry``."""

    ptx: str
    module: Module
    kernels: dict[str, KernelProgram]

    def kernel(self, name: str) -> KernelProgram:
        try:
            return self.kernels[name]
        except KeyError:
            raise SimError(f"kernel name expects one of {', '.join(self.kernels) or '(none)'}, but got {name!r}") from None


class SimDevice:
    """The simulated sm_100a device."""

    kind = "sim"
    name = "tcgen05-cts simulator (sm_100a)"
    compute_capability = (10, 0)
    driver_version = f"sim-{SIM_VERSION}"
    wants = "ptx"              # load() takes PTX text, not a cubin

    def __init__(self, faults: Iterable[Fault] = (), batch_clusters: int = 32, max_steps: int = 50_000_000,
                 livelock_spins: int = 20_000) -> None:
        self.faults = FaultSet(faults)
        self.batch_clusters = int(batch_clusters)
        self.max_steps = int(max_steps)
        self.livelock_spins = int(livelock_spins)
        self.memory = GlobalMemory()

    # -- modules ------------------------------------------------------------------------------

    def load(self, ptx: str | bytes) -> SimModule:
        """Parse and compile every kernel of a PTX module; unimplemented instructions are one error."""
        if isinstance(ptx, (bytes, bytearray)):
            if bytes(ptx[:4]) == b"\x7fELF":
                raise SimError("SimDevice.load expects PTX text, but got a cubin (ELF): pass the kernel's PTX")
            ptx = bytes(ptx).decode("utf-8")
        module = parse_ptx(ptx)
        symbols = self._place_globals(module)
        kernels, problems = {}, []
        for name, kernel in module.kernels.items():
            try:
                kernels[name] = KernelProgram(module, kernel, symbols)
            except UnimplementedError as exc:
                problems.extend(f"{name}: {item}" for item in exc.items)
        if problems:
            raise UnimplementedError(problems)
        return SimModule(ptx, module, kernels)

    def _place_globals(self, module: Module) -> dict[str, int]:
        symbols = {}
        for v in module.variables:
            if v.space not in ("global", "const"):
                continue
            t = TYPES[v.type]
            size = max(t.bits // 8, 1) * (v.count or 1)
            addr = self.memory.alloc(size, align=max(v.align or 8, 8))
            if v.init:
                data = np.array([t.scalar(x) for x in v.init], dtype=t.dtype).tobytes()
                self.memory.write(addr, data[:size])
            symbols[v.name] = addr
        return symbols

    # -- launches -----------------------------------------------------------------------------

    def geometry(self, program: KernelProgram, grid, block, cluster_dims=None) -> Geometry:
        d = program.kernel.directives
        cluster = tuple(d.get("reqnctapercluster", ())) + (1, 1, 1)
        cluster = tuple(int(x) for x in cluster[:3])
        asked = tuple(int(x) for x in (cluster_dims or (1, 1, 1)))
        if "reqnctapercluster" in d and asked not in ((1, 1, 1), cluster):
            raise SimError(f"cluster_dims expects the kernel's .reqnctapercluster {cluster}, but got {asked}")
        if "reqnctapercluster" not in d:
            cluster = asked
        g = Geometry(tuple(int(x) for x in grid), tuple(int(x) for x in block), cluster)
        g.validate()
        if "reqntid" in d and tuple(d["reqntid"]) + (1,) * (3 - len(d["reqntid"])) != g.block:
            raise SimError(f"block expects the kernel's .reqntid {d['reqntid']}, but got {g.block}")
        if "maxntid" in d and g.ntid > int(np.prod(d["maxntid"])):
            raise SimError(f"block expects at most .maxntid {d['maxntid']} threads, but got {g.block}")
        return g

    @property
    def active_faults(self) -> FaultSet:
        """The faults launches run with: an :func:`override_faults` set, else the device's own."""
        return _OVERRIDE if _OVERRIDE is not None else self.faults

    def run(self, module: SimModule, kernel_name: str, params: Sequence, grid, block, cluster_dims=None,
            shared_bytes: int = 0) -> float:
        """Launch ``kernel_name`` with ``params`` (ints or bytes, declaration order); return seconds."""
        program = module.kernel(kernel_name)
        faults = self.active_faults
        geometry = self.geometry(program, grid, block, cluster_dims)
        packed = program.pack_params(list(params))
        start = time.perf_counter()
        total = geometry.total_clusters
        for first in range(0, total, self.batch_clusters):
            clusters = np.arange(first, min(first + self.batch_clusters, total))
            if isinstance(faults, ProbeSet):
                faults.batch(clusters, geometry.cluster_size)
            machine = Machine(program, geometry, clusters, self.memory, packed, faults,
                              shared_bytes=shared_bytes, max_steps=self.max_steps,
                              livelock_spins=self.livelock_spins)
            scheduler.run(machine)
        return time.perf_counter() - start

    def launch(self, module: SimModule, kernel_name: str, case_records: bytes, buffers, grid, block,
               cluster_dims=(1, 1, 1), *, case_ids: Sequence[str] = (), shared_bytes: int = 0):
        """Run ``kernel(case_table, ncases)`` over the cases (kernel ABI); a ``LaunchResult``."""
        from conformance.device import CaseCrash, CaseTimeout, LaunchResult, plan_arena

        program = module.kernel(kernel_name)
        geometry = self.geometry(program, grid, block, cluster_dims)
        ctas = geometry.cluster_size
        ids = list(case_ids) or [f"case {i}" for i in range(len(buffers))]
        if int(np.prod(geometry.grid)) < len(buffers) * ctas:
            raise ValueError(f"grid expects at least {len(buffers) * ctas} CTAs, but got {grid}")
        plan = plan_arena(case_records, buffers, ctas)
        base = self.memory.alloc(plan.total)
        try:
            plan = plan_arena(case_records, buffers, ctas, base=base)
            self.memory.write(base, plan.host_image(case_records, buffers))
            probe = self.active_faults if isinstance(self.active_faults, ProbeSet) else None
            if probe is not None:
                probe.effects = set()
            try:
                seconds = self.run(module, kernel_name, [base, len(buffers)], geometry.grid, geometry.block,
                                   geometry.cluster, shared_bytes)
            except (StepLimit, Livelock) as exc:
                raise CaseTimeout(ids, f"{kernel_name}: {exc}") from exc
            except SimError as exc:
                raise CaseCrash(ids, f"{kernel_name}: {type(exc).__name__}: {exc}") from exc
            finally:
                if probe is not None:
                    probe.take(ids)
            image = self.memory.read(base, plan.total)
        finally:
            self.memory.free(base)
        return LaunchResult(plan.outputs(image), plan.status_words(image), seconds)


@contextlib.contextmanager
def override_faults(faults: Iterable[Fault], probe: bool = False):
    """Every SimDevice of this process launches with exactly ``faults`` inside the block (the
    mutation score switches faults between cases without re-creating session fixtures).  With
    ``probe`` the faults only record where they would change something (:class:`ProbeSet`; the
    block yields it, ``by_case`` filled per launched case)."""
    global _OVERRIDE, _GENERATION
    saved, _OVERRIDE = _OVERRIDE, (ProbeSet(faults) if probe else FaultSet(faults))
    _GENERATION += 1
    try:
        yield _OVERRIDE
    finally:
        _OVERRIDE = saved
        _GENERATION += 1


def faults_overridden() -> bool:
    """Whether :func:`override_faults` is in force (a device's own faults are then ignored)."""
    return _OVERRIDE is not None


def fault_generation() -> int:
    """Changes whenever :func:`override_faults` switches faults (key launch caches by it)."""
    return _GENERATION


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


def open_sim_device(faults: Iterable[Fault] | None = None) -> tuple[SimDevice, str]:
    """``(device, "")`` for ``--device sim`` (the shape ``conformance.device.open_device`` expects)."""
    return SimDevice(faults_from_environment() if faults is None else faults), ""
