"""PyCUDA backend of the device layer (imported only for ``--device cuda``; pycuda is optional).

One CUDA context per process (per pytest-xdist worker), on the GPU the worker was pinned to
(:func:`conformance.harness.device.pin_worker_gpu`, called before pycuda initialises CUDA).  A CUDA error
at or after the launch is treated as sticky: the launch's cases end as ``Crash``, the context is
destroyed and made again (modules are reloaded lazily); when that fails, or when a kernel is
still running after the host timeout, the worker asks to be restarted.
"""

from __future__ import annotations

import importlib
import os
import time
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from conformance.harness.device import (
    CaseBuffers,
    CaseCrash,
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
    """A loaded cubin; reloaded on first use after the context was rebuilt."""

    cubin: bytes
    generation: int
    handle: Any


class PyCudaDevice:
    kind = "cuda"

    def __init__(self, driver: Any, ordinal: int = 0, host_timeout_s: float = HOST_TIMEOUT_S) -> None:
        self._cuda = driver
        self._dev = driver.Device(ordinal)
        self.name = str(self._dev.name())
        major, minor = self._dev.compute_capability()
        self.compute_capability = (int(major), int(minor))
        self.driver_version = format_driver_version(int(driver.get_driver_version()))
        self.host_timeout_s = host_timeout_s
        self.generation = 0
        self._ctx = self._dev.make_context()

    # -- context --------------------------------------------------------------------------------

    def _rebuild(self, why: str) -> None:
        cuda = self._cuda
        try:
            self._ctx.pop()
            self._ctx.detach()
        except Exception:  # noqa: BLE001  (a context after a sticky error may refuse anything)
            pass
        self.generation += 1
        try:
            self._ctx = self._dev.make_context()
            probe = cuda.mem_alloc(256)
            cuda.memcpy_htod(probe, np.zeros(64, np.uint32))
            probe.free()
        except Exception as exc:  # noqa: BLE001
            request_worker_restart(f"CUDA context could not be rebuilt after {why}: {exc}")

    def load(self, cubin: bytes) -> CudaModule:
        return CudaModule(bytes(cubin), self.generation, self._cuda.module_from_buffer(bytes(cubin)))

    def _handle(self, module: CudaModule) -> Any:
        if module.generation != self.generation:
            module.handle = self._cuda.module_from_buffer(module.cubin)
            module.generation = self.generation
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
        arena = cuda.mem_alloc(plan.total)
        try:
            plan = plan_arena(case_records, buffers, ctas, base=int(arena))
            image = plan.host_image(case_records, buffers)
            cuda.memcpy_htod(arena, image)
            func = self._handle(module).get_function(kernel_name)
            if shared_bytes > _DEFAULT_SMEM_LIMIT:
                func.set_attribute(cuda.function_attribute.MAX_DYNAMIC_SHARED_SIZE_BYTES, shared_bytes)
        except BaseException:
            arena.free()
            raise
        try:
            start, end = cuda.Event(), cuda.Event()
            start.record()
            func(np.uint64(plan.base), np.uint32(len(buffers)), block=tuple(block), grid=tuple(grid),
                 shared=shared_bytes)
            end.record()
            self._wait(end, ids, kernel_name)
            cuda.memcpy_dtoh(image, arena)
            seconds = start.time_till(end) / 1000.0
            arena.free()
        except cuda.Error as exc:
            self._rebuild(f"{kernel_name}: {exc}")
            raise CaseCrash(ids, f"CUDA error in {kernel_name}: {exc}; context rebuilt") from exc
        return LaunchResult(plan.outputs(image), plan.status_words(image), seconds)

    def _wait(self, event: Any, ids: list[str], kernel_name: str) -> None:
        deadline = time.monotonic() + self.host_timeout_s
        delay = 1e-5
        while not event.query():
            if time.monotonic() > deadline:
                request_worker_restart(f"{kernel_name} still running after {self.host_timeout_s:g} s")
                raise CaseTimeout(ids, f"{kernel_name} did not finish within {self.host_timeout_s:g} s (host timeout)")
            time.sleep(delay)
            delay = min(delay * 2, 0.01)


def open_cuda_device(driver: Any = None) -> tuple[PyCudaDevice | None, str]:
    """This process's CUDA device, opened once; ``(None, why)`` where there is none."""
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
        opened: tuple[PyCudaDevice | None, str] = (PyCudaDevice(driver), "")
    except Exception as exc:  # noqa: BLE001  (no driver, no GPU, busy GPU: all mean "none here")
        opened = (None, f"no usable CUDA GPU ({exc})")
    _OPENED.append(opened)
    return opened
