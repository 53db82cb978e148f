"""Device layer: what the harness needs from a GPU backend, per ``docs/kernel-abi.md``.

A backend loads a cubin and launches one kernel over a table of cases.  Everything around the
driver calls is here and pure, so it runs on the CPU: the device-memory arena (case table, operand
images, poisoned outputs, zeroed status words), decoding the status words, worker-to-GPU pinning,
and isolating the case that crashed a batch.  The backends
(:mod:`conformance.harness.device_cuda`, :mod:`conformance.harness.device_sim`) import this
module; :mod:`conformance.harness.devices` opens one (imports only go one way).

Arena layout (one allocation per launch; every part 256-byte aligned)::

    +0                 case table: ncases x 256-byte records (in_ptr/out_ptr/status_ptr/out_words
                       patched in by the host, family parameters as given)
    +in_offsets[i]     operand images of case i
    +out_offsets[i]    out_words[i] u32 words of case i, filled with POISON before the launch
    +status_offset     ncases x ctas_per_case x 4 u32 status words, zeroed before the launch
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass
from typing import Any, Callable, Protocol, Sequence

import numpy as np

CASE_RECORD_BYTES = 256
POISON = 0xDEADBEEF
STATUS_WORDS = 4
DONE_MAGIC = 0x600D0000
ALIGN = 256

#: Error codes of status word 1 (kernel ABI).
ERROR_NONE, ERROR_MBARRIER_TIMEOUT, ERROR_ALLOC, ERROR_BAD_RECORD = 0, 1, 2, 3


class CaseCrash(Exception):
    """A kernel took the device down (sticky CUDA error, lost context); status ``Crash``."""

    def __init__(self, case_ids: Sequence[str], message: str) -> None:
        self.case_ids = tuple(case_ids)
        super().__init__(f"{message} (cases: {', '.join(self.case_ids[:8])}"
                         f"{', ...' if len(self.case_ids) > 8 else ''})")


class CaseTimeout(Exception):
    """A case did not finish: the kernel's bounded wait expired, or the host gave up; ``Timeout``."""

    def __init__(self, case_ids: Sequence[str], message: str) -> None:
        self.case_ids = tuple(case_ids)
        super().__init__(f"{message} (cases: {', '.join(self.case_ids[:8])})")


class CaseResourceError(Exception):
    """The device could not provide what a launch needs (out of memory while setting it up); the
    batch is retried in smaller launches, and a single case that still cannot run fails naming it."""

    def __init__(self, case_ids: Sequence[str], message: str) -> None:
        self.case_ids = tuple(case_ids)
        super().__init__(f"ResourceError: {message} (cases: {', '.join(self.case_ids[:8])}"
                         f"{', ...' if len(self.case_ids) > 8 else ''})")


@dataclass(frozen=True)
class CaseBuffers:
    """Host data of one case: its operand images (every CTA's block, back to back) and the
    number of u32 result words *per CTA* (the record's ``out_words``; a CTA pair writes twice
    as many, CTA rank r at ``out_ptr + r * out_words * 4``, kernel ABI)."""

    inputs: bytes
    out_words: int


@dataclass(frozen=True)
class LaunchResult:
    """Per case: the u32 output words (every CTA's, rank 0 first), and the status words
    (ctas_per_case x 4) of each case."""

    outputs: list[np.ndarray]
    status_words: np.ndarray  # shape (ncases, ctas_per_case, 4), uint32
    seconds: float = 0.0


class Device(Protocol):
    """A backend that runs assembled kernels (PyCUDA, the simulator, or none)."""

    kind: str
    name: str
    compute_capability: tuple[int, int] | None
    driver_version: str

    def load(self, cubin: bytes) -> Any: ...

    def launch(self, module: Any, kernel_name: str, case_records: bytes, buffers: Sequence[CaseBuffers],
               grid: tuple[int, int, int], block: tuple[int, int, int],
               cluster_dims: tuple[int, int, int] = (1, 1, 1), *, case_ids: Sequence[str] = (),
               shared_bytes: int = 0) -> LaunchResult: ...


class NullDevice:
    """``--device none``: no execution; every execution case is NotSupported."""

    kind = "none"
    name = "none"
    compute_capability = None
    driver_version = ""

    def load(self, cubin: bytes) -> Any:
        raise RuntimeError("--device none runs no kernels")

    def launch(self, *args, **kwargs) -> LaunchResult:
        raise RuntimeError("--device none runs no kernels")


