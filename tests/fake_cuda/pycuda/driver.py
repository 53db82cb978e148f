"""A stand-in for ``pycuda.driver`` that enforces what the real CUDA driver enforces and runs every
accepted launch on ptxsim (tests/fake_cuda/README.md).

The first real GPU run (H100, 2026-11-26) failed every case on a rule no CPU test knew (an sm_80
cubin does not load on sm_90) and aborted every worker at exit (a context left on the stack).
This module refuses the same things, with the real driver's messages as PyCUDA spells them
(``<cuFunction> failed: <cuGetErrorString text>``), so the harness's whole ``--device cuda`` path
(assembly, load, launch, arena, status words, comparison) runs in CI.

The device (environment, read at :func:`init`):

* ``TCGEN05_FAKE_CUDA_CC``: compute capability, ``"10.0"`` by default (8.0, 9.0, 10.0, 10.3,
  11.0, 12.0 and 12.1 have their real limits in :data:`LIMITS`);
* ``TCGEN05_FAKE_CUDA_DRIVER``: ``cuDriverGetVersion``, ``13000`` by default (PTX ISA 9.0 for the JIT);
* ``TCGEN05_FAKE_CUDA_FAULTS``: injected driver faults, ``;``-separated (see :class:`Faults`).

Rules enforced:

* **Architecture.** A cubin's ELF ``e_flags`` bits 8-15 hold its SM number (``pycuda._cubin``).
  An arch-specific (``sm_XYa``) cubin loads only on compute capability X.Y; any other loads on
  the same major version with an equal or higher minor.  Refused: ``RuntimeError:
  cuModuleLoadDataEx failed: no kernel image is available for execution on the device``.
* **PTX JIT** (text passed to ``module_from_buffer``): ``.target sm_XYa`` only on X.Y, ``sm_XYf``
  on major X with minor >= Y, ``sm_XY`` on X.Y or newer; a ``.version`` newer than the driver's
  PTX ISA is ``CUDA_ERROR_UNSUPPORTED_PTX_VERSION``.
* **Launch limits.** At most 1024 threads per block (and the kernel's ``.maxntid``/``.reqntid``);
  dynamic shared memory above 48 KiB only up to ``MAX_DYNAMIC_SHARED_SIZE_BYTES`` as set on the
  function, which may never exceed the device's opt-in limit; the parameter buffer must have the
  kernel's parameter size; a kernel with ``.reqnctapercluster`` needs compute capability 9.0+,
  a grid divisible by the cluster and at most 8 CTAs per cluster.
* **Contexts.** Every call needs a current context; a module, function or allocation belongs to
  the context that made it (``invalid resource handle`` / ``invalid device context`` elsewhere).
* **Sticky errors.** A kernel that traps (``an illegal instruction was encountered``), touches
  memory it may not (``an illegal memory access was encountered``) or otherwise fails
  (``unspecified launch failure``) poisons its context: every later call in it raises the same
  error until the context is destroyed.
* **Hangs.** A kernel that deadlocks or spins past the simulator's limits never finishes: its
  event never completes, and a blocking copy from the context raises :class:`WouldBlockForever`
  (the real driver would block), until the context is destroyed.
* **An empty context stack at exit.** Like PyCUDA, a process that ends with a context still on
  the stack prints ``PyCUDA ERROR: The context stack was not empty upon module cleanup.`` and aborts.

Kernels execute from the PTX a cubin was assembled from: the suite's assembly cache keeps it beside
each cubin (``<sha256>.ptx.json``, ``conformance.harness.toolchain.ptx_beside``; ``$TCGEN05_CTS_CACHE``
or ``~/.cache/tcgen05-cts``), or a test registers it with :func:`register_ptx`.  The simulator's
hazard checker is off (a GPU reports no hazards; it computes).
"""

from __future__ import annotations

import atexit
import hashlib
import json
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from pycuda._cubin import NotACubin, read_cubin

