"""PyCUDA backend of the device layer (imported only for ``--device cuda``; pycuda is optional).

One CUDA context per process (per pytest-xdist worker), on the GPU the worker was pinned to
(:func:`conformance.harness.device.pin_worker_gpu`, called before pycuda initialises CUDA).  The
context is popped and detached when the process ends (:func:`close_cuda_device`, run at exit and
at the end of the pytest session): PyCUDA aborts a process whose context stack is not empty at
exit ("PyCUDA ERROR: The context stack was not empty upon module cleanup", every worker of the
first H100 run, 2026-11-26).

A CUDA error at or after the launch is treated as sticky: the launch's cases end as ``Crash``.  A
kernel still running after the host timeout is a ``Timeout``.  With ``recover=False`` (the
launcher process, :mod:`conformance.harness.cuda_launcher`, the default path of ``--device cuda``)
the context is left as it is and the launcher process ends itself; otherwise (a worker that drives
CUDA itself) the context is destroyed and made again, modules reloaded lazily, and the worker asks
to be restarted when that fails.  An out-of-memory error while setting up a launch is a
``CaseResourceError`` (the batch is retried in smaller launches).

Only the public PyCUDA API is used (``pycuda.driver``), so a stand-in module of the same shape
(tests/fake_cuda: a driver that enforces the real driver's rules and runs kernels on ptxsim) runs
this whole path in CI.
"""

from __future__ import annotations

import atexit
import gc
import importlib
import os
import time
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from conformance.harness.device import (
    CaseBuffers,
    CaseCrash,
    CaseResourceError,
    CaseTimeout,
    LaunchResult,
    pin_worker_gpu,
    plan_arena,
    request_worker_restart,
)

#: Host-side limit on one launch (seconds); the kernels' own waits are bounded far below it.
HOST_TIMEOUT_S = float(os.environ.get("TCGEN05_CTS_HOST_TIMEOUT", "60"))
_DEFAULT_SMEM_LIMIT = 48 * 1024

_OPENED: list[tuple[Any, str]] = []


def format_driver_version(version: int) -> str:
    """``cuDriverGetVersion`` encodes 1000*major + 10*minor: 12080 -> ``"12.8"``."""
    return f"{version // 1000}.{(version % 1000) // 10}"


@dataclass
class CudaModule:
    """A loaded cubin (or PTX text, for the driver's JIT); reloaded on first use after the context
    was rebuilt."""

    image: bytes
    generation: int
    handle: Any


