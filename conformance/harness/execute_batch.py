"""Batched launches for the execution tier: one launch per kernel serves many cases.

pytest runs one test per case, but a kernel runs many cases per launch (one CTA / CTA pair per
case, docs/kernel-abi.md). :class:`ExecutionService` (one per process and device) launches, the
first time a case of kernel K is asked for, every case of K this process is about to run -- the
cases still queued for this pytest-xdist worker (read from the worker's own queue), or, without
xdist, the rest of the session -- and keeps their results until their tests ask for them.

Results are keyed by kernel, target, ``ptxsim.device.fault_generation()`` (simulator only) and
the source-edit generation, so a fault switched on between two cases (mutation score) or a kernel
edited by :func:`edit_sources` (hazard score) always reaches the next launch.
A launch that crashes or times out is rerun one case per launch so the status lands on its case.
"""

from __future__ import annotations

import bisect
import contextlib
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np
import pytest

from conformance.harness.device import CaseBuffers, CaseCrash, CaseResourceError, CaseTimeout
from conformance.harness.gating import sass_arch, supported_target
from generators.inputs import NUMERICS, SEMANTIC, CaseInputs, Untestable, case_record, synthesize
from generators.params import Case
from generators.ptx.kernel import render
from reference.targets import ptx_version

MAX_BATCH = {"sim": 64, "cuda": 4096}
KEEP_GROUPS = 8
KEEP_MODULES = 4      # loaded kernels kept (cases of one kernel run together; a long run must not keep them all)
_PLAN: set[int] | None = None      # id() of the items a batch may take along (restrict_batches)
_EDITS: dict[str, Callable[[str], str]] = {}   # kernel name -> PTX edit (edit_sources)
_EDIT_GENERATION = 0


@contextlib.contextmanager
def restrict_batches(items):
    """Inside the block a launch batches only ``items`` (the mutation score runs a chosen subset
    of the session's cases; batching the others along would be wasted work)."""
    global _PLAN
    saved, _PLAN = _PLAN, {id(it) for it in items}
    try:
        yield
    finally:
        _PLAN = saved


@contextlib.contextmanager
def edit_sources(edits: dict[str, Callable[[str], str]]):
    """Inside the block the PTX of each kernel named in ``edits`` is ``edit(ptx)`` (simulator
    only; the hazard score deletes a synchronization instruction this way). Launch results and
    loaded modules of another edit generation are never reused."""
    global _EDITS, _EDIT_GENERATION
    saved = _EDITS
    _EDITS, _EDIT_GENERATION = dict(edits), _EDIT_GENERATION + 1
    try:
        yield
    finally:
        _EDITS, _EDIT_GENERATION = saved, _EDIT_GENERATION + 1


def edited_source(name: str, ptx: str) -> str:
    """``ptx`` of kernel ``name`` as the current :func:`edit_sources` block has it."""
    edit = _EDITS.get(name)
    return edit(ptx) if edit is not None else ptx


@dataclass(frozen=True)
class ExecCase:
    """A case as the execution tier runs it: ``mode`` semantic, or numerics (companion case)."""

    case: Case
    mode: str = SEMANTIC

    @property
    def case_id(self) -> str:
        return self.case.case_id + (".numerics" if self.mode == NUMERICS else "")


@dataclass
class CaseRun:
    """What one case's test needs: inputs and device results, or why there are none."""

    inputs: CaseInputs | None = None
    outputs: np.ndarray | None = None
    status: np.ndarray | None = None
    skip: str | None = None            # Untestable / not modelled by the simulator
    error: Exception | None = None     # CaseCrash / CaseTimeout / assembly failure
    seconds: float = 0.0
    batch: int = 1


@dataclass
class _Group:
    generation: tuple[int, int]
    runs: dict[str, CaseRun] = field(default_factory=dict)


class SimSkip(Exception):
    """The simulator does not model something the kernel uses (reported as a Skip)."""