# --- arena --------------------------------------------------------------------------------------

def _align(n: int) -> int:
    return (n + ALIGN - 1) // ALIGN * ALIGN


@dataclass(frozen=True)
class ArenaPlan:
    """Offsets of one launch's device allocation (see the module docstring)."""

    base: int
    ncases: int
    ctas_per_case: int
    in_offsets: tuple[int, ...]
    out_offsets: tuple[int, ...]
    out_words: tuple[int, ...]        # per CTA (the record field); a case's block holds ctas_per_case times as many
    status_offset: int
    total: int

    def host_image(self, case_records: bytes, buffers: Sequence[CaseBuffers]) -> np.ndarray:
        """The bytes to copy to the device: records with pointers patched, poison, zeroed status."""
        image = np.zeros(self.total, dtype=np.uint8)
        table = bytearray(case_records)
        for i, buf in enumerate(buffers):
            struct.pack_into("<QQQI", table, i * CASE_RECORD_BYTES, self.base + self.in_offsets[i],
                             self.base + self.out_offsets[i],
                             self.base + self.status_offset + i * self.ctas_per_case * STATUS_WORDS * 4,
                             buf.out_words)
            image[self.in_offsets[i]:self.in_offsets[i] + len(buf.inputs)] = np.frombuffer(buf.inputs, np.uint8)
            words = buf.out_words * self.ctas_per_case
            out = image[self.out_offsets[i]:self.out_offsets[i] + 4 * words].view(np.uint32)
            out[:] = POISON
        image[:len(table)] = np.frombuffer(bytes(table), np.uint8)
        return image

    def outputs(self, image: np.ndarray) -> list[np.ndarray]:
        ctas = self.ctas_per_case
        return [image[o:o + 4 * n * ctas].view(np.uint32).copy()
                for o, n in zip(self.out_offsets, self.out_words, strict=True)]

    def status_words(self, image: np.ndarray) -> np.ndarray:
        size = self.ncases * self.ctas_per_case * STATUS_WORDS * 4
        words = image[self.status_offset:self.status_offset + size].view(np.uint32).copy()
        return words.reshape(self.ncases, self.ctas_per_case, STATUS_WORDS)


def plan_arena(case_records: bytes, buffers: Sequence[CaseBuffers], ctas_per_case: int = 1,
               base: int = 0) -> ArenaPlan:
    """Lay out one launch's allocation at device address ``base``."""
    ncases = len(buffers)
    if len(case_records) != ncases * CASE_RECORD_BYTES:
        raise ValueError(f"case_records expects {ncases} x {CASE_RECORD_BYTES} bytes, but got {len(case_records)}")
    if ctas_per_case not in (1, 2):
        raise ValueError(f"ctas_per_case expects 1 or 2, but got {ctas_per_case}")
    offset = _align(len(case_records))
    in_offsets, out_offsets = [], []
    for buf in buffers:
        in_offsets.append(offset)
        offset = _align(offset + len(buf.inputs))
    for buf in buffers:
        if buf.out_words < 0:
            raise ValueError(f"out_words expects a count >= 0, but got {buf.out_words}")
        out_offsets.append(offset)
        offset = _align(offset + 4 * buf.out_words * ctas_per_case)
    status_offset = offset
    total = _align(status_offset + ncases * ctas_per_case * STATUS_WORDS * 4)
    return ArenaPlan(base, ncases, ctas_per_case, tuple(in_offsets), tuple(out_offsets),
                     tuple(b.out_words for b in buffers), status_offset, total)


# --- status words -------------------------------------------------------------------------------

@dataclass(frozen=True)
class CaseStatus:
    """Decoded status words of one CTA (kernel ABI, "Status words")."""

    finished: bool
    stage: int
    error: int
    spins: int

    @classmethod
    def decode(cls, words: Sequence[int]) -> CaseStatus:
        w0 = int(words[0])
        return cls((w0 & 0xFFFF0000) == DONE_MAGIC, w0 & 0xFFFF, int(words[1]), int(words[2]))


