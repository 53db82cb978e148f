"""``SimDevice``: a simulated sm_100a GPU that runs PTX text.

``load`` parses and compiles a module (every problem at once, as ``UnimplementedError``); ``run``
launches one kernel with the given parameters, grid, block and cluster, batch by batch of whole
clusters executed in lock step; global memory is ``device.memory`` (``alloc``/``write``/``read``/
``free``).  The conformance harness adapts this to its device interface
(``conformance.harness.device_sim``); nothing here imports the harness.
"""

from __future__ import annotations

import contextlib
import gc
import os
import time
from dataclasses import dataclass
from typing import Iterable, Sequence

import numpy as np

import ptxsim.isa.alu  # noqa: F401  (registers handlers)
import ptxsim.isa.bits  # noqa: F401
import ptxsim.isa.bitscan  # noqa: F401
import ptxsim.isa.control  # noqa: F401
import ptxsim.isa.cvt  # noqa: F401
import ptxsim.isa.floats  # noqa: F401
import ptxsim.isa.matrix  # noqa: F401
import ptxsim.isa.media  # noqa: F401
import ptxsim.isa.mma_sp  # noqa: F401
import ptxsim.memory.access  # noqa: F401
import ptxsim.memory.bulk  # noqa: F401
import ptxsim.memory.bulk_store  # noqa: F401
import ptxsim.memory.cp_async  # noqa: F401
import ptxsim.memory.mbarrier  # noqa: F401
import ptxsim.memory.tensor  # noqa: F401
import ptxsim.memory.tensormap_ops  # noqa: F401
import ptxsim.tcgen05.core  # noqa: F401
import ptxsim.tcgen05.cp  # noqa: F401
import ptxsim.tcgen05.ldst  # noqa: F401
import ptxsim.tcgen05.mma  # noqa: F401
from ptxsim.engine import scheduler
from ptxsim.engine.machine import Geometry, Machine
from ptxsim.errors import SimError, UnimplementedError
from ptxsim.faults.model import Fault, FaultSet, ProbeSet
from ptxsim.hazards import CLIENT_READINGS
from ptxsim.memory.global_memory import GlobalMemory
from ptxsim.ptx.compiler import KernelProgram
from ptxsim.ptx.parse_cache import cached_parse
from ptxsim.ptx.parser import Module
from ptxsim.ptx.types import TYPES
from ptxsim.trace import Trace
from reference.spec_questions import check_readings, following

SIM_VERSION = "0.2"
_OVERRIDE: FaultSet | None = None          # set by override_faults (mutation score): wins over a device's own
_GENERATION = 0                            # bumped whenever the override changes
_TRACE_OVERRIDE: Trace | None = None       # set by override_trace: every launch records into it