class ExecutionService:
    """Loads kernels and runs batches on one device; results handed out per case."""

    def __init__(self, config, device) -> None:
        self.config = config
        self.device = device
        self.kind = device.kind
        self.modules: dict[tuple[str, str], object] = {}
        self.sources: dict[tuple[str, str], tuple[str, bytes | None]] = {}
        self.groups: dict[tuple[str, str], _Group] = {}
        self._index: dict[tuple[str, str], list[int]] | None = None
        self._positions: dict[int, int] = {}
        self.launches = 0
        self.seconds = 0.0
        #: how a GPU gets its kernels: ``cubin`` (ptxas for the device's SASS architecture) or
        #: ``ptx`` (the driver's JIT); the simulator always takes PTX
        self.load_mode = config.getoption("load", "cubin") if self.kind == "cuda" else "ptx"

    # -- keys -----------------------------------------------------------------------------------
    def generation(self) -> tuple[int, int]:
        """(fault generation, source-edit generation): results of another generation are stale."""
        if self.kind != "sim":
            return (0, 0)
        from ptxsim.device import fault_generation

        return (fault_generation(), _EDIT_GENERATION)

    # -- what this process will run next --------------------------------------------------------
    def _build_index(self, session) -> None:
        self._index = {}
        for i, it in enumerate(session.items):
            xc = _exec_case(it)
            if xc is not None:
                self._positions[id(it)] = i
                self._index.setdefault(_kernel_key(xc), []).append(i)

    def upcoming(self, item, xcase: ExecCase, target: str) -> list[ExecCase]:
        """This case and the queued cases of the same kernel (same target), in run order."""
        session = item.session
        if self._index is None:
            self._build_index(session)
        me = self._positions.get(id(item))
        if me is None:
            return [xcase]
        positions = self._index.get(_kernel_key(xcase), [])
        later = positions[bisect.bisect_right(positions, me):]
        queued = _worker_queue(item.config)
        if queued is not None:
            later = [i for i in later if i in queued]
        if _PLAN is not None:
            later = [i for i in later if id(session.items[i]) in _PLAN]
        out = [xcase]
        for i in later[:MAX_BATCH.get(self.kind, 256) - 1]:
            other = _exec_case(session.items[i])
            if other is not None and self.target_for(other.case) == target:
                out.append(other)
        return out

    def target_for(self, case: Case) -> str | None:
        """The target a case runs as on this device, or None (NotSupported).

        The simulator interprets the PTX of every target the suite generates (it models the
        instructions, not one chip): the target a sm_100 device would run, else the first one.
        """
        if not case.targets:
            return None
        if self.kind == "sim":
            return supported_target(case.targets, (10, 0)) or case.targets[0]
        return supported_target(case.targets, getattr(self.device, "compute_capability", None))

    def arch_for(self, target: str) -> str | None:
        """The SASS architecture a kernel of PTX ``target`` is assembled for on this device
        (``None`` where nothing is assembled: the simulator, or ``--load ptx``)."""
        if self.kind != "cuda" or self.load_mode != "cubin":
            return None
        return sass_arch(target, self.device.compute_capability)

    def toolchain_for(self, target: str) -> str | None:
        """The outcome's toolchain on a GPU: ``ptxas 13.0.88 -arch=sm_90`` (the SASS architecture
        beside the assembler), or ``driver JIT of sm_80 PTX`` with ``--load ptx``."""
        if self.kind != "cuda":
            return None
        arch = self.arch_for(target)
        if arch is None:
            return f"driver JIT of {target} PTX"
        tool = self.ptxas()
        return f"{tool.label.replace('-', ' ', 1)} -arch={arch}" if tool else f"-arch={arch}"

    def ptxas(self):
        """The toolchain that assembles this service's kernels (found once), or None."""
        if not hasattr(self, "_ptxas"):
            from conformance.harness.assembly import toolchains

            tools = toolchains(self.config)
            self._ptxas = tools[0] if tools else None
        return self._ptxas

    # -- results --------------------------------------------------------------------------------
    def run_for(self, item, xcase: ExecCase, target: str) -> CaseRun:
        key = (xcase.case.kernel.name, target)
        gen = self.generation()
        group = self.groups.get(key)
        if group is None or group.generation != gen or xcase.case_id not in group.runs:
            group = _Group(gen)
            self._evict(key)
            self.groups[key] = group
            group.runs.update(self.launch(self.upcoming(item, xcase, target), target))
        return group.runs.pop(xcase.case_id)

    def _evict(self, key) -> None:
        self.groups.pop(key, None)
        gen = self.generation()
        for k in [k for k, g in self.groups.items() if g.generation != gen]:
            del self.groups[k]
        while len(self.groups) >= KEEP_GROUPS:
            del self.groups[next(iter(self.groups))]

    # -- loading --------------------------------------------------------------------------------
    def source(self, case: Case, target: str) -> tuple[str, bytes | None]:
        """(PTX text, cubin or None) of a case's kernel for ``target``."""
        if self.kind == "sim" and case.kernel.name in _EDITS:
            return edited_source(case.kernel.name, self.source_unedited(case, target)[0]), None
        return self.source_unedited(case, target)

    def source_unedited(self, case: Case, target: str) -> tuple[str, bytes | None]:
        key = (case.kernel.name, target)
        if key not in self.sources:
            ptx = render(case.kernel, target, case.ptx_version or ptx_version(target, case.features))
            cubin = None
            arch = self.arch_for(target)
            if arch is not None:
                cubin = self._assemble(case, target, arch)
            self.sources[key] = (ptx, cubin)
        return self.sources[key]

    def _assemble(self, case: Case, target: str, arch: str) -> bytes:
        from conformance.harness.assembly import service

        tool = self.ptxas()
        if tool is None:
            raise RuntimeError("no ptxas found to assemble the kernel (--ptxas, $TCGEN05_CTS_PTXAS, PATH)")
        result = service(self.config, tool).result_for_device(case, target, arch)
        if not result.ok or not result.cubin:
            raise RuntimeError(f"{tool.label} -arch={arch} rejects the kernel of target {target}: "
                               f"{result.diagnostics.strip()[:500]}")
        return Path(result.cubin).read_bytes()

    def module(self, case: Case, target: str):
        key = (case.kernel.name, target)
        if case.kernel.name in _EDITS and self.kind == "sim":
            key = (case.kernel.name, target, _EDIT_GENERATION)
            for stale in [k for k in self.modules if len(k) == 3 and k[:2] == key[:2] and k != key]:
                del self.modules[stale]
        if key not in self.modules:
            while len(self.modules) >= KEEP_MODULES:
                del self.modules[next(iter(self.modules))]
            ptx, cubin = self.source(case, target)
            if self.kind == "sim":
                from ptxsim.errors import UnimplementedError

                try:
                    self.modules[key] = self.device.load(ptx)
                except UnimplementedError as exc:
                    raise SimSkip("simulator: not modelled: " + "; ".join(exc.items)[:600]) from None
            else:
                self.modules[key] = self.device.load(cubin if self.load_mode == "cubin" else ptx.encode())
        return self.modules[key]

    # -- launching ------------------------------------------------------------------------------
    def launch(self, batch: list[ExecCase], target: str) -> dict[str, CaseRun]:
        runs: dict[str, CaseRun] = {}
        ready: list[tuple[ExecCase, CaseInputs]] = []
        for xc in batch:
            try:
                ready.append((xc, synthesize(xc.case, xc.mode)))
            except Untestable as exc:
                runs[xc.case_id] = CaseRun(skip=f"Untestable: {exc}")
            except Exception as exc:  # noqa: BLE001  (a synthesis bug fails its own case only)
                runs[xc.case_id] = CaseRun(error=exc)
        if not ready:
            return runs
        case = ready[0][0].case
        try:
            module = self.module(case, target)
        except SimSkip as exc:
            runs.update({xc.case_id: CaseRun(inputs, skip=str(exc)) for xc, inputs in ready})
            return runs
        except Exception as exc:  # noqa: BLE001  (assembly/load failure: every case of the kernel fails)
            runs.update({xc.case_id: CaseRun(inputs, error=exc) for xc, inputs in ready})
            return runs
        for xc, inputs, outputs, status, error, seconds, n in self._isolating(module, case, ready):
            runs[xc.case_id] = CaseRun(inputs, outputs, status, error=error, seconds=seconds, batch=n)
        return runs

    def _launch(self, module, case: Case, ready) -> tuple[list, np.ndarray, float]:
        ctas = case.kernel.cluster
        records = b"".join(case_record(xc.case, inp) for xc, inp in ready)
        buffers = [CaseBuffers(inp.in_bytes, inp.out_words) for _, inp in ready]
        ids = [xc.case_id for xc, _ in ready]
        start = time.perf_counter()
        result = self.device.launch(module, case.kernel.name, records, buffers, (ctas * len(ready), 1, 1),
                                    (case.kernel.threads, 1, 1), (ctas, 1, 1), case_ids=ids,
                                    shared_bytes=case.kernel.dynamic_smem)
        self.launches += 1
        elapsed = time.perf_counter() - start
        self.seconds += elapsed
        return result.outputs, result.status_words, elapsed

    def _isolating(self, module, case: Case, ready):
        """Run the batch; on a crash, timeout or out-of-memory, rerun case by case so each status
        finds its case (after a crash or timeout the backend has rebuilt its context)."""
        try:
            outputs, status, secs = self._launch(module, case, ready)
            share = secs / len(ready)
            return [(xc, inp, outputs[i], status[i], None, share, len(ready)) for i, (xc, inp) in enumerate(ready)]
        except (CaseCrash, CaseTimeout, CaseResourceError) as exc:
            if len(ready) == 1:
                return [(ready[0][0], ready[0][1], None, None, exc, 0.0, 1)]
        out = []
        for xc, inp in ready:
            try:
                outputs, status, secs = self._launch(module, case, [(xc, inp)])
                out.append((xc, inp, outputs[0], status[0], None, secs, 1))
            except (CaseCrash, CaseTimeout, CaseResourceError) as exc:
                out.append((xc, inp, None, None, exc, 0.0, 1))
        return out