ENV_CC, ENV_DRIVER, ENV_FAULTS, ENV_NAME = ("TCGEN05_FAKE_CUDA_CC", "TCGEN05_FAKE_CUDA_DRIVER",
                                            "TCGEN05_FAKE_CUDA_FAULTS", "TCGEN05_FAKE_CUDA_NAME")
CASE_DIGEST_FROM = 28      # a case record's bytes after its patched pointers and out_words (docs/kernel-abi.md)


# --- errors, as PyCUDA raises them ----------------------------------------------------------------

class Error(Exception):
    """``pycuda.driver.Error``: every CUDA error."""


class LogicError(Error):
    pass


class LaunchError(Error):
    pass


class MemoryError(Error):  # noqa: A001  (PyCUDA's own name)
    pass


class RuntimeError(Error):  # noqa: A001
    pass


class WouldBlockForever(AssertionError):
    """The real driver would block here forever (a copy from a context whose kernel hangs)."""


#: CUresult -> (cuGetErrorString text, PyCUDA exception class), for the codes this driver returns.
CODES = {
    1: ("invalid argument", LogicError),
    2: ("out of memory", MemoryError),
    201: ("invalid device context", LogicError),
    209: ("no kernel image is available for execution on the device", RuntimeError),
    218: ("a PTX JIT compilation failed", LogicError),
    222: ("the provided PTX was compiled with an unsupported toolchain.", LogicError),
    400: ("invalid resource handle", LogicError),
    500: ("named symbol not found", LogicError),
    700: ("an illegal memory access was encountered", LogicError),
    715: ("an illegal instruction was encountered", LogicError),
    719: ("unspecified launch failure", LaunchError),
    912: ("the requested cluster size is invalid", LogicError),
}


def _fail(routine: str, code: int) -> Error:
    text, cls = CODES[code]
    exc = cls(f"{routine} failed: {text}")
    exc.code = code
    return exc


# --- the device -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Limits:
    name: str
    smem_optin: int            # cudaDevAttrMaxSharedMemoryPerBlockOptin
    sms: int


LIMITS = {
    (8, 0): Limits("NVIDIA A100-SXM4-80GB", 163 * 1024, 108),
    (9, 0): Limits("NVIDIA H100 80GB HBM3", 227 * 1024, 132),
    (10, 0): Limits("NVIDIA B200", 227 * 1024, 148),
    (10, 3): Limits("NVIDIA B300", 227 * 1024, 148),
    (11, 0): Limits("NVIDIA Thor", 227 * 1024, 20),
    (12, 0): Limits("NVIDIA RTX PRO 6000 Blackwell", 99 * 1024, 188),
    (12, 1): Limits("NVIDIA GB10", 99 * 1024, 48),
}
DEFAULT_SMEM = 48 * 1024
MAX_THREADS = 1024
MAX_CLUSTER = 8
PTX_ISA_OF_DRIVER = {13000: (9, 0), 12090: (8, 8), 12080: (8, 7), 12060: (8, 5)}


def _environment_cc() -> tuple[int, int]:
    text = os.environ.get(ENV_CC, "10.0")
    match = re.fullmatch(r"(\d+)\.(\d)", text.strip())
    if match is None or (int(match.group(1)), int(match.group(2))) not in LIMITS:
        raise ValueError(f"{ENV_CC} expects one of {', '.join(f'{a}.{b}' for a, b in LIMITS)}, but got {text!r}")
    return int(match.group(1)), int(match.group(2))


@dataclass
class _State:
    cc: tuple[int, int] = (10, 0)
    driver: int = 13000
    initialised: bool = False
    stack: list = field(default_factory=list)
    faults: Any = None
    allocations: int = 0


_STATE = _State()


def init(flags: int = 0) -> None:
    _STATE.cc = _environment_cc()
    _STATE.driver = int(os.environ.get(ENV_DRIVER, "13000"))
    _STATE.faults = Faults.parse(os.environ.get(ENV_FAULTS, ""))
    _STATE.initialised = True