def check_status(case_id: str, words: np.ndarray) -> str | None:
    """Raise :class:`CaseTimeout` for a wait that timed out; return a failure message for any other
    problem in the status words of one case (shape ``(ctas, 4)``), or ``None`` when all is well."""
    for cta, row in enumerate(np.asarray(words).reshape(-1, STATUS_WORDS)):
        st = CaseStatus.decode(row)
        where = f"{case_id} CTA {cta}"
        if st.error in (ERROR_MBARRIER_TIMEOUT, ERROR_ALLOC):
            what = "mbarrier wait" if st.error == ERROR_MBARRIER_TIMEOUT else "tcgen05.alloc"
            raise CaseTimeout([case_id], f"{where}: {what} timed out after {st.spins} spins (stage {st.stage})")
        if st.error == ERROR_BAD_RECORD:
            return f"{where}: kernel refused its case record (error 3, stage {st.stage}): harness bug"
        if st.error != ERROR_NONE:
            return f"{where}: unknown kernel error code {st.error} (stage {st.stage})"
        if not st.finished:
            return f"{where}: kernel did not reach its end (status word 0 = {int(row[0]):#010x})"
    return None


# --- crash isolation ----------------------------------------------------------------------------

def launch_isolating(launch: Callable[[list[int]], LaunchResult], ncases: int,
                     case_ids: Sequence[str]) -> tuple[dict[int, tuple[np.ndarray, np.ndarray]], dict[int, str]]:
    """Run a batch; if it crashes, rerun its cases one per launch so the crash lands on its culprit.

    ``launch(indices)`` launches the given cases of the batch (the backend rebuilt its context
    after a crash).  Returns ``({index: (outputs, status_words)}, {index: crash message})``.
    """
    done: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    crashed: dict[int, str] = {}
    try:
        result = launch(list(range(ncases)))
        for i in range(ncases):
            done[i] = (result.outputs[i], result.status_words[i])
        return done, crashed
    except CaseCrash:
        if ncases == 1:
            raise
    for i in range(ncases):
        try:
            result = launch([i])
            done[i] = (result.outputs[0], result.status_words[0])
        except CaseCrash as exc:
            crashed[i] = f"{case_ids[i]}: {exc}"
    return done, crashed


# --- worker pinning -----------------------------------------------------------------------------

def worker_index(worker: str | None) -> int | None:
    """``gw3`` -> 3; ``None``/``master`` -> ``None``."""
    if worker and worker.startswith("gw") and worker[2:].isdigit():
        return int(worker[2:])
    return None


def pinned_visible_devices(worker: str | None, visible: str | None, gpu_count: int | None) -> str | None:
    """The ``CUDA_VISIBLE_DEVICES`` value for an xdist worker: entry ``index mod len`` of the
    caller's visible list (or of ``0..gpu_count-1`` when unset); ``None`` means leave it alone."""
    index = worker_index(worker)
    if index is None:
        return None
    if visible is not None and visible.strip():
        entries = [e.strip() for e in visible.split(",") if e.strip()]
    elif gpu_count:
        entries = [str(i) for i in range(gpu_count)]
    else:
        return None
    return entries[index % len(entries)] if entries else None


def count_gpus_without_cuda() -> int | None:
    """Number of NVIDIA GPUs, read from ``/proc`` so CUDA stays uninitialised; ``None`` if unknown."""
    try:
        return len(os.listdir("/proc/driver/nvidia/gpus")) or None
    except OSError:
        return None


def pin_worker_gpu(environ=os.environ) -> str | None:
    """Set ``CUDA_VISIBLE_DEVICES`` for this xdist worker (call before CUDA initialises)."""
    value = pinned_visible_devices(environ.get("PYTEST_XDIST_WORKER"), environ.get("CUDA_VISIBLE_DEVICES"),
                                   count_gpus_without_cuda())
    if value is not None:
        environ["CUDA_VISIBLE_DEVICES"] = value
    return value


# --- worker restart ----------------------------------------------------------------------------

_RESTART: list[str] = []


def request_worker_restart(reason: str) -> None:
    """Ask for this worker process to end after the current case is reported (a context that
    cannot be rebuilt, or a kernel still running after the host timeout); under pytest-xdist the
    controller then starts a fresh worker and the remaining cases go on."""
    _RESTART.append(reason)


def restart_requested() -> str | None:
    return _RESTART[0] if _RESTART else None