# -- pytest glue -----------------------------------------------------------------------------------

def _exec_case(item) -> ExecCase | None:
    spec = getattr(item, "callspec", None)
    xc = spec.params.get("xcase") if spec is not None else None
    return xc if isinstance(xc, ExecCase) else None


def _kernel_key(xc: ExecCase) -> str:
    return xc.case.kernel.name


def _worker_queue(config) -> set[int] | None:
    """Indices still queued for this pytest-xdist worker (None without xdist): the worker's queue
    plus the item it has already taken off the queue as the next one (``nextitem_index``)."""
    if not hasattr(config, "workerinput"):
        return None
    for plugin in config.pluginmanager.get_plugins():
        queue = getattr(plugin, "torun", None)
        if queue is not None and hasattr(queue, "lock") and hasattr(plugin, "workerid"):
            with queue.lock() as items:
                queued = {i for i in items if isinstance(i, int)}
            nxt = getattr(plugin, "nextitem_index", None)
            if isinstance(nxt, int):
                queued.add(nxt)
            return queued
    return None


_SERVICES = pytest.StashKey[dict]()


def service(config, device) -> ExecutionService:
    """This session's service for ``device`` (kept in the config's stash: a later in-process
    session never sees another session's items or results)."""
    services = config.stash.setdefault(_SERVICES, {})
    svc = services.get(id(device))
    if svc is None or svc.device is not device:
        for key in [k for k, s in services.items() if s.device is not device][:-1]:
            del services[key]        # a torn-down device's service (and its modules): keep one other at most
        svc = services[id(device)] = ExecutionService(config, device)
    return svc