def get_driver_version() -> int:
    return _STATE.driver


def get_version() -> tuple[int, int, int]:
    return (_STATE.driver // 1000, (_STATE.driver % 1000) // 10, 0)


def _need_init(routine: str) -> None:
    if not _STATE.initialised:
        exc = LogicError(f"{routine} failed: initialization error")
        exc.code = 3
        raise exc


class device_attribute:  # noqa: N801  (PyCUDA's enum spelling)
    MAX_THREADS_PER_BLOCK = "MAX_THREADS_PER_BLOCK"
    MAX_SHARED_MEMORY_PER_BLOCK = "MAX_SHARED_MEMORY_PER_BLOCK"
    MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN"
    MULTIPROCESSOR_COUNT = "MULTIPROCESSOR_COUNT"
    COMPUTE_CAPABILITY_MAJOR = "COMPUTE_CAPABILITY_MAJOR"
    COMPUTE_CAPABILITY_MINOR = "COMPUTE_CAPABILITY_MINOR"
    CLUSTER_LAUNCH = "CLUSTER_LAUNCH"


class function_attribute:  # noqa: N801
    MAX_THREADS_PER_BLOCK = "MAX_THREADS_PER_BLOCK"
    SHARED_SIZE_BYTES = "SHARED_SIZE_BYTES"
    MAX_DYNAMIC_SHARED_SIZE_BYTES = "MAX_DYNAMIC_SHARED_SIZE_BYTES"


class Device:
    def __init__(self, ordinal: int) -> None:
        _need_init("cuDeviceGet")
        if ordinal != 0:
            raise _fail("cuDeviceGet", 1)
        self.ordinal = ordinal

    @staticmethod
    def count() -> int:
        _need_init("cuDeviceGetCount")
        return 1

    def name(self) -> str:
        return os.environ.get(ENV_NAME) or f"{LIMITS[_STATE.cc].name} (fake driver)"

    def compute_capability(self) -> tuple[int, int]:
        return _STATE.cc

    def total_memory(self) -> int:
        return 80 << 30

    def get_attribute(self, attr: str) -> int:
        limits = LIMITS[_STATE.cc]
        return {"MAX_THREADS_PER_BLOCK": MAX_THREADS, "MAX_SHARED_MEMORY_PER_BLOCK": DEFAULT_SMEM,
                "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN": limits.smem_optin, "MULTIPROCESSOR_COUNT": limits.sms,
                "COMPUTE_CAPABILITY_MAJOR": _STATE.cc[0], "COMPUTE_CAPABILITY_MINOR": _STATE.cc[1],
                "CLUSTER_LAUNCH": int(_STATE.cc >= (9, 0))}[attr]

    def make_context(self, flags: int = 0) -> Context:
        ctx = Context(self)
        _STATE.stack.append(ctx)
        return ctx


# --- contexts --------------------------------------------------------------------------------------

class Context:
    """One CUDA context: its own simulated device memory, modules and sticky error."""

    def __init__(self, device: Device) -> None:
        from ptxsim import SimDevice

        self.device = device
        self.sim = SimDevice(hazards=False)
        self.alive = True
        self.sticky: int | None = None     # CUresult every call returns after a kernel fault
        self.hung = False                  # a kernel that never finishes is running
        self.clock_ms = 0.0

    @staticmethod
    def get_current() -> Context | None:
        return _STATE.stack[-1] if _STATE.stack else None

    @staticmethod
    def pop() -> None:
        if not _STATE.stack:
            raise _fail("cuCtxPopCurrent", 201)
        _STATE.stack.pop()

    def push(self) -> None:
        if not self.alive:
            raise _fail("cuCtxPushCurrent", 201)
        _STATE.stack.append(self)

    def detach(self) -> None:
        """Destroy the context (PyCUDA: the last reference); popped first when it is current."""
        if _STATE.stack and _STATE.stack[-1] is self:
            _STATE.stack.pop()
        self.alive = False
        self.hung = False

    def synchronize(self) -> None:
        _current("cuCtxSynchronize", blocking=True)


def _current(routine: str, *, blocking: bool = False) -> Context:
    """The current context, after the checks every call makes (sticky error, hung kernel)."""
    _need_init(routine)
    ctx = Context.get_current()
    if ctx is None or not ctx.alive:
        raise _fail(routine, 201)
    if ctx.sticky is not None:
        raise _fail(routine, ctx.sticky)
    if blocking and ctx.hung:
        raise WouldBlockForever(f"{routine} would block forever: a kernel of this context never finishes")
    return ctx


def _owned(routine: str, owner: Context) -> Context:
    ctx = _current(routine)
    if owner is not ctx:
        raise _fail(routine, 400 if owner.alive else 201)
    return ctx


# --- memory ----------------------------------------------------------------------------------------

class DeviceAllocation:
    def __init__(self, ctx: Context, address: int, size: int) -> None:
        self.ctx, self.address, self.size, self.freed = ctx, address, size, False

    def __int__(self) -> int:
        return self.address

    __index__ = __int__

    def free(self) -> None:
        if self.freed:
            return
        _owned("cuMemFree", self.ctx)
        self.ctx.sim.memory.free(self.address)
        self.freed = True


def mem_alloc(size: int) -> DeviceAllocation:
    ctx = _current("cuMemAlloc")
    size = int(size)
    if size <= 0:
        raise _fail("cuMemAlloc", 1)
    _STATE.allocations += 1
    if _STATE.faults.out_of_memory(_STATE.allocations, size):
        raise _fail("cuMemAlloc", 2)
    return DeviceAllocation(ctx, ctx.sim.memory.alloc(size, align=256), size)


def _host_bytes(array: Any) -> memoryview:
    return memoryview(np.ascontiguousarray(array)).cast("B")


def memcpy_htod(dest: DeviceAllocation, src: Any) -> None:
    ctx = _owned("cuMemcpyHtoD", dest.ctx)
    data = bytes(_host_bytes(src))
    if dest.freed or len(data) > dest.size:
        raise _fail("cuMemcpyHtoD", 1)
    ctx.sim.memory.write(dest.address, np.frombuffer(data, np.uint8))


def memcpy_dtoh(dest: np.ndarray, src: DeviceAllocation) -> None:
    ctx = _owned("cuMemcpyDtoH", src.ctx)
    _current("cuMemcpyDtoH", blocking=True)
    out = dest.reshape(-1).view(np.uint8)
    if src.freed or out.nbytes > src.size:
        raise _fail("cuMemcpyDtoH", 1)
    out[:] = ctx.sim.memory.read_array(src.address, out.nbytes)


# --- events ----------------------------------------------------------------------------------------

class Event:
    def __init__(self, flags: int = 0) -> None:
        self.ctx = _current("cuEventCreate")
        self.at: float | None = None
        self.pending = False

    def record(self, stream: Any = None) -> Event:
        ctx = _owned("cuEventRecord", self.ctx)
        self.at, self.pending = ctx.clock_ms, ctx.hung
        return self

    def query(self) -> bool:
        ctx = _owned("cuEventQuery", self.ctx)
        return not (self.pending and ctx.hung)

    def synchronize(self) -> Event:
        _owned("cuEventSynchronize", self.ctx)
        if self.pending and self.ctx.hung:
            raise WouldBlockForever("cuEventSynchronize would block forever: its kernel never finishes")
        return self

    def time_till(self, other: Event) -> float:
        _owned("cuEventElapsedTime", self.ctx)
        if self.at is None or other.at is None:
            raise _fail("cuEventElapsedTime", 400)
        return other.at - self.at


# --- modules and launches -----------------------------------------------------------------------------

_PTX_REGISTRY: dict[str, list[str]] = {}
_VERSION_RE = re.compile(r"^\s*\.version\s+(\d+)\.(\d+)", re.M)
_TARGET_RE = re.compile(r"^\s*\.target\s+sm_(\d+)(\d)([af]?)\b", re.M)


def register_ptx(cubin: bytes, modules: list[str]) -> None:
    """Tell the driver which PTX ``cubin`` was assembled from (tests that bypass the cache)."""
    _PTX_REGISTRY[hashlib.sha256(bytes(cubin)).hexdigest()] = list(modules)


def _ptx_of_cubin(cubin: bytes) -> list[str]:
    digest = hashlib.sha256(cubin).hexdigest()
    if digest in _PTX_REGISTRY:
        return _PTX_REGISTRY[digest]
    cache = Path(os.environ.get("TCGEN05_CTS_CACHE") or Path.home() / ".cache" / "tcgen05-cts")
    path = cache / "cubins" / f"{digest}.ptx.json"
    try:
        return list(json.loads(path.read_text())["modules"])
    except (OSError, ValueError, KeyError) as exc:
        raise AssertionError(f"fake driver: no PTX kept beside cubin {digest[:16]} ({path}): {exc}") from None


def _runs_on(major: int, minor: int, suffix: str, cc: tuple[int, int]) -> bool:
    if suffix == "a":
        return cc == (major, minor)
    if suffix == "f":
        return cc[0] == major and cc[1] >= minor
    return cc >= (major, minor)


def _check_ptx(text: str, cc: tuple[int, int]) -> None:
    version, target = _VERSION_RE.search(text), _TARGET_RE.search(text)
    if version is None or target is None:
        raise _fail("cuModuleLoadDataEx", 218)
    isa = PTX_ISA_OF_DRIVER.get(_STATE.driver, (9, 0))
    if (int(version.group(1)), int(version.group(2))) > isa:
        raise _fail("cuModuleLoadDataEx", 222)
    if not _runs_on(int(target.group(1)), int(target.group(2)), target.group(3), cc):
        raise _fail("cuModuleLoadDataEx", 218)


class Module:
    def __init__(self, ctx: Context, functions: frozenset[str] | None, ptx: list[str]) -> None:
        self.ctx, self.functions, self.ptx = ctx, functions, ptx
        self._loaded: dict[str, Any] = {}

    def get_function(self, name: str) -> Function:
        _owned("cuModuleGetFunction", self.ctx)
        sources = [p for p in self.ptx if re.search(rf"\.entry\s+{re.escape(name)}\s*\(", p)]
        if (self.functions is not None and name not in self.functions) or not sources:
            raise _fail("cuModuleGetFunction", 500)
        if name not in self._loaded:
            self._loaded[name] = self.ctx.sim.load(sources[0])
        return Function(self, name, self._loaded[name])


def module_from_buffer(buffer: bytes, options: Any = None, message_handler: Any = None) -> Module:
    ctx = _current("cuModuleLoadDataEx")
    data = bytes(buffer)
    if data[:4] == b"\x7fELF":
        try:
            info = read_cubin(data)
        except NotACubin:
            exc = LogicError("cuModuleLoadDataEx failed: device kernel image is invalid")
            exc.code = 200
            raise exc from None
        cc = _STATE.cc
        loads = (cc == info.major_minor) if info.arch_specific else (
            cc[0] == info.major_minor[0] and cc[1] >= info.major_minor[1])
        if not loads:
            raise _fail("cuModuleLoadDataEx", 209)
        return Module(ctx, info.functions, _ptx_of_cubin(data))
    text = data.rstrip(b"\0").decode("utf-8", "replace")
    _check_ptx(text, _STATE.cc)
    return Module(ctx, None, [text])


def _param_bytes(args: tuple) -> int:
    """Size of PyCUDA's packed parameter buffer (each numpy scalar at its own alignment)."""
    top = 0
    for arg in args:
        size = 8 if isinstance(arg, DeviceAllocation) else np.asarray(arg).dtype.itemsize
        top = (top + size - 1) // size * size + size
    return top


class Function:
    def __init__(self, module: Module, name: str, sim_module: Any) -> None:
        self.module, self.name, self.sim_module = module, name, sim_module
        self.program = sim_module.kernel(name)
        self.max_dynamic_shared = DEFAULT_SMEM - self.static_shared
        self.arguments: list[int] = []

    @property
    def static_shared(self) -> int:
        return self.program.shared_bytes(0)

    def get_attribute(self, attr: str) -> int:
        return {"MAX_THREADS_PER_BLOCK": MAX_THREADS, "SHARED_SIZE_BYTES": self.static_shared,
                "MAX_DYNAMIC_SHARED_SIZE_BYTES": self.max_dynamic_shared}[attr]

    def set_attribute(self, attr: str, value: int) -> None:
        _owned("cuFuncSetAttribute", self.module.ctx)
        if attr != function_attribute.MAX_DYNAMIC_SHARED_SIZE_BYTES:
            raise _fail("cuFuncSetAttribute", 1)
        if int(value) < 0 or int(value) + self.static_shared > LIMITS[_STATE.cc].smem_optin:
            raise _fail("cuFuncSetAttribute", 1)
        self.max_dynamic_shared = int(value)

    def _geometry(self, block: tuple, grid: tuple, shared: int) -> tuple:
        directives = self.program.kernel.directives
        block = tuple(int(x) for x in (tuple(block) + (1, 1, 1))[:3])
        grid = tuple(int(x) for x in (tuple(grid) + (1, 1, 1))[:3])
        threads = int(np.prod(block))
        limit = int(np.prod(directives.get("maxntid", (MAX_THREADS,))))
        if min(block + grid) < 1 or threads > min(MAX_THREADS, limit):
            raise _fail("cuLaunchKernel", 1)
        if "reqntid" in directives and tuple(directives["reqntid"]) + (1,) * (3 - len(directives["reqntid"])) != block:
            raise _fail("cuLaunchKernel", 1)
        if shared < 0 or shared > self.max_dynamic_shared:
            raise _fail("cuLaunchKernel", 1)
        cluster = tuple(int(x) for x in (tuple(directives.get("reqnctapercluster", ())) + (1, 1, 1))[:3])
        if cluster != (1, 1, 1):
            if _STATE.cc < (9, 0) or int(np.prod(cluster)) > MAX_CLUSTER or any(g % c for g, c in zip(grid, cluster, strict=True)):
                raise _fail("cuLaunchKernel", 912)
        return block, grid, cluster

    def __call__(self, *args: Any, block: tuple = (1, 1, 1), grid: tuple = (1, 1), shared: int = 0,
                 stream: Any = None, time_kernel: bool = False, texrefs: Any = None) -> None:
        ctx = _owned("cuLaunchKernel", self.module.ctx)
        block, grid, cluster = self._geometry(block, grid, int(shared))
        if _param_bytes(args) != self.program.param_bytes:
            raise _fail("cuLaunchKernel", 1)
        params = [int(a) for a in args]
        if ctx.hung:
            return                     # queued behind a kernel that never finishes
        fault = _STATE.faults.for_launch(self.name, ctx, params)
        if fault == "hang":
            ctx.hung = True
            return
        if fault == "trap":
            ctx.sticky = 715
            return
        _execute(ctx, self, params, grid, block, cluster, int(shared))


def _execute(ctx: Context, fn: Function, params: list[int], grid, block, cluster, shared: int) -> None:
    from ptxsim.errors import Deadlock, Livelock, MemoryFault, SimError, StepLimit, Trap

    try:
        seconds = ctx.sim.run(fn.sim_module, fn.name, params, grid, block, cluster, shared)
    except (Deadlock, Livelock, StepLimit):
        ctx.hung = True
        return
    except Trap:
        ctx.sticky = 715
        return
    except MemoryFault:
        ctx.sticky = 700
        return
    except SimError as exc:
        ctx.sticky = 719
        sys.stderr.write(f"fake driver: {fn.name} failed on the simulator: {type(exc).__name__}: {exc}\n")
        return
    ctx.clock_ms += seconds * 1000.0


# --- injected faults -----------------------------------------------------------------------------

@dataclass
class Faults:
    """Driver faults injected through ``TCGEN05_FAKE_CUDA_FAULTS`` (``;``-separated):

    * ``trap:KERNEL:DIGEST`` / ``hang:KERNEL:DIGEST``: a launch of a kernel whose name contains
      ``KERNEL`` (``*``: any) and whose case table holds a record whose :func:`case_digest` starts
      with ``DIGEST`` (``*``: any) traps (sticky ``an illegal instruction was encountered``) / never
      finishes;
    * ``oom-once:N``: the N-th allocation of the process fails with ``out of memory``, once;
    * ``oom-over:BYTES``: every allocation larger than ``BYTES`` fails with ``out of memory``.
    """

    launches: list[tuple[str, str, str]] = field(default_factory=list)
    oom_once: set[int] = field(default_factory=set)
    oom_over: int | None = None

    @classmethod
    def parse(cls, text: str) -> Faults:
        faults = cls()
        for item in (t.strip() for t in text.split(";")):
            if not item:
                continue
            kind, _, rest = item.partition(":")
            if kind in ("trap", "hang") and rest.count(":") == 1:
                kernel, digest = rest.split(":")
                faults.launches.append((kind, kernel, digest))
            elif kind == "oom-once" and rest.isdigit():
                faults.oom_once.add(int(rest))
            elif kind == "oom-over" and rest.isdigit():
                faults.oom_over = int(rest)
            else:
                raise ValueError(f"{ENV_FAULTS} expects trap:KERNEL:DIGEST, hang:KERNEL:DIGEST, oom-once:N or "
                                 f"oom-over:BYTES, but got {item!r}")
        return faults

    def out_of_memory(self, index: int, size: int) -> bool:
        if index in self.oom_once:
            self.oom_once.discard(index)
            return True
        return self.oom_over is not None and size > self.oom_over

    def for_launch(self, kernel: str, ctx: Context, params: list[int]) -> str | None:
        for kind, name, digest in self.launches:
            if name != "*" and name not in kernel:
                continue
            if digest == "*" or any(d.startswith(digest) for d in _case_digests(ctx, params)):
                return kind
        return None


def case_digest(record: bytes) -> str:
    """Identity of one case record of the kernel ABI (docs/kernel-abi.md), independent of where
    the harness placed its buffers: SHA-256 of the record after its pointers and ``out_words``."""
    return hashlib.sha256(bytes(record[CASE_DIGEST_FROM:])).hexdigest()


def _case_digests(ctx: Context, params: list[int]) -> list[str]:
    if len(params) != 2:
        return []
    table, ncases = params
    try:
        raw = ctx.sim.memory.read_array(table, 256 * ncases)
    except Exception:  # noqa: BLE001  (not a case table: the fault does not apply)
        return []
    return [case_digest(bytes(raw[i * 256:(i + 1) * 256])) for i in range(ncases)]


# --- process exit ----------------------------------------------------------------------------------

def _check_stack_at_exit() -> None:
    if _STATE.stack:
        sys.stdout.flush()
        sys.stderr.write(
            "PyCUDA ERROR: The context stack was not empty upon module cleanup.\n"
            "-------------------------------------------------------------------\n"
            "A context was still active when the context stack was being\n"
            "cleaned up. At this point in our execution, CUDA may already\n"
            "have been deinitialized, so there is no way we can finish\n"
            "cleanly. The program will be aborted now.\n"
            "Use Context.pop() to avoid this problem.\n"
            "-------------------------------------------------------------------\n")
        sys.stderr.flush()
        os.abort()


atexit.register(_check_stack_at_exit)