class PyCudaDevice:
    kind = "cuda"

    def __init__(self, driver: Any, ordinal: int = 0, host_timeout_s: float = HOST_TIMEOUT_S,
                 recover: bool = True) -> None:
        #: rebuild the context after a sticky error or a hang; the launcher process
        #: (conformance.harness.cuda_launcher) ends itself instead, which is what NVIDIA advises
        self.recover = recover
        self._cuda = driver
        self._dev = driver.Device(ordinal)
        self.name = str(self._dev.name())
        major, minor = self._dev.compute_capability()
        self.compute_capability = (int(major), int(minor))
        self.driver_version = format_driver_version(int(driver.get_driver_version()))
        self.host_timeout_s = host_timeout_s
        self.generation = 0
        self._modules: list[CudaModule] = []
        self._ctx: Any = self._dev.make_context()

    # -- context --------------------------------------------------------------------------------

    def _drop_context(self) -> None:
        """Release this context's modules, then pop and detach it (detach destroys it, ending
        any kernel still running in it)."""
        for module in self._modules:
            module.handle = None
        self._modules.clear()
        gc.collect()             # PyCUDA unloads a module when its last reference goes
        ctx, self._ctx = self._ctx, None
        if ctx is None:
            return
        try:
            ctx.pop()
        except Exception:  # noqa: BLE001  (a context after a sticky error may refuse anything)
            pass
        try:
            ctx.detach()
        except Exception:  # noqa: BLE001
            pass

    def close(self) -> None:
        """Pop and detach the context (at process exit; idempotent)."""
        self._drop_context()

    def _rebuild(self, why: str) -> None:
        cuda = self._cuda
        self._drop_context()
        self.generation += 1
        try:
            self._ctx = self._dev.make_context()
            probe = cuda.mem_alloc(256)
            cuda.memcpy_htod(probe, np.zeros(64, np.uint32))
            probe.free()
        except Exception as exc:  # noqa: BLE001
            request_worker_restart(f"CUDA context could not be rebuilt after {why}: {exc}")

    def load(self, image: bytes) -> CudaModule:
        """Load a cubin, or PTX text (the driver JIT-compiles it for this device: ``--load ptx``)."""
        image = bytes(image)
        if image[:4] != b"\x7fELF" and not image.endswith(b"\0"):
            image += b"\0"          # cuModuleLoadDataEx reads PTX as a NUL-terminated string
        module = CudaModule(image, self.generation, self._cuda.module_from_buffer(image))
        self._modules.append(module)
        return module

    def _handle(self, module: CudaModule) -> Any:
        if module.generation != self.generation or module.handle is None:
            module.handle = self._cuda.module_from_buffer(module.image)
            module.generation = self.generation
            self._modules.append(module)
        return module.handle

    # -- launch ---------------------------------------------------------------------------------

    def launch(self, module: CudaModule, kernel_name: str, case_records: bytes, buffers: Sequence[CaseBuffers],
               grid: tuple[int, int, int], block: tuple[int, int, int],
               cluster_dims: tuple[int, int, int] = (1, 1, 1), *, case_ids: Sequence[str] = (),
               shared_bytes: int = 0) -> LaunchResult:
        """Launch ``kernel_name(case_table, ncases)`` over the cases.

        Cluster dimensions are compiled into the kernel (``.reqnctapercluster``), so a plain
        launch honours them; ``cluster_dims`` says how many CTAs each case has.
        """
        cuda = self._cuda
        ctas = int(np.prod(cluster_dims))
        ids = list(case_ids) or [f"case {i}" for i in range(len(buffers))]
        if int(np.prod(grid)) < len(buffers) * ctas:
            raise ValueError(f"grid expects at least {len(buffers) * ctas} CTAs, but got {grid}")
        # Before the launch: errors here are the harness's (bad name, out of memory), not a crash.
        plan = plan_arena(case_records, buffers, ctas)
        try:
            arena = cuda.mem_alloc(plan.total)
        except tuple(e for e in (getattr(cuda, "MemoryError", None),) if e) as exc:
            raise CaseResourceError(ids, f"{kernel_name}: {exc} ({plan.total} bytes for {len(buffers)} case(s))") from exc
        try:
            plan = plan_arena(case_records, buffers, ctas, base=int(arena))
            image = plan.host_image(case_records, buffers)
            cuda.memcpy_htod(arena, image)
            func = self._handle(module).get_function(kernel_name)
            if shared_bytes > _DEFAULT_SMEM_LIMIT:
                func.set_attribute(cuda.function_attribute.MAX_DYNAMIC_SHARED_SIZE_BYTES, shared_bytes)
        except BaseException:
            _release(arena)
            raise
        start, end = cuda.Event(), cuda.Event()
        try:
            start.record()
            func(np.uint64(plan.base), np.uint32(len(buffers)), block=tuple(block), grid=tuple(grid),
                 shared=shared_bytes)
        except cuda.Error as exc:
            # Refused before it ran (launch limits: block, shared memory, cluster): not sticky.
            _release(arena)
            raise RuntimeError(f"{kernel_name}: the driver refused the launch: {exc}") from exc
        try:
            end.record()
            self._wait(end, ids, kernel_name)
            cuda.memcpy_dtoh(image, arena)
            seconds = start.time_till(end) / 1000.0
            arena.free()
        except (cuda.Error, CaseTimeout) as exc:
            crash = isinstance(exc, cuda.Error)
            if self.recover:
                _release(arena)
                del arena, start, end
                self._rebuild(f"{kernel_name}: {exc if crash else 'host timeout'}")
            if not crash:
                raise
            rebuilt = "; context rebuilt" if self.recover else ""
            raise CaseCrash(ids, f"CUDA error in {kernel_name}: {exc}{rebuilt}") from exc
        return LaunchResult(plan.outputs(image), plan.status_words(image), seconds)

    def _wait(self, event: Any, ids: list[str], kernel_name: str) -> None:
        deadline = time.monotonic() + self.host_timeout_s
        delay = 1e-5
        while not event.query():
            if time.monotonic() > deadline:
                raise CaseTimeout(ids, f"{kernel_name} did not finish within {self.host_timeout_s:g} s (host timeout)")
            time.sleep(delay)
            delay = min(delay * 2, 0.01)


def _release(allocation: Any) -> None:
    """Free a device allocation where the context still allows it (not after a sticky error)."""
    try:
        allocation.free()
    except Exception:  # noqa: BLE001
        pass


def open_cuda_device(driver: Any = None, *, recover: bool = True) -> tuple[PyCudaDevice | None, str]:
    """This process's CUDA device, opened here once; ``(None, why)`` where there is none.

    The harness's ``--device cuda`` drives the GPU from a launcher process instead
    (:mod:`conformance.harness.cuda_launcher`, which calls this); ``recover=False`` leaves a broken
    context as it is (the launcher process ends itself)."""
    if _OPENED:
        return _OPENED[0]
    if driver is None:
        pin_worker_gpu()
        try:
            driver = importlib.import_module("pycuda.driver")
        except ImportError:
            _OPENED.append((None, "pycuda is not installed (pip install '.[gpu]')"))
            return _OPENED[0]
    try:
        driver.init()
        if driver.Device.count() < 1:
            raise RuntimeError("no CUDA device")
        opened: tuple[PyCudaDevice | None, str] = (PyCudaDevice(driver, recover=recover), "")
    except Exception as exc:  # noqa: BLE001  (no driver, no GPU, busy GPU: all mean "none here")
        opened = (None, f"no usable CUDA GPU ({exc})")
    _OPENED.append(opened)
    if opened[0] is not None:
        atexit.register(close_cuda_device)     # runs before PyCUDA's own check of the context stack
    return opened


def close_cuda_device() -> None:
    """Pop and detach this process's context, if one was opened (idempotent)."""
    if _OPENED and _OPENED[0][0] is not None:
        _OPENED[0][0].close()