@contextlib.contextmanager
def _collection_paused():
    """No garbage collection inside the block (restored as it was after it).  Loading a kernel
    builds ~10,000 objects that mostly live on (parse tree, compiled closures): collections during
    it would walk them again and again (~15 % of a load's CPU, measured); one after it walks them once."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


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
                 livelock_spins: int = 20_000, trace: bool | Trace | None = None, hazards: bool = True,
                 readings: dict[str, str] | None = None, waive_hazards: Iterable[str] = (),
                 strict: bool = False, sm_count: int = 148, parse_cache: str | os.PathLike | None = None) -> None:
        self.faults = FaultSet(faults)
        #: a directory where parsed PTX is kept across processes (:mod:`ptxsim.ptx.parse_cache`), or None
        self.parse_cache = parse_cache
        #: a :class:`ptxsim.trace.Trace` every ``run`` records into, or None (no tracing, no cost)
        self.trace: Trace | None = Trace() if trace is True else (trace or None)
        self.batch_clusters = int(batch_clusters)
        self.max_steps = int(max_steps)
        self.livelock_spins = int(livelock_spins)
        self.memory = GlobalMemory()
        #: SMs of the simulated GPU: %nsmid reads it (148: a B200; 132 reproduces an H100 SXM)
        self.sm_count = int(sm_count)
        #: the hazard checker (§9.7.16.6): launches raise ``HazardError`` on a synchronization bug
        self.hazards = bool(hazards)
        #: hazard rule ids not reported (docs/sim.md "Hazard checker": the real-client triage)
        self.waive_hazards = frozenset(waive_hazards)
        #: spec-question readings the device follows, ``{question id: reading}`` (docs/spec-questions.md)
        self.readings = check_readings(readings)
        #: hold kernels to the letter of the spec: the hazard checker's spec questions at their picks
        #: (Q-SYNC-FENCE ``fence-required``, Q-PAIR-DEALLOC ``exit-ordered``) instead of the readings
        #: every known client follows (:data:`ptxsim.hazards.CLIENT_READINGS`); ``readings`` wins either way
        self.strict = bool(strict)

    @property
    def readings_in_force(self) -> dict[str, str]:
        """The readings a launch follows (every other question at its pick): ``readings``, and
        unless ``strict`` the clients' readings of the questions it does not name."""
        return dict(self.readings) if self.strict else {**CLIENT_READINGS, **self.readings}

    # -- modules ------------------------------------------------------------------------------

    def load(self, ptx: str | bytes) -> SimModule:
        """Parse and compile every kernel of a PTX module; unimplemented instructions are one error."""
        if isinstance(ptx, (bytes, bytearray)):
            if bytes(ptx[:4]) == b"\x7fELF":
                raise SimError("SimDevice.load expects PTX text, but got a cubin (ELF): pass the kernel's PTX")
            ptx = bytes(ptx).decode("utf-8")
        with _collection_paused():
            module = cached_parse(ptx, self.parse_cache)
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
        grid, block = _dim3(grid, "grid"), _dim3(block, "block")
        cluster_dims = None if cluster_dims is None else _dim3(cluster_dims, "cluster")
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

    def run(self, module: SimModule, kernel_name: str, params: Sequence, grid=(1, 1, 1), block=(1, 1, 1),
            cluster=None, shared_bytes: int = 0, *, cluster_dims=None) -> float:
        """Launch ``kernel_name`` once; return the seconds simulated.

        ``params``: one entry per ``.param`` of the entry, in declaration order: a Python int for
        integer and pointer parameters, a numpy float scalar (or float) for float parameters,
        ``bytes`` for ``.b8`` array parameters (a 128-byte tensor map, say).  ``grid``/``block``/
        ``cluster`` are 1-3 ints (missing dimensions are 1); ``cluster`` defaults to the kernel's
        ``.reqnctapercluster`` or (1, 1, 1).  ``shared_bytes`` is the dynamic shared memory.
        """
        if cluster is None:
            cluster = cluster_dims
        program = module.kernel(kernel_name)
        faults = self.active_faults
        geometry = self.geometry(program, grid, block, cluster)
        packed = program.pack_params(list(params))
        trace = _TRACE_OVERRIDE if _TRACE_OVERRIDE is not None else self.trace
        hooks = faults if trace is None else trace.wrap(faults)
        start = time.perf_counter()
        total = geometry.total_clusters
        with following(self.readings_in_force, exact=True):      # the device's readings, not the caller's
            return self._run_batches(program, geometry, total, faults, packed, hooks, trace, shared_bytes, start)

    def _run_batches(self, program, geometry, total, faults, packed, hooks, trace, shared_bytes, start) -> float:
        try:
            for first in range(0, total, self.batch_clusters):
                clusters = np.arange(first, min(first + self.batch_clusters, total))
                if isinstance(faults, ProbeSet):
                    faults.batch(clusters, geometry.cluster_size)
                machine = Machine(program, geometry, clusters, self.memory, packed, hooks,
                                  shared_bytes=shared_bytes, max_steps=self.max_steps,
                                  livelock_spins=self.livelock_spins,
                                  hazards=self.waive_hazards if self.hazards else None, sm_count=self.sm_count)
                if trace is None:
                    scheduler.run(machine)
                    continue
                machine.tally = trace.new_tally(program)
                try:
                    scheduler.run(machine)
                finally:
                    trace.add_tally(program, machine.tally)
        finally:
            seconds = time.perf_counter() - start
            if trace is not None:
                trace.add_run(seconds)
        return seconds


def _dim3(value, what: str) -> tuple[int, int, int]:
    """``value`` as three positive ints (an int, or 1-3 ints; missing dimensions are 1)."""
    dims = (value,) if isinstance(value, (int, np.integer)) else tuple(value)
    if not 1 <= len(dims) <= 3 or any(int(x) < 1 for x in dims):
        raise SimError(f"{what} expects 1-3 positive ints, but got {value!r}")
    return tuple(int(x) for x in dims) + (1,) * (3 - len(dims))


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


@contextlib.contextmanager
def override_trace(trace: Trace):
    """Every SimDevice of this process records its launches into ``trace`` inside the block,
    whatever its own ``trace`` (the hazard score reads which source lines each case executed)."""
    global _TRACE_OVERRIDE
    saved, _TRACE_OVERRIDE = _TRACE_OVERRIDE, trace
    try:
        yield trace
    finally:
        _TRACE_OVERRIDE = saved


def faults_overridden() -> bool:
    """Whether :func:`override_faults` is in force (a device's own faults are then ignored)."""
    return _OVERRIDE is not None


def fault_generation() -> int:
    """Changes whenever :func:`override_faults` switches faults (key launch caches by it)."""
    return _GENERATION
